package train

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/suites"
)

// intentTask is a user-declared 3-label task: labels unknown to BeLUGA, a
// CSV with its own column names, macro-F1 beside accuracy.
func intentTask() *Task {
	return &Task{Name: "intent", Labels: []string{"greeting", "question", "complaint"}, MFTLoss: "ce", Metrics: []string{"macro_f1"}}
}

func intentSpec(config string) RunSpec {
	s := tinySpec(config)
	s.Task, s.TaskDef, s.Suite = "intent", intentTask(), "testdata/intent_suite.jsonl"
	s.IIDTrain, s.IIDDev = "", ""
	s.IIDTrainFile = &datasets.FileSpec{Path: "testdata/intent_train.csv", TextColumn: "utterance", LabelColumn: "intent"}
	s.IIDDevFile = &datasets.FileSpec{Path: "testdata/intent_dev.csv", TextColumn: "utterance", LabelColumn: "intent"}
	s.Model.GloVe = "testdata/intent_glove.txt"
	return s
}

// fields returns the number of space-separated fields of each line of a file.
func fields(t *testing.T, path string) []int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		out = append(out, len(strings.Fields(l)))
	}
	return out
}

func TestDeclaredThreeLabelTaskTrainsAndScores(t *testing.T) {
	dir := t.TempDir()
	iid := filepath.Join(dir, "iid")
	res, err := Run(context.Background(), intentSpec(ConfigIID), iid)
	if err != nil {
		t.Fatal(err)
	}
	// The whole dev file is the i.i.d. test set (no halve): 9 examples,
	// each a class and three probabilities.
	if got := fields(t, filepath.Join(iid, "iid_predictions.txt")); len(got) != 9 || got[0] != 4 {
		t.Errorf("i.i.d. predictions: %d lines of %v fields, want 9 of 4", len(got), got)
	}
	if _, ok := res.IIDMetrics["macro_f1"]; !ok || res.IIDScore == nil || res.G == nil {
		t.Errorf("result %+v: want accuracy, macro_f1 and G", res)
	}
	for _, config := range []string{ConfigIIDPlusT, ConfigIIDThenIT} {
		spec := intentSpec(config)
		if config == ConfigIIDThenIT {
			spec.FromIID = filepath.Join(iid, "model")
		}
		for _, method := range []string{"vanilla", "irm", "dro", "fish", "lp-ft"} {
			spec.Method = method
			out := filepath.Join(dir, config+"-"+method)
			res, err := Run(context.Background(), spec, out)
			if err != nil {
				t.Fatalf("%s %s: %v", config, method, err)
			}
			if res.SuiteScore == nil || res.G == nil {
				t.Errorf("%s %s: no suite score or G", config, method)
			}
			// pred_and_softmax over the suite's three labels, for the 2 test
			// cases of each MFT functionality and the originals and
			// perturbations of INV and DIR: 6 + 4 + 4 inputs.
			if got := fields(t, filepath.Join(out, "suite_predictions.txt")); len(got) != 14 || got[0] != 4 {
				t.Errorf("%s %s: suite predictions %d lines of %v fields, want 14 of 4", config, method, len(got), got)
			}
		}
	}
}

// The T configuration trains on the suite alone; without i.i.d. data the
// run has a suite score and no i.i.d. score or G.
func TestConfigurationTWithoutIIDData(t *testing.T) {
	spec := intentSpec(ConfigT)
	spec.IIDTrainFile, spec.IIDDevFile = nil, nil
	spec.IIDHyper = Hyper{}
	res, err := Run(context.Background(), spec, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if res.IIDScore != nil || res.G != nil || res.SuiteScore == nil {
		t.Errorf("T result: i.i.d. %v, G %v, suite %v; want only a suite score", res.IIDScore, res.G, res.SuiteScore)
	}
	// From the same start, T trains exactly the suite batches IID+T adds
	// the i.i.d. ones to.
	if res.Steps == 0 {
		t.Error("T trained nothing")
	}
}

func TestTaskSuiteMismatchIsLocated(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*RunSpec)
		want []string
	}{
		{"suite label the task lacks", func(s *RunSpec) {
			s.TaskDef.Labels = []string{"greeting", "question"}
			s.IIDTrainFile, s.IIDDevFile = nil, nil
		}, []string{"intent_suite.jsonl", `"complaints"`, "case 0", `"complaint"`}},
		{"task label the suite lacks", func(s *RunSpec) {
			s.TaskDef.Labels = []string{"greeting", "question", "complaint", "other"}
			s.IIDTrainFile, s.IIDDevFile = nil, nil
		}, []string{"intent", `"other"`, "cannot be scored"}},
		{"pairs against single texts", func(s *RunSpec) {
			s.TaskDef.Pair = true
			s.IIDTrainFile, s.IIDDevFile = nil, nil
		}, []string{`"greetings"`, "case 0", "text pairs"}},
		{"a built-in task's suite", func(s *RunSpec) {
			s.Suite = "testdata/tiny_suite.jsonl"
			s.IIDTrainFile, s.IIDDevFile = nil, nil
		}, []string{"tiny", "negative", "cannot be scored"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := intentSpec(ConfigT)
			def := *spec.TaskDef
			spec.TaskDef = &def
			tc.edit(&spec)
			out := filepath.Join(t.TempDir(), "run")
			_, err := Run(context.Background(), spec, out)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %s", err, w)
				}
			}
			// Refused before training: nothing was written.
			if entries, _ := os.ReadDir(out); len(entries) > 0 {
				t.Errorf("%d files written before the error", len(entries))
			}
		})
	}
}

func TestTaskValidate(t *testing.T) {
	for _, tc := range []struct {
		task Task
		want string
	}{
		{Task{Name: "x", Labels: []string{"a"}, MFTLoss: "ce"}, "at least two"},
		{Task{Name: "x", Labels: []string{"a", "a"}, MFTLoss: "ce"}, "twice"},
		{Task{Name: "x", Labels: []string{"a", "b"}, MFTLoss: "mse"}, "mft_loss"},
		{Task{Name: "x", Labels: []string{"a", "b"}, MFTLoss: "ce", Metrics: []string{"auc"}}, "unknown metric"},
		{Task{Name: "x", Labels: []string{"a", "b", "c"}, MFTLoss: "ce", Metrics: []string{"f1"}}, "macro_f1"},
		{Task{Name: "x", Labels: []string{"a", "b"}, MFTLoss: "ce", SuiteLabels: map[string][]float64{"n": {0.5, 0.6}}}, "sum to"},
		{Task{Name: "x", Labels: []string{"a", "b"}, MFTLoss: "ce", SuiteLabels: map[string][]float64{"n": {1}}}, "1 probabilities for 2 labels"},
	} {
		err := tc.task.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one mentioning %q", tc.task, err, tc.want)
		}
	}
}

// A classification task refuses a suite of the built-in span task, found
// by the task table (train.Builtins), not by its name.
func TestClassificationTaskRefusesSpanSuite(t *testing.T) {
	for _, b := range Builtins {
		s := &suites.Suite{Name: "s", Task: b.Train, Labels: []string{"negative", "positive"}}
		err := BuiltinTasks["sentiment"].CheckSuite(s)
		span := err != nil && strings.Contains(err.Error(), "reading-comprehension suite")
		if span != (b.Kind == KindSpan) {
			t.Errorf("suite of task %s (%s): %v", b.Train, b.Kind, err)
		}
	}
}

// A 2-class sentiment task is squashed onto CheckList's 3-class suite as
// CheckList squashes it whatever order the task lists its labels in: the
// suite's model_labels are matched by name, as beluga test matches a
// model's classes. A task listing [positive, negative] used to be read as
// a 2-way argmax that never predicts neutral.
func TestSquashMatchesModelLabelsByName(t *testing.T) {
	s := &suites.Suite{Name: "sentiment", Labels: []string{"negative", "neutral", "positive"}, ModelLabels: []string{"negative", "positive"}}
	for _, tc := range []struct {
		labels []string
		out    []float32 // the model's probabilities, in the task's order
		want   int       // the suite class
	}{
		{[]string{"negative", "positive"}, []float32{0.1, 0.9}, 2},
		{[]string{"negative", "positive"}, []float32{0.5, 0.5}, 1},
		{[]string{"positive", "negative"}, []float32{0.9, 0.1}, 2},
		{[]string{"positive", "negative"}, []float32{0.1, 0.9}, 0},
		{[]string{"positive", "negative"}, []float32{0.5, 0.5}, 1},
	} {
		task := &Task{Name: "SENT", Labels: tc.labels}
		read, err := suiteReading(task, s)
		if err != nil {
			t.Fatal(err)
		}
		if !read.Squash {
			t.Errorf("task labels %v: not squashed", tc.labels)
			continue
		}
		if got := read.Read(tc.out); got.Class != tc.want {
			t.Errorf("task labels %v, probabilities %v: suite class %d, want %d", tc.labels, tc.out, got.Class, tc.want)
		}
	}
	for _, labels := range [][]string{{"negative", "negative"}, {"negative", "other"}, {"negative", "neutral", "positive"}} {
		if _, ok := (&Task{Labels: labels}).squash(s); ok {
			t.Errorf("task labels %v squash", labels)
		}
	}
}
