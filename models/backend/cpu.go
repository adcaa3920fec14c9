package backend

import (
	"math"

	"github.com/beluga-nlp/beluga/models/internal/vec32"
)

// The CPU backends share everything but the matrix product: cpu holds the
// element-wise kernels and the optimiser's updates on host memory, on its
// kernel path, and takes its Gemm from the backend that embeds it.

// Float is the element type of the generic kernels: float32 (training) and
// float64 (finite-difference gradient checks of the very same code).
type Float interface{ ~float32 | ~float64 }

// ElementGrain is the least work, in elements, worth a goroutine.
const ElementGrain = 1 << 14

type cpu struct{ kn *vec32.Kernels }

// portable is the go path's kernels: the float32 work of the exported
// generic functions (LayerNormForward, ...), which a model calls for its
// float64 gradient checks only; its float32 work runs on its backend.
var portable = func() *vec32.Kernels {
	kn, err := vec32.Lookup(vec32.PathGo)
	if err != nil {
		panic(err) // the go path is always there
	}
	return kn
}()

func (c cpu) Kernels() string { return c.kn.Name() }

func (cpu) Alloc(n int) []float32 { return make([]float32, n) }

func (c cpu) GELU(y, x []float32) {
	vec32.ParallelFor(len(x), ElementGrain, func(lo, hi int) { c.kn.GELU(y[lo:hi], x[lo:hi]) })
}

func (c cpu) GELUBackward(dx, dy, x []float32) {
	vec32.ParallelFor(len(x), ElementGrain, func(lo, hi int) { c.kn.GELUBackward(dx[lo:hi], dy[lo:hi], x[lo:hi]) })
}

func (c cpu) Softmax(row []float32) { softmaxRow(c.kn, row) }

func (c cpu) LayerNorm(y, xhat, rstd, x, gamma, beta []float32, h int, eps float64) {
	layerNormForward(c.kn, y, xhat, rstd, x, gamma, beta, h, eps)
}

func (c cpu) LayerNormBackward(dx, dgamma, dbeta, dy, xhat, rstd, gamma []float32, h int) {
	layerNormBackward(c.kn, dx, dgamma, dbeta, dy, xhat, rstd, gamma, h)
}

// BiasGrad spreads the columns over the cores: each element is summed over
// the rows in order whatever the split.
func (c cpu) BiasGrad(db, dy []float32, rows int) {
	out := len(db)
	vec32.ParallelFor(out, max(16, ElementGrain/max(1, rows)), func(lo, hi int) {
		c.kn.AddRows(db[lo:hi], dy[lo:], rows, out)
	})
}

func (c cpu) Mul(dst, a, b []float32) {
	a, b = a[:len(dst)], b[:len(dst)]
	vec32.ParallelFor(len(dst), 4*ElementGrain, func(lo, hi int) { c.kn.MulTo(dst[lo:hi], a[lo:hi], b[lo:hi]) })
}

func (c cpu) MulAdd(y, keep, x []float32) {
	keep, x = keep[:len(y)], x[:len(y)]
	vec32.ParallelFor(len(y), 4*ElementGrain, func(lo, hi int) { c.kn.MulAdd(y[lo:hi], y[lo:hi], keep[lo:hi], x[lo:hi]) })
}

// DropoutMask spreads the draws over the cores: the stream jumps ahead to
// each range's first draw (SplitMix64's state advances by a constant).
func (c cpu) DropoutMask(k []float32, state, least uint64, scale float32) {
	vec32.ParallelFor(len(k), ElementGrain, func(lo, hi int) {
		c.kn.DropoutMask(k[lo:hi], state+uint64(lo)*vec32.Gamma, least, scale)
	})
}

// AdamW runs vec32's update (the same bits on every kernel path), the
// elements spread over the cores: each is updated on its own, so the split
// changes nothing.
func (c cpu) AdamW(value, grad, m, v []float32, s AdamWStep) {
	coef := vec32.AdamWCoef{B1: s.Beta1, OneMinusB1: 1 - s.Beta1, B2: s.Beta2, OneMinusB2: 1 - s.Beta2,
		InvBC2: s.InvBC2, Eps: s.Eps, Decay: s.Decay, StepSize: s.StepSize}
	vec32.ParallelFor(len(value), 4*ElementGrain, func(lo, hi int) {
		c.kn.AdamW(value[lo:hi], grad[lo:hi], m[lo:hi], v[lo:hi], coef)
	})
}

// AddSquares sums in blocks of squaresBlock elements, each block in eight
// interleaved float64 partial sums added pairwise, the blocks' sums added
// to acc in order: an order fixed by x's length alone, so the blocks can
// run on every core and the result is the same on any number of them. (One
// float64 chain, element after element, was latency-bound: a serial 5 % of
// a BERT-tiny step, 0.1 s of bert-base's, the most of a step on 64 cores.)
func (c cpu) AddSquares(acc float64, x []float32) float64 {
	blocks := (len(x) + squaresBlock - 1) / squaresBlock
	if blocks <= 1 {
		return acc + c.kn.SumSquares(x)
	}
	sums := make([]float64, blocks)
	vec32.ParallelFor(blocks, 1, func(lo, hi int) {
		for b := lo; b < hi; b++ {
			sums[b] = c.kn.SumSquares(x[b*squaresBlock : min(len(x), (b+1)*squaresBlock)])
		}
	})
	for _, v := range sums {
		acc += v
	}
	return acc
}

// squaresBlock is AddSquares' block: 256 KiB of float32.
const squaresBlock = 1 << 16

func (c cpu) Scale(x []float32, s float32) {
	vec32.ParallelFor(len(x), 4*ElementGrain, func(lo, hi int) { c.kn.Scale(x[lo:hi], s) })
}

func (cpu) Zero(x []float32) {
	vec32.ParallelFor(len(x), 16*ElementGrain, func(lo, hi int) { clear(x[lo:hi]) })
}

func (cpu) Copy(dst, src []float32) { copy(dst, src) }

func (cpu) Lerp(dst, from []float32, a float32) {
	for j, v := range dst {
		dst[j] = from[j] + a*(v-from[j])
	}
}

// LayerNormForward is the CPU LayerNorm (see Backend.LayerNorm), generic
// over the element type. Rows are spread over the cores. Each row's mean
// and variance are float64 sums in order of the columns; four rows are
// summed side by side, so that four independent chains of additions
// overlap (a row's bits are those of summing it alone).
func LayerNormForward[T Float](y, xhat, rstd, x, gamma, beta []T, h int, eps float64) {
	layerNormForward(portable, y, xhat, rstd, x, gamma, beta, h, eps)
}

func layerNormForward[T Float](kn *vec32.Kernels, y, xhat, rstd, x, gamma, beta []T, h int, eps float64) {
	rows := len(x) / h
	vec32.ParallelFor(rows, max(1, ElementGrain/h), func(lo, hi int) {
		r := lo
		for ; r+4 <= hi; r += 4 {
			x0, x1, x2, x3 := x[r*h:(r+1)*h], x[(r+1)*h:(r+2)*h], x[(r+2)*h:(r+3)*h], x[(r+3)*h:(r+4)*h]
			var m0, m1, m2, m3 float64
			for k := range x0 {
				m0 += float64(x0[k])
				m1 += float64(x1[k])
				m2 += float64(x2[k])
				m3 += float64(x3[k])
			}
			m0, m1, m2, m3 = m0/float64(h), m1/float64(h), m2/float64(h), m3/float64(h)
			var v0, v1, v2, v3 float64
			for k := range x0 {
				d0, d1, d2, d3 := float64(x0[k])-m0, float64(x1[k])-m1, float64(x2[k])-m2, float64(x3[k])-m3
				v0 += d0 * d0
				v1 += d1 * d1
				v2 += d2 * d2
				v3 += d3 * d3
			}
			layerNormRow(kn, y, xhat, rstd, x0, gamma, beta, h, r, m0, v0, eps)
			layerNormRow(kn, y, xhat, rstd, x1, gamma, beta, h, r+1, m1, v1, eps)
			layerNormRow(kn, y, xhat, rstd, x2, gamma, beta, h, r+2, m2, v2, eps)
			layerNormRow(kn, y, xhat, rstd, x3, gamma, beta, h, r+3, m3, v3, eps)
		}
		for ; r < hi; r++ {
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
			layerNormRow(kn, y, xhat, rstd, row, gamma, beta, h, r, mean, variance, eps)
		}
	})
}

// layerNormRow finishes row r of LayerNormForward from its mean and its sum
// of squared deviations.
func layerNormRow[T Float](kn *vec32.Kernels, y, xhat, rstd, row, gamma, beta []T, h, r int, mean, squares, eps float64) {
	variance := squares / float64(h)
	inv := 1 / math.Sqrt(variance+eps)
	rstd[r] = T(inv)
	m, in := T(mean), T(inv)
	xh, yr := xhat[r*h:(r+1)*h], y[r*h:(r+1)*h]
	if y32, ok := any(yr).([]float32); ok {
		kn.NormRow(y32, any(xh).([]float32), any(row).([]float32), any(gamma).([]float32), any(beta).([]float32), float32(m), float32(in))
		return
	}
	for k, v := range row {
		xv := (v - m) * in
		xh[k] = xv
		yr[k] = xv*gamma[k] + beta[k]
	}
}

// LayerNormBackward is the CPU LayerNorm backward pass (see
// Backend.LayerNormBackward), generic over the element type. dx is
// computed row by row, the rows spread over the cores. dγ and dβ are
// column sums over the rows: each is summed in two fixed halves of the
// rows (one when there are few), each half in row order from zero, and the
// halves added in order — columns, not rows, are spread over the cores,
// so the bits are the same on any number of cores (they are those the
// two-core row split gave before, which the pinned tables hold).
func LayerNormBackward[T Float](dx, dgamma, dbeta, dy, xhat, rstd, gamma []T, h int) {
	layerNormBackward(portable, dx, dgamma, dbeta, dy, xhat, rstd, gamma, h)
}

func layerNormBackward[T Float](kn *vec32.Kernels, dx, dgamma, dbeta, dy, xhat, rstd, gamma []T, h int) {
	rows := len(dy) / h
	if dx != nil {
		vec32.ParallelFor(rows, max(1, ElementGrain/h), func(lo, hi int) {
			r := lo
			// Two rows side by side: four independent chains of sums.
			for ; r+2 <= hi; r += 2 {
				dy0, x0 := dy[r*h:(r+1)*h], xhat[r*h:(r+1)*h]
				dy1, x1 := dy[(r+1)*h : (r+2)*h][:len(dy0)], xhat[(r+1)*h : (r+2)*h][:len(dy0)]
				x0, g := x0[:len(dy0)], gamma[:len(dy0)]
				var mg0, mgx0, mg1, mgx1 float64
				for k := range dy0 {
					g0, g1 := float64(dy0[k]*g[k]), float64(dy1[k]*g[k])
					mg0 += g0
					mgx0 += g0 * float64(x0[k])
					mg1 += g1
					mgx1 += g1 * float64(x1[k])
				}
				layerNormBackwardRow(kn, dx, dy0, x0, gamma, rstd, h, r, mg0, mgx0)
				layerNormBackwardRow(kn, dx, dy1, x1, gamma, rstd, h, r+1, mg1, mgx1)
			}
			for ; r < hi; r++ {
				dyr, xr := dy[r*h:(r+1)*h], xhat[r*h:(r+1)*h]
				var mg, mgx float64
				for k := range dyr {
					g := float64(dyr[k] * gamma[k])
					mg += g
					mgx += g * float64(xr[k])
				}
				layerNormBackwardRow(kn, dx, dyr, xr, gamma, rstd, h, r, mg, mgx)
			}
		})
	}
	if dgamma == nil {
		return
	}
	halves := [][2]int{{0, rows}}
	if rows/max(1, ElementGrain/h) >= 2 {
		step := (rows + 1) / 2
		halves = [][2]int{{0, step}, {step, rows}}
	}
	vec32.ParallelFor(h, max(1, ElementGrain/max(rows, 1)), func(k0, k1 int) {
		dg, db := make([]T, k1-k0), make([]T, k1-k0)
		for _, half := range halves {
			clear(dg)
			clear(db)
			if dg32, ok := any(dg).([]float32); ok {
				off := half[0]*h + k0
				kn.AddRowProducts(dg32, any(db).([]float32), any(dy).([]float32)[off:], any(xhat).([]float32)[off:], half[1]-half[0], h)
			} else {
				for r := half[0]; r < half[1]; r++ {
					dyr, xr := dy[r*h+k0:r*h+k1], xhat[r*h+k0:r*h+k1]
					for k := range dyr {
						dg[k] += dyr[k] * xr[k]
						db[k] += dyr[k]
					}
				}
			}
			for k := range dg {
				dgamma[k0+k] += dg[k]
				dbeta[k0+k] += db[k]
			}
		}
	})
}

// layerNormBackwardRow sets row r of LayerNormBackward's dx from the row's
// sums of g = dy·γ and of g·x̂.
func layerNormBackwardRow[T Float](kn *vec32.Kernels, dx, dyr, xr, gamma, rstd []T, h, r int, sumG, sumGX float64) {
	m, mx := T(sumG/float64(h)), T(sumGX/float64(h))
	inv := rstd[r]
	dxr := dx[r*h : (r+1)*h]
	if d32, ok := any(dxr).([]float32); ok {
		kn.NormBackRow(d32, any(dyr).([]float32), any(xr).([]float32), any(gamma).([]float32), float32(m), float32(mx), float32(inv))
		return
	}
	for k := range dyr {
		dxr[k] = inv * (dyr[k]*gamma[k] - m - xr[k]*mx)
	}
}

// GELUForward is the exact GELU ½x(1 + erf(x/√2)) on the CPU, generic over
// the element type (float32 runs the portable kernel; a model's float32
// work runs on its backend).
func GELUForward[T Float](y, x []T) {
	if x32, ok := any(x).([]float32); ok {
		cpu{portable}.GELU(any(y).([]float32), x32)
		return
	}
	for i, v := range x {
		y[i] = T(0.5 * float64(v) * (1 + math.Erf(float64(v)/math.Sqrt2)))
	}
}

// GELUBackward sets dx = dy·(Φ(x) + x·φ(x)) on the CPU; dx may be dy.
func GELUBackward[T Float](dx, dy, x []T) {
	if x32, ok := any(x).([]float32); ok {
		cpu{portable}.GELUBackward(any(dx).([]float32), any(dy).([]float32), x32)
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

// SoftmaxRow replaces row by its softmax on the CPU: max-subtracted, the
// exponentials summed in float64.
func SoftmaxRow[T Float](row []T) { softmaxRow(portable, row) }

func softmaxRow[T Float](kn *vec32.Kernels, row []T) {
	if r32, ok := any(row).([]float32); ok {
		kn.Scale(r32, 1/kn.ExpShiftSum(r32, kn.Max(r32)))
		return
	}
	mx := row[0]
	for _, v := range row {
		mx = max(mx, v)
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
