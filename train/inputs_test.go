package train

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/inputcheck"
	"github.com/beluga-nlp/beluga/suites"
)

// One file split in three: the run trains on the train part and scores
// the test part, and stores its input checks.
func TestSplitTrainFileTrainsOnItsPartsAndStoresChecks(t *testing.T) {
	spec := intentSpec(ConfigIID)
	seed := uint32(3)
	spec.IIDTrainFile.Split = &datasets.Split{Dev: 3, Test: 6, Seed: &seed}
	spec.IIDDevFile = nil
	out := t.TempDir()
	if _, err := Run(context.Background(), spec, out); err != nil {
		t.Fatal(err)
	}
	if got := fields(t, filepath.Join(out, "iid_predictions.txt")); len(got) != 6 {
		t.Errorf("%d i.i.d. predictions, want the 6 of the test part", len(got))
	}
	r := readInputChecks(t, out)
	if len(r.Coverage) != 3 || r.Coverage[0].Data != "i.i.d. train" || r.Coverage[0].Rows != 9 || r.Coverage[1].Rows != 6 {
		t.Errorf("stored coverage %+v: want i.i.d. train (9 rows), i.i.d. test (6) and the suite", r.Coverage)
	}
}

// readInputChecks reads the input checks a run stored in out.
func readInputChecks(t *testing.T, out string) inputcheck.Report {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, InputChecksFile))
	if err != nil {
		t.Fatal(err)
	}
	var r inputcheck.Report
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// A run that trains on part of its i.i.d. pool (train_size) measures the
// tokenizer's coverage, and warns of truncation, on the rows it trains
// on, not on the pool.
func TestCoverageCountsTheRowsTrainedOn(t *testing.T) {
	spec := intentSpec(ConfigIID)
	seed := uint32(3)
	spec.IIDTrainFile.Split = &datasets.Split{Dev: 3, Test: 6, Seed: &seed}
	spec.IIDDevFile = nil
	spec.TrainSize = 4
	out := t.TempDir()
	if _, err := Run(context.Background(), spec, out); err != nil {
		t.Fatal(err)
	}
	r := readInputChecks(t, out)
	if len(r.Coverage) == 0 || r.Coverage[0].Data != "i.i.d. train, trained on" || r.Coverage[0].Rows != 4 {
		t.Errorf("stored coverage %+v: want the 4 rows trained on, not the pool of 9", r.Coverage)
	}
}

func TestIIDFilesAreCheckedBeforeTraining(t *testing.T) {
	cases := []struct {
		name string
		edit func(*RunSpec)
		want string
	}{
		{"one file twice", func(s *RunSpec) { s.IIDDevFile.Path = "./testdata/../testdata/intent_train.csv" }, "are one file"},
		{"split beside a dev file", func(s *RunSpec) { s.IIDTrainFile.Split = &datasets.Split{Test: 0.2} }, "leave out iid_dev_file"},
		{"split dev file", func(s *RunSpec) { s.IIDDevFile.Split = &datasets.Split{Test: 0.2} }, "only the training file is split"},
		{"split without training rows", func(s *RunSpec) { s.IIDDevFile, s.IIDTrainFile.Split = nil, &datasets.Split{Dev: 0.5, Test: 0.5} }, "leave no training rows"},
		{"word vectors that miss the data", func(s *RunSpec) { s.Model.GloVe = "testdata/tiny_glove.txt" }, "word vectors cover"},
		{"missing word vectors", func(s *RunSpec) { s.Model.GloVe = "testdata/nope_glove.txt" }, "model.glove: testdata/nope_glove.txt: file not found"},
		{"missing vocabulary", func(s *RunSpec) { s.Model = ModelSpec{Kind: "bert-tiny", Vocab: "testdata/nope_vocab.txt"} }, "model.vocab: testdata/nope_vocab.txt: file not found"},
		{"missing tokenizer", func(s *RunSpec) { s.Model = ModelSpec{Kind: "bert-tiny", Tokenizer: "testdata/nope.json"} }, "model.tokenizer: testdata/nope.json: file not found"},
		{"a setting the kind does not read", func(s *RunSpec) { s.Model.Kind = "bert-tiny" }, `model.glove is for kind wordvec, not "bert-tiny"`},
		{"an unknown kind", func(s *RunSpec) { s.Model.Kind = "gpt" }, `unknown model kind "gpt" (want bert, bert-tiny, wordvec)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := intentSpec(ConfigIID)
			c.edit(&spec)
			out := filepath.Join(t.TempDir(), "run")
			_, err := Run(context.Background(), spec, out)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
			if _, err := os.Stat(filepath.Join(out, "model")); err == nil {
				t.Error("a refused run trained a model")
			}
		})
	}
}

// nliSpec reads the MNLI-like fixture (40 premises, three hypotheses
// each, two rows without a gold label) as a two-way task, split in one
// file; group names the split's group column ("" for none).
func nliSpec(group string) RunSpec {
	s := intentSpec(ConfigIID)
	s.Task, s.TaskDef = "nli", &Task{Name: "nli", Labels: []string{"entailment", "non-entailment"}, Pair: true, MFTLoss: "ce"}
	s.IIDDevFile = nil
	s.IIDTrainFile = &datasets.FileSpec{Path: "testdata/nli_mnli_like.jsonl", TextColumn: "sentence1", PairColumn: "sentence2",
		LabelColumn: "gold_label", Labels: datasets.Labels{Map: datasets.LabelMap{"neutral": datasets.Name("non-entailment"), "contradiction": datasets.Name("non-entailment")}},
		DropLabels: []string{"-"}, Split: &datasets.Split{Dev: 0.1, Test: 0.3, Group: group}}
	return s
}

// A premise with three hypotheses, split row by row, lands in train and
// test: the whole-pair check sees no shared text, the premise check warns
// with its count and lines. Split by premise, every premise is in one
// part, nothing is shared, and the parts' sizes and groups are reported.
func TestSplitByGroupKeepsPremisesInOnePart(t *testing.T) {
	r, err := CheckIIDFiles(nliSpec(""))
	if err != nil {
		t.Fatal(err)
	}
	var premise *inputcheck.Overlap
	for i, o := range r.Overlaps {
		if o.Side == "" {
			t.Errorf("whole pairs overlap: %s", o)
		}
		if o.Side == "sentence1" && o.A == "i.i.d. train" && o.B == "i.i.d. test" {
			premise = &r.Overlaps[i]
		}
	}
	if premise == nil || premise.Exact < 10 || premise.RowsB != 36 || len(premise.Examples) == 0 ||
		!strings.Contains(premise.String(), "share the sentence1 of") || !strings.Contains(premise.String(), "nli_mnli_like.jsonl line") {
		t.Fatalf("without group: premise overlap %+v, want a warning with counts and lines", premise)
	}
	warned := false
	for _, f := range r.Findings {
		warned = warned || f.Check == "overlap" && strings.Contains(f.Message, "sentence1")
	}
	if !warned {
		t.Errorf("findings %+v: no warning about shared premises", r.Findings)
	}

	spec := nliSpec("sentence1")
	r, err = CheckIIDFiles(spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range r.Overlaps {
		// Short hypotheses ("Nobody met the author.") recur under other
		// premises, as in MNLI; premises and whole pairs must not.
		if o.Side != "sentence2" {
			t.Errorf("split by premise: %s", o)
		}
	}
	task, _ := spec.task()
	iid, err := spec.readIID(task)
	if err != nil {
		t.Fatal(err)
	}
	partOf := map[string]int{}
	for k, xs := range [][]datasets.Example{iid.train, iid.dev, iid.test} {
		for _, x := range xs {
			if p, seen := partOf[x.Text]; seen && p != k {
				t.Fatalf("premise %q in parts %d and %d", x.Text, p, k)
			}
			partOf[x.Text] = k
		}
	}
	if len(r.Parts) != 3 {
		t.Fatalf("parts %+v", r.Parts)
	}
	rows, groups := 0, 0
	for i, p := range r.Parts {
		rows += p.Rows
		groups += p.Groups
		if p.GroupColumn != "sentence1" || p.Groups == 0 || len(p.Labels) != 2 || p.Labels[0].Rows+p.Labels[1].Rows != p.Rows {
			t.Errorf("part %d: %+v", i, p)
		}
		// Within a group's size (3 rows) of the declared size.
		if d := p.Rows - p.Declared; d < -3 || d > 3 {
			t.Errorf("%s: %d rows, %d declared", p.Name, p.Rows, p.Declared)
		}
	}
	if rows != 120 || groups != 40 {
		t.Errorf("parts hold %d rows in %d groups, want the 120 labelled rows of 40 premises", rows, groups)
	}
}

// A suite's splits are compared by a metadata column when asked: BeLUGA's
// per-functionality split leaves templates in train and test.
func TestSuiteGroupChecks(t *testing.T) {
	s := &suites.Suite{Name: "t", Labels: []string{"a", "b"}}
	f := &suites.Functionality{Name: "f", Class: "C", Type: suites.MFT, Expect: suites.DefaultExpectation(suites.MFT)}
	for i := range 40 {
		f.Cases = append(f.Cases, &suites.Case{ID: i, Inputs: []suites.Input{{Text: fmt.Sprint("text ", i)}},
			Labels: []suites.Label{suites.ClassLabel(i % 2)}, Meta: []byte(fmt.Sprintf(`{"templ_id": "%d"}`, i/4))})
	}
	s.Functionalities = []*suites.Functionality{f}
	r := SuiteGroupChecks(s, "templ_id")
	if len(r.Parts) != 3 || r.Parts[0].GroupColumn != "templ_id" || r.Parts[0].Rows+r.Parts[1].Rows+r.Parts[2].Rows != 40 {
		t.Fatalf("parts %+v", r.Parts)
	}
	found := false
	for _, fd := range r.Findings {
		found = found || fd.Check == "group_overlap" && strings.Contains(fd.Message, "suite train and suite test share values of templ_id")
	}
	if !found {
		t.Errorf("findings %+v: no templates shared by train and test", r.Findings)
	}
}
