// Command gostep times training steps of a BERT-tiny- or BERT-mini-shaped
// classifier (forward, backward, AdamW) for benchmarks/compare.sh, and
// reports its peak resident memory. -family picks the model family: its
// encoder and head at the same shape (tinyFamily). Build it with -tags
// openblas for the OpenBLAS build.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"sort"
	"strings"
	"time"

	"github.com/beluga-nlp/beluga/losses"
	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/checkpoint"
	"github.com/beluga-nlp/beluga/train"
)

func main() {
	steps := flag.Int("steps", 10, "timed steps (after one warm-up step)")
	batch := flag.Int("batch", 32, "batch size")
	seq := flag.Int("seq", 64, "sequence length")
	shape := flag.String("model", "tiny", "model shape: tiny (2 layers, hidden 128) or mini (4 layers, hidden 256)")
	family := flag.String("family", "bert", "model family (config.json model_type): "+strings.Join(familyNames(), ", "))
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the timed steps to this file")
	flag.Parse()
	var cfg *checkpoint.Config
	switch *shape {
	case "tiny":
		cfg = models.TinyConfig(30522)
	case "mini":
		cfg = models.MiniConfig(30522)
	default:
		fmt.Fprintf(os.Stderr, "-model %q: want tiny or mini\n", *shape)
		os.Exit(2)
	}
	adapt, ok := tinyFamily[*family]
	if !ok {
		fmt.Fprintf(os.Stderr, "-family %q: want one of %s\n", *family, strings.Join(familyNames(), ", "))
		os.Exit(2)
	}
	cfg.ModelType = *family
	adapt(cfg)
	m, _, err := models.NewClassifier(cfg, 2, nil, 1)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	encs := make([]models.Encoding, *batch)
	labels := make([]int, *batch)
	for i := range encs {
		ids, types := make([]int, *seq), make([]int, *seq)
		for j := range ids {
			ids[j] = 1000 + (i*131+j*17)%29000
		}
		if *seq+cfg.PadTokenID+1 > cfg.MaxPositionEmbeddings {
			fmt.Fprintf(os.Stderr, "-seq %d: longer than the %s position table\n", *seq, *family)
			os.Exit(2)
		}
		encs[i] = models.Encoding{IDs: ids, TypeIDs: types}
		labels[i] = i % 2
	}
	b := models.NewBatch(encs)
	ev := losses.NewEvaluator()
	loss := func(z []float32) (float64, []float32, error) { return ev.CE(z, *batch, 2, labels) }
	opt := train.NewAdamW(0)
	var times []float64
	for s := 0; s <= *steps; s++ {
		if s == 1 && *cpuProfile != "" {
			f, err := os.Create(*cpuProfile)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			defer f.Close()
			if err := pprof.StartCPUProfile(f); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			defer pprof.StopCPUProfile()
		}
		start := time.Now()
		if _, err := train.Update(m, b, loss, opt, 1e-4, 1.0, false); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if s > 0 {
			times = append(times, time.Since(start).Seconds())
		}
	}
	sort.Float64s(times)
	// fastest= is the least disturbed step on a shared machine; step_time=
	// (the median) is what compare.sh compares.
	fmt.Printf("go-%s step_time=%.4f peak_rss_mb=%.1f fastest=%.4f\n", models.BLAS, times[len(times)/2], peakRSSMB(), times[0])
}

// tinyFamily adapts the BERT-shaped config of -model to each family, as
// torch_step.py's FAMILIES builds its peer: one entry per family.
var tinyFamily = map[string]func(c *checkpoint.Config){
	"bert": func(*checkpoint.Config) {},
	// ELECTRA-small's proportions: embeddings half the hidden width.
	"electra": func(c *checkpoint.Config) { c.EmbeddingSize = c.HiddenSize / 2 },
	"roberta": func(c *checkpoint.Config) {
		c.TypeVocabSize, c.PadTokenID, c.MaxPositionEmbeddings, c.LayerNormEps = 1, 1, c.MaxPositionEmbeddings+2, 1e-5
	},
	"xlm-roberta": func(c *checkpoint.Config) {
		c.TypeVocabSize, c.PadTokenID, c.MaxPositionEmbeddings, c.LayerNormEps = 1, 1, c.MaxPositionEmbeddings+2, 1e-5
	},
	"distilbert": func(c *checkpoint.Config) { c.TypeVocabSize, c.SeqClassifDropout = 0, 0.2 },
	// deberta-v3-base's relative attention and defaults at this size.
	"deberta-v2": func(c *checkpoint.Config) {
		d := models.DebertaTinyConfig(c.VocabSize)
		c.Extra, c.TypeVocabSize, c.LayerNormEps = d.Extra, d.TypeVocabSize, d.LayerNormEps
	},
	// GeGLU half the FFN's width (Wi has the FFN's outputs), ModernBERT's
	// defaults otherwise: no dropout, window 128 (torch_modernbert.py).
	"modernbert": func(c *checkpoint.Config) {
		c.IntermediateSize /= 2
		c.HiddenDropoutProb, c.AttentionProbsDropoutProb, c.LayerNormEps = 0, 0, 1e-5
	},
}

func familyNames() []string {
	var out []string
	for k := range tinyFamily {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// peakRSSMB reads the process's peak resident set size (VmHWM) from /proc.
func peakRSSMB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			var kb float64
			fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(line, "VmHWM:")), "%f", &kb)
			return kb / 1024
		}
	}
	return 0
}
