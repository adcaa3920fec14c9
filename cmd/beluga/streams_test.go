package main

import (
	"bytes"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/internal/fixture"
)

// A command's log lines (slog, which the libraries log through) go to the
// error stream of the tree that ran it, not to the process's standard
// error: a program that builds the tree, or a test, captures them, apart
// from the command's output.
func TestLogsGoToTheCommandsErrorStream(t *testing.T) {
	dir := t.TempDir()
	in := writeInputs(t, filepath.Join(dir, "in.jsonl"), textInputs([]string{"a fine film"}))
	root := NewCmdBeluga()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs([]string{"predict", "--model", fixture.Dir(t), "--input", in, "-o", filepath.Join(dir, "out.jsonl")})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut.String(), "level=INFO msg=predicted inputs=1") {
		t.Errorf("error stream %q lacks predict's log line", errOut.String())
	}
	if strings.Contains(out.String(), "msg=") {
		t.Errorf("log lines in the output stream: %q", out.String())
	}
}

// beluga predict --input - reads the command's input stream (SetIn), and
// predicts what it reads as it predicts the same lines from a file.
func TestPredictInputFromTheCommandsInputStream(t *testing.T) {
	dir := t.TempDir()
	inputs := textInputs([]string{"a fine film", "the plot is thin", "I loved every minute"})
	in := writeInputs(t, filepath.Join(dir, "in.jsonl"), inputs)
	want := runPredict(t, nil, fixture.Dir(t), inputs)

	root := NewCmdBeluga()
	root.SetIn(bytes.NewReader(readFile(t, in)))
	out := filepath.Join(dir, "stdin.jsonl")
	if msg, err := executeOn(t, root, "predict", "--model", fixture.Dir(t), "--input", "-", "-o", out); err != nil {
		t.Fatalf("predict --input -: %v\n%s", err, msg)
	}
	if got := readPredictions(t, out); !reflect.DeepEqual(got, want) {
		t.Errorf("predictions of the input stream %v, of the file %v", got, want)
	}
}
