package main

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckFlag(t *testing.T) {
	for _, tc := range []struct {
		value   string
		values  []string
		wantErr string
	}{
		{"csv", []string{"table", "csv", "json"}, ""},
		{"xml", []string{"table", "csv", "json"}, `unknown --format "xml" (want table, csv or json)`},
		{"xml", []string{"table", "json"}, `unknown --format "xml" (want table or json)`},
		{"xml", []string{"json"}, `unknown --format "xml" (want json)`},
		{"", []string{"json"}, `unknown --format "" (want json)`},
	} {
		err := checkFlag("format", tc.value, tc.values...)
		if got := errString(err); got != tc.wantErr {
			t.Errorf("checkFlag(%q, %q): %q, want %q", tc.value, tc.values, got, tc.wantErr)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestCommandsValidateBeforeReading: a command refuses a bad flag in
// validate, before its run reads anything — the input named here does not
// exist, and the error is the flag's, not the file's.
func TestCommandsValidateBeforeReading(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	out := filepath.Join(dir, "out")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"suite", "stats", missing, "--format", "xml"}, `unknown --format "xml" (want table, csv or json)`},
		{[]string{"suite", "suggest", "the {mask}", "--model", missing, "--format", "xml"}, `unknown --format "xml" (want table or json)`},
		{[]string{"suite", "inputs", missing, "--split", "tst", "-o", out}, `unknown --split "tst" (want train, validation or test)`},
		{[]string{"suite", "perturb", missing, "--perturbation", "typos", "--type", "XYZ", "-o", out}, "XYZ"},
		{[]string{"suite", "import", "hatecheck", missing, "--where", "nocolumn", "-o", out}, "--where"},
		{[]string{"eval", "--suite", missing, "--predictions", missing, "-o", out, "--labels", "q"}, `unknown --labels "q" (want beluga or checklist)`},
		{[]string{"eval", "--suite", missing, "--predictions", missing, "-o", out, "--predictions-column", "m", "--format", "softmax"}, "give one of them"},
		{[]string{"test", "--model", missing, "--suite", missing, "-o", out, "--seed", "3"}, "give --n too"},
		{[]string{"test", "compare", missing, missing, "--format", "pdf"}, `unknown --format "pdf" (want text, md or html)`},
		{[]string{"tokenizer", "train", "-o", out}, "no texts"},
	} {
		_, err := execute(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "no such file") {
			t.Errorf("beluga %s: %v, want an error saying %q", strings.Join(tc.args, " "), err, tc.want)
		}
	}
}
