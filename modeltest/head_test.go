package modeltest

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/models/checkpoint"
)

// headFixture copies the shipped fp16 BERT classifier into a temporary
// directory with its safetensors header changed by edit.
func headFixture(t *testing.T, edit func(h map[string]json.RawMessage)) string {
	t.Helper()
	src := filepath.Join("..", "models", "testdata", "hfsaved", "bert-fp16")
	dir := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() == "model.safetensors" {
			n := binary.LittleEndian.Uint64(b)
			var h map[string]json.RawMessage
			if err := json.Unmarshal(b[8:8+n], &h); err != nil {
				t.Fatal(err)
			}
			edit(h)
			head, _ := json.Marshal(h)
			out := binary.LittleEndian.AppendUint64(nil, uint64(len(head)))
			b = append(append(out, head...), b[8+n:]...)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A checkpoint without a usable classifier head — none (an encoder or
// masked-LM checkpoint), one saved under another name, one stored as
// integers — is refused with the missing tensors named, and nothing is
// written; --allow-untrained-head tests it.
func TestRunRefusesAnUntrainedHead(t *testing.T) {
	rename := func(from, to string) func(h map[string]json.RawMessage) {
		return func(h map[string]json.RawMessage) { h[to] = h[from]; delete(h, from) }
	}
	tests := []struct {
		name string
		edit func(h map[string]json.RawMessage)
		want []string
	}{
		{"no head", nil, []string{"lacks classifier.weight, classifier.bias"}},
		{"misnamed head", rename("classifier.weight", "classifer.weight"), []string{"lacks classifier.weight", "does not use: classifer.weight"}},
		{"integer head", func(h map[string]json.RawMessage) {
			h["classifier.weight"] = json.RawMessage(strings.Replace(string(h["classifier.weight"]), `"F16"`, `"I16"`, 1))
		}, []string{"lacks classifier.weight"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var model string
			if tc.edit != nil {
				model = headFixture(t, tc.edit)
			} else {
				model = withoutHead(t)
			}
			out := filepath.Join(t.TempDir(), "out")
			opt := Options{Model: model, Suite: "../train/testdata/tiny_suite.jsonl", Out: out}
			_, err := Run(context.Background(), opt)
			if err == nil {
				t.Fatal("tested")
			}
			for _, w := range append(tc.want, "has no trained classifier", "--allow-untrained-head") {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("an output folder was written")
			}
			opt.AllowUntrainedHead = true
			if _, err := Run(context.Background(), opt); err != nil {
				t.Errorf("with AllowUntrainedHead: %v", err)
			}
		})
	}
	if _, err := Run(context.Background(), Options{Model: headFixture(t, func(map[string]json.RawMessage) {}),
		Suite: "../train/testdata/tiny_suite.jsonl", Out: filepath.Join(t.TempDir(), "out")}); err != nil {
		t.Errorf("the unedited fixture: %v", err)
	}
}

// withoutHead is the shipped fp16 BERT classifier with its classifier
// tensors left out, as an encoder-only checkpoint is saved.
func withoutHead(t *testing.T) string {
	t.Helper()
	dir := headFixture(t, func(map[string]json.RawMessage) {})
	path := filepath.Join(dir, "model.safetensors")
	st, err := checkpoint.ReadWeights(path)
	if err != nil {
		t.Fatal(err)
	}
	delete(st.Weights, "classifier.weight")
	delete(st.Weights, "classifier.bias")
	if err := checkpoint.WriteSafetensors(path, st.Weights); err != nil {
		t.Fatal(err)
	}
	return dir
}
