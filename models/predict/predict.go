// Package predict runs a classifier over many inputs: it tokenizes them,
// groups them into batches of similar length (so short inputs do not pay for
// long ones), and returns logits and probabilities in input order. It also
// reads and writes the JSON-lines files of beluga predict.
package predict

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/internal/atomicfile"
	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/backend"
)

// Input is one text or text pair.
type Input struct {
	Text     string  `json:"text"`
	TextPair *string `json:"text_pair,omitempty"`
}

// NewInput is the input of text, or of the pair (text, pair) when isPair:
// the one place a suite case's or a data file's input becomes a model's.
func NewInput(text, pair string, isPair bool) Input {
	in := Input{Text: text}
	if isPair {
		in.TextPair = &pair
	}
	return in
}

// Output is a model's answer for one input.
type Output struct {
	InputIDs []int     `json:"input_ids"`
	Logits   []float32 `json:"logits"`
	Probs    []float32 `json:"probs"`
}

// Tokenizer encodes inputs for a model.
type Tokenizer interface {
	Encode(text, pair string, isPair bool) (models.Encoding, error)
}

// Model computes logits in evaluation mode. Run calls Infer from several
// goroutines at once (one batch each): an Infer must not change the model.
// The probabilities are computed on the model's backend, as its logits.
type Model interface {
	Infer(b models.Batch) (models.Output, error)
	Backend() backend.Backend
}

// Run predicts every input with batches of at most batchSize inputs of
// similar length.
func Run(m Model, tk Tokenizer, inputs []Input, batchSize int) ([]Output, error) {
	return RunContext(context.Background(), m, tk, inputs, batchSize)
}

// RunContext is Run that stops between batches, with ctx's error, when ctx
// is cancelled.
func RunContext(ctx context.Context, m Model, tk Tokenizer, inputs []Input, batchSize int) ([]Output, error) {
	if batchSize <= 0 {
		return nil, fmt.Errorf("batch size %d", batchSize)
	}
	encs := make([]models.Encoding, len(inputs))
	for i, in := range inputs {
		pair := ""
		if in.TextPair != nil {
			pair = *in.TextPair
		}
		e, err := tk.Encode(in.Text, pair, in.TextPair != nil)
		if err != nil {
			return nil, fmt.Errorf("input %d: %w", i+1, err)
		}
		encs[i] = e
	}
	order := make([]int, len(encs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return len(encs[order[a]].IDs) < len(encs[order[b]].IDs) })
	out := make([]Output, len(encs))
	// Batches run side by side, a goroutine a core, each batch's products
	// still split over every core: a small model's batch alone leaves cores
	// idle between its products. A batch's outputs do not depend on the
	// others, so the results are those of one batch after another.
	batches := (len(order) + batchSize - 1) / batchSize
	errs := make([]error, batches)
	var next atomic.Int64
	var failed atomic.Bool
	work := func() {
		for !failed.Load() {
			bi := int(next.Add(1)) - 1
			if bi >= batches {
				return
			}
			start := bi * batchSize
			if err := ctx.Err(); err != nil {
				errs[bi] = fmt.Errorf("prediction stopped after %d of %d inputs: %w", start, len(order), err)
				failed.Store(true)
				return
			}
			idx := order[start:min(start+batchSize, len(order))]
			batch := make([]models.Encoding, len(idx))
			for j, i := range idx {
				batch[j] = encs[i]
			}
			res, err := m.Infer(models.NewBatch(batch))
			if err != nil {
				errs[bi] = err
				failed.Store(true)
				return
			}
			k := len(res.Logits) / len(idx)
			for j, i := range idx {
				logits := append([]float32(nil), res.Logits[j*k:(j+1)*k]...)
				out[i] = Output{InputIDs: encs[i].IDs, Logits: logits, Probs: probs(m.Backend(), logits)}
			}
		}
	}
	var wg sync.WaitGroup
	for w := 1; w < min(runtime.GOMAXPROCS(0), batches); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work()
		}()
	}
	work()
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func probs(be backend.Backend, logits []float32) []float32 {
	p := append([]float32(nil), logits...)
	models.SoftmaxInPlace(be, p)
	return p
}

// ReadInputs reads inputs from a table (datasets.ReadTable: JSON lines of
// {"text": …} or {"text": …, "text_pair": …} objects, or a CSV or TSV
// with a text and optionally a text_pair column; a file whose extension
// names none of these is read as JSON lines), "-" for what stdin reads.
func ReadInputs(path string, stdin io.Reader) ([]Input, error) {
	var d datasets.Dialect
	switch filepath.Ext(strings.TrimSuffix(path, ".gz")) {
	case ".csv", ".tsv", ".jsonl", ".json":
	default:
		d.Format = datasets.JSONL
	}
	var t *datasets.Table
	var err error
	if path == "-" {
		t, err = datasets.ReadTableFrom(stdin, path, d)
	} else {
		t, err = datasets.ReadTable(path, d)
	}
	if err != nil {
		return nil, fmt.Errorf("inputs %w", err)
	}
	text, err := t.Column("text")
	if err != nil {
		return nil, fmt.Errorf("inputs %w", err)
	}
	pair, err := t.Column("text_pair")
	if err != nil {
		pair = -1
	}
	cell := func(r datasets.TableRow, col int, name string) (*string, error) {
		v, kind := r.Cell(col)
		switch {
		case kind == "absent" && name == "text_pair":
			return nil, nil
		case kind == "absent":
			return nil, &datasets.RowError{File: path, Line: r.Line, Field: name, Err: errors.New("missing")}
		case kind != "":
			return nil, &datasets.RowError{File: path, Line: r.Line, Field: name, Err: fmt.Errorf("%s, not a text", kind)}
		}
		return &v, nil
	}
	out := make([]Input, len(t.Rows))
	for i, r := range t.Rows {
		s, err := cell(r, text, "text")
		if err != nil {
			return nil, fmt.Errorf("inputs %w", err)
		}
		out[i].Text = *s
		if pair >= 0 {
			if out[i].TextPair, err = cell(r, pair, "text_pair"); err != nil {
				return nil, fmt.Errorf("inputs %w", err)
			}
		}
	}
	return out, nil
}

// WriteOutputs writes one JSON line per output, atomically.
func WriteOutputs(path string, outs []Output) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		enc := json.NewEncoder(bw)
		for _, o := range outs {
			if err := enc.Encode(o); err != nil {
				return err
			}
		}
		return bw.Flush()
	})
}
