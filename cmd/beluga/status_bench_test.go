package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/experiments/experimentstest"
	"github.com/beluga-nlp/beluga/internal/shareddata"
	"github.com/beluga-nlp/beluga/splits"
	"github.com/beluga-nlp/beluga/suites"
	"github.com/beluga-nlp/beluga/train"
)

// sentFullStore makes the store of specs/sent-full.yaml's 1,576 runs as a
// finished sweep leaves it, without training: per run its spec.json, a
// result.json of a real run's size (i.i.d. verdicts of SST-2's test half,
// a verdict per T_test case of the functionalities it is scored on), the
// files a run writes beside them (small: status reads their sizes only)
// and done recording them all. The checkpoint is a stand-in (hubStandIn).
func sentFullStore(b *testing.B) (spec, store string) {
	b.Helper()
	data := shareddata.Path(b, "data")
	b.Setenv("BELUGA_DATA", b.TempDir())
	hubStandIn(b, "google-bert/bert-base-uncased")
	spec, err := filepath.Abs("../../specs/sent-full.yaml")
	if err != nil {
		b.Fatal(err)
	}
	store = filepath.Join(b.TempDir(), "sent-full")
	in, err := newInputs(data, true)
	if err != nil {
		b.Fatal(err)
	}
	sw, err := experiments.OpenSweep(context.Background(), spec, store, in)
	if err != nil {
		b.Fatal(err)
	}
	if len(sw.Runs) != 1576 {
		b.Fatalf("%d runs, want 1576", len(sw.Runs))
	}
	suite, _, err := in.Suite(context.Background(), "sentiment")
	if err != nil {
		b.Fatal(err)
	}
	splits.Assign(suite, splits.BeLUGASeed)
	tests := map[string]experiments.FuncResult{}
	for _, f := range suite.Functionalities {
		var v strings.Builder
		for _, c := range f.Cases {
			if c.Split == suites.SplitTest {
				v.WriteByte("PF"[len(v.String())%2])
			}
		}
		tests[f.Name] = experiments.FuncResult{Name: f.Name, Class: f.Class, Type: string(f.Type), Verdicts: v.String()}
	}
	for _, r := range sw.Runs {
		dir := sw.Store.RunDir(r.ID())
		os.MkdirAll(filepath.Join(dir, "train", "model"), 0o755)
		write := func(name string, v any) {
			bs, err := json.Marshal(v)
			if err != nil {
				b.Fatal(err)
			}
			os.WriteFile(filepath.Join(dir, name), bs, 0o644)
		}
		write(experiments.SpecFile, r)
		write(experiments.TimingFile, experiments.Timing{Start: time.Unix(0, 0), End: time.Unix(60, 0), Seconds: 60})
		switch r.Score {
		case experiments.ScoreSearch:
			write(experiments.SearchFile, experiments.SearchRecord{})
		case experiments.ScoreTrial:
			write(experiments.TrialFile, train.Trial{Hyper: r.Train.Hyper})
		default:
			res := &experiments.Result{IIDCorrect: make([]bool, 436)}
			kind, held := experiments.FoldKindOf(r.Score)
			var fold *splits.Fold
			if held {
				for _, f := range splits.Folds(suite, kind, splits.DefaultFoldOptions) {
					if f.Name == r.Fold {
						fold = &f
					}
				}
			}
			for _, f := range suite.Functionalities {
				if fold == nil || fold.Scored == nil || contains(fold.Scored, f.Name) {
					res.Functionalities = append(res.Functionalities, tests[f.Name])
				}
			}
			if err := experiments.WriteResult(dir, res); err != nil {
				b.Fatal(err)
			}
			for _, f := range []string{"train_spec.json", "train/cases.jsonl", "train/curve.jsonl", "train/iid_predictions.jsonl",
				"train/iid_predictions.txt", "train/input_checks.json", "train/metrics.json", "train/results.json",
				"train/suite_predictions.txt", "train/model/config.json", "train/model/model.safetensors", "train/model/vocab.txt"} {
				os.WriteFile(filepath.Join(dir, f), []byte(f), 0o644)
			}
		}
		experimentstest.Reseal(b, dir)
	}
	if err := sw.Store.RecordSweep(sw.Runs, "bench.yaml"); err != nil {
		b.Fatal(err)
	}
	return spec, store
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// BenchmarkStatusSentFull measures beluga status on the 1,576 runs of
// specs/sent-full.yaml, through the spec (expanded, its inputs' digests
// warm) and through the store directory; every run is done, so status
// reads every done marker, stats every file and hashes every spec and
// result.
func BenchmarkStatusSentFull(b *testing.B) {
	spec, store := sentFullStore(b)
	for _, args := range [][]string{{"status", spec, "--store", store}, {"status", store}} {
		b.Run(strings.Join(args[:1], " ")+map[bool]string{true: " SPEC", false: " STORE"}[len(args) > 2], func(b *testing.B) {
			out := mustRun(b, args...) // warms the digests
			if !strings.Contains(out, "1576 runs: 1576 done") {
				b.Fatalf("status:\n%s", out)
			}
			for b.Loop() {
				mustRun(b, args...)
			}
		})
	}
}

// BenchmarkDryRunSentFull measures beluga run specs/sent-full.yaml
// --dry-run on a store of its 1,576 runs done, its inputs' digests warm.
func BenchmarkDryRunSentFull(b *testing.B) {
	spec, store := sentFullStore(b)
	mustRun(b, "run", spec, "--store", store, "--dry-run")
	for b.Loop() {
		mustRun(b, "run", spec, "--store", store, "--dry-run")
	}
}
