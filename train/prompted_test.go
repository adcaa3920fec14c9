package train

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/beluga-nlp/beluga/metrics"
	"github.com/beluga-nlp/beluga/prompt"
)

// promptedSpec is a prompted run of package train's fixtures asking the
// server at url.
func promptedSpec(config, url, mode string, k int) RunSpec {
	s := tinySpec(config)
	s.Prompt = &prompt.Spec{
		Templates:   []prompt.Template{{Name: "t", Input: "{text} =", Separator: "\n"}},
		Verbalizers: map[string]string{"negative": " bad", "positive": " good"},
		K:           k,
		Endpoint:    &prompt.Endpoint{URL: url, Model: "tiny", Mode: mode, Retries: 2, Backoff: time.Millisecond, Concurrency: 2},
	}
	return s
}

// chatServer answers a chat request by what its last line holds: "good"
// for an input with "good" or "great", "bad" for one with "bad", and a
// sentence naming no label for any other.
func chatServer(t *testing.T, sent *atomic.Int64) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent.Add(1)
		var req struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&req) != nil || len(req.Messages) != 1 {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		lines := strings.Split(req.Messages[0].Content, "\n")
		input := lines[len(lines)-1]
		answer := "I cannot tell."
		switch {
		case strings.Contains(input, "good") || strings.Contains(input, "great"):
			answer = "Good."
		case strings.Contains(input, "bad"):
			answer = " bad"
		}
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]string{"role": "assistant", "content": answer}}}})
	}))
}

// A generated answer that names no label is counted, shown in the
// prediction files and metrics.json, and fails its input: it never becomes
// a label, not even the first (the argmax of no probabilities), and a
// run's every answer is accounted for.
func TestUnparsedAnswerIsCountedNotMapped(t *testing.T) {
	var sent atomic.Int64
	srv := chatServer(t, &sent)
	defer srv.Close()
	dir := t.TempDir()
	res, err := Run(context.Background(), promptedSpec(ConfigPromptIID, srv.URL, prompt.ModeGenerate, 2), dir)
	if err != nil {
		t.Fatal(err)
	}
	// Count the inputs the server could not answer with a label.
	var unparsed, total int
	f, err := os.Open(filepath.Join(dir, "iid_predictions.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for i := 0; sc.Scan(); i++ {
		var line metrics.CaseInput
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		total++
		named := strings.Contains(line.Text, "good") || strings.Contains(line.Text, "great") || strings.Contains(line.Text, "bad")
		if !named {
			unparsed++
			if line.Pred != unparsedPred || line.PredClass == nil || *line.PredClass != -1 || res.IIDCorrect[i] {
				t.Errorf("unparsed answer to %q predicted %q (class %v), correct %v", line.Text, line.Pred, line.PredClass, res.IIDCorrect[i])
			}
		} else if line.Pred == unparsedPred {
			t.Errorf("answer to %q not parsed", line.Text)
		}
	}
	cf, err := os.Open(filepath.Join(dir, "cases.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer cf.Close()
	suiteUnparsed := 0
	for sc := bufio.NewScanner(cf); sc.Scan(); {
		var c metrics.CaseVerdict
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		for _, in := range c.Inputs {
			if in.PredClass != nil && *in.PredClass == -1 {
				suiteUnparsed++
				if c.Verdict == metrics.Pass {
					t.Errorf("functionality %q case %d passes with an unparsed answer to %q", c.Functionality, c.Case, in.Text)
				}
			}
		}
	}
	if unparsed == 0 || suiteUnparsed == 0 {
		t.Fatalf("fixture: %d of %d i.i.d. answers and %d suite answers unparsed: the test checks nothing", unparsed, total, suiteUnparsed)
	}
	if res.Unparsed["t"] != unparsed+suiteUnparsed {
		t.Errorf("unparsed count %v, want %d i.i.d. + %d suite", res.Unparsed, unparsed, suiteUnparsed)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "metrics.json"))
	if !strings.Contains(string(b), `"unparsed"`) {
		t.Errorf("metrics.json does not show the unparsed answers:\n%s", b)
	}
}

// A failing endpoint fails the run with the request named, after its
// retries, and writes no predictions: never a default label.
func TestFailingEndpointFailsTheRun(t *testing.T) {
	var sent atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent.Add(1)
		http.Error(w, "model overloaded", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	dir := t.TempDir()
	spec := promptedSpec(ConfigPrompt, srv.URL, prompt.ModeNext, 0)
	spec.Prompt.Endpoint.Concurrency = 1
	_, err := Run(context.Background(), spec, dir)
	if err == nil || !strings.Contains(err.Error(), "request 1 of") || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "model overloaded") {
		t.Fatalf("error %v, want request 1 named with the server's 503", err)
	}
	if n := sent.Load(); n != 3 {
		t.Errorf("%d requests sent, want 1 and 2 retries", n)
	}
	if _, err := os.Stat(filepath.Join(dir, "iid_predictions.txt")); err == nil {
		t.Error("a failed run wrote predictions")
	}
}

// A run of several templates predicts their mean label probabilities and
// scores each template alone beside it, by the same evaluation, into
// templates/NAME/ (in process: the tiny random GPT-2 of the decoder tests).
func TestPromptTemplatesScoredEachAndAggregated(t *testing.T) {
	spec := tinySpec(ConfigPromptIID)
	spec.Prompt = &prompt.Spec{
		Templates: []prompt.Template{
			{Name: "eq", Input: "{text} =", Separator: "\n"},
			{Name: "colon", Instruction: "Mood?", Input: "{text}:", Separator: "\n"},
		},
		Verbalizers: map[string]string{"negative": " bad", "positive": " good"},
		K:           2,
		Model:       "../models/testdata/decoders/gpt2",
	}
	dir := t.TempDir()
	res, err := Run(context.Background(), spec, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Templates) != 2 {
		t.Fatalf("templates %v, want eq and colon", res.Templates)
	}
	var mean float64
	for _, name := range []string{"eq", "colon"} {
		ts := res.Templates[name]
		if ts.IIDScore == nil || ts.SuiteScore == nil || ts.G == nil {
			t.Fatalf("template %s: %+v, want i.i.d., suite and G scores", name, ts)
		}
		for _, f := range []string{"iid_predictions.jsonl", "results.json", "cases.jsonl", "suite_predictions.txt"} {
			if _, err := os.Stat(filepath.Join(dir, "templates", name, f)); err != nil {
				t.Errorf("template %s: %v", name, err)
			}
		}
		mean += *ts.IIDScore / 2
	}
	// The aggregate is its own prediction (mean probabilities), not a mean
	// of scores; but it scores every i.i.d. example as each template does.
	if res.IIDScore == nil || len(res.IIDPredicted) != len(res.IIDGold) {
		t.Fatalf("aggregate %+v", res)
	}
	b, err := os.ReadFile(filepath.Join(dir, "metrics.json"))
	if err != nil || !strings.Contains(string(b), `"templates"`) {
		t.Errorf("metrics.json shows no per-template scores (%v):\n%s", err, b)
	}
	t.Logf("aggregate i.i.d. accuracy %.3f; per template %.3f (eq), %.3f (colon); mean %.3f", *res.IIDScore, *res.Templates["eq"].IIDScore, *res.Templates["colon"].IIDScore, mean)
}

// A prompted run's spec is checked as a trained one's: what it needs is
// named, and a setting it would silently not apply is refused.
func TestPromptedSpecValidated(t *testing.T) {
	for _, tc := range []struct {
		edit func(*RunSpec)
		want string
	}{
		{func(*RunSpec) {}, ""},
		{func(s *RunSpec) { s.Method = "l2" }, "configuration prompt-iid prompts a language model and trains nothing: method l2 does not apply"},
		{func(s *RunSpec) { s.Prompt = nil }, "configuration prompt-iid asks a language model: set prompt"},
		{func(s *RunSpec) { s.Prompt.K = 0 }, "configuration prompt-iid draws demonstrations: set prompt.k"},
		{func(s *RunSpec) { s.IIDTrain = "" }, "configuration prompt-iid draws demonstrations from the i.i.d. training data: set iid_train"},
		{func(s *RunSpec) { delete(s.Prompt.Verbalizers, "positive") }, `no verbalizer for label "positive"`},
	} {
		s := promptedSpec(ConfigPromptIID, "http://127.0.0.1:1", prompt.ModeNext, 2)
		tc.edit(&s)
		err := s.Validate()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
}
