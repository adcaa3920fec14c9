package models

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/internal/shareddata"
	"github.com/beluga-nlp/beluga/models/checkpoint"
)

func tinyWordVec(t *testing.T) *WordVec {
	t.Helper()
	r := &rng{5}
	vec := &checkpoint.Tensor{Shape: []int{12, 4}, Data: make([]float32, 48)}
	for i := 8; i < 48; i++ { // [PAD] and [UNK] stay zero
		vec.Data[i] = float32(r.f())
	}
	m, err := NewWordVec(vec, 6, 2, 11)
	if err != nil {
		t.Fatal(err)
	}
	m.Dropout = 0
	// Head weights of order 1 (not the 0.02 of a fresh initialisation), so
	// that every gradient is large enough for the finite-difference check to
	// see an error in it.
	for _, p := range m.Params()[1:] {
		for i := range p.Value {
			p.Value[i] *= 50
		}
	}
	return m
}

func wordBatch() Batch {
	return NewBatch([]Encoding{{IDs: []int{2, 5, 7, 5}, TypeIDs: make([]int, 4)}, {IDs: []int{9, 3}, TypeIDs: make([]int, 2)}})
}

func TestWordVecGradient(t *testing.T) {
	checkDirectional(t, tinyWordVec(t), wordBatch(), 6, func([]float32) float64 { return 1e-3 })
}

func float64s(xs []float32) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}

func TestWordVecFrozenVectorsAndSave(t *testing.T) {
	m := tinyWordVec(t)
	m.SetFrozenEncoder(true)
	pass, _ := m.Forward(wordBatch(), true)
	pass.Backward([]float32{1, -1, 0.5, 0.5})
	for _, g := range m.Params()[0].Grad {
		if g != 0 {
			t.Fatal("frozen word vectors got a gradient")
		}
	}
	dir := t.TempDir()
	words := []string{"[PAD]", "[UNK]", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}
	if err := m.Save(dir, words); err != nil {
		t.Fatal(err)
	}
	back, _, _, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	x, _ := m.Infer(wordBatch())
	y, _ := back.Infer(wordBatch())
	for i := range x.Logits {
		if math.Float32bits(x.Logits[i]) != math.Float32bits(y.Logits[i]) {
			t.Fatalf("logits differ after save and load: %v vs %v", x.Logits, y.Logits)
		}
	}
}

func TestReadGloVe(t *testing.T) {
	words, vec, err := ReadGloVe(shareddata.Path(t, "data/glove/glove.6B.100d.top50k.txt.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if len(words) != 50002 || words[2] != "the" || vec.Shape[1] != 100 || len(vec.Data) != 50002*100 {
		t.Errorf("read %d words (third %q), shape %v", len(words), words[2], vec.Shape)
	}
}

func TestReadGloVeErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct{ text, want string }{
		{"a 1 2\nb 3\n", "line 2: 1 values, earlier lines have 2"},
		{"a 1 2\nb 3 x\n", "line 2 value 2: \"x\" is not a number"},
		{"a 1 2\na 3 4\n", "line 2: word \"a\" appears twice"},
		{"", "no vectors"},
	}
	for i, tc := range tests {
		p := filepath.Join(dir, strings.Repeat("g", i+1)+".txt")
		os.WriteFile(p, []byte(tc.text), 0o644)
		if _, _, err := ReadGloVe(p); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("error %v, want it to name %s and contain %q", err, p, tc.want)
		}
	}
}
