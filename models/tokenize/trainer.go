package tokenize

import (
	"container/heap"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// TrainOptions say what tokenizer Train builds.
type TrainOptions struct {
	// Kind is "wordpiece" (BERT's pipeline: BertNormalizer, BertPreTokenizer,
	// WordPiece), "bpe" (byte-level BPE: ByteLevel pre-tokenizer, as
	// RoBERTa's) or "unigram" (NFKC, Metaspace, Unigram, as SentencePiece's).
	Kind string
	// VocabSize is the number of ids, the special tokens included.
	VocabSize int
	// Lowercase lower-cases text first (WordPiece: BertNormalizer's
	// lowercase and strip_accents; the others: a Lowercase normalizer).
	Lowercase bool
	// MinFrequency is the fewest occurrences of a merge or piece kept
	// (default 2).
	MinFrequency int
}

// trainSpecials are the special tokens of every trained tokenizer, ids 0–4.
var trainSpecials = []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}

// Train learns a tokenizer from texts and returns its tokenizer.json,
// which NewHF (and HuggingFace's tokenizers) read. The result depends on
// the texts and options only: ties are broken by token text.
//
//   - wordpiece and bpe learn byte-pair merges from word counts, the most
//     frequent adjacent pair first (HuggingFace's BpeTrainer and
//     WordPieceTrainer do the same); a WordPiece vocabulary's pieces after
//     a word's first carry the ## prefix.
//   - unigram starts from every substring of at most 16 characters seen at
//     least MinFrequency times (and every character), then alternates
//     Viterbi re-estimation of log-probabilities with pruning of the least
//     used pieces, a quarter at a time, until VocabSize remain (a hard-EM
//     simplification of SentencePiece's trainer, which prunes by the loss
//     in likelihood).
//
// Every tokenizer adds [CLS] a [SEP] (b [SEP]), type ids 0 then 1.
//
// A WordPiece tokenizer trained on texts mostly in CJK ideographs comes
// with a warning: BERT's pre-tokenizer cuts every ideograph off
// (handle_chinese_chars), so it can learn no piece longer than one.
func Train(texts []string, opt TrainOptions) (Trained, error) {
	b, warnings, err := train(texts, opt)
	return Trained{JSON: b, Warnings: warnings}, err
}

// Trained is a trained tokenizer.json and what the training found worth
// saying about it.
type Trained struct {
	JSON     []byte
	Warnings []string
}

// CJKWarnShare is the share of a corpus's letters in CJK ideographs above
// which a WordPiece training warns that it learns characters only.
const CJKWarnShare = 0.2

func train(texts []string, opt TrainOptions) ([]byte, []string, error) {
	if opt.MinFrequency <= 0 {
		opt.MinFrequency = 2
	}
	if opt.VocabSize <= len(trainSpecials) {
		return nil, nil, fmt.Errorf("vocabulary size %d leaves no room beside the %d special tokens", opt.VocabSize, len(trainSpecials))
	}
	if len(texts) == 0 {
		return nil, nil, fmt.Errorf("no texts to train on")
	}
	if opt.Kind == "bpe" && opt.VocabSize <= 256+len(trainSpecials) {
		return nil, nil, fmt.Errorf("vocabulary size %d: byte-level BPE needs more than its 256 bytes and %d special tokens", opt.VocabSize, len(trainSpecials))
	}
	doc := map[string]any{"version": "1.0", "truncation": nil, "padding": nil}
	var added []map[string]any
	for i, s := range trainSpecials {
		added = append(added, map[string]any{"id": i, "content": s, "single_word": false, "lstrip": false,
			"rstrip": false, "normalized": false, "special": true})
	}
	doc["added_tokens"] = added
	sp := func(tok string, typ int) map[string]any {
		return map[string]any{"SpecialToken": map[string]any{"id": tok, "type_id": typ}}
	}
	seq := func(id string, typ int) map[string]any {
		return map[string]any{"Sequence": map[string]any{"id": id, "type_id": typ}}
	}
	doc["post_processor"] = map[string]any{"type": "TemplateProcessing",
		"single": []any{sp("[CLS]", 0), seq("A", 0), sp("[SEP]", 0)},
		"pair":   []any{sp("[CLS]", 0), seq("A", 0), sp("[SEP]", 0), seq("B", 1), sp("[SEP]", 1)},
		"special_tokens": map[string]any{
			"[CLS]": map[string]any{"id": "[CLS]", "ids": []int{2}, "tokens": []string{"[CLS]"}},
			"[SEP]": map[string]any{"id": "[SEP]", "ids": []int{3}, "tokens": []string{"[SEP]"}},
		}}
	lower := map[string]any{"type": "Lowercase"}
	switch opt.Kind {
	case "wordpiece":
		doc["normalizer"] = map[string]any{"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true,
			"strip_accents": nil, "lowercase": opt.Lowercase}
		doc["pre_tokenizer"] = map[string]any{"type": "BertPreTokenizer"}
	case "bpe":
		doc["normalizer"] = nil
		if opt.Lowercase {
			doc["normalizer"] = lower
		}
		doc["pre_tokenizer"] = map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true}
	case "unigram":
		norms := []any{map[string]any{"type": "NFKC"}}
		if opt.Lowercase {
			norms = append(norms, lower)
		}
		doc["normalizer"] = map[string]any{"type": "Sequence", "normalizers": norms}
		doc["pre_tokenizer"] = map[string]any{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": true}
	default:
		return nil, nil, fmt.Errorf("tokenizer kind %q: want wordpiece, bpe or unigram", opt.Kind)
	}
	// The words to learn from, as the pipeline cuts them.
	words, err := trainWords(doc, texts)
	if err != nil {
		return nil, nil, err
	}
	var warnings []string
	switch opt.Kind {
	case "wordpiece":
		vocab, _ := learnBPE(words, opt.VocabSize-len(trainSpecials), opt.MinFrequency, "##")
		warnings = append(warnings, cjkWarning(texts, vocab)...)
		doc["model"] = map[string]any{"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
			"max_input_chars_per_word": 100, "vocab": withSpecials(vocab)}
	case "bpe":
		vocab, merges := learnBPE(words, opt.VocabSize-len(trainSpecials), opt.MinFrequency, "")
		doc["model"] = map[string]any{"type": "BPE", "dropout": nil, "unk_token": nil, "continuing_subword_prefix": nil,
			"end_of_word_suffix": nil, "fuse_unk": false, "byte_fallback": false, "ignore_merges": false,
			"vocab": withSpecials(vocab), "merges": merges}
	case "unigram":
		pieces := learnUnigram(words, opt.VocabSize-len(trainSpecials), opt.MinFrequency)
		vocab := make([]any, 0, len(pieces)+len(trainSpecials))
		for _, s := range trainSpecials {
			vocab = append(vocab, []any{s, 0.0})
		}
		for _, p := range pieces {
			vocab = append(vocab, []any{p.text, p.score})
		}
		doc["model"] = map[string]any{"type": "Unigram", "unk_id": 1, "byte_fallback": false, "vocab": vocab}
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, nil, err
	}
	// What is written must read back.
	if _, err := parseHF(out, 0); err != nil {
		return nil, nil, fmt.Errorf("trained tokenizer does not read back: %w", err)
	}
	return append(out, '\n'), warnings, nil
}

// cjkWarning says, when many letters of texts are CJK ideographs, that a
// WordPiece vocabulary learnt them as characters only, with the figures.
func cjkWarning(texts []string, vocab []string) []string {
	letters, cjk := 0, 0
	for _, t := range texts {
		for _, r := range t {
			if unicode.IsLetter(r) {
				letters++
				if isChinese(r) {
					cjk++
				}
			}
		}
	}
	if letters == 0 || float64(cjk) < CJKWarnShare*float64(letters) {
		return nil
	}
	single := 0
	for _, v := range vocab {
		piece := strings.TrimPrefix(v, "##")
		if r, n := utf8.DecodeRuneInString(piece); n > 0 && n == len(piece) && isChinese(r) {
			single++
		}
	}
	return []string{fmt.Sprintf("%.1f%% of the letters (%d of %d) are CJK ideographs, which BERT's pre-tokenizer cuts off one by one "+
		"(handle_chinese_chars): this WordPiece vocabulary holds them as single characters (%d of its %d pieces) and no piece of two or more of them; "+
		"for Chinese or Japanese text train --kind bpe or --kind unigram, which learn multi-character pieces",
		100*float64(cjk)/float64(letters), cjk, letters, single, len(vocab))}
}

// withSpecials numbers the special tokens 0–4 and the vocabulary after.
func withSpecials(vocab []string) map[string]int {
	m := make(map[string]int, len(vocab)+len(trainSpecials))
	for i, s := range trainSpecials {
		m[s] = i
	}
	for _, v := range vocab {
		if _, dup := m[v]; !dup {
			m[v] = len(m)
		}
	}
	return m
}

// trainWords counts the words of texts as doc's normalizer and
// pre-tokenizer cut them.
func trainWords(doc map[string]any, texts []string) (map[string]int, error) {
	var norm normalizer
	var pre pretokenizer
	if n := doc["normalizer"]; n != nil {
		raw, _ := json.Marshal(n)
		f, _, err := buildNormalizer(raw)
		if err != nil {
			return nil, err
		}
		norm = f
	}
	raw, _ := json.Marshal(doc["pre_tokenizer"])
	pre, _, err := buildPreTokenizer(raw)
	if err != nil {
		return nil, err
	}
	words := map[string]int{}
	for _, t := range texts {
		n := newNText(t, 0)
		if norm != nil {
			var err error
			if n, err = norm(n); err != nil {
				return nil, err
			}
		}
		for _, w := range pre(n, true) {
			words[w.s]++
		}
	}
	return words, nil
}

// sortedWords is the words in text order, for determinism.
func sortedWords(words map[string]int) []string {
	out := make([]string, 0, len(words))
	for w := range words {
		out = append(out, w)
	}
	sort.Strings(out)
	return out
}

// learnBPE learns merges until the vocabulary (characters, then merged
// tokens) has size tokens or no pair occurs minFreq times. With a prefix
// (WordPiece's ##), a word's symbols after its first carry it, and a merge
// of a and ##b makes a+b (##a and ##b: ##ab).
//
// Each step merges the most frequent adjacent pair (ties: the pair whose
// texts sort first), as HuggingFace's BpeTrainer does, and updates the
// counts only where the merge changed a word: the pairs around each merged
// position, not the whole word. Words of languages written without spaces
// are whole sentences (a ByteLevel or BERT pre-tokenizer keeps a run of
// letters together), so rescanning every word a merge touched, and
// requeueing each of its pairs, cost a sentence's length per merge: 100 s
// for the 25,726 Chinese COLD training texts (8,000 ids), 3.7 s now; 14 s
// and 0.38 s for BenchmarkTrainBPESpaceless.
func learnBPE(words map[string]int, size, minFreq int, prefix string) (vocab, merges []string) {
	ws := sortedWords(words)
	b := newBPELearner()
	syms := make([][]int32, len(ws))
	weight := make([]int, len(ws))
	alphabet := map[string]bool{}
	for i, w := range ws {
		weight[i] = words[w]
		k := 0
		for _, r := range w {
			s := string(r)
			if k > 0 {
				s = prefix + s
			}
			syms[i] = append(syms[i], b.intern(s))
			alphabet[s] = true
			k++
		}
	}
	if prefix == "" {
		// Byte-level: every byte is in the alphabet, so no text is unknown.
		for c := range 256 {
			alphabet[byteChars[c]] = true
		}
	}
	for s := range alphabet {
		vocab = append(vocab, s)
	}
	sort.Strings(vocab)
	inVocab := map[string]bool{}
	for _, v := range vocab {
		inVocab[v] = true
	}
	for i, s := range syms {
		for k := 0; k+1 < len(s); k++ {
			p := pairKey(s[k], s[k+1])
			b.counts[p] += weight[i]
			b.where[p] = append(b.where[p], int32(i))
		}
	}
	for p, c := range b.counts {
		b.heap = append(b.heap, pairItem{p, c})
	}
	heap.Init(b)
	var dirty []uint64
	isDirty := map[uint64]bool{}
	for len(vocab) < size && b.Len() > 0 {
		top := heap.Pop(b).(pairItem)
		p := top.pair
		if c := b.counts[p]; c != top.count {
			if c > 0 {
				heap.Push(b, pairItem{p, c})
			}
			continue
		}
		if top.count < minFreq {
			break
		}
		x, y := pairSyms(p)
		merged := b.strs[x] + strings.TrimPrefix(b.strs[y], prefix)
		merges = append(merges, b.strs[x]+" "+b.strs[y])
		if !inVocab[merged] {
			inVocab[merged] = true
			vocab = append(vocab, merged)
		}
		m := b.intern(merged)
		idx := b.where[p]
		slices.Sort(idx)
		idx = slices.Compact(idx)
		dirty = dirty[:0]
		touch := func(q uint64, delta, word int) {
			b.counts[q] += delta * weight[word]
			if delta > 0 {
				b.where[q] = append(b.where[q], int32(word))
				if !isDirty[q] {
					isDirty[q] = true
					dirty = append(dirty, q)
				}
			}
		}
		for _, i := range idx {
			syms[i] = b.merge(syms[i], x, y, m, int(i), touch)
		}
		delete(b.where, p)
		delete(b.counts, p)
		// Pairs whose counts grew go back on the heap; those that fell
		// are corrected when they come up (the check above).
		for _, q := range dirty {
			isDirty[q] = false
			if c := b.counts[q]; c > 0 && q != p {
				heap.Push(b, pairItem{q, c})
			}
		}
	}
	return vocab, merges
}

// bpeLearner holds learnBPE's state: symbols as interned ids, pair counts
// and the words each pair occurs in, and the heap of candidate merges.
type bpeLearner struct {
	strs   []string
	ids    map[string]int32
	counts map[uint64]int
	// where lists the words a pair has occurred in (repeats allowed,
	// removed when the pair is merged); a word may no longer hold it.
	where map[uint64][]int32
	heap  []pairItem
}

func newBPELearner() *bpeLearner {
	return &bpeLearner{ids: map[string]int32{}, counts: map[uint64]int{}, where: map[uint64][]int32{}}
}

// intern returns the id of symbol s: two merges that spell the same token
// (a+bc, ab+c) make one symbol.
func (b *bpeLearner) intern(s string) int32 {
	if id, ok := b.ids[s]; ok {
		return id
	}
	id := int32(len(b.strs))
	b.strs = append(b.strs, s)
	b.ids[s] = id
	return id
}

func pairKey(a, b int32) uint64      { return uint64(uint32(a))<<32 | uint64(uint32(b)) }
func pairSyms(p uint64) (a, b int32) { return int32(uint32(p >> 32)), int32(uint32(p)) }

// merge replaces each occurrence of x y in w, left to right and not
// overlapping, with m, and reports through touch (pair, ±1, word) the
// pairs the word lost and gained: those that overlap a merged position.
// The pair x y itself is reported lost too; its count ends at zero.
func (b *bpeLearner) merge(w []int32, x, y, m int32, word int, touch func(uint64, int, int)) []int32 {
	n := len(w)
	var at []int // merged positions in w
	for k := 0; k+1 < n; k++ {
		if w[k] == x && w[k+1] == y {
			at = append(at, k)
			k++
		}
	}
	if len(at) == 0 {
		return w
	}
	// Lost: the old pairs starting at k-1, k and k+1 of each merged k.
	last := -1
	for _, k := range at {
		for j := max(k-1, last+1); j <= k+1 && j+1 < n; j++ {
			touch(pairKey(w[j], w[j+1]), -1, word)
			last = j
		}
	}
	out := make([]int32, 0, n-len(at))
	var newAt []int
	next := 0
	for k := 0; k < n; k++ {
		if next < len(at) && at[next] == k {
			newAt = append(newAt, len(out))
			out = append(out, m)
			k++
			next++
			continue
		}
		out = append(out, w[k])
	}
	// Gained: the new pairs on either side of each merged symbol.
	last = -1
	for _, j := range newAt {
		for i := max(j-1, last+1); i <= j && i+1 < len(out); i++ {
			touch(pairKey(out[i], out[i+1]), 1, word)
			last = i
		}
	}
	return out
}

// pairItem is a candidate merge and its count when pushed.
type pairItem struct {
	pair  uint64
	count int
}

// The heap orders candidate merges: most frequent first, then by the
// texts of the pair's symbols.
func (b *bpeLearner) Len() int { return len(b.heap) }
func (b *bpeLearner) Less(i, j int) bool {
	p, q := b.heap[i], b.heap[j]
	if p.count != q.count {
		return p.count > q.count
	}
	pa, pb := pairSyms(p.pair)
	qa, qb := pairSyms(q.pair)
	if pa != qa {
		return b.strs[pa] < b.strs[qa]
	}
	return b.strs[pb] < b.strs[qb]
}
func (b *bpeLearner) Swap(i, j int) { b.heap[i], b.heap[j] = b.heap[j], b.heap[i] }
func (b *bpeLearner) Push(x any)    { b.heap = append(b.heap, x.(pairItem)) }
func (b *bpeLearner) Pop() any {
	x := b.heap[len(b.heap)-1]
	b.heap = b.heap[:len(b.heap)-1]
	return x
}

// unigramPiece is a learned piece and its log-probability.
type unigramPiece struct {
	text  string
	score float64
}

// learnUnigram learns a unigram vocabulary of size pieces (see Train).
func learnUnigram(words map[string]int, size, minFreq int) []unigramPiece {
	ws := sortedWords(words)
	const maxChars = 16
	freq := map[string]int{}
	chars := map[string]bool{}
	for _, w := range ws {
		c := words[w]
		var starts []int
		for i := range w {
			starts = append(starts, i)
		}
		starts = append(starts, len(w))
		for a := 0; a+1 < len(starts); a++ {
			chars[w[starts[a]:starts[a+1]]] = true
			for b := a + 1; b < len(starts) && b-a <= maxChars; b++ {
				freq[w[starts[a]:starts[b]]] += c
			}
		}
	}
	// Seed: characters always, then substrings by frequency × length.
	type cand struct {
		s string
		v int
	}
	var cands []cand
	for s, f := range freq {
		if f >= minFreq && !chars[s] {
			cands = append(cands, cand{s, f * utf8.RuneCountInString(s)})
		}
	}
	sort.Slice(cands, func(i, j int) bool {
		return cands[i].v > cands[j].v || (cands[i].v == cands[j].v && cands[i].s < cands[j].s)
	})
	seed := max(4*size, size+len(chars))
	cur := map[string]float64{}
	for c := range chars {
		cur[c] = float64(freq[c])
	}
	for _, c := range cands {
		if len(cur) >= seed {
			break
		}
		cur[c.s] = float64(freq[c.s])
	}
	normalize := func() {
		total := 0.0
		for _, v := range cur {
			total += v
		}
		for k, v := range cur {
			cur[k] = math.Log(math.Max(v, 0.5) / total)
		}
	}
	normalize()
	model := func() *unigramModel {
		keys := make([]string, 0, len(cur))
		for k := range cur {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		scores := make([]float64, len(keys))
		for i, k := range keys {
			scores[i] = cur[k]
		}
		return newUnigram(keys, scores, -1, false, false)
	}
	for round := 0; ; round++ {
		for range 2 {
			m := model()
			counts := map[string]float64{}
			for _, w := range ws {
				for _, p := range m.split(w) {
					if p.id >= 0 {
						counts[m.pieces[p.id]] += float64(words[w])
					}
				}
			}
			for k := range cur {
				cur[k] = counts[k]
			}
			normalize()
		}
		if len(cur) <= size {
			break
		}
		// Prune the least likely quarter (never a character).
		keep := max(size, len(cur)*3/4)
		var ps []unigramPiece
		for k, v := range cur {
			if !chars[k] {
				ps = append(ps, unigramPiece{k, v})
			}
		}
		sort.Slice(ps, func(i, j int) bool {
			return ps[i].score > ps[j].score || (ps[i].score == ps[j].score && ps[i].text < ps[j].text)
		})
		room := max(keep-len(chars), 0)
		for _, p := range ps[min(room, len(ps)):] {
			delete(cur, p.text)
		}
		if len(ps) <= room {
			break
		}
	}
	out := make([]unigramPiece, 0, len(cur))
	for k, v := range cur {
		out = append(out, unigramPiece{k, v})
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].score > out[j].score || (out[i].score == out[j].score && out[i].text < out[j].text)
	})
	return out
}
