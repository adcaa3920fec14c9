package explore

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/experiments/experimentstest"
)

// caseRunner writes what experimentstest.Runner writes plus a trainer's
// files: train/cases.jsonl (in the format with texts and predictions, or
// in the older one of verdicts alone when old says so for the run's
// method), train/curve.jsonl and train_spec.json.
type caseRunner struct {
	experimentstest.Runner
	oldFormat string // method whose runs write the old case format
}

func (c caseRunner) Run(ctx context.Context, r experiments.RunSpec, dir string) error {
	if err := c.Runner.Run(ctx, r, dir); err != nil {
		return err
	}
	res := c.Runner.Result(r)
	if err := os.MkdirAll(filepath.Join(dir, "train"), 0o755); err != nil {
		return err
	}
	return writeTrainFiles(dir, r, res, r.Method == c.oldFormat, 30)
}

// writeTrainFiles writes a run's case file, curve and train spec from its
// result; case i of a functionality has id 2i+1, split "test" or "dev",
// and metadata {"template": "t0".."t2"}.
func writeTrainFiles(dir string, r experiments.RunSpec, res *experiments.Result, old bool, curve int) error {
	f, err := os.Create(filepath.Join(dir, "train", CasesFile))
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	verdict := map[byte]string{experiments.Pass: "pass", experiments.Fail: "fail", experiments.Filtered: "filtered"}
	for _, fn := range res.Functionalities {
		for i := 0; i < len(fn.Verdicts); i++ {
			v := verdict[fn.Verdicts[i]]
			line := map[string]any{"functionality": fn.Name, "case": 2*i + 1, "verdict": v}
			if !old {
				pred, probs := "positive", []float64{0.1, 0.9}
				if v == "fail" {
					pred, probs = "negative", []float64{0.8, 0.2}
				}
				inputs := []map[string]any{{"text": fmt.Sprintf("%s, case %d: a fine film", fn.Name, 2*i+1), "label": "positive", "pred": pred, "probs": probs}}
				if fn.Type != "MFT" {
					inputs = append(inputs, map[string]any{"text": fmt.Sprintf("%s, case %d: a fine movie", fn.Name, 2*i+1), "pred": pred, "probs": probs})
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
func fixture(t testing.TB) (*experiments.Store, []experiments.RunSpec) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "sweep.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	spec, err := experiments.ParseSpec(b)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := experiments.Expand(spec, experimentstest.FoldLister{})
	if err != nil {
		t.Fatal(err)
	}
	store := &experiments.Store{Dir: t.TempDir()}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	sum, err := experiments.Execute(context.Background(), store, runs, caseRunner{oldFormat: "lp"}, experiments.Options{Jobs: 2, Logger: quiet})
	if err != nil || sum.Err() != nil {
		t.Fatal(err, sum.Err())
	}
	return store, runs
}

// fixtureSource reads the fixture store for the page.
func fixtureSource(t testing.TB) *Source {
	t.Helper()
	store, runs := fixture(t)
	src, err := Build(store, runs, Options{Report: fastReport, Title: "fixture"})
	if err != nil {
		t.Fatal(err)
	}
	return src
}
