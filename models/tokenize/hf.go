package tokenize

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"os"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/beluga-nlp/beluga/models"
)

// HF is a tokenizer read from a HuggingFace tokenizer.json, run as
// HuggingFace's tokenizers library runs it: added tokens split off (those
// not normalized in the raw text, the others after normalisation), the
// normalizer, the pre-tokenizer, the model on each word, longest-first
// truncation, and the post-processor's special tokens. It is safe for
// concurrent use.
type HF struct {
	norm      normalizer
	pre       pretokenizer
	model     subword
	post      *postProcessor
	raw, nrm  addedSet // added tokens matched before and after normalisation
	specials  Specials
	maxLength int
	size      int
	fp        string

	mu    sync.RWMutex
	words map[string][]piece
}

// addedToken is one of tokenizer.json's added tokens.
type addedToken struct {
	Content    string `json:"content"`
	ID         int    `json:"id"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
	Special    bool   `json:"special"`
}

// addedSet finds added tokens in a text, leftmost first and longest there.
type addedSet struct {
	byFirst map[byte][]addedToken // longest first
}

func newAddedSet(toks []addedToken) addedSet {
	s := addedSet{byFirst: map[byte][]addedToken{}}
	for _, t := range toks {
		if t.Content == "" {
			continue
		}
		s.byFirst[t.Content[0]] = append(s.byFirst[t.Content[0]], t)
	}
	for _, l := range s.byFirst {
		sort.SliceStable(l, func(i, j int) bool { return len(l[i].Content) > len(l[j].Content) })
	}
	return s
}

// addedMatch is a part of a text: an added token's id, or -1 for text.
type addedMatch struct {
	a, b int
	id   int
}

// split cuts s into added tokens and the text between them, following
// HuggingFace's AddedVocabulary.find_matches (single_word, lstrip, rstrip).
func (s addedSet) split(str string) []addedMatch {
	if len(s.byFirst) == 0 {
		return []addedMatch{{0, len(str), -1}}
	}
	var out []addedMatch
	done := 0
	for i := 0; i < len(str); {
		var hit *addedToken
		for k := range s.byFirst[str[i]] {
			t := &s.byFirst[str[i]][k]
			if strings.HasPrefix(str[i:], t.Content) {
				hit = t
				break
			}
		}
		if hit == nil {
			i++
			continue
		}
		start, stop := i, i+len(hit.Content)
		if hit.SingleWord {
			r0, _ := utf8.DecodeLastRuneInString(str[:start])
			r1, _ := utf8.DecodeRuneInString(str[stop:])
			if (start > 0 && isWordChar(r0)) || (stop < len(str) && isWordChar(r1)) {
				i = stop
				continue
			}
		}
		if hit.LStrip {
			start = max(len(strings.TrimRightFunc(str[:start], unicode.IsSpace)), done)
		}
		if hit.RStrip {
			stop = len(str) - len(strings.TrimLeftFunc(str[stop:], unicode.IsSpace))
		}
		if done < start {
			out = append(out, addedMatch{done, start, -1})
		}
		out = append(out, addedMatch{start, stop, hit.ID})
		done = stop
		i = max(i+len(hit.Content), stop)
	}
	if done < len(str) || len(out) == 0 {
		out = append(out, addedMatch{done, len(str), -1})
	}
	return out
}

// Specials are a tokenizer's special token ids, -1 where it has none. CLS
// is also the beginning-of-sequence token (<s>), SEP the end (</s>).
type Specials struct {
	CLS, SEP, PAD, UNK, MASK int
}

// hfFile is a tokenizer.json.
type hfFile struct {
	AddedTokens   []addedToken    `json:"added_tokens"`
	Normalizer    json.RawMessage `json:"normalizer"`
	PreTokenizer  json.RawMessage `json:"pre_tokenizer"`
	PostProcessor json.RawMessage `json:"post_processor"`
	Model         json.RawMessage `json:"model"`
}

func isNull(r json.RawMessage) bool { return len(r) == 0 || string(r) == "null" }

// NewHF reads a HuggingFace tokenizer.json, truncating encodings to
// maxLength tokens (0: none). A component it does not implement is an
// error that names it.
func NewHF(path string, maxLength int) (*HF, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", path, err)
	}
	h, err := parseHF(b, maxLength)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", path, err)
	}
	return h, nil
}

func parseHF(data []byte, maxLength int) (*HF, error) {
	var f hfFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, err
	}
	h := &HF{maxLength: maxLength, words: map[string][]piece{}}
	var err error
	if !isNull(f.Normalizer) {
		if h.norm, _, err = buildNormalizer(f.Normalizer); err != nil {
			return nil, fmt.Errorf("normalizer: %w", err)
		}
	}
	if !isNull(f.PreTokenizer) {
		if h.pre, _, err = buildPreTokenizer(f.PreTokenizer); err != nil {
			return nil, fmt.Errorf("pre_tokenizer: %w", err)
		}
	}
	if isNull(f.Model) {
		return nil, fmt.Errorf("no model")
	}
	if h.model, err = buildModel(f.Model); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	h.post = noPost()
	if !isNull(f.PostProcessor) {
		if h.post, err = buildPost(f.PostProcessor); err != nil {
			return nil, fmt.Errorf("post_processor: %w", err)
		}
	}
	var raw, nrm []addedToken
	h.size = h.model.size()
	// An added token is one of the model's or numbered after them, as
	// HuggingFace numbers them.
	maxAdded := h.model.size() + len(f.AddedTokens)
	for i, t := range f.AddedTokens {
		if t.Content == "" {
			return nil, fmt.Errorf("added_tokens[%d] is empty", i)
		}
		if t.ID < 0 || t.ID >= maxAdded {
			return nil, fmt.Errorf("added_tokens[%d] %q has id %d, outside 0…%d (the model's %d tokens and %d added)", i, t.Content, t.ID, maxAdded-1, h.model.size(), len(f.AddedTokens))
		}
		h.size = max(h.size, t.ID+1)
		if t.Normalized && h.norm != nil {
			n, err := h.norm(newNText(t.Content, 0))
			if err != nil {
				return nil, fmt.Errorf("added_tokens[%d] %q: %w", i, t.Content, err)
			}
			t.Content = n.s
			nrm = append(nrm, t)
		} else {
			raw = append(raw, t)
		}
	}
	if err := h.post.checkIDs(h.size); err != nil {
		return nil, fmt.Errorf("post_processor: %w", err)
	}
	h.raw, h.nrm = newAddedSet(raw), newAddedSet(nrm)
	h.specials = findSpecials(f.AddedTokens, h.model)
	hs := sha256.Sum256(data)
	h.fp = fmt.Sprintf("hf %x maxlen=%d", hs, maxLength)
	return h, nil
}

// findSpecials picks the special tokens by their usual names.
func findSpecials(added []addedToken, m subword) Specials {
	id := func(names ...string) int {
		for _, n := range names {
			for _, t := range added {
				if t.Content == n {
					return t.ID
				}
			}
			if i, ok := m.lookup(n); ok {
				return i
			}
		}
		return -1
	}
	s := Specials{CLS: id("[CLS]", "<s>", "<|endoftext|>"), SEP: id("[SEP]", "</s>", "<|endoftext|>"),
		PAD: id("[PAD]", "<pad>", "<|padding|>"), UNK: m.unknown(), MASK: id("[MASK]", "<mask>")}
	if s.UNK < 0 {
		s.UNK = id("[UNK]", "<unk>")
	}
	return s
}

// Fingerprint identifies the tokenizer's behaviour: the file's content and
// the maximum length.
func (h *HF) Fingerprint() string { return h.fp }

// MaxLength is the length encodings are truncated to (0: none).
func (h *HF) MaxLength() int { return h.maxLength }

// VocabSize is the number of token ids, added tokens included.
func (h *HF) VocabSize() int { return h.size }

// UnknownID is the unknown token's id (-1 for byte-level BPE, which has none).
func (h *HF) UnknownID() int { return h.model.unknown() }

// Specials returns the special token ids.
func (h *HF) Specials() Specials { return h.specials }

// Encode tokenizes text, or the pair (text, pair) when isPair is set.
func (h *HF) Encode(text, pair string, isPair bool) (models.Encoding, error) {
	e, err := h.EncodeOffsets(text, pair, isPair)
	return e.Encoding, err
}

// EncodeOffsets is Encode with each token's offsets and sequence.
func (h *HF) EncodeOffsets(text, pair string, isPair bool) (Encoded, error) {
	a, err := h.tokens(text)
	if err != nil {
		return Encoded{}, err
	}
	var b []token
	if isPair {
		if b, err = h.tokens(pair); err != nil {
			return Encoded{}, err
		}
	}
	if h.maxLength > 0 {
		limit := max(h.maxLength-h.post.added(isPair), 0)
		na, nb := truncateLongestFirst(len(a), len(b), limit, isPair)
		a, b = a[:na], b[:nb]
	}
	if h.post.trimOffsets {
		trimSpaces(a, text)
		trimSpaces(b, pair)
	}
	return assemble(h.post, a, b, isPair), nil
}

// trimSpaces drops leading and trailing spaces from byte-level tokens'
// offsets (HuggingFace's ByteLevel trim_offsets).
func trimSpaces(toks []token, text string) {
	for i := range toks {
		t := &toks[i]
		if t.start < 0 || int(t.end) > len(text) || t.start >= t.end {
			continue
		}
		for t.start < t.end && text[t.start] == ' ' {
			t.start++
		}
		for t.end > t.start && text[t.end-1] == ' ' {
			t.end--
		}
	}
}

// assemble applies a post-processing template.
func assemble(p *postProcessor, a, b []token, isPair bool) Encoded {
	tmpl := p.single
	if isPair {
		tmpl = p.pair
	}
	n := len(a) + len(b) + p.added(isPair)
	e := Encoded{Encoding: models.Encoding{IDs: make([]int, 0, n), TypeIDs: make([]int, 0, n)},
		Offsets: make([]Offset, 0, n), Seq: make([]int, 0, n)}
	for _, it := range tmpl {
		if it.seq < 0 {
			for _, id := range it.special {
				e.IDs, e.TypeIDs = append(e.IDs, id), append(e.TypeIDs, it.typeID)
				e.Offsets, e.Seq = append(e.Offsets, Offset{}), append(e.Seq, -1)
			}
			continue
		}
		toks := a
		if it.seq == 1 {
			toks = b
		}
		for _, t := range toks {
			e.IDs, e.TypeIDs = append(e.IDs, int(t.id)), append(e.TypeIDs, it.typeID)
			e.Offsets, e.Seq = append(e.Offsets, Offset{int(t.start), int(t.end)}), append(e.Seq, it.seq)
		}
	}
	return e
}

// tokens is the tokens of one text, offsets being byte ranges in it.
func (h *HF) tokens(text string) ([]token, error) {
	var out []token
	for _, m := range h.raw.split(text) {
		if m.id >= 0 {
			out = append(out, token{int32(m.id), int32(m.a), int32(m.b)})
			continue
		}
		t := newNText(text[m.a:m.b], m.a)
		if h.norm != nil {
			var err error
			if t, err = h.norm(t); err != nil {
				return nil, err
			}
		}
		for _, m2 := range h.nrm.split(t.s) {
			if m2.id >= 0 {
				o := t.origin(m2.a, m2.b)
				out = append(out, token{int32(m2.id), o.a, o.b})
				continue
			}
			if m2.a == m2.b {
				continue
			}
			part := t.slice(m2.a, m2.b)
			words := []ntext{part}
			if h.pre != nil {
				words = h.pre(part, len(part.align) > 0 && part.align[0].a == 0)
			}
			for _, w := range words {
				for _, p := range h.pieces(w.s) {
					if p.id < 0 {
						return nil, fmt.Errorf("%q has no token and the tokenizer no unknown token", w.s[p.start:p.end])
					}
					o := w.origin(int(p.start), int(p.end))
					out = append(out, token{p.id, o.a, o.b})
				}
			}
		}
	}
	return out, nil
}

// pieces is the model's split of a word, cached.
func (h *HF) pieces(w string) []piece {
	h.mu.RLock()
	p, ok := h.words[w]
	h.mu.RUnlock()
	if ok {
		return p
	}
	p = h.model.split(w)
	h.mu.Lock()
	if len(h.words) < maxCachedWords {
		h.words[w] = p
	}
	h.mu.Unlock()
	return p
}

// hasher hashes strings unambiguously (each prefixed by its length).
type hasher struct{ h hash.Hash }

func newHasher() hasher { return hasher{sha256.New()} }

func (h hasher) str(s string) {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
	h.h.Write(n[:])
	h.h.Write([]byte(s))
}

func (h hasher) sum() string { return hex.EncodeToString(h.h.Sum(nil)) }

// hashVocab hashes a vocabulary (checked by vocabSize) in id order.
func hashVocab(v map[string]int32) string {
	toks := make([]string, len(v))
	for t, id := range v {
		toks[id] = t
	}
	h := newHasher()
	for _, t := range toks {
		h.str(t)
	}
	return "vocab=" + h.sum()
}
