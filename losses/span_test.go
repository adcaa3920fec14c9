package losses

import (
	"fmt"
	"math"
	"reflect"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// TestSpanMFTByHand: one row of 3 tokens. Start logits (0, 0, ln 3) give
// softmax (1/5, 1/5, 3/5) and, at position 2, CE = ln(5/3); end logits
// (ln 2, 0, 0) give (1/2, 1/4, 1/4) and, at position 0, CE = ln 2. The loss
// is (ln(5/3) + ln 2)/2 = ln(10/3)/2, and d/dz = (softmax − one-hot)/2.
func TestSpanMFTByHand(t *testing.T) {
	z := []float32{0, 0, float32(math.Log(3)), float32(math.Log(2)), 0, 0}
	l, dz, err := NewEvaluator().SpanMFT(z, 1, 3, []int{2}, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	if want := math.Log(10./3) / 2; !near(l, want, 1e-6) {
		t.Errorf("loss %.8f, want ln(10/3)/2 = %.8f", l, want)
	}
	want := []float64{0.1, 0.1, -0.2, -0.25, 0.125, 0.125}
	for i := range want {
		if !near(float64(dz[i]), want[i], 1e-6) {
			t.Errorf("dz = %v, want %v", dz, want)
			break
		}
	}
}

// TestSpanINVByHand: one pair of 3-token rows aligned as orig (0, 2, 0) ↔
// pert (0, 1, 0). Start: the original's gathered logits (0, ln 2, 0) give
// p = (1/4, 1/2, 1/4); the perturbation's (0, ln 3, 0) give log q = (ln 1/5,
// ln 3/5, ln 1/5); CE = ½ ln 5 + ½ ln(5/3) = ½ ln(25/3). End: gathered
// (ln 2, 0, ln 2) → p = (2/5, 1/5, 2/5) against uniform q: CE = ln 3. The
// loss is (½ ln(25/3) + ln 3)/2. Unaligned logits (orig start 1, pert start
// 2) get no gradient.
func TestSpanINVByHand(t *testing.T) {
	ln := func(x float64) float32 { return float32(math.Log(x)) }
	z := []float32{
		0, 5, ln(2), ln(2), 1, 0, // original: start, end
		0, ln(3), 7, 0, 0, 9, // perturbation: start, end
	}
	a := []SpanAlignment{{Orig: []int{0, 2, 0}, Pert: []int{0, 1, 0}}}
	l, dz, err := NewEvaluator().SpanINV(z, 2, 3, a, false)
	if err != nil {
		t.Fatal(err)
	}
	if want := (0.5*math.Log(25./3) + math.Log(3)) / 2; !near(l, want, 1e-6) {
		t.Errorf("loss %.8f, want %.8f", l, want)
	}
	// perturbed start: ½·scatter(q − p) = ½·(−0.05−0.05, 0.1, 0)
	if !near(float64(dz[6]), -0.05, 1e-6) || !near(float64(dz[7]), 0.05, 1e-6) || dz[8] != 0 {
		t.Errorf("perturbed start gradient %v, want (−0.05, 0.05, 0)", dz[6:9])
	}
	if dz[1] != 0 || dz[4] != 0 {
		t.Errorf("unaligned original logits got gradients %g, %g", dz[1], dz[4])
	}
	checkFD(t, "INV by hand", z, func(z []float32) (float64, []float32, error) {
		return NewEvaluator().SpanINV(z, 2, 3, a, false)
	}, nil)
}

func TestSpanLossGradients(t *testing.T) {
	const rows, seq = 4, 6
	ev := NewEvaluator()
	z := make([]float32, rows*2*seq)
	s := uint64(5)
	for i := range z {
		s = s*6364136223846793005 + 1442695040888963407
		z[i] = float32(float64(s>>11)/(1<<53)*4 - 2)
	}
	orig := [][]int{{101, 7, 8, 9, 102, 0}, {101, 5, 102, 6, 6, 102}}
	pert := [][]int{{101, 7, 3, 9, 102, 0}, {101, 5, 102, 6, 102, 0}}
	var aligns []SpanAlignment
	for i := range orig {
		a, err := AlignSpans(orig[i], pert[i], seq)
		if err != nil {
			t.Fatal(err)
		}
		aligns = append(aligns, a)
	}
	checkFD(t, "MFT", z, func(z []float32) (float64, []float32, error) {
		return ev.SpanMFT(z, rows, seq, []int{1, 0, 5, 2}, []int{3, 0, 5, 2})
	}, nil)
	checkFD(t, "INV", z, func(z []float32) (float64, []float32, error) {
		return ev.SpanINV(z, rows, seq, aligns, false)
	}, nil)
	_, dz, err := ev.SpanINV(z, rows, seq, aligns, true)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < rows/2*2*seq; i++ {
		if dz[i] != 0 {
			t.Fatalf("detached INV: gradient %g on original logit %d", dz[i], i)
		}
	}
}

func TestAlignSpans(t *testing.T) {
	a, err := AlignSpans([]int{101, 2040, 2003, 102, 0, 0}, []int{101, 2040, 2001, 2003, 102, 0}, 6)
	if err != nil {
		t.Fatal(err)
	}
	// blocks of SequenceMatcher(None, pert, orig): (0,0,2) (3,2,3), then padding
	want := SpanAlignment{Orig: []int{0, 1, 2, 3, 4, 0}, Pert: []int{0, 1, 3, 4, 5, 0}}
	if !reflect.DeepEqual(a, want) {
		t.Errorf("alignment %+v, want %+v", a, want)
	}
}

func TestSpanLossErrors(t *testing.T) {
	ev := NewEvaluator()
	z := make([]float32, 2*2*3)
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"short logits", func() error { _, _, err := ev.SpanMFT(z[:5], 2, 3, []int{0, 0}, []int{0, 0}); return err }()},
		{"position outside", func() error { _, _, err := ev.SpanMFT(z, 2, 3, []int{0, 3}, []int{0, 0}); return err }()},
		{"odd INV rows", func() error { _, _, err := ev.SpanINV(z[:6], 1, 3, nil, false); return err }()},
		{"alignment outside", func() error {
			_, _, err := ev.SpanINV(z, 2, 3, []SpanAlignment{{Orig: []int{0, 3, 0}, Pert: []int{0, 0, 0}}}, false)
			return err
		}()},
	} {
		if tc.err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

func ExampleEvaluator_SpanMFT() {
	// one row of 3 tokens: start logits, then end logits
	z := []float32{0, 0, 1.0986123, 0.6931472, 0, 0}
	l, dz, _ := NewEvaluator().SpanMFT(z, 1, 3, []int{2}, []int{0})
	fmt.Printf("%.4f %.3f\n", l, dz)
	// Output: 0.6020 [0.100 0.100 -0.200 -0.250 0.125 0.125]
}

// spanBenchBatch is a READ batch of 8 rows of 384 tokens: 4 originals and
// their perturbations (two tokens replaced), with logits and alignments.
func spanBenchBatch(b *testing.B) ([]float32, []SpanAlignment) {
	const rows, seq = 8, 384
	z := make([]float32, rows*2*seq)
	for i := range z {
		z[i] = float32(i%13) * 0.1
	}
	aligns := make([]SpanAlignment, rows/2)
	for i := range aligns {
		orig := make([]int, seq)
		for j := 0; j < seq-40*i; j++ {
			orig[j] = 1000 + (i*131+j*17)%29000
		}
		pert := append([]int(nil), orig...)
		pert[25], pert[60] = 2000, 2001
		var err error
		if aligns[i], err = AlignSpans(orig, pert, seq); err != nil {
			b.Fatal(err)
		}
	}
	return z, aligns
}

func BenchmarkAlignSpans(b *testing.B) {
	orig := make([]int, 384)
	for j := 0; j < 300; j++ {
		orig[j] = 1000 + j*17%29000
	}
	pert := append([]int(nil), orig...)
	pert[25], pert[60] = 2000, 2001
	for b.Loop() {
		if _, err := AlignSpans(orig, pert, 384); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSpanINV(b *testing.B) {
	z, aligns := spanBenchBatch(b)
	ev := NewEvaluator()
	for b.Loop() {
		if _, _, err := ev.SpanINV(z, 8, 384, aligns, false); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSpanMFT(b *testing.B) {
	z, _ := spanBenchBatch(b)
	ev := NewEvaluator()
	pos := []int{1, 2, 3, 4, 5, 6, 7, 8}
	for b.Loop() {
		if _, _, err := ev.SpanMFT(z, 8, 384, pos, pos); err != nil {
			b.Fatal(err)
		}
	}
}
