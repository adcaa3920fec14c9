// Package spans prepares reading-comprehension (SQuAD) examples for a span
// model and turns its start/end logits back into answer texts as BeLUGA
// does (behaviour_training.py: HuggingFace's question-answering recipe, as
// in run_qa.py and utils_qa.py, with its parameters):
//
//   - Features: "[CLS] question [SEP] context [SEP]" (the question stripped
//     of surrounding white space; another tokenizer's own layout, such as
//     RoBERTa's "<s> q </s></s> c </s>", with FromTokenizer), padded to
//     MaxLength (384). A context too long for one feature is cut into
//     windows of MaxLength−len(question)−3 tokens (3: the special tokens),
//     each starting MaxLength−len(question)−3−Stride tokens after the
//     previous one (Stride 128 tokens of overlap), as the tokenizers library
//     truncates "only_second" with overflow.
//   - Labels: the first answer's character span becomes the positions of
//     the first and last token covering it; a window that does not contain
//     the whole answer (and an example without one) is labelled (0, 0), the
//     [CLS] position.
//   - Answers: per example, over all its windows, the best start+end logit
//     sum among the NBest (20) highest start and end logits of each window,
//     both inside the context, end ≥ start, at most MaxAnswerTokens (30)
//     tokens; the answer is the context's characters from the start token's
//     first to the end token's last; "" when no pair qualifies.
//
// Offsets are in characters (Unicode code points), as SQuAD's answer_start
// and Python strings count them.
package spans

import (
	"fmt"
	"strings"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/models"
)

// Token is one word piece of a text and the characters it came from.
type Token struct {
	ID int
	// Start and End delimit the characters [Start, End) of the original
	// text (code points, not bytes) that the piece was cut from.
	Start, End int
}

// Tokenizer cuts a text into word pieces with their character offsets,
// without special tokens. FromTokenizer adapts any of package tokenize's;
// any tokenizer that keeps offsets can implement it.
type Tokenizer interface {
	TokenizeOffsets(text string) ([]Token, error)
}

// Config holds the feature and answer parameters.
type Config struct {
	MaxLength       int // feature length, special tokens and padding included
	Stride          int // tokens shared by consecutive windows of a context
	NBest           int // start and end candidates per window
	MaxAnswerTokens int // longest answer, in tokens
	CLS, SEP, PAD   int // special token ids
	// Layout places the special tokens of a (question, context) pair as
	// the model's tokenizer does; nil is BERT's [CLS] q [SEP] c [SEP] with
	// CLS and SEP, the context and its [SEP] of type 1.
	Layout *Layout
}

// Layout is where a tokenizer puts its special tokens around a pair:
// Prefix q Middle c Suffix, each special token with its type id, the
// context's tokens of type ContextType. RoBERTa's is <s> q </s></s> c </s>,
// all of type 0.
type Layout struct {
	Prefix, Middle, Suffix                []int
	PrefixTypes, MiddleTypes, SuffixTypes []int
	ContextType                           int
}

// layout is cfg's Layout, BERT's when unset.
func (cfg Config) layout() Layout {
	if cfg.Layout != nil {
		return *cfg.Layout
	}
	return Layout{Prefix: []int{cfg.CLS}, Middle: []int{cfg.SEP}, Suffix: []int{cfg.SEP},
		PrefixTypes: []int{0}, MiddleTypes: []int{0}, SuffixTypes: []int{1}, ContextType: 1}
}

// added is the number of special tokens the layout adds.
func (l Layout) added() int { return len(l.Prefix) + len(l.Middle) + len(l.Suffix) }

// BeLUGA returns BeLUGA's parameters (max_length 384, stride 128, n_best 20,
// max_answer_length 30) with BERT's uncased special ids (101, 102, 0).
func BeLUGA() Config {
	return Config{MaxLength: 384, Stride: 128, NBest: 20, MaxAnswerTokens: 30, CLS: 101, SEP: 102, PAD: 0}
}

// Feature is one window of one example.
type Feature struct {
	Example int // index of its example
	models.Encoding
	// Context[i] is true where token i belongs to the context (not the
	// question, a special token or padding); Offsets[i] is its character
	// span in the context then.
	Context []bool
	Offsets [][2]int
	// Start and End are the token positions of the first answer, (0, 0)
	// when this window does not contain it whole.
	Start, End int
	// Len is the number of tokens before the padding.
	Len int
}

// Features tokenizes every example into one or more features, in example
// order.
func Features(tk Tokenizer, exs []datasets.QAExample, cfg Config) ([]Feature, error) {
	var out []Feature
	// SQuAD asks several questions of each context: tokenize it once.
	contexts := map[string][]Token{}
	for i, ex := range exs {
		c, ok := contexts[ex.Context]
		if !ok {
			var err error
			if c, err = tk.TokenizeOffsets(ex.Context); err != nil {
				return nil, fmt.Errorf("example %d (%s): context: %w", i, ex.ID, err)
			}
			contexts[ex.Context] = c
		}
		fs, err := exampleFeatures(tk, ex, c, cfg)
		if err != nil {
			return nil, fmt.Errorf("example %d (%s): %w", i, ex.ID, err)
		}
		for k := range fs {
			fs[k].Example = i
		}
		out = append(out, fs...)
	}
	return out, nil
}

func exampleFeatures(tk Tokenizer, ex datasets.QAExample, c []Token, cfg Config) ([]Feature, error) {
	q, err := tk.TokenizeOffsets(strings.TrimSpace(ex.Question))
	if err != nil {
		return nil, fmt.Errorf("question: %w", err)
	}
	lay := cfg.layout()
	windows, err := contextWindows(len(q), len(c), lay.added(), cfg)
	if err != nil {
		return nil, err
	}
	startChar, endChar := -1, -1
	if len(ex.Answers) > 0 && len(ex.AnswerStarts) > 0 {
		startChar = ex.AnswerStarts[0]
		endChar = startChar + len([]rune(ex.Answers[0]))
	}
	var out []Feature
	for _, w := range windows {
		f := Feature{
			Encoding: models.Encoding{IDs: make([]int, cfg.MaxLength), TypeIDs: make([]int, cfg.MaxLength)},
			Context:  make([]bool, cfg.MaxLength),
			Offsets:  make([][2]int, cfg.MaxLength),
		}
		ids, n := f.IDs, 0
		put := func(id, typ int) { ids[n], f.TypeIDs[n] = id, typ; n++ }
		specials := func(ids, types []int) {
			for i, id := range ids {
				put(id, types[i])
			}
		}
		specials(lay.Prefix, lay.PrefixTypes)
		for _, t := range q {
			put(t.ID, 0)
		}
		specials(lay.Middle, lay.MiddleTypes)
		first := n
		for _, t := range c[w[0]:w[1]] {
			f.Context[n], f.Offsets[n] = true, [2]int{t.Start, t.End}
			put(t.ID, lay.ContextType)
		}
		last := n - 1
		specials(lay.Suffix, lay.SuffixTypes)
		f.Len = n
		for ; n < cfg.MaxLength; n++ {
			ids[n] = cfg.PAD
		}
		f.Start, f.End = answerPositions(f.Offsets, first, last, startChar, endChar)
		out = append(out, f)
	}
	return out, nil
}

// contextWindows is the tokenizers library's truncation of the second
// sequence with overflow: [start, stop) token ranges of the context.
func contextWindows(nq, nc, added int, cfg Config) ([][2]int, error) {
	total := nq + nc + added
	if total <= cfg.MaxLength {
		return [][2]int{{0, nc}}, nil
	}
	toRemove := total - cfg.MaxLength
	if nc <= toRemove {
		return nil, fmt.Errorf("a question of %d tokens leaves no room for the context in %d tokens", nq, cfg.MaxLength)
	}
	maxLen := nc - toRemove
	if cfg.Stride >= maxLen {
		return nil, fmt.Errorf("stride %d is not below the %d context tokens a window holds", cfg.Stride, maxLen)
	}
	var out [][2]int
	for start := 0; start < nc; start += maxLen - cfg.Stride {
		stop := min(start+maxLen, nc)
		out = append(out, [2]int{start, stop})
		if stop == nc {
			break
		}
	}
	return out, nil
}

// answerPositions is BeLUGA's labelling of one window whose context tokens
// are first..last. Unlike run_qa.py's, its search for the start token stops
// at the context's end, so an answer starting in the window's last token is
// labelled there (run_qa.py runs on into [SEP] and the padding).
func answerPositions(offsets [][2]int, first, last, startChar, endChar int) (int, int) {
	if startChar < 0 || last < first || offsets[first][0] > startChar || offsets[last][1] < endChar {
		return 0, 0
	}
	s := first
	for s <= last && offsets[s][0] <= startChar {
		s++
	}
	e := last
	for e >= first && offsets[e][1] >= endChar {
		e--
	}
	return s - 1, e + 1
}

// Batch stacks features (all MaxLength tokens long) into a model batch whose
// mask hides the padding.
func Batch(fs []Feature) models.Batch {
	encs := make([]models.Encoding, len(fs))
	for i, f := range fs {
		encs[i] = f.Encoding
	}
	b := models.NewBatch(encs)
	for i, f := range fs {
		for j := f.Len; j < b.SeqLen; j++ {
			b.Mask[i*b.SeqLen+j] = 0
		}
	}
	return b
}

// SuiteExample is BeLUGA's conversion of a CheckList SQuAD input: the
// label is the answer, starting at its first occurrence in the context
// (Python's str.find; −1, which labels every window (0, 0), when absent or
// when the input has no label).
func SuiteExample(id, context, question, label string) datasets.QAExample {
	ex := datasets.QAExample{ID: id, Context: context, Question: question, Answers: []string{label}, AnswerStarts: []int{-1}}
	if i := strings.Index(context, label); i >= 0 {
		ex.AnswerStarts[0] = len([]rune(context[:i]))
	}
	return ex
}

// Positions returns the features' answer positions, the targets of the
// span MFT loss (losses.Evaluator.SpanMFT).
func Positions(fs []Feature) (starts, ends []int) {
	starts, ends = make([]int, len(fs)), make([]int, len(fs))
	for i, f := range fs {
		starts[i], ends[i] = f.Start, f.End
	}
	return starts, ends
}

// WithoutTypes returns b with token type 0 everywhere, as BeLUGA's suite
// training feeds BERT: for SQuAD its data collator and losses keep only
// input_ids, attention_mask and the answer positions (behaviour_training.py),
// while its i.i.d. baseline (iid_finetuning.py) and every prediction pass
// the token types.
func WithoutTypes(b models.Batch) models.Batch {
	b.Types = make([]int, len(b.Types))
	return b
}
