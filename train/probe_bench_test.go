package train

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/beluga-nlp/beluga/losses"
	"github.com/beluga-nlp/beluga/models"
)

// BenchmarkLP measures one LP training phase (BeLUGA's LP row: 3 epochs,
// batch 8) of a BERT-tiny-shaped model on suite-like data (MFT rows, INV
// and DIR cases with two perturbations, 6 to 30 tokens), faithful (the
// frozen encoder run at every step, its dropout on) and with the
// lp-frozen-eval correction (features computed once), in a run of its own
// and in a later run of a sweep that finds them in the shared cache. The
// model is built once: a frozen phase changes only the head.
func BenchmarkLP(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	enc := func() models.Encoding {
		n := 6 + rng.IntN(25)
		e := models.Encoding{IDs: make([]int, n), TypeIDs: make([]int, n)}
		for i := range e.IDs {
			e.IDs[i] = 1000 + rng.IntN(28000)
		}
		e.IDs[0], e.IDs[n-1] = 101, 102
		return e
	}
	d := Data{Suite: &SuiteData{}}
	for i := 0; i < 512; i++ {
		d.Suite.MFT = append(d.Suite.MFT, Row{Enc: enc(), Target: []float64{float64(i % 2), float64(1 - i%2)}, Env: "MFT/a"})
	}
	for i := 0; i < 128; i++ {
		d.Suite.INV = append(d.Suite.INV, Perturbed{Orig: enc(), Perts: []models.Encoding{enc(), enc()}, Env: "INV/b"})
		d.Suite.DIR = append(d.Suite.DIR, Perturbed{Orig: enc(), Perts: []models.Encoding{enc(), enc()}, Direction: losses.NotLess2, Env: "DIR/c"})
	}
	hp := Hyper{Epochs: 3, BatchSize: 8, LR: 1e-3}
	shared := b.TempDir()
	for _, bc := range []struct {
		name  string
		u     func() Updater
		cache string
	}{
		{"faithful", func() Updater { return &erm{} }, ""},
		{"lp-frozen-eval", func() Updater { return &cachedProbe{} }, ""},
		// A later run of the sweep probing the same encoder: its features
		// are read from the cache the first run wrote.
		{"lp-frozen-eval-cached", func() Updater { return &cachedProbe{} }, shared},
	} {
		b.Run(bc.name, func(b *testing.B) {
			m, _, err := models.NewBERT(models.TinyConfig(30522), 2, nil, 1)
			if err != nil {
				b.Fatal(err)
			}
			train := func() {
				if _, err := Train(context.Background(), m, d, []Phase{{Hyper: hp, Frozen: true, Update: bc.u()}}, TrainOptions{Seed: 1, Cache: bc.cache}); err != nil {
					b.Fatal(err)
				}
			}
			if bc.cache != "" {
				train()
			}
			for b.Loop() {
				train()
			}
		})
	}
}
