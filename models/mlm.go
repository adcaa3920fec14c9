package models

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode"

	"github.com/beluga-nlp/beluga/models/checkpoint"
)

// MaskedLM is HuggingFace's BertForMaskedLM at inference: the encoder's
// final hidden state at a masked position goes through the prediction head
// cls.predictions — transform.dense, the exact GELU, transform.LayerNorm —
// and a decoder whose weight is the word-embedding matrix (tied, unless the
// checkpoint carries cls.predictions.decoder.weight) plus cls.predictions.bias.
// CheckList's editor suggests template fill-ins this way (with RoBERTa).
type MaskedLM struct {
	Encoder                            *BERT
	dense, denseBias, lnWeight, lnBias []float32
	decoder, bias                      []float32 // [vocab, hidden], [vocab]
}

// LoadMaskedLM reads a checkpoint with an MLM head (a model directory or a
// .tar.gz of one).
func LoadMaskedLM(path string) (*MaskedLM, *checkpoint.Checkpoint, error) {
	ck, err := checkpoint.Load(path)
	if err != nil {
		return nil, nil, err
	}
	// The buffers it keeps (position_ids) must be what the encoder
	// computes; the others are of no use to it.
	fam, err := LookupFamily(ck.Config.ModelType)
	if err != nil {
		return nil, nil, fmt.Errorf("model %s: %w", path, err)
	}
	if err := fam.CheckBuffers(ck.Config, ck.Buffers, &LoadReport{}); err != nil {
		return nil, nil, fmt.Errorf("model %s: %w", path, err)
	}
	m, err := NewMaskedLM(ck.Config, ck.Weights)
	if err != nil {
		return nil, nil, fmt.Errorf("model %s: %w", path, err)
	}
	return m, ck, nil
}

// NewMaskedLM builds the encoder and the MLM head from a checkpoint's
// weights. A checkpoint without cls.predictions.* is an error that says so.
func NewMaskedLM(cfg *checkpoint.Config, w checkpoint.Tensors) (*MaskedLM, error) {
	enc, _, err := NewBERT(cfg, 2, w, 0)
	if err != nil {
		return nil, err
	}
	h, v := cfg.HiddenSize, cfg.VocabSize
	get := func(name string, shape ...int) ([]float32, error) {
		t, ok := w[name]
		if !ok {
			return nil, fmt.Errorf("no %s: the checkpoint has no masked-LM head (save it as BertForMaskedLM or BertForPreTraining)", name)
		}
		if !sameShape(t.Shape, shape) {
			return nil, fmt.Errorf("%s has shape %v, want %v", name, t.Shape, shape)
		}
		return t.Data, nil
	}
	m := &MaskedLM{Encoder: enc}
	for _, p := range []struct {
		dst   *[]float32
		name  string
		shape []int
	}{
		{&m.dense, "cls.predictions.transform.dense.weight", []int{h, h}},
		{&m.denseBias, "cls.predictions.transform.dense.bias", []int{h}},
		{&m.lnWeight, "cls.predictions.transform.LayerNorm.weight", []int{h}},
		{&m.lnBias, "cls.predictions.transform.LayerNorm.bias", []int{h}},
		{&m.bias, "cls.predictions.bias", []int{v}},
	} {
		if *p.dst, err = get(p.name, p.shape...); err != nil {
			return nil, err
		}
	}
	m.decoder = enc.Param("bert.embeddings.word_embeddings.weight").Value
	if _, ok := w["cls.predictions.decoder.weight"]; ok {
		if m.decoder, err = get("cls.predictions.decoder.weight", v, h); err != nil {
			return nil, err
		}
	}
	if act := cfg.HiddenAct; act != "" && act != "gelu" {
		return nil, fmt.Errorf("hidden_act %q: the MLM head supports gelu", act)
	}
	return m, nil
}

// LogProbs returns, for each row i of b, the log-probabilities over the
// vocabulary of the token at position pos[i].
func (m *MaskedLM) LogProbs(b Batch, pos []int) ([][]float32, error) {
	if len(pos) != b.Size {
		return nil, fmt.Errorf("%d mask positions for %d rows", len(pos), b.Size)
	}
	r := m.Encoder.newRun(false)
	defer r.release()
	p, err := m.Encoder.enc.Forward(r, b)
	if err != nil {
		return nil, err
	}
	hidden := p.Hidden()
	c := &m.Encoder.Config
	h, v := c.HiddenSize, c.VocabSize
	x := make([]float32, b.Size*h)
	for i, j := range pos {
		if j < 0 || j >= b.SeqLen {
			return nil, fmt.Errorf("row %d: mask position %d outside its %d tokens", i, j, b.SeqLen)
		}
		copy(x[i*h:(i+1)*h], hidden[(i*b.SeqLen+j)*h:])
	}
	t := make([]float32, b.Size*h)
	linearForward(r.m.be, t, x, m.dense, m.denseBias, b.Size, h, h)
	geluForward(r.m.be, t, t)
	xhat, rstd := make([]float32, len(t)), make([]float32, b.Size)
	layerNormForward(r.m.be, t, xhat, rstd, t, m.lnWeight, m.lnBias, h, c.LayerNormEps)
	logits := make([]float32, b.Size*v)
	linearForward(r.m.be, logits, t, m.decoder, m.bias, b.Size, h, v)
	out := make([][]float32, b.Size)
	for i := range out {
		row := logits[i*v : (i+1)*v]
		mx := math.Inf(-1)
		for _, l := range row {
			mx = math.Max(mx, float64(l))
		}
		var sum float64
		for _, l := range row {
			sum += math.Exp(float64(l) - mx)
		}
		lse := mx + math.Log(sum)
		for k, l := range row {
			row[k] = float32(float64(l) - lse)
		}
		out[i] = row
	}
	return out, nil
}

// TextEncoder tokenizes text the way the model was trained (package
// tokenize's WordPiece).
type TextEncoder interface {
	Encode(text, pair string, isPair bool) (Encoding, error)
}

// Suggestion is one fill-in of a {mask} with its probability.
type Suggestion struct {
	Word string  `json:"word"`
	Prob float64 `json:"prob"`
}

// Suggest returns the topK most probable whole words for the single {mask}
// of template, as CheckList's editor.suggest. vocab maps ids to tokens
// (vocab.txt). The text either side of the mask is tokenized on its own and
// joined around the [MASK] id, so the mask is one token whatever the
// tokenizer does with "[MASK]" in lower-cased text. Word pieces (##…),
// special tokens and tokens without a letter or digit are not suggested.
func Suggest(m *MaskedLM, tk TextEncoder, vocab []string, template string, topK int) ([]Suggestion, error) {
	parts := strings.Split(template, "{mask}")
	switch {
	case len(parts) == 1:
		return nil, errors.New("the text has no {mask}")
	case len(parts) > 2:
		return nil, fmt.Errorf("the text has %d {mask}s: suggest fills one at a time", len(parts)-1)
	}
	maskID := -1
	for i, t := range vocab {
		if t == "[MASK]" {
			maskID = i
		}
	}
	if maskID < 0 {
		return nil, errors.New("the vocabulary has no [MASK] token")
	}
	left, err := tk.Encode(strings.TrimRight(parts[0], " "), "", false)
	if err != nil {
		return nil, err
	}
	right, err := tk.Encode(strings.TrimLeft(parts[1], " "), "", false)
	if err != nil {
		return nil, err
	}
	// Each encoding is [CLS] … [SEP]: keep [CLS] … of the left, … [SEP] of
	// the right.
	ids := append(append(append([]int(nil), left.IDs[:len(left.IDs)-1]...), maskID), right.IDs[1:]...)
	pos := len(left.IDs) - 1
	b := NewBatch([]Encoding{{IDs: ids, TypeIDs: make([]int, len(ids))}})
	lp, err := m.LogProbs(b, []int{pos})
	if err != nil {
		return nil, err
	}
	order := make([]int, len(lp[0]))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return lp[0][order[a]] > lp[0][order[b]] })
	var out []Suggestion
	for _, id := range order {
		if len(out) == topK {
			break
		}
		if id >= len(vocab) || !isWordToken(vocab[id]) {
			continue
		}
		out = append(out, Suggestion{Word: vocab[id], Prob: math.Exp(float64(lp[0][id]))})
	}
	return out, nil
}

func isWordToken(t string) bool {
	if strings.HasPrefix(t, "##") || (strings.HasPrefix(t, "[") && strings.HasSuffix(t, "]")) {
		return false
	}
	return strings.IndexFunc(t, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0
}
