package experiments

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/beluga-nlp/beluga/suites"
	"github.com/beluga-nlp/beluga/train"
)

// promptSpec is a SENT sweep of package train's fixtures with the prompted
// configurations (the tiny random GPT-2 fixture) beside a trained one.
func promptSpec(t *testing.T, configs, scores, grid string) *Spec {
	t.Helper()
	gpt2, err := filepath.Abs("../models/testdata/decoders/gpt2")
	if err != nil {
		t.Fatal(err)
	}
	return promptSpecAsking(t, configs, scores, grid, "model: "+gpt2)
}

// promptSpecAsking is promptSpec with the prompt's model or endpoint
// (YAML under prompt:).
func promptSpecAsking(t *testing.T, configs, scores, grid, asking string) *Spec {
	t.Helper()
	tiny, data := trainFixtures(t, map[string]string{"tiny_train.tsv": "train.tsv", "tiny_dev.tsv": "dev.tsv"})
	spec, err := ParseSpec([]byte(`
tasks: [{name: SENT, data: ` + data + `, suite: ` + filepath.Join(tiny, "tiny_suite.jsonl") + `}]
model: {name: wordvec, options: {glove: ` + filepath.Join(tiny, "tiny_glove.txt") + `, hidden: 8, max_length: 16}}
configurations: ` + configs + `
methods: [vanilla]
scores: ` + scores + `
seeds: [1, 2]
budget: {max_steps: 2}
prompt:
  ` + asking + `
  templates:
    - {name: review, input: "{text} =", separator: "\n"}
    - {name: plain, instruction: "Mood?", input: "{text}:", separator: "\n"}
  verbalizers: {negative: " bad", positive: " good"}
  k: 1
grid: ` + grid + `
`))
	if err != nil {
		t.Fatal(err)
	}
	spec.Out = t.TempDir()
	return spec
}

// runSweep expands and executes a spec into its store.
func runSweep(t *testing.T, spec *Spec) ([]Run, *Store) {
	t.Helper()
	runs, store, sum, err := executeSweep(t, spec)
	if err != nil || sum.Err() != nil {
		t.Fatalf("sweep: %+v, %v, %v", sum, err, sum.Err())
	}
	return runs, store
}

// executeSweep expands and executes a spec into its store.
func executeSweep(t *testing.T, spec *Spec) ([]Run, *Store, Summary, error) {
	t.Helper()
	if err := (&TrainRunner{}).Check(spec); err != nil {
		t.Fatal(err)
	}
	runs, err := Expand(context.Background(), spec, &Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	store := &Store{Dir: spec.OutDir()}
	sum, err := Execute(context.Background(), store, runs, &TrainRunner{Store: store}, Options{Jobs: 1, Logger: discardLogger()})
	return runs, store, sum, err
}

// No demonstration of a held-out functionality, class or test type ever
// enters a prompt: over every run of a class and a type hold-out sweep of
// the k-shot configurations (two seeds, two values of k), each
// demonstration trained.json lists is a T_train case (or i.i.d. row) of a
// functionality the fold keeps — and the runs do draw suite
// demonstrations, so the check is not vacuous.
func TestPromptDemonstrationsNeverHeldOut(t *testing.T) {
	spec := promptSpec(t, "[k-shot IID+T]", "[seen, class, type]", "{prompt.k: [2, 4]}")
	runs, store := runSweep(t, spec)
	suite, err := suites.Open(filepath.Join("..", "train", "testdata", "tiny_suite.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*suites.Functionality{}
	for _, f := range suite.Functionalities {
		byName[f.Name] = f
	}
	prompted, withSuiteDemos, folds := 0, 0, map[string]bool{}
	for _, r := range runs {
		if r.Method != train.MethodPrompt {
			continue
		}
		prompted++
		rec, err := store.Trained(r.ID())
		if err != nil || rec == nil {
			t.Fatalf("%s: trained.json: %v", r.Label(), err)
		}
		if len(rec.Demonstrations) != r.Train.Prompt.K {
			t.Errorf("%s: %d demonstrations, want k=%d", r.Label(), len(rec.Demonstrations), r.Train.Prompt.K)
		}
		for _, d := range rec.Demonstrations {
			if d.Source != "suite T_train" {
				continue
			}
			withSuiteDemos++
			f := byName[d.Functionality]
			if f == nil {
				t.Fatalf("%s: demonstration of unknown functionality %q", r.Label(), d.Functionality)
			}
			if r.Train.HeldOut == nil {
				continue
			}
			folds[r.Fold] = true
			var unit string
			switch r.Score {
			case ScoreClass:
				unit = f.Class
			case ScoreType:
				unit = string(f.Type)
			}
			if unit == r.Fold {
				t.Errorf("%s: demonstration %q of functionality %q (%s %s) is held out", r.Label(), d.Text, f.Name, r.Score, r.Fold)
			}
			var split suites.Split
			for _, c := range f.Cases {
				if c.ID == d.Case {
					split = c.Split
				}
			}
			if split != suites.SplitTrain {
				t.Errorf("%s: demonstration from case %d of %q in split %q, not T_train", r.Label(), d.Case, f.Name, split)
			}
		}
	}
	if prompted == 0 || withSuiteDemos == 0 || len(folds) < 2 {
		t.Fatalf("%d prompted runs, %d suite demonstrations, folds %v: the check saw nothing", prompted, withSuiteDemos, folds)
	}
}

// nextTokenServer answers /v1/completions as llama-server does with
// logprobs (logprobs.content[0].top_logprobs), " good" likelier after a
// prompt ending in a word with "g"; while broken it refuses every request
// with a 400. It records how often each request body was answered.
type nextTokenServer struct {
	mu       sync.Mutex
	broken   bool
	answered map[string]int
	received []string
}

func (s *nextTokenServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.received = append(s.received, string(b))
	if s.broken {
		http.Error(w, "the server was stopped", http.StatusBadRequest)
		return
	}
	var req struct{ Prompt string }
	if err := json.Unmarshal(b, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	good, bad := -1.0, -0.5
	if strings.Contains(req.Prompt[strings.LastIndex(req.Prompt, "\n")+1:], "g") {
		good, bad = -0.5, -1.0
	}
	s.answered[string(b)]++
	fmt.Fprintf(w, `{"choices":[{"text":" x","logprobs":{"content":[{"token":" x","logprob":-2,"top_logprobs":[{"token":" good","logprob":%g},{"token":" bad","logprob":%g}]}]}}]}`, good, bad)
}

// An interrupted prompted sweep resumes without asking again what was
// answered: every request and response is cached on disk by content, so
// the second execution sends only what the first did not get answered,
// and the sweep completes with every run done.
func TestInterruptedPromptedSweepResumes(t *testing.T) {
	srv := &nextTokenServer{answered: map[string]int{}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	spec := promptSpecAsking(t, "[0-shot, k-shot IID+T]", "[seen, class]", "{prompt.k: [2]}",
		"endpoint: {url: "+ts.URL+", model: tiny, mode: next-token, concurrency: 1}")
	var answeredFirst int
	// Break the server after its 25th answer: a run fails mid-way.
	breakAfter := 25
	origServe := http.Handler(srv)
	ts.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		srv.mu.Lock()
		n := 0
		for _, c := range srv.answered {
			n += c
		}
		srv.broken = n >= breakAfter
		srv.mu.Unlock()
		origServe.ServeHTTP(w, r)
	})
	_, _, sum, err := executeSweep(t, spec)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Err() == nil {
		t.Fatalf("the sweep finished before the server broke (%+v): break it earlier", sum)
	}
	srv.mu.Lock()
	first := map[string]int{}
	for b, c := range srv.answered {
		first[b] = c
		answeredFirst += c
	}
	sentFirst := len(srv.received)
	srv.broken, breakAfter = false, 1<<30
	srv.mu.Unlock()

	runs, store, sum, err := executeSweep(t, spec)
	if err != nil || sum.Err() != nil {
		t.Fatalf("resumed sweep: %+v, %v, %v", sum, err, sum.Err())
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	again := 0
	for _, b := range srv.received[sentFirst:] {
		if first[b] > 0 {
			again++
		}
	}
	if again > 0 {
		t.Errorf("the resumed sweep sent %d requests the first had answered", again)
	}
	if len(srv.received) == sentFirst {
		t.Error("the resumed sweep asked nothing: nothing was left to ask")
	}
	for b, c := range srv.answered {
		if c > 1 {
			t.Errorf("request answered %d times: %.80s", c, b)
		}
	}
	for _, r := range runs {
		if st := store.State(r.ID()); st != Done {
			t.Errorf("%s: %s after resuming", r.Label(), st)
		}
	}
	t.Logf("first execution: %d requests, %d answered; resumed: %d more requests, %d of them answered before", sentFirst, answeredFirst, len(srv.received)-sentFirst, again)
}

// A spec's prompted configurations are checked before anything runs: they
// need the prompt block, and only a configuration drawing i.i.d.
// demonstrations needs i.i.d. data (HateCheck has none: 0-shot and k-shot
// T run on it, k-shot IID does not).
func TestPromptedConfigurationsChecked(t *testing.T) {
	const task = "tasks: [{name: HATE, suite: hatecheck, labels: [non-hateful, hateful]}]\nmodel: {name: bert-tiny}\n"
	const prompt = "prompt: {model: m, templates: [{name: a, input: '{text}'}], verbalizers: {non-hateful: ' no', hateful: ' yes'}, k: 2}\n"
	for _, tc := range []struct{ spec, want string }{
		{task + "configurations: [T, 0-shot, k-shot T]\n" + prompt, ""},
		{task + "configurations: [0-shot]\n", "field configurations[0]: 0-shot asks a language model: set prompt"},
		{task + "configurations: [k-shot IID]\n" + prompt, "field configurations[0]: k-shot IID draws demonstrations from i.i.d. data, which task HATE does not have"},
	} {
		_, err := ParseSpec([]byte(tc.spec))
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s\nerror %v, want %q", tc.spec, err, tc.want)
		}
	}
}
