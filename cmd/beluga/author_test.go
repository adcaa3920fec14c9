package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/suites"
)

func TestSuiteTemplateCommand(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "t.jsonl")
	code, msg := beluga(t, "suite", "template", "../../suites/template/testdata/issue14.yaml", "-o", out)
	if code != 0 || !strings.Contains(msg, "1 functionality, 24 test cases") {
		t.Fatalf("exit %d: %s", code, msg)
	}
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("class: C\nfunctionality: f\ntype: MFT\nlabel: 0\ntemplate: \"{nope}\"\n"), 0o644)
	code, msg = beluga(t, "suite", "template", bad, "-o", filepath.Join(dir, "bad.jsonl"))
	if code == 0 || !strings.Contains(msg, "unknown placeholder {nope}") {
		t.Errorf("exit %d: %s", code, msg)
	}
	if _, err := os.Stat(filepath.Join(dir, "bad.jsonl")); err == nil {
		t.Error("a failed template wrote its output")
	}
}

func TestSuitePerturbCommand(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "d.txt")
	os.WriteFile(data, []byte("I can't go.\nthe food was great\nno contraction here\n"), 0o644)
	code, msg := beluga(t, "suite", "perturb", data, "--perturbation", "contractions", "-o", filepath.Join(dir, "p.jsonl"))
	if code != 0 || !strings.Contains(msg, "applied=1 looked_at=3 skipped=2") {
		t.Errorf("exit %d: %s", code, msg)
	}
	code, msg = beluga(t, "suite", "perturb", data, "--perturbation", "change_number", "-o", filepath.Join(dir, "n.jsonl"))
	if code == 0 || !strings.Contains(msg, "no perturbation (change_number) applies to any of the 3 texts") {
		t.Errorf("exit %d: %s", code, msg)
	}
	if _, err := os.Stat(filepath.Join(dir, "n.jsonl")); err == nil {
		t.Error("a failed perturb wrote its output")
	}
	// A perturbation that applies to no text is skipped with a warning;
	// the others are written.
	both := filepath.Join(dir, "both.jsonl")
	code, msg = beluga(t, "suite", "perturb", data, "--perturbation", "change_number", "--perturbation", "contractions", "-o", both)
	if code != 0 || !strings.Contains(msg, "perturbation skipped: it applies to none of the texts") || !strings.Contains(msg, "perturbation=change_number") ||
		!strings.Contains(msg, "1 functionality, 1 test case") {
		t.Errorf("exit %d: %s", code, msg)
	}
	if s, err := suites.Load(both); err != nil || len(s.Functionalities) != 1 || s.Functionalities[0].Name != "contractions" {
		t.Errorf("suite %+v, %v", s, err)
	}
}

// An Azimuth suite goes through beluga eval with Azimuth's rule and prints
// the smart tags.
func TestAzimuthGenerateEvalSmartTags(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "u.txt")
	os.WriteFile(data, []byte("it was a lovely flight\nthe seat, sadly, broke.\n"), 0o644)
	suitePath := filepath.Join(dir, "az.jsonl")
	if code, msg := beluga(t, "suite", "generate", "azimuth", data, "-o", suitePath); code != 0 {
		t.Fatalf("exit %d: %s", code, msg)
	}
	// Positive everywhere, except that the "pls" prefix flips the class.
	var preds strings.Builder
	for _, text := range suiteTexts(t, suitePath) {
		if strings.HasPrefix(text, "pls ") {
			preds.WriteString("0.9 0.1\n")
		} else {
			preds.WriteString("0.2 0.8\n")
		}
	}
	predPath := filepath.Join(dir, "preds.txt")
	os.WriteFile(predPath, []byte(preds.String()), 0o644)
	code, msg := beluga(t, "eval", "--suite", suitePath, "--predictions", predPath, "--format", "softmax",
		"--output", filepath.Join(dir, "res.json"), "--smart-tags", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, msg)
	}
	if !strings.Contains(msg, "2 utterances: 2 failed_fuzzy_matching, 0 failed_punctuation") {
		t.Errorf("smart tags missing:\n%s", msg)
	}
}
