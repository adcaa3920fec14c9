// Command sst2ids prepares SST-2 for benchmarks/sst2.sh: with beluga's own
// WordPiece tokenizer (ids equal to HuggingFace's) it writes the token ids
// of the training set and of BeLUGA's two halves of dev (validation and
// i.i.d. test, datasets.Halve) for the PyTorch peer, one "label;ids;types"
// line per example, and the validation half's texts as predict's JSON-lines
// input with its labels beside it.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/internal/atomicfile"
	"github.com/beluga-nlp/beluga/models/tokenize"
)

func main() {
	data := flag.String("data", "../shared/data", "the shared data directory (sst2/, vocab/)")
	maxLen := flag.Int("max-length", 64, "truncation length")
	out := flag.String("out", "", "directory to write train.ids, val.ids, test.ids, val.jsonl, val.labels")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "sst2ids: -out is required")
		os.Exit(2)
	}
	if err := run(*data, *maxLen, *out); err != nil {
		fmt.Fprintln(os.Stderr, "sst2ids:", err)
		os.Exit(1)
	}
}

func run(data string, maxLen int, out string) error {
	tk, err := tokenize.NewWordPieceFromVocab(filepath.Join(data, "vocab/bert-base-uncased-vocab.txt"), maxLen)
	if err != nil {
		return err
	}
	train, err := datasets.ReadSST2(filepath.Join(data, "sst2/train.tsv"))
	if err != nil {
		return err
	}
	dev, err := datasets.ReadSST2(filepath.Join(data, "sst2/dev.tsv"))
	if err != nil {
		return err
	}
	valIdx, testIdx := datasets.Halve(len(dev), datasets.BeLUGAHalvingSeed)
	val, test := datasets.Pick(dev, valIdx), datasets.Pick(dev, testIdx)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for name, exs := range map[string][]datasets.Example{"train.ids": train, "val.ids": val, "test.ids": test} {
		if err := writeIDs(filepath.Join(out, name), tk, exs); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	var texts, labels strings.Builder
	for _, e := range val {
		b, _ := json.Marshal(map[string]string{"text": e.Text})
		texts.Write(append(b, '\n'))
		labels.WriteString(strconv.Itoa(e.Label) + "\n")
	}
	if err := atomicfile.WriteFile(filepath.Join(out, "val.jsonl"), []byte(texts.String())); err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(out, "val.labels"), []byte(labels.String()))
}

func writeIDs(path string, tk *tokenize.WordPiece, exs []datasets.Example) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		for i, e := range exs {
			enc, err := tk.Encode(e.Text, e.Pair, e.IsPair)
			if err != nil {
				return fmt.Errorf("example %d: %w", i, err)
			}
			fmt.Fprintf(bw, "%d;%s;%s\n", e.Label, ints(enc.IDs), ints(enc.TypeIDs))
		}
		return bw.Flush()
	})
}

func ints(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, " ")
}
