package models

import (
	"fmt"
	"math"
	"sort"

	"github.com/beluga-nlp/beluga/models/backend"
	"github.com/beluga-nlp/beluga/models/checkpoint"
	"github.com/beluga-nlp/beluga/models/internal/vec32"
)

// CausalLM is a decoder family's language model (GPT2LMHeadModel,
// LlamaForCausalLM, Qwen2ForCausalLM): the family's decoder and an output
// layer giving every position's logits over the vocabulary — the input
// embedding itself when the family ties them (tie_word_embeddings), else
// lm_head.weight. It scores, it does not train: its passes run without
// dropout and keep nothing for a backward pass.
type CausalLM struct {
	*core
	dec causalEncoder
	out *Param // [vocab, hidden]
}

// NewCausalLM builds the language model of cfg's decoder family from a
// checkpoint's weights (HuggingFace's names: the family's prefix, and
// lm_head.weight unless tied). A tied checkpoint's lm_head.weight (GPT-2's
// save_pretrained writes it) must equal the embedding and is reported as
// checked. Parameters the checkpoint lacks are drawn from seed and
// reported, as NewClassifier does.
func NewCausalLM(cfg *checkpoint.Config, weights checkpoint.Tensors, seed uint64) (*CausalLM, LoadReport, error) {
	c, err := newCore(cfg, seed)
	if err != nil {
		return nil, LoadReport{}, err
	}
	dec, ok := c.enc.(causalEncoder)
	if !ok || c.family.CausalLM == "" {
		return nil, LoadReport{}, fmt.Errorf("model_type %q is not a decoder family: it has no language model", cfg.ModelType)
	}
	// One stream draws every missing parameter in order, as NewClassifier's
	// does: a second stream of the same seed would draw lm_head equal to the
	// embedding.
	init := newInitStream(seed)
	groups := []paramGroup{{specs: c.enc.Specs(), encoder: true, init: init}}
	head := []ParamSpec{{Name: "lm_head.weight", Shape: []int{cfg.VocabSize, cfg.HiddenSize}}}
	if !dec.tied() {
		groups = append(groups, paramGroup{specs: head, init: init})
	}
	var rep LoadReport
	used := map[string]bool{}
	_, tiedCopy := weights["lm_head.weight"]
	tiedCopy = tiedCopy && dec.tied()
	used["lm_head.weight"] = tiedCopy
	if err := c.load(groups, weights, &rep, used); err != nil {
		return nil, rep, err
	}
	c.bind(c.enc)
	m := &CausalLM{core: c, dec: dec, out: dec.embedding()}
	if !dec.tied() {
		m.out = c.byName["lm_head.weight"]
	}
	if tiedCopy {
		t := weights["lm_head.weight"]
		if !sameShape(t.Shape, head[0].Shape) {
			return nil, rep, fmt.Errorf("checkpoint tensor lm_head.weight has shape %v, the config needs %v", t.Shape, head[0].Shape)
		}
		for i, v := range t.Data {
			if v != m.out.Value[i] {
				return nil, rep, fmt.Errorf("checkpoint tensor lm_head.weight differs from the input embedding at %d, but the config ties them (tie_word_embeddings)", i)
			}
		}
		rep.Checked = append(rep.Checked, "lm_head.weight")
	}
	return m, rep, nil
}

// pass runs the decoder on b in evaluation, continuing past and keeping
// its keys and values with save, after checking the pass fits in memory;
// the caller releases the run.
func (m *CausalLM) pass(b Batch, past *kvCache, save bool) (*Run, EncoderPass, *kvCache, error) {
	if err := m.checkPass(b, false); err != nil {
		return nil, nil, nil, err
	}
	r := m.newRun(false)
	p, c, err := m.dec.forwardCached(r, b, past, save)
	if err != nil {
		r.release()
		return nil, nil, nil, err
	}
	return r, p, c, nil
}

// Hidden returns the final hidden states of every token of b,
// Size×SeqLen×HiddenSize row-major (padding's are meaningless).
func (m *CausalLM) Hidden(b Batch) ([]float32, error) {
	r, p, _, err := m.pass(b, nil, false)
	if err != nil {
		return nil, err
	}
	defer r.release()
	return append([]float32(nil), p.Hidden()...), nil
}

// NextLogProbs returns, for every row of b, the log-probability the model
// gives each real token after the row's first, in order: row i's entry t
// is log P(token t+1 | tokens 0…t).
func (m *CausalLM) NextLogProbs(b Batch) ([][]float64, error) {
	r, p, _, err := m.pass(b, nil, false)
	if err != nil {
		return nil, err
	}
	defer r.release()
	var at, targets, rows []int
	for i := 0; i < b.Size; i++ {
		prev := -1
		for j := 0; j < b.SeqLen; j++ {
			t := i*b.SeqLen + j
			if b.Mask[t] == 0 {
				continue
			}
			if prev >= 0 {
				at, targets, rows = append(at, prev), append(targets, b.IDs[t]), append(rows, i)
			}
			prev = t
		}
	}
	out := make([][]float64, b.Size)
	for k, lp := range m.logProbsAt(p.Hidden(), at, targets) {
		out[rows[k]] = append(out[rows[k]], lp)
	}
	return out, nil
}

// logProbsAt returns log softmax(W·hidden[at[i]])[targets[i]] for every i:
// the output layer and a float64 log-sum-exp on the rows asked for only, a
// block of rows at a time.
func (m *CausalLM) logProbsAt(hidden []float32, at, targets []int) []float64 {
	h, vocab := m.Config.HiddenSize, m.Config.VocabSize
	out := make([]float64, len(at))
	const block = 32
	x := make([]float32, block*h)
	logits := make([]float32, block*vocab)
	for lo := 0; lo < len(at); lo += block {
		hi := min(lo+block, len(at))
		rows := hi - lo
		for i := lo; i < hi; i++ {
			copy(x[(i-lo)*h:(i-lo+1)*h], hidden[at[i]*h:(at[i]+1)*h])
		}
		gemm(m.be, false, true, rows, vocab, h, 1, x, h, m.out.Value, h, 0, logits, vocab)
		vec32.ParallelFor(rows, 1, func(a, b int) {
			for i := a; i < b; i++ {
				out[lo+i] = logSoftmaxAt(m.be, logits[i*vocab:(i+1)*vocab], targets[lo+i])
			}
		})
	}
	return out
}

// logSoftmaxAt is log softmax(z)[t] = (z[t] − max) + log softmax(z)[argmax],
// the softmax on the model's backend (which overwrites z): the largest
// probability is at least 1/len(z), so a target's log-probability never
// underflows, however small.
func logSoftmaxAt(be backend.Backend, z []float32, t int) float64 {
	zt, top, arg := z[t], z[0], 0
	for i, v := range z {
		if v > top {
			top, arg = v, i
		}
	}
	be.Softmax(z)
	return float64(zt-top) + math.Log(float64(z[arg]))
}

// checkIDs refuses a token id outside the vocabulary.
func checkIDs(ids []int, vocab int) error {
	for k, id := range ids {
		if id < 0 || id >= vocab {
			return fmt.Errorf("token %d: id %d outside the vocabulary of %d", k, id, vocab)
		}
	}
	return nil
}

// ScoreItem is one input to score: its tokens after the shared prefix, and
// the candidate continuations (one label's verbalizer each) whose
// log-likelihoods are wanted.
type ScoreItem struct {
	Context []int   // may be empty when the prefix is not
	Options [][]int // each non-empty
}

// ScoreOptions tune Score.
type ScoreOptions struct {
	// BatchTokens bounds a pass: rows × longest row, padding included
	// (0: 2048). Sequences are sorted by length and packed greedily.
	BatchTokens int
	// NoPrefixCache runs every sequence from its first token, the prefix
	// included: the reference the cached scoring must equal, and the
	// baseline of its speed.
	NoPrefixCache bool
}

// ScoreStats counts what a Score call ran.
type ScoreStats struct {
	Sequences int // (item, option) pairs
	Passes    int // forward passes, the prefix's included
	// Tokens counts the real tokens run through the decoder: the prefix's
	// once when cached, and the tokens an input's options share before
	// their last once.
	Tokens int
}

// Score returns, for every item and each of its options, the
// log-likelihood log P(option | prefix, context) = Σ_k log P(option_k |
// prefix, context, option_<k) — what a prompted classifier compares across
// its label verbalizers. The prefix (a prompt's instructions and
// demonstrations, the same for every input) is run once and its keys and
// values reused by every sequence; the sequences are context + option,
// batched by length, and options whose tokens before their last agree (all
// one-token verbalizers of an input) share one row. All are token ids of the model's tokenizer: how a
// prompt is split into prefix, context and options (and so where the
// tokenizer's merges may cross a boundary) is the caller's choice.
func (m *CausalLM) Score(prefix []int, items []ScoreItem, opt ScoreOptions) ([][]float64, ScoreStats, error) {
	var st ScoreStats
	budget := opt.BatchTokens
	if budget <= 0 {
		budget = 2048
	}
	cached := len(prefix) > 0 && !opt.NoPrefixCache
	seqs, err := m.scoreSequences(prefix, items, cached)
	if err != nil {
		return nil, st, err
	}
	st.Sequences = len(seqs)
	out := make([][]float64, len(items))
	for i, it := range items {
		out[i] = make([]float64, len(it.Options))
	}
	add := func(s scoreSeq, lp float64) { out[s.item][s.option] += lp }
	var past *kvCache
	if cached {
		if past, err = m.prefixCache(prefix); err != nil {
			return nil, st, err
		}
		st.Passes++
		st.Tokens += len(prefix)
		// Options whose first token follows the prefix directly.
		var at, targets []int
		var from []scoreSeq
		for _, s := range seqs {
			if s.first == 0 {
				at, targets, from = append(at, 0), append(targets, items[s.item].Options[s.option][0]), append(from, s)
			}
		}
		for k, lp := range m.logProbsAt(past.last, at, targets) {
			add(from[k], lp)
		}
	}
	rows := shareRows(seqs)
	for lo := 0; lo < len(rows); {
		// Sorted by length: the batch's longest row is its last.
		hi := lo + 1
		for hi < len(rows) && (hi-lo+1)*len(rows[hi][0].fed) <= budget {
			hi++
		}
		if err := m.scoreRows(rows[lo:hi], items, past, add, &st); err != nil {
			return nil, st, err
		}
		lo = hi
	}
	return out, st, nil
}

// scoreSeq is one (item, option) sequence of a Score call.
type scoreSeq struct {
	item, option int
	fed          []int // the tokens run: all but the option's last
	first        int   // index in fed+[last] of the option's first token
}

// scoreSequences checks the items and lists their sequences: context +
// option, after the prefix unless it is cached.
func (m *CausalLM) scoreSequences(prefix []int, items []ScoreItem, cached bool) ([]scoreSeq, error) {
	vocab := m.Config.VocabSize
	if err := checkIDs(prefix, vocab); err != nil {
		return nil, fmt.Errorf("prefix: %w", err)
	}
	var seqs []scoreSeq
	for i, it := range items {
		if err := checkIDs(it.Context, vocab); err != nil {
			return nil, fmt.Errorf("item %d: context: %w", i, err)
		}
		if len(prefix)+len(it.Context) == 0 {
			return nil, fmt.Errorf("item %d: no prefix and no context to condition on", i)
		}
		if len(it.Options) == 0 {
			return nil, fmt.Errorf("item %d: no options to score", i)
		}
		for o, op := range it.Options {
			if len(op) == 0 {
				return nil, fmt.Errorf("item %d: option %d has no tokens", i, o)
			}
			if err := checkIDs(op, vocab); err != nil {
				return nil, fmt.Errorf("item %d: option %d: %w", i, o, err)
			}
			var all []int
			if !cached {
				all = append(all, prefix...)
			}
			all = append(append(all, it.Context...), op...)
			seqs = append(seqs, scoreSeq{item: i, option: o, fed: all[:len(all)-1], first: len(all) - len(op)})
		}
	}
	return seqs, nil
}

// prefixCache runs the prefix once and keeps its keys, values and last
// hidden state.
func (m *CausalLM) prefixCache(prefix []int) (*kvCache, error) {
	b := NewBatch([]Encoding{{IDs: prefix, TypeIDs: make([]int, len(prefix))}})
	r, p, c, err := m.pass(b, nil, true)
	if err != nil {
		return nil, fmt.Errorf("prefix: %w", err)
	}
	defer r.release()
	h := m.Config.HiddenSize
	c.last = append([]float32(nil), p.Hidden()[(len(prefix)-1)*h:len(prefix)*h]...)
	return c, nil
}

// shareRows groups the sequences that run the same tokens (the options of
// one input whose tokens before their last agree: every one-token
// verbalizer) into one row each, sorted by length; sequences that run
// nothing (a one-token option after the cached prefix alone) are left out.
func shareRows(seqs []scoreSeq) [][]scoreSeq {
	var rows [][]scoreSeq
	seen := map[string]int{}
	for _, s := range seqs {
		if len(s.fed) == 0 {
			continue
		}
		key := fmt.Sprint(s.fed)
		if r, ok := seen[key]; ok {
			rows[r] = append(rows[r], s)
			continue
		}
		seen[key] = len(rows)
		rows = append(rows, []scoreSeq{s})
	}
	sort.SliceStable(rows, func(a, b int) bool { return len(rows[a][0].fed) < len(rows[b][0].fed) })
	return rows
}

// scoreRows runs one batch of rows after past and adds the log-probability
// of each option token they predict.
func (m *CausalLM) scoreRows(rows [][]scoreSeq, items []ScoreItem, past *kvCache, add func(scoreSeq, float64), st *ScoreStats) error {
	encs := make([]Encoding, len(rows))
	for k, row := range rows {
		f := row[0].fed
		encs[k] = Encoding{IDs: f, TypeIDs: make([]int, len(f))}
		st.Tokens += len(f)
	}
	b := NewBatch(encs)
	r, p, _, err := m.pass(b, past, false)
	if err != nil {
		return err
	}
	defer r.release()
	st.Passes++
	var at, targets []int
	var owner []scoreSeq
	for k, row := range rows {
		for _, s := range row {
			op := items[s.item].Options[s.option]
			for t := max(s.first, 1); t < s.first+len(op); t++ {
				at, targets, owner = append(at, k*b.SeqLen+t-1), append(targets, op[t-s.first]), append(owner, s)
			}
		}
	}
	for k, lp := range m.logProbsAt(p.Hidden(), at, targets) {
		add(owner[k], lp)
	}
	return nil
}
