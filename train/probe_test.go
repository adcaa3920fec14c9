package train

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/losses"
	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/backend"
)

// countingBERT counts the inputs whose features it computes.
type countingBERT struct {
	*models.BERT
	inferred int
}

func (c *countingBERT) Infer(b models.Batch) (models.Output, error) {
	c.inferred += b.Size
	return c.BERT.Infer(b)
}

// probeData is a small suite-and-i.i.d. training set with repeated inputs.
func probeData() (Data, int) {
	enc := func(ids ...int) models.Encoding {
		return models.Encoding{IDs: append(append([]int{1}, ids...), 2), TypeIDs: make([]int, len(ids)+2)}
	}
	var d Data
	d.Suite = &SuiteData{}
	for i := 0; i < 12; i++ {
		e := enc(10+i, 40+i%3)
		d.Suite.MFT = append(d.Suite.MFT, Row{Enc: e, Target: []float64{float64(i % 2), float64(1 - i%2)}, Env: "MFT/a"})
		d.IID = append(d.IID, Row{Enc: enc(60+i, 61, 62+i%4), Target: []float64{float64(i % 2), float64(1 - i%2)}, Env: "iid"})
	}
	for i := 0; i < 6; i++ {
		d.Suite.INV = append(d.Suite.INV, Perturbed{Orig: enc(80 + i), Perts: []models.Encoding{enc(80+i, 90), enc(80+i, 91, 92)}, Env: "INV/b"})
		d.Suite.DIR = append(d.Suite.DIR, Perturbed{Orig: enc(120+i, 5), Perts: []models.Encoding{enc(120+i, 5, 6)}, Direction: losses.NotLess2, Env: "DIR/c"})
	}
	// Every input differs from every other: 12 MFT rows, 12 i.i.d. rows, 3
	// inputs per INV case and 2 per DIR case.
	return d, 12 + 12 + 6*3 + 6*2
}

// TestCachedProbeIsLinearProbing: with dropout off (where BeLUGA's frozen
// encoder and the lp-frozen-eval correction agree), linear probing on
// cached features trains the same batches to the same losses and head as
// the faithful LP, and computes each input's features once.
//
// The features are computed in batches of other sizes than the training
// batches, so the two agree bit for bit only on a backend whose bits for a
// row of a product do not depend on the rows computed with it: the
// reference backend (pure Go, on every kernel path). The build's backend
// (OpenBLAS in the openblas build) must instead give the same bits on any
// number of cores.
func TestCachedProbeIsLinearProbing(t *testing.T) {
	cfg := models.TinyConfig(200)
	cfg.HiddenSize, cfg.IntermediateSize = 32, 64
	data, distinct := probeData()
	hp := Hyper{Epochs: 3, BatchSize: 4, LR: 1e-2}
	train := func(u Updater, be backend.Backend) (*countingBERT, []CurvePoint) {
		b, _, err := models.NewBERT(cfg, 2, nil, 9)
		if err != nil {
			t.Fatal(err)
		}
		b.SetBackend(be)
		b.SetDropout(0, 0)
		m := &countingBERT{BERT: b}
		curve, err := Train(context.Background(), m, data, []Phase{{Hyper: hp, Frozen: true, Update: u}}, TrainOptions{Seed: 4})
		if err != nil {
			t.Fatal(err)
		}
		return m, curve
	}
	heads := []string{"classifier.weight", "classifier.bias", "bert.pooler.dense.weight"}
	t.Run("reference", func(t *testing.T) {
		faithful, want := train(&erm{}, backend.Reference())
		cached, got := train(&cachedProbe{}, backend.Reference())
		if len(got) != len(want) {
			t.Fatalf("%d updates on cached features, %d faithful", len(got), len(want))
		}
		for i := range want {
			if got[i].Kind != want[i].Kind || got[i].Loss != want[i].Loss {
				t.Fatalf("update %d: %s loss %v on cached features, faithful %s %v", i, got[i].Kind, got[i].Loss, want[i].Kind, want[i].Loss)
			}
		}
		for _, name := range heads {
			a, b := faithful.Param(name).Value, cached.Param(name).Value
			for j := range a {
				if math.Float32bits(a[j]) != math.Float32bits(b[j]) {
					t.Fatalf("%s[%d] = %v after probing on cached features, %v faithful", name, j, b[j], a[j])
				}
			}
		}
		if cached.inferred == 0 || cached.inferred > distinct {
			t.Errorf("features computed for %d inputs, want at most the %d distinct ones", cached.inferred, distinct)
		}
	})
	def, _ := models.DefaultBackend()
	t.Run(def.Name()+"/any-cores", func(t *testing.T) {
		var want *countingBERT
		for _, procs := range []int{1, 2, 7} {
			prev := runtime.GOMAXPROCS(procs)
			got, _ := train(&cachedProbe{}, def)
			runtime.GOMAXPROCS(prev)
			if want == nil {
				want = got
				continue
			}
			for _, name := range heads {
				a, b := want.Param(name).Value, got.Param(name).Value
				for j := range a {
					if math.Float32bits(a[j]) != math.Float32bits(b[j]) {
						t.Fatalf("%s[%d] = %v probed under GOMAXPROCS %d, %v under 1", name, j, b[j], procs, a[j])
					}
				}
			}
		}
	})
}

// TestLPFrozenEvalCorrection: the correction selects the cached probe for
// LP and LP-FT's probing phase; without it they are BeLUGA's.
func TestLPFrozenEvalCorrection(t *testing.T) {
	for _, tc := range []struct {
		method      string
		corrections []string
		cached      bool
	}{
		{"lp", nil, false}, {"lp", []string{CorrectLPFrozenEval}, true},
		{"lp-ft", nil, false}, {"lp-ft", []string{CorrectLPFrozenEval}, true},
	} {
		spec := RunSpec{Method: tc.method, Corrections: tc.corrections}
		m, err := NewMethod(tc.method, spec.defaults())
		if err != nil {
			t.Fatal(err)
		}
		phases := m.Phases(Hyper{Epochs: 1, BatchSize: 8, LR: 1e-3}, Hyper{Epochs: 1, BatchSize: 8, LR: 1e-3})
		_, cached := phases[0].Update.(*cachedProbe)
		if cached != tc.cached || !phases[0].Frozen {
			t.Errorf("%s with %v: probing phase %T (frozen %v), want cached %v", tc.method, tc.corrections, phases[0].Update, phases[0].Frozen, tc.cached)
		}
		if len(phases) == 2 {
			if _, ok := phases[1].Update.(*erm); !ok || phases[1].Frozen {
				t.Errorf("lp-ft's fine-tuning phase %T (frozen %v), want plain", phases[1].Update, phases[1].Frozen)
			}
		}
	}
}

// TestLPFrozenEvalNeedsAHead: a model that cannot train its head alone is
// refused with the correction's name.
func TestLPFrozenEvalNeedsAHead(t *testing.T) {
	spec := tinySpec(ConfigIIDPlusT) // a word-vector model
	spec.Method, spec.Corrections = "lp", []string{CorrectLPFrozenEval}
	_, err := Run(context.Background(), spec, t.TempDir())
	if err == nil || !strings.Contains(err.Error(), CorrectLPFrozenEval) {
		t.Fatalf("error %v, want one naming %s", err, CorrectLPFrozenEval)
	}
}

// TestCachedProbeSharesFeatures: runs that probe the same frozen encoder
// with a cache directory compute its features once between them; another
// encoder gets its own, and a damaged cache file is recomputed.
func TestCachedProbeSharesFeatures(t *testing.T) {
	cfg := models.TinyConfig(200)
	cfg.HiddenSize, cfg.IntermediateSize = 32, 64
	data, distinct := probeData()
	dir := t.TempDir()
	hp := Hyper{Epochs: 1, BatchSize: 4, LR: 1e-2}
	run := func(seed uint64) (int, []CurvePoint) {
		b, _, err := models.NewBERT(cfg, 2, nil, seed)
		if err != nil {
			t.Fatal(err)
		}
		m := &countingBERT{BERT: b}
		curve, err := Train(context.Background(), m, data, []Phase{{Hyper: hp, Frozen: true, Update: &cachedProbe{}}}, TrainOptions{Seed: 4, Cache: dir})
		if err != nil {
			t.Fatal(err)
		}
		return m.inferred, curve
	}
	n1, c1 := run(9)
	n2, c2 := run(9)
	if n1 != distinct || n2 != 0 {
		t.Errorf("features computed for %d then %d inputs, want %d then 0", n1, n2, distinct)
	}
	for i := range c1 {
		if c1[i] != c2[i] {
			t.Fatalf("update %d: %+v with features read back, %+v computed", i, c2[i], c1[i])
		}
	}
	if n, _ := run(10); n != distinct {
		t.Errorf("another encoder reused %d features", distinct-n)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "features", "*.feat"))
	if len(files) != 2 {
		t.Fatalf("%d feature files, want one per encoder", len(files))
	}
	for _, f := range files {
		if err := os.Truncate(f, 100); err != nil {
			t.Fatal(err)
		}
	}
	if n, c := run(9); n != distinct || c[len(c)-1] != c1[len(c1)-1] {
		t.Errorf("after damage: %d features computed (want %d), last update %+v (want %+v)", n, distinct, c[len(c)-1], c1[len(c1)-1])
	}
}
