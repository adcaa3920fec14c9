package models

import "testing"

func TestSizeClass(t *testing.T) {
	prev := 0
	for n := 1; n < 1<<16; n++ {
		c := sizeClass(n)
		if c < n || c < prev || 4*c > 5*n+64 {
			t.Fatalf("sizeClass(%d) = %d (previous %d)", n, c, prev)
		}
		if sizeClass(c) != c {
			t.Fatalf("sizeClass(%d) = %d is not a class of its own", n, c)
		}
		prev = c
	}
}

func TestBufPoolReuses(t *testing.T) {
	ctx := newCompute()
	p := bufPool{ctx: &ctx}
	a := p.get(1000)
	a[0] = 7
	p.put(a, nil)
	b := p.get(990) // same class
	if &b[0] != &a[0] || len(b) != 990 {
		t.Fatalf("a released buffer of the same class was not reused")
	}
	if z := p.zeroed(990); z[0] != 0 {
		t.Fatalf("zeroed buffer holds %g", z[0])
	}
	small := bufPool{limit: 100, ctx: &ctx}
	small.put(make([]float32, 10, 1024))
	if small.kept != 0 {
		t.Fatalf("the pool kept a buffer past its limit")
	}
}

// TestBERTRecycledBuffersChangeNothing runs passes of other shapes first,
// so that a pass gets dirty recycled buffers, and compares its logits and
// gradients with a fresh model's.
func TestBERTRecycledBuffersChangeNothing(t *testing.T) {
	cfg := TinyConfig(200)
	cfg.HiddenSize, cfg.IntermediateSize, cfg.NumAttentionHeads = 16, 32, 2
	build := func() *BERT {
		m, _, err := NewBERT(cfg, 2, nil, 3)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	batch := func(rows, seq int) Batch {
		var encs []Encoding
		for r := 0; r < rows; r++ {
			ids := make([]int, seq-r%2)
			for j := range ids {
				ids[j] = 1 + (r*7+j*3)%199
			}
			encs = append(encs, Encoding{IDs: ids, TypeIDs: make([]int, len(ids))})
		}
		return NewBatch(encs)
	}
	step := func(m *BERT, b Batch) []float32 {
		m.SeedDropout(9)
		for _, p := range m.Params() {
			clear(p.Grad)
		}
		pass, err := m.Forward(b, true)
		if err != nil {
			t.Fatal(err)
		}
		dz := make([]float32, len(pass.Logits()))
		for i := range dz {
			dz[i] = float32(i%3) - 1
		}
		if err := pass.Backward(dz); err != nil {
			t.Fatal(err)
		}
		logits := append([]float32(nil), pass.Logits()...)
		pass.Release()
		var grads []float32
		for _, p := range m.Params() {
			grads = append(grads, p.Grad...)
		}
		return append(logits, grads...)
	}
	used, fresh := build(), build()
	for _, b := range []Batch{batch(5, 9), batch(3, 12), batch(4, 8)} {
		step(used, b)
		if _, err := used.Infer(b); err != nil {
			t.Fatal(err)
		}
	}
	target := batch(4, 8)
	got, want := step(used, target), step(fresh, target)
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("value %d: %g after recycling, %g fresh", i, got[i], want[i])
		}
	}
	a, err := used.Infer(target)
	if err != nil {
		t.Fatal(err)
	}
	bOut, err := fresh.Infer(target)
	if err != nil {
		t.Fatal(err)
	}
	for i := range bOut.Logits {
		if a.Logits[i] != bOut.Logits[i] {
			t.Fatalf("inference logit %d: %g after recycling, %g fresh", i, a.Logits[i], bOut.Logits[i])
		}
	}
}
