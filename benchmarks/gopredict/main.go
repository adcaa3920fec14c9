// Command gopredict measures suite prediction throughput for
// benchmarks/predict.sh: it imports a CheckList suite, and predicts every
// input of it with a BERT-tiny- or BERT-mini-shaped classifier through
// predict.Run (tokenisation, length-bucketed batches, inference), printing
// inputs per second. With -ids it also writes the token ids, one input a
// line, for the PyTorch peer (benchmarks/torch_predict.py).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/beluga-nlp/beluga/internal/atomicfile"
	"github.com/beluga-nlp/beluga/internal/shareddata"
	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/checkpoint"
	"github.com/beluga-nlp/beluga/models/predict"
	"github.com/beluga-nlp/beluga/models/tokenize"
	"github.com/beluga-nlp/beluga/suites"
)

func main() {
	root, _ := shareddata.Root()
	suitePath := flag.String("suite", filepath.Join(root, "data/checklist/sentiment_suite.tar.gz"), "CheckList suite (.tar.gz pickle)")
	vocab := flag.String("vocab", filepath.Join(root, "data/vocab/bert-base-uncased-vocab.txt"), "WordPiece vocabulary")
	shape := flag.String("model", "tiny", "model shape: tiny or mini")
	batch := flag.Int("batch", 128, "batch size")
	maxLen := flag.Int("max-length", 128, "truncation length")
	limit := flag.Int("limit", 0, "predict only the first N inputs (0: all)")
	idsOut := flag.String("ids", "", "write the inputs' token ids to this file and exit")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile to this file")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "gopredict:", err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "gopredict:", err)
			os.Exit(1)
		}
		defer f.Close()
		defer pprof.StopCPUProfile()
	}
	if err := run(*suitePath, *vocab, *shape, *batch, *maxLen, *limit, *idsOut); err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "gopredict:", err)
		os.Exit(1)
	}
}

func run(suitePath, vocab, shape string, batch, maxLen, limit int, idsOut string) error {
	s, err := suites.ImportCheckList(suitePath)
	if err != nil {
		return err
	}
	var inputs []predict.Input
	for _, f := range s.Functionalities {
		for _, c := range f.Cases {
			for _, in := range c.Inputs {
				inputs = append(inputs, predict.NewInput(in.Text, in.Pair, in.IsPair))
			}
		}
	}
	if limit > 0 && limit < len(inputs) {
		inputs = inputs[:limit]
	}
	tk, err := tokenize.NewWordPieceFromVocab(vocab, maxLen)
	if err != nil {
		return err
	}
	if idsOut != "" {
		return writeIDs(idsOut, tk, inputs)
	}
	var cfg *checkpoint.Config
	switch shape {
	case "tiny":
		cfg = models.TinyConfig(tk.VocabSize())
	case "mini":
		cfg = models.MiniConfig(tk.VocabSize())
	default:
		return fmt.Errorf("-model %q: want tiny or mini", shape)
	}
	m, _, err := models.NewBERT(cfg, 2, nil, 1)
	if err != nil {
		return err
	}
	start := time.Now()
	outs, err := predict.Run(m, tk, inputs, batch)
	if err != nil {
		return err
	}
	secs := time.Since(start).Seconds()
	if len(outs) != len(inputs) {
		return fmt.Errorf("%d outputs for %d inputs", len(outs), len(inputs))
	}
	fmt.Printf("go-%s inputs=%d seconds=%.2f inputs_per_s=%.0f\n", models.BLAS, len(inputs), secs, float64(len(inputs))/secs)
	return nil
}

// writeIDs writes "ids;types" per input, each a space-separated list.
func writeIDs(path string, tk *tokenize.WordPiece, inputs []predict.Input) error {
	return atomicfile.Write(path, func(w0 io.Writer) error {
		w := bufio.NewWriter(w0)
		for _, in := range inputs {
			pair := ""
			if in.TextPair != nil {
				pair = *in.TextPair
			}
			enc, err := tk.Encode(in.Text, pair, in.TextPair != nil)
			if err != nil {
				return err
			}
			w.WriteString(join(enc.IDs))
			w.WriteByte(';')
			w.WriteString(join(enc.TypeIDs))
			w.WriteByte('\n')
		}
		return w.Flush()
	})
}

func join(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, " ")
}
