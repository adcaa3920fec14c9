package spans

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/models"
)

// Answers turns the start and end logits of every feature (start[i] and
// end[i] for fs[i], MaxLength each) into one answer text per example, as
// BeLUGA's compute_metrics does (utils_qa.py's postprocess_qa_predictions
// without null answers): the first best-scoring pair wins, and an example
// with no valid start/end pair gets "" (utils_qa.py writes "empty").
// Ties among logits rank the later position first (numpy's default argsort
// leaves their order unspecified).
func Answers(exs []datasets.QAExample, fs []Feature, start, end [][]float32, cfg Config) ([]string, error) {
	if len(start) != len(fs) || len(end) != len(fs) {
		return nil, fmt.Errorf("%d start and %d end logit rows for %d features", len(start), len(end), len(fs))
	}
	type cand struct {
		score    float32
		from, to int // characters of the context
	}
	best := make([][]cand, len(exs))
	for i, f := range fs {
		if f.Example < 0 || f.Example >= len(exs) {
			return nil, fmt.Errorf("feature %d belongs to example %d of %d", i, f.Example, len(exs))
		}
		if len(start[i]) != len(f.IDs) || len(end[i]) != len(f.IDs) {
			return nil, fmt.Errorf("feature %d: %d start and %d end logits for %d tokens", i, len(start[i]), len(end[i]), len(f.IDs))
		}
		ends := topIndices(end[i], cfg.NBest)
		for _, s := range topIndices(start[i], cfg.NBest) {
			for _, e := range ends {
				if !f.Context[s] || !f.Context[e] || e < s || e-s+1 > cfg.MaxAnswerTokens {
					continue
				}
				best[f.Example] = append(best[f.Example], cand{start[i][s] + end[i][e], f.Offsets[s][0], f.Offsets[e][1]})
			}
		}
	}
	out := make([]string, len(exs))
	for k, cs := range best {
		if len(cs) == 0 {
			continue
		}
		sort.SliceStable(cs, func(a, b int) bool { return cs[a].score > cs[b].score })
		ctx := []rune(exs[k].Context)
		from, to := min(cs[0].from, len(ctx)), min(cs[0].to, len(ctx))
		out[k] = string(ctx[from:to])
	}
	return out, nil
}

// topIndices returns the positions of the n largest values, largest first.
func topIndices(xs []float32, n int) []int {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	// ascending and stable, then reversed: ties put the later position first
	sort.SliceStable(idx, func(a, b int) bool { return xs[idx[a]] < xs[idx[b]] })
	out := make([]int, 0, n)
	for i := len(idx) - 1; i >= 0 && len(out) < n; i-- {
		out = append(out, idx[i])
	}
	return out
}

// Predict answers every example with m: features in batches of batchSize,
// evaluation mode, then Answers.
func Predict(m *models.SpanBERT, tk Tokenizer, exs []datasets.QAExample, cfg Config, batchSize int) ([]string, error) {
	if batchSize <= 0 {
		return nil, fmt.Errorf("batch size %d", batchSize)
	}
	fs, err := Features(tk, exs, cfg)
	if err != nil {
		return nil, err
	}
	start, end := make([][]float32, len(fs)), make([][]float32, len(fs))
	for lo := 0; lo < len(fs); lo += batchSize {
		hi := min(lo+batchSize, len(fs))
		lg, err := m.InferSpans(Batch(fs[lo:hi]))
		if err != nil {
			return nil, fmt.Errorf("features %d-%d: %w", lo, hi-1, err)
		}
		for i := lo; i < hi; i++ {
			s, e := lg.Row(i - lo)
			start[i], end[i] = s, e
		}
	}
	return Answers(exs, fs, start, end, cfg)
}

// WritePredOnly writes answers as CheckList's pred_only prediction file
// does for SQuAD (BeLUGA's suite_finetuning.py): one answer a line, line
// breaks inside an answer replaced by spaces.
func WritePredOnly(w io.Writer, answers []string) error {
	for i, a := range answers {
		if _, err := io.WriteString(w, strings.ReplaceAll(a, "\n", " ")+"\n"); err != nil {
			return fmt.Errorf("prediction %d: %w", i, err)
		}
	}
	return nil
}
