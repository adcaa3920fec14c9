package tokenize

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// subword is one of tokenizer.json's models: it cuts one word into
// pieces (ids with byte ranges in the word).
type subword interface {
	split(word string) []piece
	lookup(tok string) (int, bool)
	size() int
	unknown() int // -1: none
	describe() string
}

// hfModel is the JSON of a model: every field any of them has.
type hfModel struct {
	Type                    string          `json:"type"`
	Vocab                   json.RawMessage `json:"vocab"`
	Merges                  json.RawMessage `json:"merges"`
	UnkToken                *string         `json:"unk_token"`
	UnkID                   *int            `json:"unk_id"`
	ContinuingSubwordPrefix *string         `json:"continuing_subword_prefix"`
	EndOfWordSuffix         *string         `json:"end_of_word_suffix"`
	MaxInputCharsPerWord    *int            `json:"max_input_chars_per_word"`
	FuseUnk                 *bool           `json:"fuse_unk"`
	ByteFallback            bool            `json:"byte_fallback"`
	IgnoreMerges            bool            `json:"ignore_merges"`
	Dropout                 *float64        `json:"dropout"`
}

// modelType is the model's type, inferred from its fields where the file
// leaves it out (as older tokenizers did; HuggingFace reads them untagged).
func (m *hfModel) modelType() string {
	if m.Type != "" {
		return m.Type
	}
	switch {
	case m.Merges != nil:
		return "BPE"
	case len(m.Vocab) > 0 && m.Vocab[0] == '[':
		return "Unigram"
	case m.ContinuingSubwordPrefix != nil || m.MaxInputCharsPerWord != nil:
		return "WordPiece"
	}
	return "WordLevel"
}

func buildModel(raw json.RawMessage) (subword, error) {
	var m hfModel
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	t := m.modelType()
	if m.Dropout != nil && *m.Dropout != 0 && t == "BPE" {
		return nil, fmt.Errorf("BPE dropout %v is random: not supported", *m.Dropout)
	}
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	switch t {
	case "BPE":
		var vocab map[string]int32
		if err := json.Unmarshal(m.Vocab, &vocab); err != nil {
			return nil, fmt.Errorf("BPE vocab: %w", err)
		}
		merges, err := parseMerges(m.Merges)
		if err != nil {
			return nil, fmt.Errorf("BPE merges: %w", err)
		}
		return newBPE(vocab, merges, str(m.UnkToken), str(m.ContinuingSubwordPrefix), str(m.EndOfWordSuffix),
			boolOr(m.FuseUnk, false), m.ByteFallback, m.IgnoreMerges)
	case "WordPiece":
		var vocab map[string]int32
		if err := json.Unmarshal(m.Vocab, &vocab); err != nil {
			return nil, fmt.Errorf("WordPiece vocab: %w", err)
		}
		prefix := "##"
		if m.ContinuingSubwordPrefix != nil {
			prefix = *m.ContinuingSubwordPrefix
		}
		maxChars := 100
		if m.MaxInputCharsPerWord != nil {
			maxChars = *m.MaxInputCharsPerWord
		}
		unk := "[UNK]"
		if m.UnkToken != nil {
			unk = *m.UnkToken
		}
		u, ok := vocab[unk]
		if !ok {
			return nil, fmt.Errorf("WordPiece: unk_token %q is not in the vocabulary", unk)
		}
		n, err := vocabSize("WordPiece", vocab)
		if err != nil {
			return nil, err
		}
		return &wpModel{vocab: vocab, unk: u, prefix: prefix, maxChars: maxChars, n: n}, nil
	case "WordLevel":
		var vocab map[string]int32
		if err := json.Unmarshal(m.Vocab, &vocab); err != nil {
			return nil, fmt.Errorf("WordLevel vocab: %w", err)
		}
		n, err := vocabSize("WordLevel", vocab)
		if err != nil {
			return nil, err
		}
		wl := &wlModel{vocab: vocab, unk: -1, n: n}
		if u, ok := vocab[str(m.UnkToken)]; ok {
			wl.unk = u
		}
		return wl, nil
	case "Unigram":
		var vocab [][2]json.RawMessage
		if err := json.Unmarshal(m.Vocab, &vocab); err != nil {
			return nil, fmt.Errorf("Unigram vocab: %w", err)
		}
		pieces := make([]string, len(vocab))
		scores := make([]float64, len(vocab))
		for i, v := range vocab {
			// The score as HuggingFace reads it, not as strconv does:
			// they differ by an ulp on some 17-digit scores, enough to
			// break a tie between segmentations the other way.
			f, err := serdeFloat(string(v[1]))
			if json.Unmarshal(v[0], &pieces[i]) != nil || err != nil {
				return nil, fmt.Errorf("Unigram vocab entry %d is not [piece, score]", i)
			}
			scores[i] = f
		}
		unk := -1
		if m.UnkID != nil {
			unk = *m.UnkID
			if unk < 0 || unk >= len(pieces) {
				return nil, fmt.Errorf("Unigram unk_id %d out of range", unk)
			}
		}
		return newUnigram(pieces, scores, unk, m.ByteFallback, true), nil
	}
	return nil, fmt.Errorf("model type %q is not supported", t)
}

// vocabSize checks a model's vocabulary and returns its size: every id
// must be in 0 … len(v)−1, as the tokens HuggingFace numbers are. Tables
// indexed by id are sized by it, so an id of 2^31−1 would allocate
// gigabytes and a negative one index out of range; either is refused,
// naming the token (the first in sorted order, so the error is the same
// from run to run).
func vocabSize(model string, v map[string]int32) (int, error) {
	bad, found := "", false // the empty string is a token too
	for t, id := range v {
		if (id < 0 || int(id) >= len(v)) && (!found || t < bad) {
			bad, found = t, true
		}
	}
	if found {
		return 0, fmt.Errorf("%s vocab: token %q has id %d, outside 0…%d (the vocabulary has %d tokens)", model, bad, v[bad], len(v)-1, len(v))
	}
	return len(v), nil
}

// parseMerges reads merges as "a b" strings or [a, b] pairs.
func parseMerges(raw json.RawMessage) ([][2]string, error) {
	var strs []string
	if err := json.Unmarshal(raw, &strs); err == nil {
		out := make([][2]string, len(strs))
		for i, s := range strs {
			a, b, ok := strings.Cut(s, " ")
			if !ok || strings.Contains(b, " ") {
				return nil, fmt.Errorf("merge %d %q is not two tokens", i, s)
			}
			out[i] = [2]string{a, b}
		}
		return out, nil
	}
	var pairs [][2]string
	if err := json.Unmarshal(raw, &pairs); err != nil {
		return nil, err
	}
	return pairs, nil
}

// wpModel is the WordPiece model: greedy longest match.
type wpModel struct {
	vocab    map[string]int32
	unk      int32
	prefix   string
	maxChars int
	n        int
}

func (w *wpModel) split(word string) []piece {
	wp := WordPiece{vocab: w.vocab, unk: w.unk, prefix: w.prefix, maxWordChars: w.maxChars}
	return wp.split([]byte(word))
}
func (w *wpModel) lookup(t string) (int, bool) { id, ok := w.vocab[t]; return int(id), ok }
func (w *wpModel) size() int                   { return w.n }
func (w *wpModel) unknown() int                { return int(w.unk) }
func (w *wpModel) describe() string {
	return fmt.Sprintf("WordPiece prefix=%q maxchars=%d unk=%d %s", w.prefix, w.maxChars, w.unk, hashVocab(w.vocab))
}

// wlModel is the WordLevel model: a word is its id or unknown.
type wlModel struct {
	vocab map[string]int32
	unk   int32
	n     int
}

func (w *wlModel) split(word string) []piece {
	if id, ok := w.vocab[word]; ok {
		return []piece{{id, 0, int32(len(word))}}
	}
	// Without an unknown token the id is -1, which Encode reports.
	return []piece{{w.unk, 0, int32(len(word))}}
}
func (w *wlModel) lookup(t string) (int, bool) { id, ok := w.vocab[t]; return int(id), ok }
func (w *wlModel) size() int                   { return w.n }
func (w *wlModel) unknown() int                { return int(w.unk) }
func (w *wlModel) describe() string {
	return fmt.Sprintf("WordLevel unk=%d %s", w.unk, hashVocab(w.vocab))
}

// bpeModel is byte-pair encoding: a word starts as its characters, and the
// adjacent pair whose merge ranks first is merged until none is left.
type bpeModel struct {
	vocab        map[string]int32
	merges       map[[2]int32][2]int32 // pair → rank, merged id
	unk          int32
	prefix       string
	suffix       string
	fuseUnk      bool
	byteFallback bool
	ignoreMerges bool
	n            int
	desc         string
}

func newBPE(vocab map[string]int32, merges [][2]string, unk, prefix, suffix string, fuseUnk, byteFallback, ignoreMerges bool) (*bpeModel, error) {
	n, err := vocabSize("BPE", vocab)
	if err != nil {
		return nil, err
	}
	b := &bpeModel{vocab: vocab, merges: make(map[[2]int32][2]int32, len(merges)), unk: -1, prefix: prefix,
		suffix: suffix, fuseUnk: fuseUnk, byteFallback: byteFallback, ignoreMerges: ignoreMerges, n: n}
	if unk != "" {
		u, ok := vocab[unk]
		if !ok {
			return nil, fmt.Errorf("BPE: unk_token %q is not in the vocabulary", unk)
		}
		b.unk = u
	}
	for r, m := range merges {
		a, ok1 := vocab[m[0]]
		c, ok2 := vocab[m[1]]
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("BPE: merge %d (%q %q) has a token outside the vocabulary", r, m[0], m[1])
		}
		merged := m[0] + strings.TrimPrefix(m[1], prefix)
		if len(prefix) > 0 && len(m[1]) >= len(prefix) {
			merged = m[0] + m[1][len(prefix):]
		}
		id, ok := vocab[merged]
		if !ok {
			return nil, fmt.Errorf("BPE: merge %d gives %q, which is not in the vocabulary", r, merged)
		}
		if _, dup := b.merges[[2]int32{a, c}]; !dup {
			b.merges[[2]int32{a, c}] = [2]int32{int32(r), id}
		}
	}
	h := newHasher()
	for _, m := range merges {
		h.str(m[0])
		h.str(m[1])
	}
	b.desc = fmt.Sprintf("BPE unk=%d prefix=%q suffix=%q fuse=%v bytes=%v ignore=%v %s merges=%s", b.unk, prefix, suffix,
		fuseUnk, byteFallback, ignoreMerges, hashVocab(vocab), h.sum())
	return b, nil
}

func (b *bpeModel) lookup(t string) (int, bool) { id, ok := b.vocab[t]; return int(id), ok }
func (b *bpeModel) size() int                   { return b.n }
func (b *bpeModel) unknown() int                { return int(b.unk) }
func (b *bpeModel) describe() string            { return b.desc }

func (b *bpeModel) split(w string) []piece {
	if b.ignoreMerges {
		if id, ok := b.vocab[w]; ok {
			return []piece{{id, 0, int32(len(w))}}
		}
	}
	syms := make([]piece, 0, len(w))
	pendingUnk := false
	var unk piece
	flush := func() {
		if pendingUnk {
			syms = append(syms, unk)
			pendingUnk = false
		}
	}
	for i, r := range w {
		n := utf8.RuneLen(r)
		if r == utf8.RuneError {
			_, n = utf8.DecodeRuneInString(w[i:])
		}
		s := w[i : i+n]
		if i > 0 && b.prefix != "" {
			s = b.prefix + s
		}
		if i+n == len(w) && b.suffix != "" {
			s += b.suffix
		}
		if id, ok := b.vocab[s]; ok {
			flush()
			syms = append(syms, piece{id, int32(i), int32(i + n)})
			continue
		}
		if b.byteFallback {
			ids := make([]int32, 0, len(s))
			for k := 0; k < len(s); k++ {
				id, ok := b.vocab[fmt.Sprintf("<0x%02X>", s[k])]
				if !ok {
					ids = nil
					break
				}
				ids = append(ids, id)
			}
			if ids != nil {
				flush()
				for _, id := range ids {
					syms = append(syms, piece{id, int32(i), int32(i + n)})
				}
				continue
			}
		}
		if b.unk >= 0 {
			if pendingUnk && b.fuseUnk {
				unk.end = int32(i + n)
			} else {
				flush()
				unk, pendingUnk = piece{b.unk, int32(i), int32(i + n)}, true
			}
		}
	}
	flush()
	for len(syms) > 1 {
		best, bestRank, bestID := -1, int32(math.MaxInt32), int32(0)
		for k := 0; k+1 < len(syms); k++ {
			if m, ok := b.merges[[2]int32{syms[k].id, syms[k+1].id}]; ok && m[0] < bestRank {
				best, bestRank, bestID = k, m[0], m[1]
			}
		}
		if best < 0 {
			break
		}
		syms[best] = piece{bestID, syms[best].start, syms[best+1].end}
		syms = append(syms[:best+1], syms[best+2:]...)
	}
	return syms
}

// unigramModel is the Unigram language model: the segmentation of a word
// with the highest total score (Viterbi), a character no piece covers being
// unknown, consecutive unknowns fused.
type unigramModel struct {
	ids          map[string]int32
	pieces       []string
	scores       []float64
	unk          int
	byteFallback bool
	fuseUnk      bool
	maxLen       int // longest piece in bytes
	unkScore     float64
	n            int
	desc         string
}

func newUnigram(pieces []string, scores []float64, unk int, byteFallback, fuseUnk bool) *unigramModel {
	u := &unigramModel{ids: make(map[string]int32, len(pieces)), pieces: pieces, scores: scores, unk: unk,
		byteFallback: byteFallback, fuseUnk: fuseUnk, n: len(pieces)}
	minScore := math.Inf(1)
	h := newHasher()
	for i, p := range pieces {
		if _, dup := u.ids[p]; !dup {
			u.ids[p] = int32(i)
		}
		u.maxLen = max(u.maxLen, len(p))
		minScore = math.Min(minScore, scores[i])
		h.str(p)
		h.str(fmt.Sprint(scores[i]))
	}
	// kUnkPenalty: an unknown character scores 10 below the rarest piece.
	u.unkScore = minScore - 10
	u.desc = fmt.Sprintf("Unigram unk=%d bytes=%v fuse=%v %s", unk, byteFallback, fuseUnk, h.sum())
	return u
}

func (u *unigramModel) lookup(t string) (int, bool) { id, ok := u.ids[t]; return int(id), ok }
func (u *unigramModel) size() int                   { return u.n }
func (u *unigramModel) unknown() int                { return u.unk }
func (u *unigramModel) describe() string            { return u.desc }

func (u *unigramModel) split(s string) []piece {
	type node struct {
		score float64
		from  int
		id    int32
		set   bool
	}
	best := make([]node, len(s)+1)
	best[0].set = true
	for i := 0; i < len(s); {
		_, mb := utf8.DecodeRuneInString(s[i:])
		here := best[i].score
		single := false
		for l := 1; l <= u.maxLen && i+l <= len(s); l++ {
			if i+l < len(s) && !utf8.RuneStart(s[i+l]) {
				continue
			}
			id, ok := u.ids[s[i:i+l]]
			if !ok {
				continue
			}
			c := here + u.scores[id]
			if t := &best[i+l]; !t.set || c > t.score {
				*t = node{c, i, id, true}
			}
			if l == mb {
				single = true
			}
		}
		if !single {
			c := here + u.unkScore
			if t := &best[i+mb]; !t.set || c > t.score {
				*t = node{c, i, int32(u.unk), true}
			}
		}
		i += mb
	}
	var rev []piece
	for end := len(s); end > 0; {
		n := best[end]
		p := piece{n.id, int32(n.from), int32(end)}
		if u.fuseUnk && u.unk >= 0 && int(n.id) == u.unk && len(rev) > 0 && int(rev[len(rev)-1].id) == u.unk {
			rev[len(rev)-1].start = p.start
		} else {
			rev = append(rev, p)
		}
		end = n.from
	}
	out := make([]piece, 0, len(rev))
	for k := len(rev) - 1; k >= 0; k-- {
		p := rev[k]
		if u.byteFallback && int(p.id) == u.unk {
			var ids []int32
			for b := p.start; b < p.end; b++ {
				id, ok := u.ids[fmt.Sprintf("<0x%02X>", s[b])]
				if !ok {
					ids = nil
					break
				}
				ids = append(ids, id)
			}
			if ids != nil {
				for _, id := range ids {
					out = append(out, piece{id, p.start, p.end})
				}
				continue
			}
		}
		out = append(out, p)
	}
	return out
}

// pow10 are 1e0 … 1e308, correctly rounded (serde_json's POW10).
var pow10 = func() []float64 {
	p := make([]float64, 309)
	for i := range p {
		p[i], _ = strconv.ParseFloat("1e"+strconv.Itoa(i), 64)
	}
	return p
}()

// serdeFloat reads a JSON number as HuggingFace's tokenizers read it:
// serde_json without its float_roundtrip feature gathers the digits into a
// uint64 (digits past its range only count in the exponent) and applies
// the exponent with one multiplication or division by a power of ten.
// Where the digits exceed 2^53 (a 17-digit score) the result can be one
// unit in the last place off the correctly rounded value strconv gives, and
// a Unigram model's Viterbi search then breaks a tie the other way.
func serdeFloat(s string) (float64, error) {
	bad := fmt.Errorf("%q is not a JSON number", s)
	i, neg := 0, false
	if i < len(s) && s[i] == '-' {
		neg, i = true, i+1
	}
	digit := func() bool { return i < len(s) && s[i] >= '0' && s[i] <= '9' }
	if !digit() {
		return 0, bad
	}
	var sig uint64
	exp, full := 0, false
	add := func(after bool) {
		d := uint64(s[i] - '0')
		switch {
		case full || sig > (math.MaxUint64-d)/10:
			full = true // this digit and the later ones of its part are dropped
			if !after {
				exp++ // an integer digit past the range
			}
		case after:
			sig, exp = sig*10+d, exp-1
		default:
			sig = sig*10 + d
		}
		i++
	}
	if s[i] == '0' {
		i++
		if digit() {
			return 0, bad
		}
	} else {
		for digit() {
			add(false)
		}
	}
	if i < len(s) && s[i] == '.' {
		i++
		if !digit() {
			return 0, bad
		}
		full = false // serde_json tries the first decimal digit again
		for digit() {
			add(true)
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		eneg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			eneg, i = s[i] == '-', i+1
		}
		if !digit() {
			return 0, bad
		}
		e := 0
		for digit() {
			if e < 1e6 {
				e = e*10 + int(s[i]-'0')
			}
			i++
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if i != len(s) {
		return 0, bad
	}
	f := float64(sig)
	for {
		a := exp
		if a < 0 {
			a = -a
		}
		if a < len(pow10) {
			if exp >= 0 {
				f *= pow10[a]
			} else {
				f /= pow10[a]
			}
			break
		}
		if f == 0 {
			break
		}
		if exp >= 0 {
			return 0, fmt.Errorf("%q is out of range", s)
		}
		f /= 1e308
		exp += 308
	}
	if math.IsInf(f, 0) {
		return 0, fmt.Errorf("%q is out of range", s)
	}
	if neg {
		f = -f
	}
	return f, nil
}
