// Command readstep times READ (SQuAD) training steps of a BERT-tiny-shaped
// span model at sequence 384 — forward, span loss, backward, clipping,
// AdamW — for benchmarks/read_compare.sh, and reports its peak resident
// memory. -loss mft is a batch of features with answer positions; -loss inv
// is batch/2 originals and their perturbations with BeLUGA's aligned loss.
// The PyTorch peer is benchmarks/torch_read_step.py.
package main

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/beluga-nlp/beluga/benchmarks/internal/stepbench"
	"github.com/beluga-nlp/beluga/losses"
	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/optim"
	"github.com/beluga-nlp/beluga/train"
)

func main() {
	steps := flag.Int("steps", 5, "timed steps (after one warm-up step)")
	batch := flag.Int("batch", 8, "rows per step")
	seq := flag.Int("seq", 384, "sequence length")
	kind := flag.String("loss", "mft", "mft or inv")
	flag.Parse()
	if err := run(*steps, *batch, *seq, *kind); err != nil {
		fmt.Fprintln(os.Stderr, "readstep:", err)
		os.Exit(1)
	}
}

// rows builds the benchmark's token ids: row i has seq − (37·i mod 150) real
// tokens, the rest padding (the same rule as the PyTorch peer).
func rows(n, seq int) []models.Encoding {
	encs := make([]models.Encoding, n)
	for i := range encs {
		real := seq - (37*i)%150
		ids, types := make([]int, seq), make([]int, seq)
		for j := 0; j < real; j++ {
			ids[j] = 1000 + (i*131+j*17)%29000
			if j > 20 {
				types[j] = 1
			}
		}
		encs[i] = models.Encoding{IDs: ids, TypeIDs: types}
	}
	return encs
}

func run(steps, batch, seq int, kind string) error {
	m, _, err := models.NewSpanBERT(models.TinyConfig(30522), nil, 1)
	if err != nil {
		return err
	}
	encs := rows(batch, seq)
	ev := losses.NewEvaluator()
	var loss train.LossFunc
	switch kind {
	case "mft":
		starts, ends := make([]int, batch), make([]int, batch)
		for i := range starts {
			starts[i], ends[i] = 30+i, 32+i
		}
		loss = func(z []float32) (float64, []float32, error) { return ev.SpanMFT(z, batch, seq, starts, ends) }
	case "inv":
		half := batch / 2
		aligns := make([]losses.SpanAlignment, half)
		for i := 0; i < half; i++ {
			// the perturbation: two tokens of the original replaced
			pert := append([]int(nil), encs[i].IDs...)
			pert[25], pert[60] = 2000, 2001
			encs[half+i] = models.Encoding{IDs: pert, TypeIDs: encs[i].TypeIDs}
			if aligns[i], err = losses.AlignSpans(encs[i].IDs, pert, seq); err != nil {
				return err
			}
		}
		loss = func(z []float32) (float64, []float32, error) { return ev.SpanINV(z, batch, seq, aligns, false) }
	default:
		return fmt.Errorf("-loss %q: want mft or inv", kind)
	}
	b := models.NewBatch(encs)
	for i := range b.Mask {
		if b.IDs[i] == 0 {
			b.Mask[i] = 0
		}
	}
	opt := optim.NewAdamW(m.Backend(), 0)
	var times []float64
	for s := 0; s <= steps; s++ {
		start := time.Now()
		if _, err := train.Update(m, b, loss, opt, 1e-4, 1.0, false); err != nil {
			return err
		}
		if s > 0 {
			times = append(times, time.Since(start).Seconds())
		}
	}
	sort.Float64s(times)
	fmt.Printf("go-%s read-%s step_time=%.4f peak_rss_mb=%.1f\n", models.BLAS, kind, times[len(times)/2], stepbench.PeakRSSMB())
	return nil
}
