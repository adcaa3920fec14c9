// Package predict runs a classifier over many inputs: it tokenizes them,
// groups them into batches of similar length (so short inputs do not pay for
// long ones), and returns logits and probabilities in input order. It also
// reads and writes the JSON-lines files of beluga predict.
package predict

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/beluga-nlp/beluga/internal/atomicfile"
	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/backend"
)

// Input is one text or text pair.
type Input struct {
	Text     string  `json:"text"`
	TextPair *string `json:"text_pair,omitempty"`
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

// ReadInputs reads a JSON-lines file of {"text": …} or {"text": …,
// "text_pair": …} objects.
func ReadInputs(path string) ([]Input, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("inputs %s: %w", path, err)
	}
	defer f.Close()
	var out []Input
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for line := 1; sc.Scan(); line++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &raw); err != nil {
			return nil, fmt.Errorf("inputs %s line %d: not a JSON object: %v", path, line, err)
		}
		var in Input
		if err := json.Unmarshal(sc.Bytes(), &in); err != nil {
			return nil, fmt.Errorf("inputs %s line %d: %v", path, line, err)
		}
		if _, ok := raw["text"]; !ok {
			return nil, fmt.Errorf("inputs %s line %d field \"text\": missing", path, line)
		}
		out = append(out, in)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("inputs %s: %w", path, err)
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
