package tokenize

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/beluga-nlp/beluga/models"
)

// This file is Google's SentencePiece (the reference is its C++ library,
// 0.1.97): the ModelProto of a .model file, its normaliser (precompiled
// charsmap, dummy prefix, extra white space removed, spaces escaped as ▁),
// the unigram model's Viterbi segmentation and the BPE model's merges, with
// runs of unknown pieces fused into one as SentencePieceProcessor does.

// SentencePiece piece types (ModelProto.SentencePiece.Type).
const (
	spmNormal      = 1
	spmUnknown     = 2
	spmControl     = 3
	spmUserDefined = 4
	spmUnused      = 5
	spmByte        = 6
)

// spmModel is a parsed SentencePiece model.
type spmModel struct {
	pieces       []string
	scores       []float32
	types        []int
	ids          map[string]int32 // normal, user-defined and unused pieces
	reserved     map[string]int32 // control, unknown and byte pieces
	unk          int
	bpe          bool
	byteFallback bool
	userDefined  []string // longest first

	charsmap         *charsmap
	charsmapRaw      []byte
	addDummyPrefix   bool
	removeExtraSpace bool
	escapeSpaces     bool

	minScore, maxScore float32
	maxLen             int
	hash               [32]byte
	sorted             prefixIndex // the pieces of ids, for prefix search
}

// prefixIndex finds the pieces that prefix a text: pieces sorted
// bytewise, and a range of them narrowed one byte at a time.
type prefixIndex struct {
	keys []string
	ids  []int32
}

func newPrefixIndex(ids map[string]int32) prefixIndex {
	p := prefixIndex{keys: make([]string, 0, len(ids))}
	for k := range ids {
		p.keys = append(p.keys, k)
	}
	sort.Strings(p.keys)
	p.ids = make([]int32, len(p.keys))
	for i, k := range p.keys {
		p.ids[i] = ids[k]
	}
	return p
}

// each calls f(id, length) for every piece that prefixes s, shortest first.
func (p *prefixIndex) each(s string, f func(id int32, l int)) {
	lo, hi := 0, len(p.keys)
	for l := 0; l < len(s) && lo < hi; l++ {
		c := s[l]
		// Within [lo, hi) every key has s[:l] as a prefix, the key equal to
		// it (if any) first; narrow to those whose byte l is c.
		lo += sort.Search(hi-lo, func(i int) bool { k := p.keys[lo+i]; return len(k) > l && k[l] >= c })
		hi = lo + sort.Search(hi-lo, func(i int) bool { return p.keys[lo+i][l] > c })
		if lo < hi && len(p.keys[lo]) == l+1 {
			f(p.ids[lo], l+1)
		}
	}
}

// protobuf wire reading.
type pbReader struct {
	b   []byte
	err error
}

func (r *pbReader) varint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = fmt.Errorf("bad varint")
		r.b = nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

// next returns the next field's number, wire type and, for length-delimited
// fields, its bytes (for varints the value is in v, for fixed32 too).
func (r *pbReader) next() (field int, wt int, v uint64, data []byte, ok bool) {
	if len(r.b) == 0 || r.err != nil {
		return 0, 0, 0, nil, false
	}
	key := r.varint()
	field, wt = int(key>>3), int(key&7)
	switch wt {
	case 0:
		v = r.varint()
	case 1:
		if len(r.b) < 8 {
			r.err = fmt.Errorf("field %d: truncated", field)
			return 0, 0, 0, nil, false
		}
		v, r.b = binary.LittleEndian.Uint64(r.b), r.b[8:]
	case 2:
		n := r.varint()
		if n > uint64(len(r.b)) {
			r.err = fmt.Errorf("field %d: length %d past the end", field, n)
			return 0, 0, 0, nil, false
		}
		data, r.b = r.b[:n], r.b[n:]
	case 5:
		if len(r.b) < 4 {
			r.err = fmt.Errorf("field %d: truncated", field)
			return 0, 0, 0, nil, false
		}
		v, r.b = uint64(binary.LittleEndian.Uint32(r.b)), r.b[4:]
	default:
		r.err = fmt.Errorf("field %d: wire type %d", field, wt)
		return 0, 0, 0, nil, false
	}
	return field, wt, v, data, r.err == nil
}

// parseSPM reads a ModelProto.
func parseSPM(data []byte) (*spmModel, error) {
	m := &spmModel{ids: map[string]int32{}, reserved: map[string]int32{}, unk: -1,
		addDummyPrefix: true, removeExtraSpace: true, escapeSpaces: true}
	m.hash = sha256.Sum256(data)
	r := &pbReader{b: data}
	modelType := 1
	for {
		f, _, _, d, ok := r.next()
		if !ok {
			break
		}
		switch f {
		case 1: // SentencePiece
			p, score, typ := "", float32(0), spmNormal
			sr := &pbReader{b: d}
			for {
				g, _, v, d2, ok := sr.next()
				if !ok {
					break
				}
				switch g {
				case 1:
					p = string(d2)
				case 2:
					score = math.Float32frombits(uint32(v))
				case 3:
					typ = int(v)
				}
			}
			if sr.err != nil {
				return nil, fmt.Errorf("piece %d: %w", len(m.pieces), sr.err)
			}
			m.pieces, m.scores, m.types = append(m.pieces, p), append(m.scores, score), append(m.types, typ)
		case 2: // TrainerSpec
			tr := &pbReader{b: d}
			for {
				g, _, v, _, ok := tr.next()
				if !ok {
					break
				}
				switch g {
				case 3:
					modelType = int(v)
				case 24:
					if v != 0 {
						return nil, fmt.Errorf("treat_whitespace_as_suffix is not supported")
					}
				case 35:
					m.byteFallback = v != 0
				}
			}
			if tr.err != nil {
				return nil, fmt.Errorf("trainer_spec: %w", tr.err)
			}
		case 3: // NormalizerSpec
			nr := &pbReader{b: d}
			for {
				g, _, v, d2, ok := nr.next()
				if !ok {
					break
				}
				switch g {
				case 2:
					if len(d2) > 0 {
						cm, err := newCharsmap(d2)
						if err != nil {
							return nil, fmt.Errorf("normalizer_spec: %w", err)
						}
						m.charsmap, m.charsmapRaw = cm, d2
					}
				case 3:
					m.addDummyPrefix = v != 0
				case 4:
					m.removeExtraSpace = v != 0
				case 5:
					m.escapeSpaces = v != 0
				}
			}
			if nr.err != nil {
				return nil, fmt.Errorf("normalizer_spec: %w", nr.err)
			}
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	switch modelType {
	case 1:
	case 2:
		m.bpe = true
	default:
		return nil, fmt.Errorf("model_type %d: only unigram (1) and BPE (2) are supported", modelType)
	}
	if len(m.pieces) == 0 {
		return nil, fmt.Errorf("no pieces")
	}
	m.minScore, m.maxScore = math.MaxFloat32, 0x1p-126 // FLT_MAX, FLT_MIN
	for i, p := range m.pieces {
		if p == "" {
			return nil, fmt.Errorf("piece %d is empty", i)
		}
		t := m.types[i]
		dst := m.reserved
		if t == spmNormal || t == spmUserDefined || t == spmUnused {
			dst = m.ids
		}
		if _, dup := dst[p]; dup {
			return nil, fmt.Errorf("piece %d %q is defined twice", i, p)
		}
		dst[p] = int32(i)
		switch t {
		case spmUnknown:
			m.unk = i
		case spmUserDefined:
			m.userDefined = append(m.userDefined, p)
		case spmNormal:
			m.minScore = min(m.minScore, m.scores[i])
			m.maxScore = max(m.maxScore, m.scores[i])
		}
		m.maxLen = max(m.maxLen, len(p))
	}
	if m.unk < 0 {
		return nil, fmt.Errorf("no unknown piece")
	}
	sort.SliceStable(m.userDefined, func(i, j int) bool { return len(m.userDefined[i]) > len(m.userDefined[j]) })
	m.sorted = newPrefixIndex(m.ids)
	return m, nil
}

// userPrefix is the length of the longest user-defined piece that
// prefixes s, 0 if none.
func (m *spmModel) userPrefix(s string) int {
	for _, u := range m.userDefined {
		if strings.HasPrefix(s, u) {
			return len(u)
		}
	}
	return 0
}

// normalize is SentencePiece's Normalizer::Normalize: each prefix is
// replaced by its longest charsmap rule (user-defined pieces are kept as
// they are), leading, trailing and repeated spaces removed, ▁ prepended and
// spaces escaped as ▁. Offsets are bytes of text from base, aligned as
// HuggingFace's converted tokenizer (Precompiled, then Metaspace) aligns
// them, which is what transformers reports for such a model: a
// replacement's characters replace the matched ones one for one (a
// composed ئ is aligned with the ي it was composed on, not with ي and its
// hamza), extra ones are inserted after them, and the ▁ prepended takes
// the first character's range.
func (m *spmModel) normalize(text string, base int) ntext {
	const ws = "▁"
	prefix := func(s string) (string, int) {
		if n := m.userPrefix(s); n > 0 {
			return s[:n], n
		}
		if m.charsmap != nil {
			if r, n := m.charsmap.longest(s); n > 0 {
				return r, n
			}
		}
		r, n := utf8.DecodeRuneInString(s)
		if r == utf8.RuneError && n <= 1 {
			return "\uFFFD", 1
		}
		return s[:n], n
	}
	// The replacements, in order, and the text they make, aligned by
	// HuggingFace's NormalizedString::transform.
	var parts []string
	var dest []change
	var whole builder // each part aligned with all it replaces, where transform cannot follow
	for in := text; in != ""; {
		p, n := prefix(in)
		parts = append(parts, p)
		whole.str(p, span{int32(base + len(text) - len(in)), int32(base + len(text) - len(in) + n)})
		for _, r := range p {
			dest = append(dest, change{r, 0})
		}
		if diff := utf8.RuneCountInString(p) - utf8.RuneCountInString(in[:n]); diff > 0 {
			for k := len(dest) - diff; k < len(dest); k++ {
				dest[k].n = 1
			}
		} else if diff < 0 && len(dest) > 0 {
			dest[len(dest)-1].n += diff
		}
		in = in[n:]
	}
	rep := newNText(text, base).transform(0, len(text), dest, 0)
	if rep.s != string(whole.buf) {
		// A rule's replacement that is not UTF-8 (a damaged model):
		// its bytes are not characters to align one for one.
		rep = ntext{string(whole.buf), whole.align, int32(base)}
	}
	k, pos := 0, 0 // the next part, and where it starts in rep.s
	if m.removeExtraSpace {
		for k < len(parts) && parts[k] == " " {
			k, pos = k+1, pos+1
		}
	}
	if k == len(parts) {
		return ntext{}
	}
	b := builder{base: int32(base)}
	space := " "
	if m.escapeSpaces {
		space = ws
	}
	if m.addDummyPrefix {
		_, n := utf8.DecodeRuneInString(rep.s[pos:])
		b.str(space, rep.origin(pos, pos+max(n, 1)))
	}
	prevSpace := m.removeExtraSpace
	spaceAt := -1 // where the last space written starts in b, while it ends b
	for ; k < len(parts); k++ {
		p, at := parts[k], pos
		pos += len(p)
		if prevSpace {
			for strings.HasPrefix(p, " ") {
				// A run of spaces is one space, aligned with the run's last
				// (HuggingFace's Replace(" {2,}", " ") inserts it after the
				// run it removes).
				if spaceAt >= 0 {
					for i := spaceAt; i < len(b.align); i++ {
						b.align[i] = rep.align[at]
					}
				}
				p, at = p[1:], at+1
			}
		}
		if p != "" {
			for i := 0; i < len(p); i++ {
				if p[i] == ' ' {
					spaceAt = len(b.buf)
					b.str(space, rep.align[at+i])
				} else {
					spaceAt = -1
					b.buf = append(b.buf, p[i])
					b.align = append(b.align, rep.align[at+i])
				}
			}
			prevSpace = strings.HasSuffix(p, " ")
		}
		if !m.removeExtraSpace {
			prevSpace = false
		}
	}
	t := b.text()
	if m.removeExtraSpace {
		for strings.HasSuffix(t.s, space) {
			t = t.slice(0, len(t.s)-len(space))
		}
	}
	return t
}

// pieceID is SentencePiece's PieceToId.
func (m *spmModel) pieceID(p string) int {
	if id, ok := m.reserved[p]; ok {
		return int(id)
	}
	if id, ok := m.ids[p]; ok {
		return int(id)
	}
	return m.unk
}

// encode segments a normalised text into pieces (byte ranges of s), then
// spells unknown pieces as bytes where the model falls back to bytes, and
// fuses runs of unknown pieces.
func (m *spmModel) encode(s string) []piece {
	var ps []piece
	if m.bpe {
		ps = m.encodeBPE(s)
	} else {
		ps = m.encodeUnigram(s)
	}
	out := ps[:0:0]
	for _, p := range ps {
		if int(p.id) == m.unk && m.byteFallback {
			ok := true
			var ids []int32
			for k := p.start; k < p.end; k++ {
				id, found := m.reserved[fmt.Sprintf("<0x%02X>", s[k])]
				if !found {
					ok = false
					break
				}
				ids = append(ids, id)
			}
			if ok {
				for _, id := range ids {
					out = append(out, piece{id, p.start, p.end})
				}
				continue
			}
		}
		if int(p.id) == m.unk && len(out) > 0 && int(out[len(out)-1].id) == m.unk {
			out[len(out)-1].end = p.end
			continue
		}
		out = append(out, p)
	}
	return out
}

// encodeUnigram is the unigram model's Viterbi search as SentencePiece's
// EncodeOptimized runs it: path scores are stored as float32 but a
// candidate (a stored score plus a piece's) is formed and compared in
// float64, a user-defined piece scores its length in bytes times the best
// score less 0.1 (so it always wins), unused pieces are never chosen, and a
// character no piece starts with is unknown, scoring 10 below the worst
// (in float32). Ties keep the earlier start.
func (m *spmModel) encodeUnigram(s string) []piece {
	type node struct {
		score float32
		from  int
		id    int32
		set   bool
	}
	unkScore := m.minScore - 10
	best := make([]node, len(s)+1)
	best[0].set = true
	for i := 0; i < len(s); {
		mb := spmCharLen(s[i:])
		here := best[i].score
		single := false
		m.sorted.each(s[i:], func(id int32, l int) {
			if m.types[id] == spmUnused {
				return
			}
			sc := float64(m.scores[id])
			if m.types[id] == spmUserDefined {
				sc = float64(float32(l)*m.maxScore) - 0.1
			}
			c := sc + float64(here)
			if t := &best[i+l]; !t.set || c > float64(t.score) {
				*t = node{float32(c), i, id, true}
			}
			if l == mb {
				single = true
			}
		})
		if !single {
			c := unkScore + here
			if t := &best[i+mb]; !t.set || c > t.score {
				*t = node{c, i, int32(m.unk), true}
			}
		}
		i += mb
	}
	var rev []piece
	for end := len(s); end > 0; end = best[end].from {
		rev = append(rev, piece{best[end].id, int32(best[end].from), int32(end)})
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev
}

// spmCharLen is SentencePiece's OneCharLen: the length of a UTF-8 sequence
// by its first byte (not validated).
func spmCharLen(s string) int {
	n := [16]int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4}[s[0]>>4]
	return min(n, len(s))
}

// encodeBPE merges, from characters (user-defined pieces whole and never
// merged), the adjacent pair whose union is the best-scoring piece,
// leftmost first, until no union is a piece; unused pieces are split back
// into the pieces they were merged from.
func (m *spmModel) encodeBPE(s string) []piece {
	type sym struct {
		start, end int
		freeze     bool
	}
	var syms []sym
	for i := 0; i < len(s); {
		n := m.userPrefix(s[i:])
		freeze := n > 0
		if n == 0 {
			n = spmCharLen(s[i:])
		}
		syms = append(syms, sym{i, i + n, freeze})
		i += n
	}
	type origin struct{ left, right string }
	rev := map[string]origin{}
	// score[k] is the score of merging syms[k] and syms[k+1], NaN if
	// their union is no piece (or either is frozen).
	pairScore := func(k int) float32 {
		if syms[k].freeze || syms[k+1].freeze {
			return float32(math.NaN())
		}
		id, ok := m.ids[s[syms[k].start:syms[k+1].end]]
		if !ok {
			return float32(math.NaN())
		}
		return m.scores[id]
	}
	score := make([]float32, max(len(syms)-1, 0))
	for k := range score {
		score[k] = pairScore(k)
	}
	for len(syms) > 1 {
		best, bestScore := -1, float32(0)
		for k, sc := range score {
			if sc == sc && (best < 0 || sc > bestScore) {
				best, bestScore = k, sc
			}
		}
		if best < 0 {
			break
		}
		merged := s[syms[best].start:syms[best+1].end]
		if id := m.ids[merged]; m.types[id] == spmUnused {
			rev[merged] = origin{s[syms[best].start:syms[best].end], s[syms[best+1].start:syms[best+1].end]}
		}
		syms[best].end = syms[best+1].end
		syms = append(syms[:best+1], syms[best+2:]...)
		score = append(score[:best], score[best+1:]...)
		if best < len(score) {
			score[best] = pairScore(best)
		}
		if best > 0 {
			score[best-1] = pairScore(best - 1)
		}
	}
	var out []piece
	var resegment func(w string, start int)
	resegment = func(w string, start int) {
		id := m.pieceID(w)
		o, ok := rev[w]
		if m.types[id] != spmUnused || !ok {
			out = append(out, piece{int32(id), int32(start), int32(start + len(w))})
			return
		}
		resegment(o.left, start)
		resegment(o.right, start+len(o.left))
	}
	for _, y := range syms {
		resegment(s[y.start:y.end], y.start)
	}
	return out
}

// SentencePiece is a tokenizer over a SentencePiece model, wrapped as a
// HuggingFace slow tokenizer wraps it: DeBERTa-v2/v3 ([CLS] a [SEP] b [SEP],
// type ids 0 then 1, [MASK] added after the pieces) or XLM-RoBERTa (fairseq
// ids: <s> 0, <pad> 1, </s> 2, <unk> 3, a piece's id plus one, <mask> last;
// <s> a </s></s> b </s>, type ids 0). It is safe for concurrent use.
type SentencePiece struct {
	m         *spmModel
	xlmr      bool
	specials  Specials
	size      int
	maxLength int
	fp        string

	mu    sync.RWMutex
	cache map[string][]piece
}

// SentencePiece wrappings.
const (
	WrapDeBERTa = models.SentencePieceDeBERTa
	WrapXLMR    = models.SentencePieceXLMR
)

// NewSentencePiece reads a SentencePiece model file and wraps it as wrap
// (WrapDeBERTa or WrapXLMR) says, truncating encodings to maxLength tokens
// (0: none).
func NewSentencePiece(path, wrap string, maxLength int) (*SentencePiece, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("sentencepiece model %s: %w", path, err)
	}
	return newSentencePiece(data, path, wrap, maxLength)
}

// newSentencePiece is NewSentencePiece of the model file's bytes (path
// names it in errors).
func newSentencePiece(data []byte, path, wrap string, maxLength int) (*SentencePiece, error) {
	m, err := parseSPM(data)
	if err != nil {
		return nil, fmt.Errorf("sentencepiece model %s: %w", path, err)
	}
	t := &SentencePiece{m: m, maxLength: maxLength, cache: map[string][]piece{}}
	switch wrap {
	case WrapDeBERTa:
		id := func(p string) int {
			if i, ok := m.reserved[p]; ok {
				return int(i)
			}
			if i, ok := m.ids[p]; ok {
				return int(i)
			}
			return -1
		}
		t.specials = Specials{CLS: id("[CLS]"), SEP: id("[SEP]"), PAD: id("[PAD]"), UNK: m.unk, MASK: id("[MASK]")}
		t.size = len(m.pieces)
		if t.specials.MASK < 0 {
			// DebertaV2Tokenizer adds [MASK] after the pieces.
			t.specials.MASK = t.size
			t.size++
		}
		if t.specials.CLS < 0 || t.specials.SEP < 0 {
			return nil, fmt.Errorf("sentencepiece model %s: no [CLS] or [SEP] piece for DeBERTa", path)
		}
	case WrapXLMR:
		t.xlmr = true
		t.specials = Specials{CLS: 0, PAD: 1, SEP: 2, UNK: 3, MASK: len(m.pieces) + 1}
		t.size = len(m.pieces) + 2
	default:
		return nil, fmt.Errorf("sentencepiece model %s: wrapping %q, want %s or %s", path, wrap, WrapDeBERTa, WrapXLMR)
	}
	t.fp = fmt.Sprintf("spm %x wrap=%s maxlen=%d", m.hash, wrap, maxLength)
	return t, nil
}

// Fingerprint identifies the tokenizer: model file, wrapping, maximum length.
func (t *SentencePiece) Fingerprint() string { return t.fp }

// MaxLength is the length encodings are truncated to (0: none).
func (t *SentencePiece) MaxLength() int { return t.maxLength }

// VocabSize is the number of ids, the added mask token included.
func (t *SentencePiece) VocabSize() int { return t.size }

// UnknownID is the unknown piece's id.
func (t *SentencePiece) UnknownID() int { return t.specials.UNK }

// Specials returns the special token ids.
func (t *SentencePiece) Specials() Specials { return t.specials }

// Encode tokenizes text, or the pair (text, pair) when isPair is set.
func (t *SentencePiece) Encode(text, pair string, isPair bool) (models.Encoding, error) {
	e, err := t.EncodeOffsets(text, pair, isPair)
	return e.Encoding, err
}

// EncodeOffsets is Encode with each token's offsets and sequence.
func (t *SentencePiece) EncodeOffsets(text, pair string, isPair bool) (Encoded, error) {
	a := t.tokens(text)
	var b []token
	if isPair {
		b = t.tokens(pair)
	}
	post := t.post()
	if t.maxLength > 0 {
		na, nb := truncateLongestFirst(len(a), len(b), max(t.maxLength-post.added(isPair), 0), isPair)
		a, b = a[:na], b[:nb]
	}
	return assemble(post, a, b, isPair), nil
}

func (t *SentencePiece) post() *postProcessor {
	c, s := []int{t.specials.CLS}, []int{t.specials.SEP}
	single := []tmplItem{{special: c, seq: -1}, {seq: 0}, {special: s, seq: -1}}
	if t.xlmr {
		return &postProcessor{single: single, pair: []tmplItem{single[0], single[1], single[2],
			{special: s, seq: -1}, {seq: 1}, {special: s, seq: -1}}}
	}
	return &postProcessor{single: single, pair: []tmplItem{single[0], single[1], single[2],
		{seq: 1, typeID: 1}, {special: s, seq: -1, typeID: 1}}}
}

// tokens is the pieces of one text, with byte offsets in it.
func (t *SentencePiece) tokens(text string) []token {
	n := t.m.normalize(text, 0)
	t.mu.RLock()
	ps, ok := t.cache[n.s]
	t.mu.RUnlock()
	if !ok {
		ps = t.m.encode(n.s)
		t.mu.Lock()
		if len(t.cache) < maxCachedWords {
			t.cache[n.s] = ps
		}
		t.mu.Unlock()
	}
	out := make([]token, len(ps))
	for i, p := range ps {
		id := int(p.id)
		if t.xlmr {
			if id == t.m.unk {
				id = t.specials.UNK
			} else {
				id++
			}
		}
		o := n.origin(int(p.start), int(p.end))
		out[i] = token{int32(id), o.a, o.b}
	}
	return out
}

var _ Tokenizer = (*SentencePiece)(nil)
