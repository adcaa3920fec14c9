// Package tokenize turns texts and text pairs into token ids for the models,
// exactly as HuggingFace's tokenizers do, behind one Tokenizer interface:
// BERT's WordPiece (BertNormalizer, BertPreTokenizer, WordPiece and
// [CLS] a [SEP] b [SEP] in one pass) from a vocab.txt or a BERT
// tokenizer.json; HF, any tokenizer.json (byte-level BPE, Unigram,
// WordPiece, WordLevel with their normalizers, pre-tokenizers,
// post-processors and added tokens); and SentencePiece models wrapped as
// DeBERTa-v2 or XLM-R wrap them. Load picks a model directory's tokenizer as
// AutoTokenizer does; Train learns one from a task's texts. Every tokenizer
// gives each token's offsets in its text, truncates longest-first and has a
// fingerprint that keys a content-addressed cache of tokenised datasets. A
// word-level tokenizer serves word-vector models.
package tokenize

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"sync"

	"github.com/beluga-nlp/beluga/models"
)

// WordPiece is a BERT tokenizer. It is safe for concurrent use.
//
// It is a re-implementation of HuggingFace tokenizers' BERT pipeline rather
// than a port of its generic machinery: normalisation, pre-tokenisation and
// the greedy longest-match WordPiece run in one pass over the text, and each
// distinct word's pieces are cached, so a sentence costs a few microseconds.
type WordPiece struct {
	// VocabFile is the vocabulary it was built from, if any (to save it
	// beside a model).
	VocabFile string

	vocab        map[string]int32
	size         int // number of ids, added tokens included
	unk          int32
	cls, sep     int
	prefix       string // continuing-subword prefix, "##"
	maxWordChars int    // longer words become [UNK] whole
	maxLength    int
	norm         normOptions
	special      []specialToken // matched in the raw text before normalisation
	fingerprint  string

	mu    sync.RWMutex
	words map[string][]piece // word cache: normalised word → pieces
}

// normOptions are BertNormalizer's switches.
type normOptions struct {
	cleanText, chineseChars, stripAccents, lowercase bool
}

type specialToken struct {
	text string
	id   int
}

// piece is one WordPiece token of a cached word, with its byte range in the
// normalised word.
type piece struct {
	id         int32
	start, end int32
}

// maxCachedWords bounds the word cache; past it, words are split afresh.
const maxCachedWords = 1 << 20

// Offset is a token's byte range [Start, End) in the text it came from (the
// pair's text for tokens of type 1); special tokens get {0, 0}, as in
// HuggingFace's offset_mapping (which counts characters, not bytes: see
// RuneOffsets).
type Offset struct{ Start, End int }

// BertOptions are BertTokenizer's switches from tokenizer_config.json:
// do_lower_case, strip_accents (nil: as do_lower_case) and
// tokenize_chinese_chars.
type BertOptions struct {
	Lowercase    bool
	StripAccents *bool
	ChineseChars bool
}

// NewWordPieceFromVocab builds a BERT tokenizer from a vocab.txt,
// truncating encodings to maxLength tokens (0: no truncation). With no
// tokenizer_config.json to say whether to lower-case, it reads the
// vocabulary: one with an upper-case ASCII letter in some token (other than
// a bracketed special token) is cased and kept as written
// (bert-base-multilingual-cased, bert-base-cased), else the text is
// lower-cased with accents stripped (bert-base-uncased). HuggingFace's
// BertTokenizer would lower-case either, which makes every capitalised
// token of a cased vocabulary unreachable.
func NewWordPieceFromVocab(vocabFile string, maxLength int) (*WordPiece, error) {
	return newWordPieceFromVocab(vocabFile, nil, maxLength)
}

// NewWordPieceWithOptions builds a BERT tokenizer from a vocab.txt with
// tokenizer_config.json's options.
func NewWordPieceWithOptions(vocabFile string, opt BertOptions, maxLength int) (*WordPiece, error) {
	return newWordPieceFromVocab(vocabFile, &opt, maxLength)
}

// casedVocab reports whether a vocabulary has upper-case tokens.
func casedVocab(vocab map[string]int32) bool {
	for t := range vocab {
		if len(t) > 1 && ((t[0] == '[' && t[len(t)-1] == ']') || (t[0] == '<' && t[len(t)-1] == '>')) {
			continue
		}
		for i := 0; i < len(t); i++ {
			if t[i] >= 'A' && t[i] <= 'Z' {
				return true
			}
		}
	}
	return false
}

func newWordPieceFromVocab(vocabFile string, opt *BertOptions, maxLength int) (*WordPiece, error) {
	f, err := os.Open(vocabFile)
	if err != nil {
		return nil, fmt.Errorf("vocabulary %s: %w", vocabFile, err)
	}
	defer f.Close()
	vocab := map[string]int32{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for line := 1; sc.Scan(); line++ {
		tok := sc.Text()
		if len(tok) > 0 && tok[len(tok)-1] == '\r' {
			tok = tok[:len(tok)-1]
		}
		if _, dup := vocab[tok]; !dup {
			vocab[tok] = int32(line - 1)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("vocabulary %s: %w", vocabFile, err)
	}
	var special []specialToken
	for _, tok := range []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"} {
		if id, ok := vocab[tok]; ok {
			special = append(special, specialToken{tok, int(id)})
		}
	}
	if opt == nil {
		opt = &BertOptions{Lowercase: !casedVocab(vocab), ChineseChars: true}
	}
	no := normOptions{cleanText: true, chineseChars: opt.ChineseChars, lowercase: opt.Lowercase, stripAccents: opt.Lowercase}
	if opt.StripAccents != nil {
		no.stripAccents = *opt.StripAccents
	}
	w, err := newWordPiece(vocab, special, "[UNK]", "[CLS]", "[SEP]", "##", 100, no, maxLength)
	if err != nil {
		return nil, fmt.Errorf("vocabulary %s: %w", vocabFile, err)
	}
	w.VocabFile = vocabFile
	return w, nil
}

// tokenizerJSON is the part of a HuggingFace tokenizer.json a BERT tokenizer
// is defined by.
type tokenizerJSON struct {
	AddedTokens []struct {
		ID         int    `json:"id"`
		Content    string `json:"content"`
		Normalized bool   `json:"normalized"`
	} `json:"added_tokens"`
	Normalizer *struct {
		Type               string `json:"type"`
		CleanText          bool   `json:"clean_text"`
		HandleChineseChars bool   `json:"handle_chinese_chars"`
		StripAccents       *bool  `json:"strip_accents"`
		Lowercase          bool   `json:"lowercase"`
	} `json:"normalizer"`
	PreTokenizer *struct {
		Type string `json:"type"`
	} `json:"pre_tokenizer"`
	PostProcessor *struct {
		Type string `json:"type"`
		Sep  []any  `json:"sep"`
		CLS  []any  `json:"cls"`
	} `json:"post_processor"`
	Model struct {
		Type                    string           `json:"type"`
		UnkToken                string           `json:"unk_token"`
		ContinuingSubwordPrefix string           `json:"continuing_subword_prefix"`
		MaxInputCharsPerWord    int              `json:"max_input_chars_per_word"`
		Vocab                   map[string]int32 `json:"vocab"`
	} `json:"model"`
}

// bertTemplate returns the [CLS] and [SEP] ids of a post-processor that
// adds them as BertProcessing does ([CLS] a [SEP] b [SEP], type ids 0 then
// 1), and false for any other.
func bertTemplate(p *postProcessor) (cls, sep int, ok bool) {
	if len(p.single) != 3 || len(p.pair) != 5 {
		return 0, 0, false
	}
	sp := func(it tmplItem, typ int) (int, bool) {
		return it.special[0], it.seq < 0 && len(it.special) == 1 && it.typeID == typ
	}
	c, ok1 := sp(p.single[0], 0)
	s, ok2 := sp(p.single[2], 0)
	c2, ok3 := sp(p.pair[0], 0)
	s2, ok4 := sp(p.pair[2], 0)
	s3, ok5 := sp(p.pair[4], 1)
	seqs := p.single[1].seq == 0 && p.single[1].typeID == 0 && p.pair[1].seq == 0 && p.pair[1].typeID == 0 &&
		p.pair[3].seq == 1 && p.pair[3].typeID == 1
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && seqs) || c != c2 || s != s2 || s != s3 {
		return 0, 0, false
	}
	return c, s, true
}

// NewWordPieceFromJSON builds a tokenizer from a HuggingFace tokenizer.json
// of a BERT tokenizer (BertNormalizer, BertPreTokenizer, WordPiece model,
// BertProcessing).
func NewWordPieceFromJSON(path string, maxLength int) (*WordPiece, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", path, err)
	}
	var cfg tokenizerJSON
	if err := json.Unmarshal(b, &cfg); err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", path, err)
	}
	var parts struct {
		Model         json.RawMessage `json:"model"`
		PostProcessor json.RawMessage `json:"post_processor"`
	}
	if err := json.Unmarshal(b, &parts); err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", path, err)
	}
	// Files written by older tokenizers leave the model's type out.
	var m hfModel
	if err := json.Unmarshal(parts.Model, &m); err != nil {
		return nil, fmt.Errorf("tokenizer %s: model: %w", path, err)
	}
	if t := m.modelType(); t != "WordPiece" {
		return nil, fmt.Errorf("tokenizer %s: model type %q, want WordPiece", path, t)
	}
	if cfg.PreTokenizer != nil && cfg.PreTokenizer.Type != "BertPreTokenizer" {
		return nil, fmt.Errorf("tokenizer %s: pre_tokenizer type %q, want BertPreTokenizer", path, cfg.PreTokenizer.Type)
	}
	var no normOptions
	if n := cfg.Normalizer; n != nil {
		if n.Type != "BertNormalizer" {
			return nil, fmt.Errorf("tokenizer %s: normalizer type %q, want BertNormalizer", path, n.Type)
		}
		// BertNormalizer strips accents when strip_accents is true, or
		// unset and lower-casing.
		no = normOptions{cleanText: n.CleanText, chineseChars: n.HandleChineseChars, lowercase: n.Lowercase,
			stripAccents: n.Lowercase}
		if n.StripAccents != nil {
			no.stripAccents = *n.StripAccents
		}
	}
	clsTok, sepTok := "[CLS]", "[SEP]"
	if pp := cfg.PostProcessor; pp != nil && pp.Type == "TemplateProcessing" {
		post, err := buildPost(parts.PostProcessor)
		if err != nil {
			return nil, fmt.Errorf("tokenizer %s: post_processor: %w", path, err)
		}
		c, s, ok := bertTemplate(post)
		if !ok {
			return nil, fmt.Errorf("tokenizer %s: post_processor's template is not BERT's [CLS] A [SEP] B [SEP]", path)
		}
		for tok, id := range cfg.Model.Vocab {
			if int(id) == c {
				clsTok = tok
			}
			if int(id) == s {
				sepTok = tok
			}
		}
	} else if pp != nil {
		if pp.Type != "BertProcessing" {
			return nil, fmt.Errorf("tokenizer %s: post_processor type %q, want BertProcessing or TemplateProcessing", path, pp.Type)
		}
		if len(pp.CLS) == 2 && len(pp.Sep) == 2 {
			c, ok1 := pp.CLS[0].(string)
			s, ok2 := pp.Sep[0].(string)
			if !ok1 || !ok2 {
				return nil, fmt.Errorf("tokenizer %s: post_processor cls/sep are not [token, id] pairs", path)
			}
			clsTok, sepTok = c, s
		}
	}
	vocab := cfg.Model.Vocab
	if vocab == nil {
		return nil, fmt.Errorf("tokenizer %s: model has no vocab", path)
	}
	if _, err := vocabSize("WordPiece", vocab); err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", path, err)
	}
	var special []specialToken
	for _, t := range cfg.AddedTokens {
		if t.Normalized {
			// Normalised added tokens are matched after normalisation; BERT
			// tokenizers have none, and this tokenizer does not implement them.
			return nil, fmt.Errorf("tokenizer %s: added token %q is normalized, which is not supported", path, t.Content)
		}
		special = append(special, specialToken{t.Content, t.ID})
	}
	prefix := cfg.Model.ContinuingSubwordPrefix
	maxChars := cfg.Model.MaxInputCharsPerWord
	if maxChars == 0 {
		maxChars = 100
	}
	w, err := newWordPiece(vocab, special, cfg.Model.UnkToken, clsTok, sepTok, prefix, maxChars, no, maxLength)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", path, err)
	}
	return w, nil
}

func newWordPiece(vocab map[string]int32, special []specialToken, unk, cls, sep, prefix string, maxWordChars int, no normOptions, maxLength int) (*WordPiece, error) {
	w := &WordPiece{vocab: vocab, prefix: prefix, maxWordChars: maxWordChars, norm: no,
		maxLength: maxLength, words: map[string][]piece{}}
	idOf := func(tok string) (int, error) {
		for _, s := range special {
			if s.text == tok {
				return s.id, nil
			}
		}
		if id, ok := vocab[tok]; ok {
			return int(id), nil
		}
		return 0, fmt.Errorf("no %s token", tok)
	}
	var err error
	var u int
	if u, err = idOf(unk); err != nil {
		return nil, err
	}
	w.unk = int32(u)
	if w.cls, err = idOf(cls); err != nil {
		return nil, err
	}
	if w.sep, err = idOf(sep); err != nil {
		return nil, err
	}
	// Longer special tokens first, so that one that contains another wins
	// where both match.
	sort.SliceStable(special, func(i, j int) bool { return len(special[i].text) > len(special[j].text) })
	w.special = special
	// The ids are checked (vocabSize, or a vocab.txt's line numbers).
	for _, id := range vocab {
		w.size = max(w.size, int(id)+1)
	}
	// An added token is one of the vocabulary's or numbered after them.
	maxID := w.size + len(special)
	for _, s := range special {
		if s.id < 0 || s.id >= maxID {
			return nil, fmt.Errorf("added token %q has id %d, outside 0…%d (the vocabulary's %d tokens and %d added)", s.text, s.id, maxID-1, w.size, len(special))
		}
	}
	for _, s := range special {
		w.size = max(w.size, s.id+1)
	}
	w.fingerprint = w.computeFingerprint()
	return w, nil
}

// computeFingerprint hashes everything the encodings depend on.
func (w *WordPiece) computeFingerprint() string {
	h := sha256.New()
	toks := make([]string, w.size)
	for t, id := range w.vocab {
		toks[id] = t
	}
	var n [8]byte
	for _, t := range toks {
		binary.LittleEndian.PutUint64(n[:], uint64(len(t)))
		h.Write(n[:])
		h.Write([]byte(t))
	}
	for _, s := range w.special {
		fmt.Fprintf(h, "special %q %d\n", s.text, s.id)
	}
	fmt.Fprintf(h, "wordpiece unk=%d cls=%d sep=%d prefix=%q maxchars=%d norm=%+v maxlen=%d\n",
		w.unk, w.cls, w.sep, w.prefix, w.maxWordChars, w.norm, w.maxLength)
	return hex.EncodeToString(h.Sum(nil))
}

// Fingerprint identifies the tokenizer's behaviour: vocabulary, special
// tokens, normalisation options and maximum length. Two tokenizers with the
// same fingerprint encode every input alike.
func (w *WordPiece) Fingerprint() string { return w.fingerprint }

// MaxLength is the length encodings are truncated to (0: none).
func (w *WordPiece) MaxLength() int { return w.maxLength }

// VocabSize is the number of token ids, special tokens included.
func (w *WordPiece) VocabSize() int { return w.size }

// UnknownID is the id of the unknown token ([UNK]), which a word with no
// WordPiece segmentation becomes.
func (w *WordPiece) UnknownID() int { return int(w.unk) }

// Encode tokenizes text, or the pair (text, pair) when isPair is set.
func (w *WordPiece) Encode(text, pair string, isPair bool) (models.Encoding, error) {
	enc, _ := w.encode(text, pair, isPair, false)
	return enc, nil
}

// EncodeWithOffsets is Encode that also returns each token's byte range in
// its text (see Offset).
func (w *WordPiece) EncodeWithOffsets(text, pair string, isPair bool) (models.Encoding, []Offset) {
	return w.encode(text, pair, isPair, true)
}

// EncodeOffsets implements Tokenizer.
func (w *WordPiece) EncodeOffsets(text, pair string, isPair bool) (Encoded, error) {
	enc, offs := w.encode(text, pair, isPair, true)
	// [CLS] a [SEP] (b [SEP]): a's tokens have type 0, b's type 1.
	seq := append([]int(nil), enc.TypeIDs...)
	seq[0], seq[len(seq)-1] = -1, -1
	if isPair {
		// The [SEP] after a is the last token of type 0.
		for i := len(seq) - 1; i > 0; i-- {
			if enc.TypeIDs[i] == 0 {
				seq[i] = -1
				break
			}
		}
	}
	return Encoded{Encoding: enc, Offsets: offs, Seq: seq}, nil
}

// Specials implements Tokenizer.
func (w *WordPiece) Specials() Specials {
	id := func(tok string) int {
		for _, s := range w.special {
			if s.text == tok {
				return s.id
			}
		}
		if id, ok := w.vocab[tok]; ok {
			return int(id)
		}
		return -1
	}
	return Specials{CLS: w.cls, SEP: w.sep, PAD: id("[PAD]"), UNK: int(w.unk), MASK: id("[MASK]")}
}

// token is one token of a text before the special tokens are added.
type token struct {
	id         int32
	start, end int32
}

func (w *WordPiece) encode(text, pair string, isPair, withOffsets bool) (models.Encoding, []Offset) {
	var bufA, bufB [64]token
	a := w.tokens(bufA[:0], text)
	var b []token
	added := 2
	if isPair {
		b = w.tokens(bufB[:0], pair)
		added = 3
	}
	if w.maxLength > 0 {
		limit := max(w.maxLength-added, 0)
		na, nb := truncateLongestFirst(len(a), len(b), limit, isPair)
		a, b = a[:na], b[:nb]
	}
	n := len(a) + len(b) + added
	ints := make([]int, 2*n)
	enc := models.Encoding{IDs: ints[:n:n], TypeIDs: ints[n:]}
	var offs []Offset
	if withOffsets {
		offs = make([]Offset, n)
	}
	enc.IDs[0] = w.cls
	i := 1
	for _, t := range a {
		enc.IDs[i] = int(t.id)
		if withOffsets {
			offs[i] = Offset{int(t.start), int(t.end)}
		}
		i++
	}
	enc.IDs[i] = w.sep
	i++
	if isPair {
		for _, t := range b {
			enc.IDs[i], enc.TypeIDs[i] = int(t.id), 1
			if withOffsets {
				offs[i] = Offset{int(t.start), int(t.end)}
			}
			i++
		}
		enc.IDs[i], enc.TypeIDs[i] = w.sep, 1
	}
	return enc, offs
}

// truncateLongestFirst is HuggingFace tokenizers' longest-first truncation of
// a pair to limit tokens: the shorter input is kept whole if the longer one
// can give up enough, else both get half.
func truncateLongestFirst(na, nb, limit int, isPair bool) (int, int) {
	if !isPair {
		return min(na, limit), 0
	}
	if na+nb <= limit {
		return na, nb
	}
	n1, n2 := na, nb
	swap := n1 > n2
	if swap {
		n1, n2 = n2, n1
	}
	if n1 > limit {
		n2 = n1
	} else {
		n2 = max(n1, limit-n1)
	}
	if n1+n2 > limit {
		n1 = limit / 2
		n2 = n1 + limit%2
	}
	if swap {
		n1, n2 = n2, n1
	}
	return min(na, n1), min(nb, n2)
}

// RuneOffsets converts byte offsets into text to character (rune) offsets,
// the unit of Python's str and so of HuggingFace's offset_mapping and of
// SQuAD's answer_start. Offsets of tokens from the other text of a pair must
// be converted against that text.
func RuneOffsets(text string, offs []Offset) []Offset {
	// runeAt[i] is the number of runes before byte i, at rune starts (the
	// only bytes offsets point at).
	runeAt := make([]int, len(text)+1)
	r := 0
	for i := range text {
		runeAt[i] = r
		r++
	}
	runeAt[len(text)] = r
	out := make([]Offset, len(offs))
	for i, o := range offs {
		if o.Start < 0 || o.End > len(text) || o.Start > o.End {
			out[i] = o
			continue
		}
		out[i] = Offset{runeAt[o.Start], runeAt[o.End]}
	}
	return out
}
