package explore

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/experiments/experimentstest"
	"github.com/beluga-nlp/beluga/inputcheck"
	"github.com/beluga-nlp/beluga/train"
)

// caseRunner writes what experimentstest.Runner writes plus a trainer's
// files: train/cases.jsonl (in the format with texts and predictions, or
// in the older one of verdicts alone when old says so for the run's
// method), train/curve.jsonl and train_spec.json.
type caseRunner struct {
	experimentstest.Runner
	oldFormat string // method whose runs write the old case format
}

func (c caseRunner) Run(ctx context.Context, r experiments.Run, dir string) error {
	if err := c.Runner.Run(ctx, r, dir); err != nil {
		return err
	}
	res := c.Runner.Result(r)
	if err := os.MkdirAll(filepath.Join(dir, "train"), 0o755); err != nil {
		return err
	}
	return writeTrainFiles(dir, r, res, r.Method == c.oldFormat, 30)
}

// writeTrainFiles writes a run's case file, curve, input checks and train
// spec from its result; case i of a functionality has id 2i+1, split "test" or "dev",
// and metadata {"template": "t0".."t2"}.
func writeTrainFiles(dir string, r experiments.Run, res *experiments.Result, old bool, curve int) error {
	f, err := os.Create(filepath.Join(dir, "train", CasesFile))
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	verdict := map[byte]string{experiments.Pass: "pass", experiments.Fail: "fail", experiments.Filtered: "filtered"}
	// Probabilities vary as a model's do (3 decimals, the page's rounding),
	// so that the page's compressed data are as large as a real store's.
	h := sha256.Sum256([]byte(r.ID()))
	rng := rand.New(rand.NewPCG(binary.LittleEndian.Uint64(h[:8]), 2))
	probs := func(pass bool) []float64 {
		p := math.Round((0.5+rng.Float64()/2)*1000) / 1000
		if !pass {
			p = 1 - p
		}
		return []float64{math.Round((1-p)*1000) / 1000, p}
	}
	for _, fn := range res.Functionalities {
		for i := 0; i < len(fn.Verdicts); i++ {
			v := verdict[fn.Verdicts[i]]
			line := map[string]any{"functionality": fn.Name, "case": 2*i + 1, "verdict": v}
			if !old {
				pred := "positive"
				if v == "fail" {
					pred = "negative"
				}
				inputs := []map[string]any{{"text": fmt.Sprintf("%s, case %d: a fine film", fn.Name, 2*i+1), "label": "positive", "pred": pred, "probs": probs(v != "fail")}}
				if fn.Type != "MFT" {
					inputs = append(inputs, map[string]any{"text": fmt.Sprintf("%s, case %d: a fine movie", fn.Name, 2*i+1), "pred": pred, "probs": probs(v != "fail")})
				}
				split := "test"
				if i%4 == 3 {
					split = "dev"
				}
				line["class"], line["type"], line["expect"] = fn.Class, fn.Type, "prediction is the label"
				line["inputs"], line["split"], line["meta"] = inputs, split, map[string]string{"template": fmt.Sprintf("t%d", i%3)}
			}
			if err := enc.Encode(line); err != nil {
				return err
			}
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if curve > 0 {
		cf, err := os.Create(filepath.Join(dir, "train", "curve.jsonl"))
		if err != nil {
			return err
		}
		for s := 0; s < curve; s++ {
			fmt.Fprintf(cf, "{\"step\":%d,\"kind\":\"iid\",\"loss\":%g,\"lr\":0.001}\n", s, 0.7/float64(1+s/5))
		}
		if err := cf.Close(); err != nil {
			return err
		}
	}
	// The input checks a trainer stores: coverage within the thresholds,
	// so no finding.
	checks := &inputcheck.Report{}
	checks.AddCoverage(inputcheck.Coverage{Data: "suite sentiment", Rows: 300, Words: 2400, Tokens: 2700, Unknown: 3,
		UnknownRate: 0.001, Truncated: 6, TruncatedRate: 0.02, MaxLength: 32, TokensPerWord: 1.125}, false)
	if err := writeInputChecks(dir, checks); err != nil {
		return err
	}
	ts := map[string]any{"task": "sentiment", "suite": filepath.Join(dir, "no-such-suite.jsonl"), "configuration": r.Configuration,
		"method": r.Method, "hyper": map[string]any{"epochs": 1, "batch_size": 32, "lr": 0.001}, "seed": r.Seed}
	b, err := json.Marshal(ts)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, experiments.TrainSpecFile), b, 0o644)
}

// fixture runs the synthetic sweep of testdata/sweep.yaml into a fresh
// store; runs of method lp write the old case format.
func fixture(t testing.TB) (*experiments.Store, []experiments.Run) {
	t.Helper()
	return fixtureIn(t, t.TempDir())
}

var shared struct {
	once  sync.Once
	dir   string
	store *experiments.Store
	runs  []experiments.Run
}

// sharedFixture is one fixture store for the tests that only read it
// (removed by TestMain).
func sharedFixture(t testing.TB) (*experiments.Store, []experiments.Run) {
	t.Helper()
	shared.once.Do(func() {
		dir, err := os.MkdirTemp("", "beluga-explore-")
		if err != nil {
			t.Fatal(err)
		}
		shared.dir = dir
		shared.store, shared.runs = fixtureIn(t, dir)
	})
	if shared.store == nil {
		t.Fatal("the shared fixture failed")
	}
	return shared.store, shared.runs
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
	}
	os.Exit(code)
}

func fixtureIn(t testing.TB, dir string) (*experiments.Store, []experiments.Run) {
	t.Helper()
	return sweepIn(t, sweepYAML(t, ""), dir, caseRunner{oldFormat: "lp"})
}

// sweepYAML is testdata/sweep.yaml with more YAML appended.
func sweepYAML(t testing.TB, more string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "sweep.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + more
}

// sweepIn expands a spec (folds from experimentstest.FoldLister) and
// executes its runs with runner into a store in dir.
func sweepIn(t testing.TB, yaml, dir string, runner experiments.Runner) (*experiments.Store, []experiments.Run) {
	t.Helper()
	spec, err := experiments.ParseSpec([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	runs, err := experiments.Expand(context.Background(), spec, &experiments.Inputs{Folds: experimentstest.FoldLister{}})
	if err != nil {
		t.Fatal(err)
	}
	store := &experiments.Store{Dir: dir}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	if sum, err := experiments.Execute(context.Background(), store, runs, runner, experiments.Options{Jobs: 2, Logger: quiet}); err != nil || sum.Err() != nil {
		t.Fatal(err, sum.Err())
	}
	return store, runs
}

// fixtureSource reads the shared fixture store for the page.
func fixtureSource(t testing.TB) *Source {
	t.Helper()
	store, runs := sharedFixture(t)
	src, err := Build(store, runs, Options{Report: fastReport, Title: "fixture"})
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// writeInputChecks stores r where a run's trainer stores its input checks.
func writeInputChecks(dir string, r *inputcheck.Report) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "train", train.InputChecksFile), b, 0o644)
}
