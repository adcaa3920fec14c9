package losses

import (
	"math"
	"testing"
)

// TestSpanIRMPenalty checks the span penalties against their definition —
// P = Σ_k (∂D/∂w_k)² at w = 1, with D the span loss of logits whose start
// and end rows (MFT) or aligned perturbation rows (INV) are scaled by w
// position-wise, the derivative taken by central differences in w — and
// their gradients against finite differences in z.
func TestSpanIRMPenalty(t *testing.T) {
	ev := NewEvaluator()
	const rows, seq = 4, 6
	z := make([]float32, rows*2*seq)
	s := uint64(11)
	for i := range z {
		s = s*6364136223846793005 + 1442695040888963407
		z[i] = float32(float64(s>>11)/(1<<53)*4 - 2)
	}
	starts, ends := []int{1, 0, 5, 2}, []int{3, 0, 5, 2}
	var aligns []SpanAlignment
	for i, pair := range [][2][]int{
		{{101, 7, 8, 9, 102, 0}, {101, 7, 3, 9, 102, 0}},
		{{101, 5, 102, 6, 6, 102}, {101, 5, 102, 6, 102, 0}},
	} {
		a, err := AlignSpans(pair[0], pair[1], seq)
		if err != nil {
			t.Fatalf("pair %d: %v", i, err)
		}
		aligns = append(aligns, a)
	}
	// The dummy losses, written from BeLUGA's definition: w scales every
	// row's start and end logits position-wise (MFT), or the perturbations'
	// aligned logits (INV).
	mftDummy := func(w []float64) float64 {
		zz := make([]float32, len(z))
		for i := range z {
			zz[i] = float32(float64(z[i]) * w[i%seq])
		}
		l, _, err := ev.SpanMFT(zz, rows, seq, starts, ends)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	invDummy := func(w []float64) float64 {
		// D = mean over the 2·pairs of CE(pert_aligned⊙w, softmax(orig_aligned)).
		sum, n := 0.0, 0
		for i, a := range aligns {
			for part := 0; part < 2; part++ {
				o, p := make([]float64, seq), make([]float64, seq)
				for k := 0; k < seq; k++ {
					o[k] = float64(z[i*2*seq+part*seq+a.Orig[k]])
					p[k] = float64(z[(rows/2+i)*2*seq+part*seq+a.Pert[k]]) * w[k]
				}
				po, lp := softmaxF(o), logSoftmaxF(p)
				for k := range po {
					sum -= po[k] * lp[k]
				}
				n++
			}
		}
		return sum / float64(n)
	}
	byDefinition := func(dummy func([]float64) float64) float64 {
		pen := 0.0
		for k := 0; k < seq; k++ {
			const h = 1e-3 // the MFT dummy runs on float32 logits
			w := make([]float64, seq)
			for j := range w {
				w[j] = 1
			}
			w[k] = 1 + h
			up := dummy(w)
			w[k] = 1 - h
			down := dummy(w)
			g := (up - down) / (2 * h)
			pen += g * g
		}
		return pen
	}
	mft := func(z []float32) (float64, []float32, error) {
		return ev.SpanIRMPenaltyMFT(z, rows, seq, starts, ends, false)
	}
	inv := func(z []float32) (float64, []float32, error) {
		return ev.SpanIRMPenaltyINV(z, rows, seq, aligns, false)
	}
	for _, tc := range []struct {
		name  string
		f     func([]float32) (float64, []float32, error)
		dummy func([]float64) float64
	}{{"MFT", mft, mftDummy}, {"INV", inv, invDummy}} {
		got, _, err := tc.f(z)
		if err != nil {
			t.Fatal(err)
		}
		if want := byDefinition(tc.dummy); math.Abs(got-want) > 1e-3*math.Max(want, 1e-3) {
			t.Errorf("%s penalty %g, by definition %g", tc.name, got, want)
		}
		checkFD(t, tc.name+" penalty", z, tc.f, nil)
	}
	if _, _, err := ev.SpanIRMPenaltyMFT(z, rows, seq, starts, ends, true); err == nil {
		t.Error("the split (DomainBed) penalty of a span batch: no error")
	}
}

func softmaxF(x []float64) []float64 {
	ls := logSoftmaxF(x)
	for i := range ls {
		ls[i] = math.Exp(ls[i])
	}
	return ls
}

func logSoftmaxF(x []float64) []float64 {
	mx := math.Inf(-1)
	for _, v := range x {
		mx = math.Max(mx, v)
	}
	sum := 0.0
	for _, v := range x {
		sum += math.Exp(v - mx)
	}
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = v - mx - math.Log(sum)
	}
	return out
}
