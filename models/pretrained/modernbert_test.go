package pretrained

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/models/checkpoint"
)

// modernDir copies the tiny ModernBERT fixture (models/testdata/modernbert)
// with its weights passed through edit.
func modernDir(t *testing.T, edit func(checkpoint.Tensors)) string {
	return fixtureDir(t, filepath.Join("..", "testdata", "modernbert", "tiny"), "model.safetensors", edit)
}

// TestModernBERTLoads: ModernBERT loads as from_pretrained does — a bare
// ModernBertModel state dict (no "model." prefix, no head) gains the prefix
// and initialises the head; another number of labels starts afresh only
// the classifier; a missing encoder tensor is refused by name.
func TestModernBERTLoads(t *testing.T) {
	bare := modernDir(t, func(ts checkpoint.Tensors) {
		for _, name := range ts.Names() {
			x := ts[name]
			delete(ts, name)
			if strings.HasPrefix(name, "model.") {
				ts[strings.TrimPrefix(name, "model.")] = x
			}
		}
	})
	m, err := Load(context.Background(), bare, Options{Labels: 3, Resolver: offline})
	if err != nil {
		t.Fatal(err)
	}
	head := []string{"head.dense.weight", "head.norm.weight", "classifier.weight", "classifier.bias"}
	if !reflect.DeepEqual(m.Report.Initialised, head) || len(m.Report.Ignored) != 0 {
		t.Errorf("bare encoder: report %+v, want the head %v initialised", m.Report, head)
	}
	m, err = Load(context.Background(), modernDir(t, func(checkpoint.Tensors) {}), Options{Labels: 3, Resolver: offline})
	if err != nil {
		t.Fatal(err)
	}
	labelled := []string{"classifier.weight", "classifier.bias"}
	if !reflect.DeepEqual(m.Report.Initialised, labelled) || !reflect.DeepEqual(m.Report.Ignored, labelled) {
		t.Errorf("3 labels from a 2-label checkpoint: report %+v, want %v initialised and ignored", m.Report, labelled)
	}
	const victim = "model.layers.1.attn.Wqkv.weight"
	broken := modernDir(t, func(ts checkpoint.Tensors) { delete(ts, victim) })
	if _, err := Load(context.Background(), broken, Options{Resolver: offline}); err == nil || !strings.Contains(err.Error(), victim) {
		t.Errorf("without %s: %v, want a refusal naming it", victim, err)
	}
}
