package experiments

import (
	"os"
	"path/filepath"
	"testing"
)

// --explain names each value's origin: the file, the spec's default, the
// profile, the grid (by the key that set it), or the budget or model
// option that sets a run's setting.
func TestExplainNamesOrigins(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "s.jsonl"), []byte(`{"name": "s", "task": "t", "labels": ["a", "b"]}`+"\n"), 0o644)
	spec := filepath.Join(dir, "spec.yaml")
	os.WriteFile(spec, []byte(`name: x
tasks:
  - name: T
    labels: [a, b]
    suite: s.jsonl
model: {kind: bert-tiny, options: {max_length: 32}}
configurations: [T]
budget: {epochs: 2, max_cases: 5}
grid: {lr: [0.01, 0.02]}
`), 0o644)
	got, err := ExplainFile(spec)
	if err != nil {
		t.Fatal(err)
	}
	origin := map[string]string{}
	value := map[string]string{}
	for _, e := range got {
		origin[e.Key], value[e.Key] = e.Origin, e.Value
	}
	for key, want := range map[string][2]string{
		"name":                             {"x", "file"},
		"seeds":                            {"[42]", "default"},
		"scores":                           {`["seen","func","class","type"]`, "default"},
		"out":                              {"runs/x", "default"},
		"profile":                          {"beluga", "default"},
		"budget.fold_cap":                  {"before_hold_out", "default"},
		"model.options.max_length":         {"32", "file"},
		"runs[T IID].hyper.lr":             {"[0.01,0.02]", "grid (lr)"},
		"runs[T IID].hyper.epochs":         {"2", "budget.epochs"},
		"runs[T IID].suite_limit":          {"5", "budget.max_cases"},
		"runs[T IID].max_length":           {"32", "model.options.max_length"},
		"runs[T IID].iid_hyper.batch_size": {"16", "profile beluga"},
		"runs[T IID].probe_hyper.lr":       {"0.001", "profile beluga"},
	} {
		if value[key] != want[0] || origin[key] != want[1] {
			t.Errorf("%s: %q from %q, want %q from %q", key, value[key], origin[key], want[0], want[1])
		}
	}
	if _, ok := origin["runs[T IID].iid_limit"]; ok {
		t.Errorf("a setting the spec leaves at none is listed: %v", got)
	}
}
