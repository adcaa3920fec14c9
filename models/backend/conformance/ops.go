package conformance

import (
	"fmt"
	"math/rand/v2"

	"github.com/beluga-nlp/beluga/models/backend"
)

// CheckOps runs each operation of b on random buffers and compares it with
// the reference backend's, reporting differences through errorf.
func CheckOps(b backend.Backend, errorf func(format string, args ...any)) {
	checkOps(b, backend.Reference(), FP32, errorf)
}

func checkOps(b, ref backend.Backend, tol Tolerances, errorf func(format string, args ...any)) {
	r := rand.New(rand.NewPCG(7, 7))
	// fill returns a buffer of b's holding random values and the same
	// values in one of the reference's.
	fill := func(n int, scale float32) (got, want []float32) {
		got, want = b.Alloc(n), ref.Alloc(n)
		for i := range got {
			v := scale * float32(r.NormFloat64())
			got[i], want[i] = v, v
		}
		return got, want
	}
	for _, tc := range []struct {
		m, n, k          int
		transA, transB   bool
		parallel         bool
		padA, padB, padC int
		alpha, beta      float32
	}{
		{1, 1, 1, false, false, false, 0, 0, 0, 1, 0},
		{7, 5, 3, false, true, false, 2, 1, 3, 0.5, 1},
		{33, 17, 65, true, false, true, 0, 4, 0, 1, 0.25},
		{64, 128, 96, true, true, true, 1, 0, 2, -1, 1},
		{300, 200, 128, false, true, true, 0, 0, 0, 1, 0},
		{129, 64, 256, false, false, true, 3, 3, 3, 0.125, 1},
	} {
		func() {
			what := fmt.Sprintf("gemm %dx%dx%d tA=%v tB=%v", tc.m, tc.n, tc.k, tc.transA, tc.transB)
			ar, ac := tc.m, tc.k
			if tc.transA {
				ar, ac = tc.k, tc.m
			}
			br, bc := tc.k, tc.n
			if tc.transB {
				br, bc = tc.n, tc.k
			}
			lda, ldb, ldc := ac+tc.padA, bc+tc.padB, tc.n+tc.padC
			a, a0 := fill(ar*lda, 1)
			bb, b0 := fill(br*ldb, 1)
			c, c0 := fill(tc.m*ldc, 1)
			b.Gemm(tc.parallel, tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.alpha, a, lda, bb, ldb, tc.beta, c, ldc)
			ref.Gemm(tc.parallel, tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.alpha, a0, lda, b0, ldb, tc.beta, c0, ldc)
			compare(errorf, tol.Gemm, what, c, c0)
			// The padding between rows is not C's: it stays as it was.
			for i := 0; i < tc.m; i++ {
				for j := tc.n; j < ldc && i*ldc+j < len(c); j++ {
					if c[i*ldc+j] != c0[i*ldc+j] {
						errorf("%s wrote C's padding at row %d, column %d", what, i, j)
						return
					}
				}
			}
		}()
	}
	{
		x, x0 := fill(50000, 3)
		y, y0 := b.Alloc(len(x)), ref.Alloc(len(x))
		b.GELU(y, x)
		ref.GELU(y0, x0)
		compare(errorf, Tol, "GELU", y, y0)
		dy, dy0 := fill(len(x), 1)
		b.GELUBackward(dy, dy, x) // in place, as the models run it
		ref.GELUBackward(dy0, dy0, x0)
		compare(errorf, Tol, "GELU backward", dy, dy0)
	}
	{
		for _, n := range []int{1, 7, 128, 1000} {
			row, row0 := fill(n, 10)
			row[n/2], row0[n/2] = -3.4e38, -3.4e38 // a masked key
			b.Softmax(row)
			ref.Softmax(row0)
			compare(errorf, Tol, fmt.Sprintf("softmax of %d", n), row, row0)
		}
	}
	{
		const rows, h = 300, 96
		x, x0 := fill(rows*h, 2)
		g, g0 := fill(h, 1)
		be, be0 := fill(h, 1)
		y, y0 := b.Alloc(rows*h), ref.Alloc(rows*h)
		xh, xh0 := b.Alloc(rows*h), ref.Alloc(rows*h)
		rs, rs0 := b.Alloc(rows), ref.Alloc(rows)
		b.LayerNorm(y, xh, rs, x, g, be, h, 1e-12)
		ref.LayerNorm(y0, xh0, rs0, x0, g0, be0, h, 1e-12)
		compare(errorf, Tol, "y", y, y0)
		compare(errorf, Tol, "rstd", rs, rs0)
		dy, dy0 := fill(rows*h, 1)
		dx, dx0 := b.Alloc(rows*h), ref.Alloc(rows*h)
		dg, dg0 := fill(h, 1)
		db, db0 := fill(h, 1)
		b.LayerNormBackward(dx, dg, db, dy, xh, rs, g, h)
		ref.LayerNormBackward(dx0, dg0, db0, dy0, xh0, rs0, g0, h)
		compare(errorf, Tol, "dx", dx, dx0)
		compare(errorf, Tol, "dγ (accumulated)", dg, dg0)
		compare(errorf, Tol, "dβ (accumulated)", db, db0)
		b.LayerNormBackward(dx, nil, nil, dy, xh, rs, g, h) // frozen γ, β
		compare(errorf, Tol, "dx without dγ", dx, dx0)
	}
	{
		const n = 10000
		v, v0 := fill(n, 0.05)
		g, g0 := fill(n, 1e-2)
		m, m0 := b.Alloc(n), ref.Alloc(n)
		s2, s20 := b.Alloc(n), ref.Alloc(n)
		for step, decay := range []float32{1, 0.9} { // 0.9: a weight decay large enough to see
			s := backend.AdamWStep{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, StepSize: 1e-3 / (1 - 0.9), InvBC2: 1 / 0.0316, Decay: decay}
			b.AdamW(v, g, m, s2, s)
			ref.AdamW(v0, g0, m0, s20, s)
			compare(errorf, Tol, fmt.Sprintf("AdamW step %d: θ", step), v, v0)
			compare(errorf, Tol, fmt.Sprintf("AdamW step %d: m", step), m, m0)
			compare(errorf, Tol, fmt.Sprintf("AdamW step %d: v", step), s2, s20)
		}
		sq, sq0 := b.AddSquares(2, g), ref.AddSquares(2, g0)
		if d := sq - sq0; d > Tol*sq0 || d < -Tol*sq0 {
			errorf("AddSquares %.8g, reference %.8g", sq, sq0)
		}
		b.Scale(g, 0.3)
		ref.Scale(g0, 0.3)
		compare(errorf, Tol, "Scale", g, g0)
		from, from0 := fill(n, 1)
		b.Lerp(v, from, 0.25)
		ref.Lerp(v0, from0, 0.25)
		compare(errorf, Tol, "Lerp", v, v0)
		b.Copy(from, v)
		compare(errorf, Tol, "Copy", from, v0)
		b.Zero(from)
		for i, x := range from {
			if x != 0 {
				errorf("Zero left %g at %d", x, i)
				break
			}
		}
	}
}
