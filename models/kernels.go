package models

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/beluga-nlp/beluga/models/backend"
	"github.com/beluga-nlp/beluga/models/internal/vec32"
)

// The encoder's layers as fused kernels with hand-written backward passes.
// They are generic over float32 (training) and float64 (finite-difference
// gradient checks of the very same code).

// Float is the element type of the kernels.
type Float = backend.Float

// gemm computes C = alpha·op(A)·op(B) + beta·C for row-major A (m×k after
// op), B (k×n after op) and C (m×n) with the given leading strides, on all
// cores: float32 products run on be, the model's backend (backend.BF16 of
// it for a bf16 model); float64 ones (the gradient checks) on the BLAS, where it is single-threaded (splitGemm) a
// large product split by rows of C across goroutines.
func gemm[T Float](be backend.Backend, transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	if a32, ok := any(a).([]float32); ok {
		be.Gemm(true, transA, transB, m, n, k, float32(alpha), a32, lda, any(b).([]float32), ldb, float32(beta), any(c).([]float32), ldc)
		return
	}
	if splitGemm && m >= 64 && m*n*k >= gemmSplitWork {
		vec32.ParallelFor(m, 32, func(lo, hi int) {
			aOff := lo * lda // rows of A
			if transA {
				aOff = lo // columns of A
			}
			gemmSerial(be, transA, transB, hi-lo, n, k, alpha, a[aOff:], lda, b, ldb, beta, c[lo*ldc:], ldc)
		})
		return
	}
	gemmSerial(be, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// gemmSplitWork is the least m·n·k worth splitting across goroutines.
const gemmSplitWork = 1 << 19

// gemmSerial is gemm in the calling goroutine (for products that run in
// parallel with others).
func gemmSerial[T Float](be backend.Backend, transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	if a32, ok := any(a).([]float32); ok {
		be.Gemm(false, transA, transB, m, n, k, float32(alpha), a32, lda, any(b).([]float32), ldb, float32(beta), any(c).([]float32), ldc)
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
	blas64.Gemm(ta, tb, float64(alpha),
		blas64.General{Rows: ar, Cols: ac, Stride: lda, Data: any(a).([]float64)},
		blas64.General{Rows: br, Cols: bc, Stride: ldb, Data: any(b).([]float64)},
		float64(beta), blas64.General{Rows: m, Cols: n, Stride: ldc, Data: any(c).([]float64)})
}

// linearForward sets y (n×out) = x (n×in) · wᵀ + b, w being [out, in].
func linearForward[T Float](be backend.Backend, y, x, w, b []T, n, in, out int) {
	vec32.ParallelFor(n, max(1, 4*elementGrain/out), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			copy(y[r*out:(r+1)*out], b)
		}
	})
	gemm(be, false, true, n, out, in, 1, x, in, w, in, 1, y, out)
}

// linearBackward accumulates dw += dyᵀ·x and db += Σ dy, and sets
// dx = dy·w when dx is not nil.
func linearBackward[T Float](be backend.Backend, dx, dw, db, dy, x, w []T, n, in, out int) {
	if dw != nil {
		gemm(be, true, false, out, in, n, 1, dy, out, x, in, 1, dw, in)
		biasGrad(be, db, dy, n, out)
	}
	if dx != nil {
		gemm(be, false, false, n, in, out, 1, dy, out, w, in, 0, dx, in)
	}
}

// biasGrad accumulates db += Σ_r dy[r] over the n rows of dy (n×out). Each
// element is summed over the rows in order whatever the split: the cores
// take ranges of columns (float32 on the backend).
func biasGrad[T Float](be backend.Backend, db, dy []T, n, out int) {
	if d32, ok := any(db).([]float32); ok {
		be.BiasGrad(d32, any(dy).([]float32), n)
		return
	}
	vec32.ParallelFor(out, max(16, elementGrain/max(1, n)), func(lo, hi int) {
		d := db[lo:hi]
		for r := 0; r < n; r++ {
			row := dy[r*out+lo : r*out+hi]
			for j, v := range row {
				d[j] += v
			}
		}
	})
}

// linearBackwardAdd is linearBackward adding dy·w into dx instead of
// setting it (the backward passes of inputs that feed several layers).
func linearBackwardAdd[T Float](be backend.Backend, dx, dw, db, dy, x, w []T, n, in, out int) {
	linearBackward(be, nil, dw, db, dy, x, w, n, in, out)
	gemm(be, false, false, n, in, out, 1, dy, out, w, in, 1, dx, in)
}

// layerNormForward normalises each row of width h: y = x̂·γ + β with
// x̂ = (x−μ)/√(σ²+eps). It keeps x̂ and 1/√(σ²+eps) for the backward pass.
// float32 runs on the compute backend; y may be x.
func layerNormForward[T Float](be backend.Backend, y, xhat, rstd, x, gamma, beta []T, h int, eps float64) {
	if x32, ok := any(x).([]float32); ok {
		be.LayerNorm(any(y).([]float32), any(xhat).([]float32), any(rstd).([]float32), x32, any(gamma).([]float32), any(beta).([]float32), h, eps)
		return
	}
	backend.LayerNormForward(y, xhat, rstd, x, gamma, beta, h, eps)
}

// layerNormBackward accumulates dγ, dβ and sets dx:
// dx = rstd·(g − mean(g) − x̂·mean(g·x̂)) with g = dy·γ.
func layerNormBackward[T Float](be backend.Backend, dx, dgamma, dbeta, dy, xhat, rstd, gamma []T, h int) {
	if dy32, ok := any(dy).([]float32); ok {
		be.LayerNormBackward(any(dx).([]float32), any(dgamma).([]float32), any(dbeta).([]float32), dy32, any(xhat).([]float32), any(rstd).([]float32), any(gamma).([]float32), h)
		return
	}
	backend.LayerNormBackward(dx, dgamma, dbeta, dy, xhat, rstd, gamma, h)
}

// geluForward is the exact GELU ½x(1 + erf(x/√2)).
func geluForward[T Float](be backend.Backend, y, x []T) {
	if x32, ok := any(x).([]float32); ok {
		be.GELU(any(y).([]float32), x32)
		return
	}
	backend.GELUForward(y, x)
}

// geluBackward sets dx = dy·(Φ(x) + x·φ(x)); dx may be dy.
func geluBackward[T Float](be backend.Backend, dx, dy, x []T) {
	if x32, ok := any(x).([]float32); ok {
		be.GELUBackward(any(dx).([]float32), any(dy).([]float32), x32)
		return
	}
	backend.GELUBackward(dx, dy, x)
}

// elementGrain is the least work, in elements, worth a goroutine.
const elementGrain = backend.ElementGrain

// attentionForward is multi-head scaled dot-product attention over q, k, v
// (each batch·seq × hidden, heads side by side), adding the float32 minimum
// to the scores of padding keys as HuggingFace does. probs (batch·heads·seq·seq)
// receives the softmax probabilities; keep (same size, or nil for no
// dropout) holds each probability's dropout multiplier (0 or 1/(1−rate)).
func attentionForward[T Float](be backend.Backend, ctx, probs, q, k, v []T, mask []float32, keep []T, batch, seq, heads, d int) {
	windowAttentionForward(be, ctx, probs, q, k, v, mask, keep, batch, seq, heads, d, -1)
}

// windowAttentionForward is attentionForward (multi-head scaled dot-product
// attention, the float32 minimum added to masked scores as HuggingFace adds
// it) with ModernBERT's sliding window: with window ≥ 0, query i also masks
// every key j with |i − j| > window (ModernBertModel._update_attention_mask's
// sliding_window_mask, window = local_attention/2); window < 0 is global
// attention. A query whose keys are all masked (a padding position far from
// every token) gets equal weights on all keys, as in HuggingFace, where every
// score has rounded to the same minimum. attentionBackward is its backward
// pass: the masks live in probs.
func windowAttentionForward[T Float](be backend.Backend, ctx, probs, q, k, v []T, mask []float32, keep []T, batch, seq, heads, d, window int) {
	h := heads * d
	scale := T(1 / math.Sqrt(float64(d)))
	// The (row, head) pairs are independent: they run in parallel.
	vec32.ParallelFor(batch*heads, 1, func(lo, hi int) {
		var dropped []T
		if keep != nil {
			dropped = make([]T, seq*seq)
		}
		pad := make([]int, 0, seq)
		for bh := lo; bh < hi; bh++ {
			b, hd := bh/heads, bh%heads
			off := b*seq*h + hd*d
			base := bh * seq * seq
			p := probs[base : base+seq*seq]
			gemmSerial(be, false, true, seq, seq, d, scale, q[off:], h, k[off:], h, 0, p, seq)
			m := mask[b*seq : (b+1)*seq]
			// Without a window every query masks the same keys: the
			// padding, listed once.
			pad = pad[:0]
			for j, v := range m {
				if v == 0 {
					pad = append(pad, j)
				}
			}
			for i := 0; i < seq; i++ {
				row := p[i*seq : (i+1)*seq]
				if window < 0 {
					for _, j := range pad {
						row[j] += -math.MaxFloat32
					}
				} else {
					for j := range row {
						if m[j] == 0 || i-j > window || j-i > window {
							row[j] += -math.MaxFloat32
						}
					}
				}
				softmaxRow(be, row)
			}
			use := withDropout(be, p, keep, base, dropped)
			gemmSerial(be, false, false, seq, d, seq, 1, use, seq, v[off:], h, 0, ctx[off:], h)
		}
	})
}

// attentionBackward sets dq, dk, dv from dctx, given the forward pass's
// softmax probabilities and dropout multipliers.
func attentionBackward[T Float](be backend.Backend, dq, dk, dv, dctx, probs, keep, q, k, v []T, batch, seq, heads, d int) {
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
			use := withDropout(be, p, keep, base, dropped)
			// ctx = use·v ⇒ dv = useᵀ·dctx, d(use) = dctx·vᵀ
			gemmSerial(be, true, false, seq, d, seq, 1, use, seq, dctx[off:], h, 0, dv[off:], h)
			gemmSerial(be, false, true, seq, seq, d, 1, dctx[off:], h, v[off:], h, 0, dp, seq)
			softmaxBackwardRows(be, dp, p, keep, base, seq, scale)
			// scores = scale·q·kᵀ ⇒ dq = ds·k, dk = dsᵀ·q
			gemmSerial(be, false, false, seq, d, seq, 1, dp, seq, k[off:], h, 0, dq[off:], h)
			gemmSerial(be, true, false, seq, d, seq, 1, dp, seq, q[off:], h, 0, dk[off:], h)
		}
	})
}

// softmaxBackwardRows turns d(used probabilities) into d(scores) in place
// for one head's seq×seq block of probabilities p (starting at base in the
// batch's keep, nil for no dropout): the dropout multipliers first, then
// softmax's backward with the score scale folded in,
// ds = scale · p ⊙ (dp − Σ p·dp). A zeroed (fully masked) row has p = 0 and
// so no gradient.
func softmaxBackwardRows[T Float](be backend.Backend, dp, p, keep []T, base, seq int, scale T) {
	if keep != nil {
		mulTo(be, dp[:seq*seq], dp, keep[base:])
	}
	i := 0
	// Two rows side by side: two independent chains of sums.
	for ; i+2 <= seq; i += 2 {
		d0, p0 := dp[i*seq:(i+1)*seq], p[i*seq:(i+1)*seq]
		d1, p1 := dp[(i+1)*seq : (i+2)*seq][:len(d0)], p[(i+1)*seq : (i+2)*seq][:len(d0)]
		p0 = p0[:len(d0)]
		var dot0, dot1 T
		for j := range d0 {
			dot0 += d0[j] * p0[j]
			dot1 += d1[j] * p1[j]
		}
		softmaxBackwardRow(d0, p0, dot0, scale)
		softmaxBackwardRow(d1, p1, dot1, scale)
	}
	for ; i < seq; i++ {
		dr, pr := dp[i*seq:(i+1)*seq], p[i*seq:(i+1)*seq]
		var dot T
		for j := range dr {
			dot += dr[j] * pr[j]
		}
		softmaxBackwardRow(dr, pr, dot, scale)
	}
}

func softmaxBackwardRow[T Float](dr, pr []T, dot, scale T) {
	for j := range dr {
		dr[j] = pr[j] * (dr[j] - dot) * scale
	}
}

// SoftmaxInPlace replaces row by its softmax (max-subtracted, summed in
// float64), a float32 row on backend be (a model's, Backend()).
func SoftmaxInPlace[T Float](be backend.Backend, row []T) { softmaxRow(be, row) }

// withDropout returns the attention probabilities p as the context sees
// them: p itself without dropout, else p times its multipliers
// keep[base:], written into dst.
func withDropout[T Float](be backend.Backend, p, keep []T, base int, dst []T) []T {
	if keep == nil {
		return p
	}
	mulTo(be, dst, p, keep[base:])
	return dst
}

// mulTo sets dst[i] = a[i]·b[i] (dst may be a).
func mulTo[T Float](be backend.Backend, dst, a, b []T) {
	if d32, ok := any(dst).([]float32); ok {
		be.Mul(d32, any(a).([]float32), any(b).([]float32))
		return
	}
	a, b = a[:len(dst)], b[:len(dst)]
	for i := range dst {
		dst[i] = a[i] * b[i]
	}
}

func softmaxRow[T Float](be backend.Backend, row []T) {
	if r32, ok := any(row).([]float32); ok {
		be.Softmax(r32)
		return
	}
	backend.SoftmaxRow(row)
}
