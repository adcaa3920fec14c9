package models

import (
	"math"
	"sort"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/beluga-nlp/beluga/models/internal/vec32"
)

// The encoder's layers as fused kernels with hand-written backward passes.
// They are generic over float32 (training) and float64 (finite-difference
// gradient checks of the very same code).

// Float is the element type of the kernels.
type Float interface{ ~float32 | ~float64 }

// gemm computes C = alpha·op(A)·op(B) + beta·C for row-major A (m×k after
// op), B (k×n after op) and C (m×n) with the given leading strides, on all
// cores: float32 products run on vec32 where fastF32Gemm says so; else,
// where the BLAS is single-threaded (splitGemm), a large product is split
// by rows of C across goroutines.
func gemm[T Float](transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	if a32, ok := any(a).([]float32); ok && fastF32Gemm {
		vec32.Gemm(true, transA, transB, m, n, k, float32(alpha), a32, lda, any(b).([]float32), ldb, float32(beta), any(c).([]float32), ldc)
		return
	}
	if splitGemm && m >= 64 && m*n*k >= gemmSplitWork {
		vec32.ParallelFor(m, 32, func(lo, hi int) {
			aOff := lo * lda // rows of A
			if transA {
				aOff = lo // columns of A
			}
			gemmSerial(transA, transB, hi-lo, n, k, alpha, a[aOff:], lda, b, ldb, beta, c[lo*ldc:], ldc)
		})
		return
	}
	gemmSerial(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// gemmSplitWork is the least m·n·k worth splitting across goroutines.
const gemmSplitWork = 1 << 19

// gemmSerial is gemm in the calling goroutine (for products that run in
// parallel with others).
func gemmSerial[T Float](transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	if a32, ok := any(a).([]float32); ok && fastF32Gemm {
		vec32.Gemm(false, transA, transB, m, n, k, float32(alpha), a32, lda, any(b).([]float32), ldb, float32(beta), any(c).([]float32), ldc)
		return
	}
	ta, tb := blas.NoTrans, blas.NoTrans
	ar, ac := m, k
	if transA {
		ta, ar, ac = blas.Trans, k, m
	}
	br, bc := k, n
	if transB {
		tb, br, bc = blas.Trans, n, k
	}
	switch a := any(a).(type) {
	case []float32:
		blas32.Gemm(ta, tb, float32(alpha),
			blas32.General{Rows: ar, Cols: ac, Stride: lda, Data: a},
			blas32.General{Rows: br, Cols: bc, Stride: ldb, Data: any(b).([]float32)},
			float32(beta), blas32.General{Rows: m, Cols: n, Stride: ldc, Data: any(c).([]float32)})
	case []float64:
		blas64.Gemm(ta, tb, float64(alpha),
			blas64.General{Rows: ar, Cols: ac, Stride: lda, Data: a},
			blas64.General{Rows: br, Cols: bc, Stride: ldb, Data: any(b).([]float64)},
			float64(beta), blas64.General{Rows: m, Cols: n, Stride: ldc, Data: any(c).([]float64)})
	}
}

// linearForward sets y (n×out) = x (n×in) · wᵀ + b, w being [out, in].
func linearForward[T Float](y, x, w, b []T, n, in, out int) {
	for r := 0; r < n; r++ {
		copy(y[r*out:(r+1)*out], b)
	}
	gemm(false, true, n, out, in, 1, x, in, w, in, 1, y, out)
}

// linearBackward accumulates dw += dyᵀ·x and db += Σ dy, and sets
// dx = dy·w when dx is not nil.
func linearBackward[T Float](dx, dw, db, dy, x, w []T, n, in, out int) {
	if dw != nil {
		gemm(true, false, out, in, n, 1, dy, out, x, in, 1, dw, in)
		for r := 0; r < n; r++ {
			row := dy[r*out : (r+1)*out]
			for j, v := range row {
				db[j] += v
			}
		}
	}
	if dx != nil {
		gemm(false, false, n, in, out, 1, dy, out, w, in, 0, dx, in)
	}
}

// linearBackwardAdd is linearBackward adding dy·w into dx instead of
// setting it (the backward passes of inputs that feed several layers).
func linearBackwardAdd[T Float](dx, dw, db, dy, x, w []T, n, in, out int) {
	linearBackward(nil, dw, db, dy, x, w, n, in, out)
	gemm(false, false, n, in, out, 1, dy, out, w, in, 1, dx, in)
}

// layerNormForward normalises each row of width h: y = x̂·γ + β with
// x̂ = (x−μ)/√(σ²+eps). It keeps x̂ and 1/√(σ²+eps) for the backward pass.
// Rows are spread over the cores; y may be x.
func layerNormForward[T Float](y, xhat, rstd, x, gamma, beta []T, h int, eps float64) {
	rows := len(x) / h
	vec32.ParallelFor(rows, max(1, elementGrain/h), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			row := x[r*h : (r+1)*h]
			var mean float64
			for _, v := range row {
				mean += float64(v)
			}
			mean /= float64(h)
			var variance float64
			for _, v := range row {
				d := float64(v) - mean
				variance += d * d
			}
			variance /= float64(h)
			inv := 1 / math.Sqrt(variance+eps)
			rstd[r] = T(inv)
			m, in := T(mean), T(inv)
			xh, yr := xhat[r*h:(r+1)*h], y[r*h:(r+1)*h]
			for k, v := range row {
				xv := (v - m) * in
				xh[k] = xv
				yr[k] = xv*gamma[k] + beta[k]
			}
		}
	})
}

// layerNormBackward accumulates dγ, dβ and sets dx:
// dx = rstd·(g − mean(g) − x̂·mean(g·x̂)) with g = dy·γ. Rows are spread
// over the cores, each range summing dγ and dβ apart; the partial sums are
// added in row order, so that the result does not depend on scheduling.
func layerNormBackward[T Float](dx, dgamma, dbeta, dy, xhat, rstd, gamma []T, h int) {
	rows := len(dy) / h
	type partial struct {
		lo     int
		dg, db []T
	}
	var (
		mu       sync.Mutex
		partials []partial
	)
	vec32.ParallelFor(rows, max(1, elementGrain/h), func(lo, hi int) {
		var dg, db []T
		if dgamma != nil {
			dg, db = make([]T, h), make([]T, h)
		}
		for r := lo; r < hi; r++ {
			dyr, xr := dy[r*h:(r+1)*h], xhat[r*h:(r+1)*h]
			var mg, mgx float64
			for k := range dyr {
				if dg != nil {
					dg[k] += dyr[k] * xr[k]
					db[k] += dyr[k]
				}
				g := float64(dyr[k] * gamma[k])
				mg += g
				mgx += g * float64(xr[k])
			}
			if dx == nil {
				continue
			}
			mg /= float64(h)
			mgx /= float64(h)
			inv := rstd[r]
			m, mx := T(mg), T(mgx)
			dxr := dx[r*h : (r+1)*h]
			for k := range dyr {
				dxr[k] = inv * (dyr[k]*gamma[k] - m - xr[k]*mx)
			}
		}
		if dg != nil {
			mu.Lock()
			partials = append(partials, partial{lo, dg, db})
			mu.Unlock()
		}
	})
	sort.Slice(partials, func(i, j int) bool { return partials[i].lo < partials[j].lo })
	for _, p := range partials {
		for k := range p.dg {
			dgamma[k] += p.dg[k]
			dbeta[k] += p.db[k]
		}
	}
}

// geluForward is the exact GELU ½x(1 + erf(x/√2)).
func geluForward[T Float](y, x []T) {
	if x32, ok := any(x).([]float32); ok {
		y32 := any(y).([]float32)
		vec32.ParallelFor(len(x32), elementGrain, func(lo, hi int) { vec32.GELU(y32[lo:hi], x32[lo:hi]) })
		return
	}
	for i, v := range x {
		y[i] = T(0.5 * float64(v) * (1 + math.Erf(float64(v)/math.Sqrt2)))
	}
}

// geluBackward sets dx = dy·(Φ(x) + x·φ(x)); dx may be dy.
func geluBackward[T Float](dx, dy, x []T) {
	if x32, ok := any(x).([]float32); ok {
		dx32, dy32 := any(dx).([]float32), any(dy).([]float32)
		vec32.ParallelFor(len(x32), elementGrain, func(lo, hi int) { vec32.GELUBackward(dx32[lo:hi], dy32[lo:hi], x32[lo:hi]) })
		return
	}
	const invSqrt2Pi = 0.3989422804014327
	for i, v := range x {
		xv := float64(v)
		cdf := 0.5 * (1 + math.Erf(xv/math.Sqrt2))
		pdf := invSqrt2Pi * math.Exp(-0.5*xv*xv)
		dx[i] = T(float64(dy[i]) * (cdf + xv*pdf))
	}
}

// elementGrain is the least work, in elements, worth a goroutine.
const elementGrain = 1 << 14

// attentionForward is multi-head scaled dot-product attention over q, k, v
// (each batch·seq × hidden, heads side by side), adding the float32 minimum
// to the scores of padding keys as HuggingFace does. probs (batch·heads·seq·seq)
// receives the softmax probabilities; keep (same size, or nil for no
// dropout) holds each probability's dropout multiplier (0 or 1/(1−rate)).
func attentionForward[T Float](ctx, probs, q, k, v []T, mask []float32, keep []T, batch, seq, heads, d int) {
	h := heads * d
	scale := T(1 / math.Sqrt(float64(d)))
	// The (row, head) pairs are independent: they run in parallel.
	vec32.ParallelFor(batch*heads, 1, func(lo, hi int) {
		var dropped []T
		if keep != nil {
			dropped = make([]T, seq*seq)
		}
		for bh := lo; bh < hi; bh++ {
			b, hd := bh/heads, bh%heads
			off := b*seq*h + hd*d
			base := bh * seq * seq
			p := probs[base : base+seq*seq]
			gemmSerial(false, true, seq, seq, d, scale, q[off:], h, k[off:], h, 0, p, seq)
			m := mask[b*seq : (b+1)*seq]
			for i := 0; i < seq; i++ {
				row := p[i*seq : (i+1)*seq]
				for j := range row {
					if m[j] == 0 {
						row[j] += -math.MaxFloat32
					}
				}
				softmaxRow(row)
			}
			use := withDropout(p, keep, base, dropped)
			gemmSerial(false, false, seq, d, seq, 1, use, seq, v[off:], h, 0, ctx[off:], h)
		}
	})
}

// attentionBackward sets dq, dk, dv from dctx, given the forward pass's
// softmax probabilities and dropout multipliers.
func attentionBackward[T Float](dq, dk, dv, dctx, probs, keep, q, k, v []T, batch, seq, heads, d int) {
	h := heads * d
	scale := T(1 / math.Sqrt(float64(d)))
	vec32.ParallelFor(batch*heads, 1, func(lo, hi int) {
		dp := make([]T, seq*seq)
		var dropped []T
		if keep != nil {
			dropped = make([]T, seq*seq)
		}
		for bh := lo; bh < hi; bh++ {
			b, hd := bh/heads, bh%heads
			off := b*seq*h + hd*d
			base := bh * seq * seq
			p := probs[base : base+seq*seq]
			use := withDropout(p, keep, base, dropped)
			// ctx = use·v ⇒ dv = useᵀ·dctx, d(use) = dctx·vᵀ
			gemmSerial(true, false, seq, d, seq, 1, use, seq, dctx[off:], h, 0, dv[off:], h)
			gemmSerial(false, true, seq, seq, d, 1, dctx[off:], h, v[off:], h, 0, dp, seq)
			for i := 0; i < seq; i++ {
				dr, pr := dp[i*seq:(i+1)*seq], p[i*seq:(i+1)*seq]
				if keep != nil {
					kr := keep[base+i*seq:]
					for j := range dr {
						dr[j] *= kr[j]
					}
				}
				// softmax backward, with the score scale folded in:
				// ds = scale · p ⊙ (dp − Σ p·dp)
				var dot T
				for j := range dr {
					dot += dr[j] * pr[j]
				}
				for j := range dr {
					dr[j] = pr[j] * (dr[j] - dot) * scale
				}
			}
			// scores = scale·q·kᵀ ⇒ dq = ds·k, dk = dsᵀ·q
			gemmSerial(false, false, seq, d, seq, 1, dp, seq, k[off:], h, 0, dq[off:], h)
			gemmSerial(true, false, seq, d, seq, 1, dp, seq, q[off:], h, 0, dk[off:], h)
		}
	})
}

// SoftmaxInPlace replaces row by its softmax (max-subtracted, summed in
// float64).
func SoftmaxInPlace[T Float](row []T) { softmaxRow(row) }

// withDropout returns the attention probabilities p as the context sees
// them: p itself without dropout, else p times its multipliers
// keep[base:], written into dst.
func withDropout[T Float](p, keep []T, base int, dst []T) []T {
	if keep == nil {
		return p
	}
	for i := range dst {
		dst[i] = p[i] * keep[base+i]
	}
	return dst
}

func softmaxRow[T Float](row []T) {
	mx := row[0]
	for _, v := range row {
		mx = max(mx, v)
	}
	if r32, ok := any(row).([]float32); ok {
		inv := 1 / vec32.ExpShiftSum(r32, float32(mx))
		for i := range r32 {
			r32[i] *= inv
		}
		return
	}
	var sum float64
	for i, v := range row {
		e := math.Exp(float64(v - mx))
		row[i] = T(e)
		sum += e
	}
	for i := range row {
		row[i] = T(float64(row[i]) / sum)
	}
}
