// Command gostep times training steps of a BERT-tiny-, BERT-mini- or
// bert-base-shaped classifier (forward, backward, AdamW) for benchmarks/compare.sh, and
// reports its peak resident memory. -precision bf16 computes the products
// in bf16 (model.precision). -family picks the model family: its
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

	"github.com/beluga-nlp/beluga/benchmarks/internal/stepbench"
	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/checkpoint"
)

func main() {
	steps := flag.Int("steps", 10, "timed steps (after one warm-up step)")
	batch := flag.Int("batch", 32, "batch size")
	seq := flag.Int("seq", 64, "sequence length")
	shape := flag.String("model", "tiny", "model shape: tiny (2 layers, hidden 128), mini (4 layers, hidden 256) or base (12 layers, hidden 768)")
	family := flag.String("family", "bert", "model family (config.json model_type): "+strings.Join(familyNames(), ", "))
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the timed steps to this file")
	precision := flag.String("precision", "fp32", "arithmetic of the model's matrix products: fp32 or bf16 (model.precision)")
	flag.Parse()
	kernels, err := models.KernelPath()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	cfg, err := stepbench.Config(*shape)
	if err != nil {
		fmt.Fprintf(os.Stderr, "-model: %v\n", err)
		os.Exit(2)
	}
	adapt, ok := tinyFamily[*family]
	if !ok {
		fmt.Fprintf(os.Stderr, "-family %q: want one of %s\n", *family, strings.Join(familyNames(), ", "))
		os.Exit(2)
	}
	cfg.ModelType = *family
	adapt(cfg)
	step, err := stepbench.New(cfg, *batch, *seq)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := step.SetPrecision(*precision); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if *precision == string(models.PrecisionBF16) {
		// The products' kernel: VDPBF16PS, or the portable one.
		kernels += " precision=bf16/" + models.BF16Kernel()
	}
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
		if err := step.Run(); err != nil {
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
	fmt.Printf("go-%s step_time=%.4f peak_rss_mb=%.1f fastest=%.4f kernels=%s\n", models.BLAS, times[len(times)/2], stepbench.PeakRSSMB(), times[0], kernels)
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
	"distilbert": func(c *checkpoint.Config) { c.TypeVocabSize = 0 }, // seq_classif_dropout: HF's 0.2
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
	// The decoders at the same shape, as torch_decoder.py builds them with
	// transformers' own classes: GPT-2 with its tanh GELU and dropout 0.1;
	// Llama and Qwen2 (q/k/v biases) with SwiGLU of the FFN's width, no
	// dropout, one key/value head per query head.
	"gpt2":  func(c *checkpoint.Config) { c.HiddenAct, c.LayerNormEps = "gelu_new", 1e-5 },
	"llama": decoderStep,
	"qwen2": decoderStep,
}

func decoderStep(c *checkpoint.Config) {
	c.HiddenAct, c.HiddenDropoutProb, c.AttentionProbsDropoutProb = "silu", 0, 0
}

func familyNames() []string {
	var out []string
	for k := range tinyFamily {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
