package tokenize

import (
	"container/heap"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
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
func Train(texts []string, opt TrainOptions) ([]byte, error) {
	if opt.MinFrequency <= 0 {
		opt.MinFrequency = 2
	}
	if opt.VocabSize <= len(trainSpecials) {
		return nil, fmt.Errorf("vocabulary size %d leaves no room beside the %d special tokens", opt.VocabSize, len(trainSpecials))
	}
	if len(texts) == 0 {
		return nil, fmt.Errorf("no texts to train on")
	}
	if opt.Kind == "bpe" && opt.VocabSize <= 256+len(trainSpecials) {
		return nil, fmt.Errorf("vocabulary size %d: byte-level BPE needs more than its 256 bytes and %d special tokens", opt.VocabSize, len(trainSpecials))
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
		return nil, fmt.Errorf("tokenizer kind %q: want wordpiece, bpe or unigram", opt.Kind)
	}
	// The words to learn from, as the pipeline cuts them.
	words, err := trainWords(doc, texts)
	if err != nil {
		return nil, err
	}
	switch opt.Kind {
	case "wordpiece":
		vocab, _ := learnBPE(words, opt.VocabSize-len(trainSpecials), opt.MinFrequency, "##")
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
		return nil, err
	}
	// What is written must read back.
	if _, err := parseHF(out, 0); err != nil {
		return nil, fmt.Errorf("trained tokenizer does not read back: %w", err)
	}
	return append(out, '\n'), nil
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
			n = norm(n)
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

// pairHeap orders candidate merges: most frequent first, then by text.
type pairItem struct {
	a, b  string
	count int
}
type pairHeap []pairItem

func (h pairHeap) Len() int { return len(h) }
func (h pairHeap) Less(i, j int) bool {
	if h[i].count != h[j].count {
		return h[i].count > h[j].count
	}
	if h[i].a != h[j].a {
		return h[i].a < h[j].a
	}
	return h[i].b < h[j].b
}
func (h pairHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *pairHeap) Push(x any)   { *h = append(*h, x.(pairItem)) }
func (h *pairHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// learnBPE learns merges until the vocabulary (characters, then merged
// tokens) has size tokens or no pair occurs minFreq times. With a prefix
// (WordPiece's ##), a word's symbols after its first carry it, and a merge
// of a and ##b makes a+b (##a and ##b: ##ab).
func learnBPE(words map[string]int, size, minFreq int, prefix string) (vocab, merges []string) {
	ws := sortedWords(words)
	syms := make([][]string, len(ws))
	alphabet := map[string]bool{}
	for i, w := range ws {
		k := 0
		for _, r := range w {
			s := string(r)
			if k > 0 {
				s = prefix + s
			}
			syms[i] = append(syms[i], s)
			alphabet[s] = true
			k++
		}
	}
	if prefix == "" {
		// Byte-level: every byte is in the alphabet, so no text is unknown.
		for b := range 256 {
			alphabet[byteChars[b]] = true
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
	type pair struct{ a, b string }
	counts := map[pair]int{}
	where := map[pair]map[int]bool{}
	add := func(i int, sign int) {
		for k := 0; k+1 < len(syms[i]); k++ {
			p := pair{syms[i][k], syms[i][k+1]}
			counts[p] += sign * words[ws[i]]
			if sign > 0 {
				if where[p] == nil {
					where[p] = map[int]bool{}
				}
				where[p][i] = true
			}
		}
	}
	for i := range ws {
		add(i, 1)
	}
	h := &pairHeap{}
	for p, c := range counts {
		*h = append(*h, pairItem{p.a, p.b, c})
	}
	heap.Init(h)
	for len(vocab) < size && h.Len() > 0 {
		top := heap.Pop(h).(pairItem)
		p := pair{top.a, top.b}
		if counts[p] != top.count {
			if counts[p] > 0 {
				heap.Push(h, pairItem{p.a, p.b, counts[p]})
			}
			continue
		}
		if top.count < minFreq {
			break
		}
		merged := p.a + strings.TrimPrefix(p.b, prefix)
		merges = append(merges, p.a+" "+p.b)
		if !inVocab[merged] {
			inVocab[merged] = true
			vocab = append(vocab, merged)
		}
		touched := map[pair]bool{}
		idx := make([]int, 0, len(where[p]))
		for i := range where[p] {
			idx = append(idx, i)
		}
		sort.Ints(idx)
		for _, i := range idx {
			add(i, -1)
			var next []string
			s := syms[i]
			for k := 0; k < len(s); k++ {
				if k+1 < len(s) && s[k] == p.a && s[k+1] == p.b {
					next = append(next, merged)
					k++
				} else {
					next = append(next, s[k])
				}
			}
			syms[i] = next
			add(i, 1)
			for k := 0; k+1 < len(next); k++ {
				touched[pair{next[k], next[k+1]}] = true
			}
		}
		delete(where, p)
		delete(counts, p)
		tp := make([]pair, 0, len(touched))
		for q := range touched {
			tp = append(tp, q)
		}
		sort.Slice(tp, func(i, j int) bool { return tp[i].a < tp[j].a || (tp[i].a == tp[j].a && tp[i].b < tp[j].b) })
		for _, q := range tp {
			if counts[q] > 0 {
				heap.Push(h, pairItem{q.a, q.b, counts[q]})
			}
		}
	}
	return vocab, merges
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
