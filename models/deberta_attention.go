package models

import (
	"github.com/beluga-nlp/beluga/models/backend"
	"math"

	"github.com/beluga-nlp/beluga/models/internal/vec32"
)

// DeBERTa's disentangled self-attention (HuggingFace modeling_deberta_v2.py,
// DisentangledSelfAttention) as kernels with hand-written backward passes,
// generic over float32 and float64 like the other kernels. The score of
// query i and key j in one head is
//
//	s(i,j) = scale·( q_i·k_j + q_i·K^r_{c(i,j)} + k_j·Q^r_{p(i,j)} )
//
// where K^r and Q^r are the key and query projections of the (normalised)
// relative-position embeddings (2·span rows), c(i,j) the content→position
// ("c2p") index and p(i,j) the position→content ("p2c") index, and scale =
// 1/√(d·(1+number of position terms)). Padding keys get no weight and a
// padding query attends to nothing (XSoftmax zeroes its row).

// logBucket is make_log_bucket_position for one relative position: within
// ±bucketSize/2 the position itself, beyond it a logarithmic bucket up to
// maxPosition. It computes in float32 as torch does (the ratio is a
// float32 tensor), so that a position on a bucket's edge falls on the side
// torch puts it.
func logBucket(rel, bucketSize, maxPosition int) int {
	mid := bucketSize / 2
	if rel < mid && rel > -mid {
		return rel
	}
	abs := rel
	if abs < 0 {
		abs = -abs
	}
	if abs <= mid {
		return rel
	}
	ratio := float32(float64(abs) / float64(mid))
	num := float32(math.Log(float64(ratio)))
	den := float32(math.Log(float64(float32(float64(maxPosition-1) / float64(mid)))))
	lp := int(float32(math.Ceil(float64(num/den*float32(mid-1))))) + mid
	if rel < 0 {
		return -lp
	}
	return lp
}

// relativeIndices returns, for a sequence of seq tokens, the c2p and p2c
// gather indices (seq×seq, row i = query, column j = key) into the 2·span
// relative embeddings: c(i,j) = clamp(δ(i−j)+span) and
// p(i,j) = clamp(−δ(j−i)+span), δ being the (bucketed) relative position,
// as HuggingFace's build_relative_position and its gathers compute them.
// Only the rows lo … lo+width−1 of the embeddings are ever gathered (a
// 64-token input reaches 127 of deberta-v3's 512): the indices are
// returned relative to lo, so that the attention projects those rows only.
func relativeIndices(seq, span, buckets, maxRel int) (c2p, p2c []int32, lo, width int) {
	rel := func(d int) int {
		if buckets > 0 && maxRel > 0 {
			return logBucket(d, buckets, maxRel)
		}
		return d
	}
	clamp := func(v int) int { return min(max(v, 0), 2*span-1) }
	c2p, p2c = make([]int32, seq*seq), make([]int32, seq*seq)
	lo, hi := 2*span, -1
	for i := 0; i < seq; i++ {
		for j := 0; j < seq; j++ {
			c, p := clamp(rel(i-j)+span), clamp(-rel(j-i)+span)
			c2p[i*seq+j], p2c[i*seq+j] = int32(c), int32(p)
			lo, hi = min(lo, c, p), max(hi, c, p)
		}
	}
	for i := range c2p {
		c2p[i] -= int32(lo)
		p2c[i] -= int32(lo)
	}
	return c2p, p2c, lo, hi - lo + 1
}

// relAttention describes one disentangled attention call: the shapes, the
// scale and which position terms are on (a nil index table is off).
type relAttention struct {
	batch, seq, heads, d int
	scale                float64 // 1/√(d·scale factor)
	c2p, p2c             []int32 // seq×seq gather indices (relative to rows), or nil
	// rows is how many rows of the relative embeddings the indices reach;
	// posQ and posK passed to the kernels are those rows' projections.
	rows int
	be   backend.Backend // the model's compute (its precision's)
}

// scratch is the size of each buffer the kernels take for one position
// term (heads × batch·seq × rows).
func (a relAttention) scratch() int { return a.heads * a.batch * a.seq * a.rows }

// relAttentionForward fills ctx (batch·seq × h) and probs
// (batch·heads·seq·seq) from q, k, v (batch·seq × h, heads side by side) and
// the projected relative embeddings posQ, posK (rows × h). keep holds the
// attention-dropout multipliers (nil for none); cAll and pAll are scratch
// of a.scratch() values for the c2p and p2c terms (nil when off).
func relAttentionForward[T Float](a relAttention, ctx, probs, q, k, v, posQ, posK []T, mask []float32, keep, cAll, pAll []T) {
	h := a.heads * a.d
	seq, n := a.seq, a.batch*a.seq
	// The position terms, one product per head over every row of the
	// batch: C = q·K^rᵀ and P = k·Q^rᵀ (heads × n × rows).
	vec32.ParallelFor(a.heads, 1, func(lo, hi int) {
		for hd := lo; hd < hi; hd++ {
			off := hd * a.d
			if cAll != nil {
				gemmSerial(a.be, false, true, n, a.rows, a.d, 1, q[off:], h, posK[off:], h, 0, cAll[hd*n*a.rows:], a.rows)
			}
			if pAll != nil {
				gemmSerial(a.be, false, true, n, a.rows, a.d, 1, k[off:], h, posQ[off:], h, 0, pAll[hd*n*a.rows:], a.rows)
			}
		}
	})
	scale := T(a.scale)
	vec32.ParallelFor(a.batch*a.heads, 1, func(lo, hi int) {
		var dropped []T
		if keep != nil {
			dropped = make([]T, seq*seq)
		}
		for bh := lo; bh < hi; bh++ {
			b, hd := bh/a.heads, bh%a.heads
			off := b*seq*h + hd*a.d
			base := bh * seq * seq
			p := probs[base : base+seq*seq]
			gemmSerial(a.be, false, true, seq, seq, a.d, 1, q[off:], h, k[off:], h, 0, p, seq)
			r0 := hd*n + b*seq // this (head, sequence)'s first row of C and P
			m := mask[b*seq : (b+1)*seq]
			for i := 0; i < seq; i++ {
				row := p[i*seq : (i+1)*seq]
				if m[i] == 0 {
					clear(row)
					continue
				}
				if cAll != nil {
					cr, idx := cAll[(r0+i)*a.rows:], a.c2p[i*seq:]
					for j := range row {
						row[j] += cr[idx[j]]
					}
				}
				if pAll != nil {
					idx := a.p2c[i*seq:]
					for j := range row {
						row[j] += pAll[(r0+j)*a.rows+int(idx[j])]
					}
				}
				for j := range row {
					row[j] *= scale
					if m[j] == 0 {
						row[j] = -math.MaxFloat32
					}
				}
				softmaxRow(a.be, row)
			}
			use := withDropout(a.be, p, keep, base, dropped)
			gemmSerial(a.be, false, false, seq, a.d, seq, 1, use, seq, v[off:], h, 0, ctx[off:], h)
		}
	})
}

// relAttentionBackward sets dq, dk, dv (batch·seq × h) and dPosQ, dPosK
// (rows × h) from dctx, given the forward pass's inputs, probabilities
// and dropout multipliers. dPosQ (dPosK) is left alone when p2c (c2p) is
// off. dC and dP are scratch of a.scratch() values (nil when the term is
// off): the gradients of C and P.
func relAttentionBackward[T Float](a relAttention, dq, dk, dv, dPosQ, dPosK, dctx, probs, keep, q, k, v, posQ, posK, dC, dP []T) {
	h := a.heads * a.d
	seq, n := a.seq, a.batch*a.seq
	clear(dC)
	clear(dP)
	scale := T(a.scale)
	vec32.ParallelFor(a.batch*a.heads, 1, func(lo, hi int) {
		ds := make([]T, seq*seq)
		var dropped []T
		if keep != nil {
			dropped = make([]T, seq*seq)
		}
		for bh := lo; bh < hi; bh++ {
			b, hd := bh/a.heads, bh%a.heads
			off := b*seq*h + hd*a.d
			base := bh * seq * seq
			p := probs[base : base+seq*seq]
			use := withDropout(a.be, p, keep, base, dropped)
			// ctx = use·v ⇒ dv = useᵀ·dctx, d(use) = dctx·vᵀ
			gemmSerial(a.be, true, false, seq, a.d, seq, 1, use, seq, dctx[off:], h, 0, dv[off:], h)
			gemmSerial(a.be, false, true, seq, seq, a.d, 1, dctx[off:], h, v[off:], h, 0, ds, seq)
			softmaxBackwardRows(a.be, ds, p, keep, base, seq, scale)
			// content term: s = q·kᵀ ⇒ dq = ds·k, dk = dsᵀ·q
			gemmSerial(a.be, false, false, seq, a.d, seq, 1, ds, seq, k[off:], h, 0, dq[off:], h)
			gemmSerial(a.be, true, false, seq, a.d, seq, 1, ds, seq, q[off:], h, 0, dk[off:], h)
			// the gathers scatter back: C[i, c(i,j)] and P[j, p(i,j)]
			r0 := hd*n + b*seq
			for i := 0; i < seq; i++ {
				dr := ds[i*seq : (i+1)*seq]
				if dC != nil {
					cr, idx := dC[(r0+i)*a.rows:], a.c2p[i*seq:]
					for j, g := range dr {
						cr[idx[j]] += g
					}
				}
				if dP != nil {
					idx := a.p2c[i*seq:]
					for j, g := range dr {
						dP[(r0+j)*a.rows+int(idx[j])] += g
					}
				}
			}
		}
	})
	// C = q·K^rᵀ ⇒ dq += dC·K^r, dK^r = dCᵀ·q; P = k·Q^rᵀ likewise. Heads
	// own disjoint columns, so they run in parallel.
	vec32.ParallelFor(a.heads, 1, func(lo, hi int) {
		for hd := lo; hd < hi; hd++ {
			off := hd * a.d
			if dC != nil {
				c := dC[hd*n*a.rows:]
				gemmSerial(a.be, false, false, n, a.d, a.rows, 1, c, a.rows, posK[off:], h, 1, dq[off:], h)
				gemmSerial(a.be, true, false, a.rows, a.d, n, 1, c, a.rows, q[off:], h, 0, dPosK[off:], h)
			}
			if dP != nil {
				p := dP[hd*n*a.rows:]
				gemmSerial(a.be, false, false, n, a.d, a.rows, 1, p, a.rows, posQ[off:], h, 1, dk[off:], h)
				gemmSerial(a.be, true, false, a.rows, a.d, n, 1, p, a.rows, k[off:], h, 0, dPosQ[off:], h)
			}
		}
	})
}
