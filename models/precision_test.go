package models_test

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/backend"
	"github.com/beluga-nlp/beluga/models/checkpoint"
)

// precisionModel is what the precision tests need of a model.
type precisionModel interface {
	Forward(b models.Batch, train bool) (models.Pass, error)
	Params() []*models.Param
	SetPrecision(p models.Precision)
	SetBackend(b backend.Backend)
	Backend() backend.Backend
}

// precisionCase builds one model afresh (the same weights every time).
type precisionCase struct {
	name  string
	build func() (precisionModel, error)
	encs  []models.Encoding
}

func precisionCases(t *testing.T) []precisionCase {
	var cases []precisionCase
	for _, dir := range []string{"families/bert", "families/distilbert", "families/roberta", "deberta-v2", "modernbert/tiny"} {
		ck, err := checkpoint.LoadDir(filepath.Join("testdata", dir))
		if err != nil {
			t.Fatal(err)
		}
		encs := make([]models.Encoding, 4)
		for i := range encs {
			ids := make([]int, 5+3*i)
			for j := range ids {
				ids[j] = 5 + (7*i+13*j)%(ck.Config.VocabSize-5)
			}
			encs[i] = models.Encoding{IDs: ids, TypeIDs: make([]int, len(ids))}
		}
		cases = append(cases, precisionCase{dir, func() (precisionModel, error) {
			m, _, err := models.NewClassifier(ck.Config, 2, ck.Weights, 1)
			return m, err
		}, encs})
		if dir == "families/bert" {
			cases = append(cases, precisionCase{dir + " span", func() (precisionModel, error) {
				m, _, err := models.NewSpanModel(ck.Config, ck.Weights, 1)
				return m, err
			}, encs})
		}
	}
	vec := &checkpoint.Tensor{Shape: []int{50, 8}, Data: make([]float32, 400)}
	for i := range vec.Data {
		vec.Data[i] = float32(math.Sin(float64(i)))
	}
	encs := []models.Encoding{{IDs: []int{2, 3, 4, 9}}, {IDs: []int{7, 8}}, {IDs: []int{30, 31, 32}}}
	cases = append(cases, precisionCase{"wordvec", func() (precisionModel, error) { return models.NewWordVec(vec, 16, 3, 1) }, encs})
	return cases
}

// trainedOnce runs one training pass (dropout on, from the model's seeded
// stream) and returns the logits and every gradient.
func trainedOnce(m precisionModel, encs []models.Encoding) ([][]float32, error) {
	pass, err := m.Forward(models.NewBatch(encs), true)
	if err != nil {
		return nil, err
	}
	defer pass.Release()
	z := pass.Logits()
	out := [][]float32{append([]float32(nil), z...)}
	dz := make([]float32, len(z))
	for i := range dz {
		dz[i] = float32(math.Cos(float64(i))) / float32(len(z))
	}
	if err := pass.Backward(dz); err != nil {
		return nil, err
	}
	for _, p := range m.Params() {
		out = append(out, append([]float32(nil), p.Grad...))
	}
	return out, nil
}

func sameBits(a, b [][]float32) error {
	for i := range a {
		for j := range a[i] {
			if math.Float32bits(a[i][j]) != math.Float32bits(b[i][j]) {
				return fmt.Errorf("tensor %d (0: logits, then the gradients), element %d: %g and %g", i, j, a[i][j], b[i][j])
			}
		}
	}
	return nil
}

// TestPrecisionReachesEveryProduct: a model set to bf16 computes, bit for
// bit, what the same model computes on a backend whose every product is
// bf16 (backend.BF16) — so no product of any family, head or pass is left
// in float32 — and differs from the float32 model. The two precisions
// then train side by side in two goroutines, as two jobs of beluga run do,
// each with its own bits: the precision is the model's, not the process's.
func TestPrecisionReachesEveryProduct(t *testing.T) {
	for _, c := range precisionCases(t) {
		t.Run(c.name, func(t *testing.T) {
			run := func(p models.Precision, be backend.Backend) [][]float32 {
				m, err := c.build()
				if err != nil {
					t.Fatal(err)
				}
				if be != nil {
					m.SetBackend(be)
				}
				m.SetPrecision(p)
				got, err := trainedOnce(m, c.encs)
				if err != nil {
					t.Fatal(err)
				}
				return got
			}
			fp32 := run(models.PrecisionFP32, nil)
			bf16 := run(models.PrecisionBF16, nil)
			def, _ := models.DefaultBackend()
			if err := sameBits(bf16, run(models.PrecisionFP32, backend.BF16(def))); err != nil {
				t.Errorf("precision bf16 and the bf16 backend differ: %v", err)
			}
			if sameBits(bf16, fp32) == nil {
				t.Error("precision bf16 gives the float32 model's bits")
			}
			var wg sync.WaitGroup
			for i, p := range []models.Precision{models.PrecisionFP32, models.PrecisionBF16} {
				want := [][][]float32{fp32, bf16}[i]
				wg.Add(1)
				go func() {
					defer wg.Done()
					// Model after model, so that the two goroutines overlap.
					for range 3 {
						m, err := c.build()
						if err != nil {
							t.Error(err)
							return
						}
						m.SetPrecision(p)
						got, err := trainedOnce(m, c.encs)
						if err != nil {
							t.Error(err)
							return
						}
						if err := sameBits(got, want); err != nil {
							t.Errorf("%s model trained beside one of the other precision: %v", p, err)
							return
						}
					}
				}()
			}
			wg.Wait()
		})
	}
}

// TestComputeContextPerModel: models of one process, each built on its own
// compute context — every kernel path this CPU has, pure Go and the
// build's default backend, fp32 and bf16 — train side by side in
// goroutines, and each gives the bits it gives alone (its own reference).
// The go path's bits differ from the vector paths' (it has no FMA), so a
// model computing on another model's path would be caught.
func TestComputeContextPerModel(t *testing.T) {
	c := precisionCases(t)[0] // bert
	type ctx struct {
		be backend.Backend
		p  models.Precision
	}
	var ctxs []ctx
	def, _ := models.DefaultBackend()
	for _, path := range models.KernelPaths() {
		for _, name := range slices.Compact([]string{"go", def.Name()}) {
			be, err := backend.New(name, path)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range models.Precisions() {
				ctxs = append(ctxs, ctx{be, p})
			}
		}
	}
	train := func(x ctx) ([][]float32, error) {
		m, err := c.build()
		if err != nil {
			return nil, err
		}
		m.SetBackend(x.be)
		m.SetPrecision(x.p)
		if got, want := m.Backend().Kernels(), x.be.Kernels(); got != want {
			return nil, fmt.Errorf("the model computes on path %s, built for %s", got, want)
		}
		return trainedOnce(m, c.encs)
	}
	refs := make([][][]float32, len(ctxs))
	for i, x := range ctxs {
		var err error
		if refs[i], err = train(x); err != nil {
			t.Fatal(err)
		}
	}
	goPath, vector := -1, -1
	for i, x := range ctxs {
		if x.be.Name() == "go" && x.p == models.PrecisionFP32 {
			if x.be.Kernels() == "go" {
				goPath = i
			} else if vector < 0 {
				vector = i
			}
		}
	}
	if vector >= 0 && sameBits(refs[goPath], refs[vector]) == nil {
		t.Fatalf("the go path gives the %s path's bits: the test could not tell them apart", ctxs[vector].be.Kernels())
	}
	var wg sync.WaitGroup
	for i, x := range ctxs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 2 {
				got, err := train(x)
				if err != nil {
					t.Error(err)
					return
				}
				if err := sameBits(got, refs[i]); err != nil {
					t.Errorf("%s on %s in %s, beside models on other contexts: %v", c.name, x.be.Name(), x.be.Kernels()+"/"+string(x.p), err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestParsePrecision: the setting's values, the default, and an unknown
// value named in the error.
func TestParsePrecision(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want models.Precision
		err  bool
	}{{"", models.PrecisionFP32, false}, {"fp32", models.PrecisionFP32, false}, {"bf16", models.PrecisionBF16, false}, {"fp16", "", true}, {"BF16", "", true}} {
		got, err := models.ParsePrecision(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParsePrecision(%q) = %q, %v", tc.in, got, err)
		}
		if err != nil && !strings.Contains(err.Error(), fmt.Sprintf("%q", tc.in)) {
			t.Errorf("ParsePrecision(%q): %v does not name the value", tc.in, err)
		}
	}
}
