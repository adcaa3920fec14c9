package conformance

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/backend"
	"github.com/beluga-nlp/beluga/models/checkpoint"
)

// faulty backends are the reference with one bug each: the suite must
// report every one of them.
type ignoresBeta struct{ backend.Backend } // C = α·A·B, dropping β·C

func (f ignoresBeta) Gemm(parallel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	f.Backend.Gemm(parallel, transA, transB, m, n, k, alpha, a, lda, b, ldb, 0, c, ldc)
}

type noDecay struct{ backend.Backend } // AdamW without weight decay

func (f noDecay) AdamW(value, grad, m, v []float32, s backend.AdamWStep) {
	s.Decay = 1
	f.Backend.AdamW(value, grad, m, v, s)
}

type noBiasCorrection struct{ backend.Backend } // Adam's second moment uncorrected

func (f noBiasCorrection) AdamW(value, grad, m, v []float32, s backend.AdamWStep) {
	s.InvBC2 = 1
	f.Backend.AdamW(value, grad, m, v, s)
}

type rowsDependent struct{ backend.Backend } // a product that changes with the batch's rows

func (f rowsDependent) Gemm(parallel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	f.Backend.Gemm(parallel, transA, transB, m, n, k, alpha*(1+1e-4*float32(m%5)), a, lda, b, ldb, beta, c, ldc)
}

type sloppyLayerNorm struct{ backend.Backend } // eps dropped

func (f sloppyLayerNorm) LayerNorm(y, xhat, rstd, x, gamma, beta []float32, h int, eps float64) {
	f.Backend.LayerNorm(y, xhat, rstd, x, gamma, beta, h, 1e-1)
}

// TestSuiteCatchesFaults: the reference passes; each faulty backend is
// reported, by the operation checks or the model checks on BERT.
func TestSuiteCatchesFaults(t *testing.T) {
	ck, err := checkpoint.LoadDir(filepath.Join("..", "..", "testdata", "families", "bert"))
	if err != nil {
		t.Fatal(err)
	}
	ref := backend.Reference()
	for _, tc := range []struct {
		name        string
		b           backend.Backend
		ops, family bool // whether each check must report it
	}{
		{"reference", ref, false, false},
		{"gemm ignores beta", ignoresBeta{ref}, true, true},
		{"AdamW without decay", noDecay{ref}, true, false},
		{"AdamW without bias correction", noBiasCorrection{ref}, true, true},
		{"gemm depends on rows", rowsDependent{ref}, false, true},
		{"LayerNorm eps", sloppyLayerNorm{ref}, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ops, fam []string
			CheckOps(tc.b, func(f string, a ...any) { ops = append(ops, fmt.Sprintf(f, a...)) })
			if _, err := CheckFamily(tc.b, ck, func(f string, a ...any) { fam = append(fam, fmt.Sprintf(f, a...)) }); err != nil {
				t.Fatal(err)
			}
			if (len(ops) > 0) != tc.ops {
				t.Errorf("operation checks reported %d problems %q, want any: %v", len(ops), ops, tc.ops)
			}
			if (len(fam) > 0) != tc.family {
				t.Errorf("family checks reported %d problems %q, want any: %v", len(fam), fam, tc.family)
			}
		})
	}
}

// TestEveryFamilyHasAFixture: a family registered without a fixture in
// Fixtures would go unchecked on every backend.
func TestEveryFamilyHasAFixture(t *testing.T) {
	covered := map[string]bool{}
	for _, f := range Fixtures {
		cfg, err := checkpoint.ReadConfig(filepath.Join("..", "..", "testdata", f, "config.json"))
		if err != nil {
			t.Fatal(err)
		}
		covered[cfg.ModelType] = true
	}
	for _, name := range models.FamilyNames() {
		if !covered[name] {
			t.Errorf("family %s has no fixture in the conformance suite", name)
		}
	}
}
