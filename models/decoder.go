package models

import (
	"fmt"
	"github.com/beluga-nlp/beluga/models/backend"
	"math"

	"github.com/beluga-nlp/beluga/models/checkpoint"
	"github.com/beluga-nlp/beluga/models/internal/vec32"
)

// This file is what the decoder families (gpt2.go, llama.go) share: causal
// attention over a padded batch, optionally continuing a cached prefix of
// keys and values shared by every row, with grouped-query attention; the
// positions of a padded batch; the sequence classifier's pooling on the last
// real token and its bias-free score head; and the element-wise kernels
// the decoders add to kernels.go's (GPT-2's tanh GELU, SiLU, RMSNorm).
//
// A decoder is an Encoder whose hidden state at a token depends only on the
// tokens up to it. Its classifier (…ForSequenceClassification) reads the
// hidden state of each row's last real token, as HuggingFace's does for
// right-padded batches (it counts the tokens that are not pad_token_id);
// its language model (CausalLM, lm.go) reads every position.

// causalEncoder is a decoder family's Encoder: its passes can continue a
// cached prefix, and keep the keys and values of what they ran.
type causalEncoder interface {
	Encoder
	// forwardCached is Forward continuing past (nil: no prefix): every row
	// of b follows past's tokens, at positions from past.n on; with save
	// set (b of one row, evaluation only) the pass also returns its keys
	// and values appended to past's as a new cache.
	forwardCached(r *Run, b Batch, past *kvCache, save bool) (EncoderPass, *kvCache, error)
	// embedding is the input token embedding, [vocab, hidden]: the language
	// model's output layer when the family ties them.
	embedding() *Param
	// tied says whether the language model's output layer is the input
	// embedding: config.json's tie_word_embeddings, else the default of
	// the family's config class.
	tied() bool
}

// kvCache holds the keys and values of a prefix for every layer, n tokens
// of kvHeads·d each (keys already rotated by the rotary families), and the
// final hidden state of its last token (what predicts the token after it).
type kvCache struct {
	n    int
	k, v [][]float32
	last []float32
}

// extend returns the cache of past's tokens followed by the one row of k
// and v (seq × width) of layer l, building it layer by layer.
func (c *kvCache) extend(past *kvCache, l, layers, seq, width int, k, v []float32) *kvCache {
	if c == nil {
		c = &kvCache{k: make([][]float32, layers), v: make([][]float32, layers)}
		if past != nil {
			c.n = past.n
		}
		c.n += seq
	}
	var pk, pv []float32
	if past != nil {
		pk, pv = past.k[l], past.v[l]
	}
	c.k[l] = append(append(make([]float32, 0, len(pk)+seq*width), pk...), k[:seq*width]...)
	c.v[l] = append(append(make([]float32, 0, len(pv)+seq*width), pv...), v[:seq*width]...)
	return c
}

// decoderPositions returns every token's position: past plus the number
// of real tokens before it in its row — the cumulative sum of the mask less
// one, as generate() passes position_ids, and 0, 1, 2, … for a right-padded
// row as HuggingFace's default; a padding token takes the next real token's
// position (padding is masked out of every real token's attention). limit >
// 0 is the family's largest position (GPT-2's n_positions).
func decoderPositions(b Batch, past, limit int) ([]int, error) {
	pos := make([]int, b.Size*b.SeqLen)
	for i := 0; i < b.Size; i++ {
		p := past
		for j := 0; j < b.SeqLen; j++ {
			pos[i*b.SeqLen+j] = p
			if b.Mask[i*b.SeqLen+j] != 0 {
				if limit > 0 && p >= limit {
					return nil, fmt.Errorf("row %d: token %d at position %d, beyond the model's %d positions", i, j, p, limit)
				}
				p++
			}
		}
	}
	return pos, nil
}

// decoderStart checks a decoder pass (b against the vocabulary, a cache
// only in evaluation) and returns its tokens' positions, continuing past.
func decoderStart(r *Run, b Batch, c *checkpoint.Config, past *kvCache, save bool, limit int) ([]int, error) {
	if err := checkDecoderBatch(b, c.VocabSize); err != nil {
		return nil, err
	}
	if (past != nil || save) && r.Train {
		return nil, fmt.Errorf("a key/value cache is for evaluation passes")
	}
	pastN := 0
	if past != nil {
		pastN = past.n
	}
	return decoderPositions(b, pastN, limit)
}

// saveTo is where a layer appends its keys and values: cache when the
// pass saves them, else nowhere.
func saveTo(save bool, cache **kvCache) **kvCache {
	if save {
		return cache
	}
	return nil
}

// checkDecoderBatch checks b's shape and its ids against the vocabulary.
func checkDecoderBatch(b Batch, vocab int) error {
	if len(b.IDs) != b.Size*b.SeqLen || len(b.Mask) != b.Size*b.SeqLen {
		return fmt.Errorf("batch of %d×%d has %d ids and %d mask values", b.Size, b.SeqLen, len(b.IDs), len(b.Mask))
	}
	for i, id := range b.IDs {
		if b.Mask[i] != 0 && (id < 0 || id >= vocab) {
			return fmt.Errorf("token id %d outside the vocabulary of %d", id, vocab)
		}
	}
	return nil
}

// embedRows copies row id of table (width h) into x for every token;
// padding tokens, whose ids may be anything, take row 0.
func embedRows(x, table []float32, b Batch, h int) {
	for r, id := range b.IDs {
		if b.Mask[r] == 0 {
			id = 0
		}
		copy(x[r*h:(r+1)*h], table[id*h:(id+1)*h])
	}
}

// embedBackward adds each real token's gradient into its embedding row.
func embedBackward(grad, dx []float32, b Batch, h int) {
	for r, id := range b.IDs {
		if b.Mask[r] == 0 {
			continue
		}
		dst := grad[id*h : (id+1)*h]
		for k, v := range dx[r*h : (r+1)*h] {
			dst[k] += v
		}
	}
}

// causalAttentionForward is a decoder's multi-head scaled dot-product
// attention: the queries q (batch·seq × heads·d) attend to the keys and
// values of a prefix shared by every row (pk, pv: past × kvHeads·d; none
// when past is 0) and then to their own row's (k, v: batch·seq ×
// kvHeads·d), query i seeing every prefix key and its row's keys j ≤ i that
// are not padding; the float32 minimum is added to the masked scores, as
// HuggingFace adds finfo.min. Query head h reads key/value head
// h/(heads/kvHeads) (grouped-query attention: repeat_kv). probs (batch ·
// heads · seq · (past+seq)) receives the probabilities when not nil (a
// training pass keeps them for the backward pass); keep holds their dropout
// multipliers (nil: none).
func causalAttentionForward[T Float](be backend.Backend, ctx, probs, q, k, v, pk, pv []T, past int, mask []float32, keep []T, batch, seq, heads, kvHeads, d int) {
	h, kh := heads*d, kvHeads*d
	group := heads / kvHeads
	w := past + seq
	scale := T(1 / math.Sqrt(float64(d)))
	vec32.ParallelFor(batch*heads, 1, func(lo, hi int) {
		var scratch, dropped []T
		if probs == nil {
			scratch = make([]T, seq*w)
		}
		if keep != nil {
			dropped = make([]T, seq*w)
		}
		for bh := lo; bh < hi; bh++ {
			b, hd := bh/heads, bh%heads
			qo := b*seq*h + hd*d
			ko := b*seq*kh + (hd/group)*d
			po := (hd / group) * d
			base := bh * seq * w
			p := scratch
			if probs != nil {
				p = probs[base : base+seq*w]
			}
			if past > 0 {
				gemmSerial(be, false, true, seq, past, d, scale, q[qo:], h, pk[po:], kh, 0, p, w)
			}
			gemmSerial(be, false, true, seq, seq, d, scale, q[qo:], h, k[ko:], kh, 0, p[past:], w)
			m := mask[b*seq : (b+1)*seq]
			for i := 0; i < seq; i++ {
				row := p[i*w : (i+1)*w]
				own := row[past:]
				for j := range own {
					if j > i || m[j] == 0 {
						own[j] += -math.MaxFloat32
					}
				}
				softmaxRow(be, row)
			}
			use := withDropout(be, p, keep, base, dropped)
			if past > 0 {
				gemmSerial(be, false, false, seq, d, past, 1, use, w, pv[po:], kh, 0, ctx[qo:], h)
				gemmSerial(be, false, false, seq, d, seq, 1, use[past:], w, v[ko:], kh, 1, ctx[qo:], h)
				continue
			}
			gemmSerial(be, false, false, seq, d, seq, 1, use, w, v[ko:], kh, 0, ctx[qo:], h)
		}
	})
}

// causalAttentionBackward sets dq, dk and dv (the latter two kvHeads wide)
// from dctx for a pass without a prefix, given its probabilities and
// dropout multipliers: attentionBackward on the key/value heads repeated
// to every query head, whose gradients each key/value head then sums.
func causalAttentionBackward(be backend.Backend, pool *bufPool, dq, dk, dv, dctx, probs, keep, q, k, v []float32, batch, seq, heads, kvHeads, d int) {
	if kvHeads == heads {
		attentionBackward(be, dq, dk, dv, dctx, probs, keep, q, k, v, batch, seq, heads, d)
		return
	}
	n, h := batch*seq, heads*d
	kf, vf, dkf, dvf := pool.get(n*h), pool.get(n*h), pool.get(n*h), pool.get(n*h)
	defer pool.put(kf, vf, dkf, dvf)
	repeatKV(kf, k, n, heads, kvHeads, d)
	repeatKV(vf, v, n, heads, kvHeads, d)
	attentionBackward(be, dq, dkf, dvf, dctx, probs, keep, q, kf, vf, batch, seq, heads, d)
	sumKV(dk, dkf, n, heads, kvHeads, d)
	sumKV(dv, dvf, n, heads, kvHeads, d)
}

// repeatKV writes x (n × kvHeads·d) with each head repeated for the
// heads/kvHeads query heads that read it (n × heads·d).
func repeatKV(dst, x []float32, n, heads, kvHeads, d int) {
	group := heads / kvHeads
	for r := 0; r < n; r++ {
		for hd := 0; hd < heads; hd++ {
			copy(dst[(r*heads+hd)*d:(r*heads+hd+1)*d], x[(r*kvHeads+hd/group)*d:])
		}
	}
}

// sumKV is repeatKV's backward: each key/value head's gradient is the sum
// of its query heads'.
func sumKV(dst, dx []float32, n, heads, kvHeads, d int) {
	group := heads / kvHeads
	clear(dst[:n*kvHeads*d])
	for r := 0; r < n; r++ {
		for hd := 0; hd < heads; hd++ {
			o := dst[(r*kvHeads+hd/group)*d : (r*kvHeads+hd/group+1)*d]
			for i, x := range dx[(r*heads+hd)*d : (r*heads+hd+1)*d] {
				o[i] += x
			}
		}
	}
}

// lastReal is the index of row i's last real token (0 for a row without).
func lastReal(b Batch, i int) int {
	for j := b.SeqLen - 1; j > 0; j-- {
		if b.Mask[i*b.SeqLen+j] != 0 {
			return j
		}
	}
	return 0
}

// lastToken is a decoder classifier's pooling: the final hidden state of
// each row's last real token.
type lastToken struct{ h int }

func newLastToken(_ *checkpoint.Config, hidden int) Pooler { return lastToken{h: hidden} }

func (p lastToken) Specs() []ParamSpec       { return nil }
func (p lastToken) Bind(func(string) *Param) {}
func (p lastToken) Width() int               { return p.h }

func (p lastToken) Forward(r *Run, hidden []float32, b Batch) PoolPass {
	h := p.h
	pp := lastTokenPass{h: h, at: make([]int, b.Size), x: r.Alloc(b.Size * h)}
	for i := range pp.at {
		pp.at[i] = i*b.SeqLen + lastReal(b, i)
		copy(pp.x[i*h:(i+1)*h], hidden[pp.at[i]*h:])
	}
	return pp
}

type lastTokenPass struct {
	h  int
	at []int // the token each row's features come from
	x  []float32
}

func (p lastTokenPass) Features() []float32 { return p.x }
func (p lastTokenPass) Backward(_ *Run, dFeatures, dHidden []float32) {
	h := p.h
	for i, t := range p.at {
		dst := dHidden[t*h : (t+1)*h]
		for k, v := range dFeatures[i*h : (i+1)*h] {
			dst[k] += v
		}
	}
}

// scoreHead is a decoder classifier's head: score, a linear layer without
// bias (HuggingFace's nn.Linear(hidden, num_labels, bias=False)), drawn at
// initializer_range.
type scoreHead struct {
	w       *Param
	in, out int
	discard []float32 // the gradient of the bias it has not
}

func newScoreHead(_ *checkpoint.Config, features, labels int) Head {
	return &scoreHead{in: features, out: labels, discard: make([]float32, labels)}
}

func (s *scoreHead) Specs() []ParamSpec {
	return []ParamSpec{{Name: "score.weight", Shape: []int{s.out, s.in}}}
}
func (s *scoreHead) Bind(param func(string) *Param) { s.w = param("score.weight") }
func (s *scoreHead) In() int                        { return s.in }
func (s *scoreHead) Out() int                       { return s.out }

func (s *scoreHead) Forward(r *Run, x []float32, rows int) HeadPass {
	y := r.Alloc(rows * s.out)
	linearForward(r.m.be, y, x, s.w.Value, make([]float32, s.out), rows, s.in, s.out)
	return &scorePass{s: s, x: x, y: y, rows: rows}
}

type scorePass struct {
	s    *scoreHead
	x, y []float32
	rows int
}

func (p *scorePass) Out() []float32 { return p.y }
func (p *scorePass) Backward(r *Run, dOut, dx []float32) {
	s := p.s
	linearBackward(r.m.be, dx, s.w.Grad, s.discard, dOut, p.x, s.w.Value, p.rows, s.in, s.out)
}

// geluTanhForward is GPT-2's gelu_new, ½x(1 + tanh(√(2/π)(x + 0.044715x³))),
// computed as x·σ(2u) (u the tanh's argument): float32 on the vector
// unit's exponential (vec32.Exp, a few ulp), float64 (the gradient
// checks) on math.Exp.
func geluTanhForward[T Float](y, x []T) {
	vec32.ParallelFor(len(x), elementGrain, func(lo, hi int) {
		sig := sigmoidOf(x[lo:hi])
		for i := lo; i < hi; i++ {
			v := x[i]
			y[i] = v * sig(T(2*geluTanhC)*(v+T(0.044715)*v*v*v))
		}
	})
}

const geluTanhC = 0.7978845608028654 // √(2/π)

// geluTanhBackward sets dx = dy·gelu_new′(x); dx may be dy. With s =
// σ(2u): gelu_new′ = s + 2x·s(1−s)·√(2/π)(1 + 3·0.044715x²).
func geluTanhBackward[T Float](dx, dy, x []T) {
	vec32.ParallelFor(len(x), elementGrain, func(lo, hi int) {
		sig := sigmoidOf(x[lo:hi])
		for i := lo; i < hi; i++ {
			v := x[i]
			s := sig(T(2*geluTanhC) * (v + T(0.044715)*v*v*v))
			dx[i] = dy[i] * (s + 2*v*s*(1-s)*T(geluTanhC)*(1+T(3*0.044715)*v*v))
		}
	})
}

// sigmoidOf returns σ for the element type of x: float32 on vec32.Exp,
// float64 on math.Exp.
func sigmoidOf[T Float](x []T) func(T) T {
	if _, ok := any(x).([]float32); ok {
		return func(v T) T { return 1 / (1 + T(vec32.Exp(float32(-v)))) }
	}
	return func(v T) T { return T(1 / (1 + math.Exp(-float64(v)))) }
}

// swigluForward is Llama's MLP gate: g = SiLU(gate)·up, SiLU(x) = x·σ(x),
// keeping σ(gate) for the backward pass (n × f each).
func swigluForward[T Float](g, sig, gate, up []T) {
	vec32.ParallelFor(len(g), elementGrain, func(lo, hi int) {
		sigma := sigmoidOf(gate[lo:hi])
		for i := lo; i < hi; i++ {
			s := sigma(gate[i])
			sig[i] = s
			g[i] = gate[i] * s * up[i]
		}
	})
}

// swigluBackward sets dgate and dup from dg: d(up) = dg·SiLU(gate),
// d(gate) = dg·up·σ(gate)(1 + gate(1 − σ(gate))).
func swigluBackward[T Float](dgate, dup, dg, sig, gate, up []T) {
	vec32.ParallelFor(len(dg), elementGrain, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			s, x := sig[i], gate[i]
			dup[i] = dg[i] * x * s
			dgate[i] = dg[i] * up[i] * s * (1 + x*(1-s))
		}
	})
}

// rmsNormForward is Llama's RMSNorm on rows of width h: y = γ·x·r with
// r = 1/√(mean(x²) + eps), kept in rstd for the backward pass (the mean in
// float64). y may be x.
func rmsNormForward[T Float](y, rstd, x, gamma []T, h int, eps float64) {
	n := len(rstd)
	vec32.ParallelFor(n, max(1, elementGrain/h), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			row, out := x[r*h:(r+1)*h], y[r*h:(r+1)*h]
			s := 0.0
			for _, v := range row {
				s += float64(v) * float64(v)
			}
			rs := T(1 / math.Sqrt(s/float64(h)+eps))
			rstd[r] = rs
			for i, v := range row {
				out[i] = gamma[i] * (v * rs)
			}
		}
	})
}

// rmsNormBackward adds dγ += Σ dy·x̂ and sets dx = r·(g − x̂·mean(g·x̂)),
// g = dy·γ, x̂ = x·r, given the forward pass's input x (not y).
func rmsNormBackward[T Float](dx, dgamma, dy, x, rstd, gamma []T, h int) {
	n := len(rstd)
	// dγ sums over rows: by columns, each in row order.
	vec32.ParallelFor(h, max(16, elementGrain/max(1, n)), func(lo, hi int) {
		for r := 0; r < n; r++ {
			rs := rstd[r]
			for i := lo; i < hi; i++ {
				dgamma[i] += dy[r*h+i] * x[r*h+i] * rs
			}
		}
	})
	vec32.ParallelFor(n, max(1, elementGrain/h), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			rs := float64(rstd[r])
			row, d, out := x[r*h:(r+1)*h], dy[r*h:(r+1)*h], dx[r*h:(r+1)*h]
			dot := 0.0
			for i, v := range row {
				dot += float64(d[i]*gamma[i]) * float64(v) * rs
			}
			dot /= float64(h)
			for i, v := range row {
				out[i] = T(rs * (float64(d[i]*gamma[i]) - float64(v)*rs*dot))
			}
		}
	})
}
