package modeltest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/metrics"
	"github.com/beluga-nlp/beluga/report"
	"github.com/beluga-nlp/beluga/suites"
)

func TestMatchLabels(t *testing.T) {
	sentiment := &suites.Suite{Labels: []string{"negative", "neutral", "positive"}, ModelLabels: []string{"negative", "positive"}}
	hate := &suites.Suite{Labels: []string{"non-hateful", "hateful"}}
	tests := []struct {
		name       string
		model      []string
		s          *suites.Suite
		labelMap   map[string]string
		wantLabels []string
		wantMatch  []int
		wantErr    []string
	}{
		{"model_labels, in the other order, other case", []string{"POSITIVE", "NEGATIVE"}, sentiment, nil,
			[]string{"negative", "positive"}, []int{1, 0}, nil},
		{"a 3-way model on the 3 labels", []string{"Negative", "Neutral", "Positive"}, sentiment, nil,
			[]string{"negative", "neutral", "positive"}, []int{0, 1, 2}, nil},
		{"HF's LABEL_i mapped", []string{"LABEL_0", "LABEL_1"}, hate, map[string]string{"label_0": "non-hateful", "LABEL_1": "HATEFUL"},
			[]string{"non-hateful", "hateful"}, []int{0, 1}, nil},
		{"names that match nothing", []string{"LABEL_0", "LABEL_1"}, hate, nil, nil, nil,
			[]string{`the model's labels ["LABEL_0", "LABEL_1"]`, `["non-hateful", "hateful"]`, `"LABEL_0" matches none`, "--label-map"}},
		{"two classes on one", []string{"hate", "not"}, hate, map[string]string{"hate": "hateful", "not": "Hateful"}, nil, nil,
			[]string{`"hate" and "not" both match "hateful"`}},
		{"another number of classes", []string{"a", "b", "c", "d"}, sentiment, nil, nil, nil,
			[]string{`the model has 4 classes ["a", "b", "c", "d"]`, `["negative", "positive"] (model_labels) or ["negative", "neutral", "positive"]`}},
		{"a map key that is no model label", []string{"POSITIVE", "NEGATIVE"}, sentiment, map[string]string{"pos": "positive"}, nil, nil,
			[]string{`--label-map names "pos", which is not one of the model's labels`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			labels, match, err := matchLabels(tc.model, tc.s, datasets.LabelMapOf(tc.labelMap))
			if tc.wantErr != nil {
				for _, w := range tc.wantErr {
					if err == nil || !strings.Contains(err.Error(), w) {
						t.Errorf("error %v, want it to contain %q", err, w)
					}
				}
				return
			}
			if err != nil || !slices.Equal(labels, tc.wantLabels) || !slices.Equal(match, tc.wantMatch) {
				t.Errorf("got %v %v %v, want %v %v", labels, match, err, tc.wantLabels, tc.wantMatch)
			}
		})
	}
}

func TestParseLabelMap(t *testing.T) {
	m, err := ParseLabelMap([]string{"LABEL_0=non-hateful", " LABEL_1 = hateful "})
	if err != nil || m["LABEL_0"].Name != "non-hateful" || m["LABEL_1"].Name != "hateful" {
		t.Errorf("%v %v", m, err)
	}
	for _, bad := range [][]string{{"LABEL_0"}, {"=x"}, {"a=1", "a=2"}} {
		if _, err := ParseLabelMap(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestRunWritesWhatARunWrites: the results, the cases with their texts and
// predictions, the predictions, the match, the table and a page that
// embeds the view and every functionality's cases.
func TestRunWritesWhatARunWrites(t *testing.T) {
	out := t.TempDir()
	rep, err := Run(context.Background(), Options{Model: "../models/testdata/hfsaved/classifier",
		Suite: "../train/testdata/tiny_suite.jsonl", Out: out})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{ResultsFile, CasesFile, PredictionsFile, InfoFile, TableFile, PageFile} {
		if !slices.Contains(rep.Files, filepath.Join(out, name)) {
			t.Errorf("%s not written", name)
		}
	}
	cases, _ := os.ReadFile(filepath.Join(out, CasesFile))
	if !strings.Contains(string(cases), `"text":"not bad"`) || !strings.Contains(string(cases), `"pred":"negative"`) {
		t.Errorf("the case file lacks texts or predictions:\n%.400s", cases)
	}
	page, _ := os.ReadFile(filepath.Join(out, PageFile))
	for _, want := range []string{`id="beluga-view"`, `id="beluga-cases-0"`, `id="beluga-cases-4"`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	table, _ := os.ReadFile(filepath.Join(out, TableFile))
	if !strings.Contains(string(table), "POSITIVE → positive, NEGATIVE → negative") {
		t.Errorf("table:\n%s", table)
	}
}

// The sanity checks a training run gets (metrics.Sanity) flag a tested
// model that predicts one class for every suite input, and test.json
// records the flag; a model whose predictions vary is not flagged.
func TestRunFlagsAConstantPredictor(t *testing.T) {
	for _, tc := range []struct {
		model string
		want  []string
	}{
		{"../models/testdata/hfsaved/bert-fp16", []string{metrics.FlagConstantSuite + ": constant predictor: 22 of 22 suite test inputs (100.0%) predicted neutral, expected for 0.0%"}},
		{"../models/testdata/hfsaved/classifier", nil},
	} {
		t.Run(filepath.Base(tc.model), func(t *testing.T) {
			out := t.TempDir()
			rep, err := Run(context.Background(), Options{Model: tc.model, Suite: "../train/testdata/tiny_suite.jsonl", Out: out})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range rep.Flags {
				got = append(got, f.Kind+": "+f.Reason)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("flags %q, want %q", got, tc.want)
			}
			back, err := report.ReadTestDir(out)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(back.Info.Flags, tc.want) {
				t.Errorf("test.json flags %q, want %q", back.Info.Flags, tc.want)
			}
		})
	}
}

// beluga test scores what beluga eval --predictions-format predict_jsonl
// scores from its predictions.jsonl, when the model's classes are in the
// suite's order: the same results and case verdicts, byte for byte (a
// two-way model squashed onto a 3-way suite; two labels through
// --label-map).
func TestRunScoresAsEvalReadsItsPredictions(t *testing.T) {
	model := "../models/testdata/hfsaved/bert-fp16" // NEGATIVE, POSITIVE
	for _, tc := range []struct {
		suite    string
		labelMap map[string]string
	}{
		{"../train/testdata/tiny_suite.jsonl", nil},
		{"../train/testdata/tiny_qqp.jsonl", map[string]string{"NEGATIVE": "not duplicate", "POSITIVE": "duplicate"}},
	} {
		t.Run(filepath.Base(tc.suite), func(t *testing.T) {
			out := t.TempDir()
			opt := metrics.ScoreOptions{Split: suites.SplitTest}
			rep, err := Run(context.Background(), Options{Model: model, Suite: tc.suite, Out: out, Score: opt, LabelMap: datasets.LabelMapOf(tc.labelMap)})
			if err != nil {
				t.Fatal(err)
			}
			s, err := suites.Open(tc.suite)
			if err != nil {
				t.Fatal(err)
			}
			preds, err := metrics.ReadPredictions(filepath.Join(out, PredictionsFile), metrics.PredictJSONL, metrics.ScoredInputs(s, opt.Split), false)
			if err != nil {
				t.Fatal(err)
			}
			eval, err := metrics.Score(s, preds, opt)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			for _, f := range []struct {
				name  string
				write func(*metrics.Result, string) error
			}{{ResultsFile, (*metrics.Result).WriteJSON}, {CasesFile, (*metrics.Result).WriteCases}} {
				a, b := filepath.Join(dir, "test-"+f.name), filepath.Join(dir, "eval-"+f.name)
				if err := f.write(rep.Result, a); err != nil {
					t.Fatal(err)
				}
				if err := f.write(eval, b); err != nil {
					t.Fatal(err)
				}
				x, _ := os.ReadFile(a)
				y, _ := os.ReadFile(b)
				if len(x) == 0 || !bytes.Equal(x, y) {
					t.Errorf("%s: beluga test's and eval's differ:\n%s\n%s", f.name, x, y)
				}
			}
		})
	}
}
