package suites

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/internal/shareddata"
)

func TestRoundTripTinySuite(t *testing.T) {
	s, err := Load("testdata/tiny.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(s.Functionalities), 6; got != want {
		t.Fatalf("%d functionalities, want %d", got, want)
	}
	if s.Task != "sentiment" || len(s.ModelLabels) != 2 {
		t.Errorf("header not read: task %q, model labels %v", s.Task, s.ModelLabels)
	}
	f := s.Functionality("not negative")
	if f.Train.Label != "not_0" || f.Expect.Kind != ExpectPredNot || *f.Expect.Value != 0 {
		t.Errorf("not negative: %+v / %+v", f.Train, f.Expect)
	}
	if c := s.Functionality("who did what").Cases[0]; len(c.Labels) != 2 || !c.Labels[1].IsAnswer || c.Labels[1].Answer != "Bob" || !c.Inputs[0].IsPair {
		t.Errorf("pair case decoded as %+v", c)
	}
	path := filepath.Join(t.TempDir(), "out.jsonl.gz")
	if err := Save(path, s); err != nil {
		t.Fatal(err)
	}
	back, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s, back) {
		t.Errorf("round trip changed the suite")
	}
}

func TestRoundTripReleaseSuites(t *testing.T) {
	for _, task := range []string{"sentiment", "qqp", "squad"} {
		t.Run(task, func(t *testing.T) {
			s, err := ImportCheckList(shareddata.Path(t, "data/checklist/"+task+"_suite.tar.gz"))
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := Write(&buf, s); err != nil {
				t.Fatal(err)
			}
			back, err := Read(bytes.NewReader(buf.Bytes()), task)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(s, back) {
				t.Fatal("round trip changed the suite")
			}
		})
	}
}

func TestReleaseSuiteStats(t *testing.T) {
	tests := []struct {
		task                     string
		funcs, classes, mft, inv int
		dir, cases, inputs       int
	}{
		{"sentiment", 38, 7, 20, 13, 5, 86420, 178578},
		{"qqp", 53, 9, 37, 9, 7, 63216, 207301},
		{"squad", 24, 9, 19, 5, 0, 13311, 71293},
	}
	for _, tc := range tests {
		t.Run(tc.task, func(t *testing.T) {
			s, err := ImportCheckList(shareddata.Path(t, "data/checklist/"+tc.task+"_suite.tar.gz"))
			if err != nil {
				t.Fatal(err)
			}
			st := Summarise(s)
			got := []int{len(st.Functionalities), st.Classes, st.Types[MFT], st.Types[INV], st.Types[DIR], st.Cases, st.Inputs}
			want := []int{tc.funcs, tc.classes, tc.mft, tc.inv, tc.dir, tc.cases, tc.inputs}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("functionalities, classes, MFT, INV, DIR, cases, inputs = %v, want %v", got, want)
			}
		})
	}
}

func TestReadErrorsNameLineAndField(t *testing.T) {
	ok := `{"class":"C","functionality":"f","type":"MFT","id":0,"inputs":["a"],"label":1}`
	tests := []struct {
		name, text string
		line       int
		field      string
		msg        string
	}{
		{"not JSON", ok + "\n{not json", 2, "", "not a JSON object"},
		{"no type", `{"class":"C","functionality":"f","id":0,"inputs":["a"]}`, 1, "type", "missing"},
		{"unknown type", `{"class":"C","functionality":"f","type":"XYZ","id":0,"inputs":["a"]}`, 1, "type", "unknown test type"},
		{"no inputs", `{"class":"C","functionality":"f","type":"MFT","id":0,"inputs":[]}`, 1, "inputs", "no inputs"},
		{"INV single input", `{"class":"C","functionality":"f","type":"INV","id":0,"inputs":["a"]}`, 1, "inputs", "single input"},
		{"DIR without expectation", `{"class":"C","functionality":"f","type":"DIR","id":0,"inputs":["a","b"]}`, 1, "expect", "needs an expectation"},
		{"duplicate id", ok + "\n" + ok, 2, "id", "duplicate case id 0"},
		{"no id", `{"class":"C","functionality":"f","type":"MFT","inputs":["a"]}`, 1, "id", "missing"},
		{"bad input", `{"class":"C","functionality":"f","type":"MFT","id":0,"inputs":[3]}`, 1, "inputs", "string or a pair"},
		{"unknown field", `{"class":"C","functionality":"f","type":"MFT","id":0,"inputs":["a"],"lable":1}`, 1, "lable", "unknown field"},
		{"wrong label count", `{"class":"C","functionality":"f","type":"MFT","id":0,"inputs":["a","b"],"labels":[1]}`, 1, "labels", "1 labels for 2 inputs"},
		{"class changes", ok + "\n" + strings.Replace(strings.Replace(ok, `"C"`, `"D"`, 1), `"id":0`, `"id":1`, 1), 2, "class", "has class"},
		{"unknown split", `{"class":"C","functionality":"f","type":"MFT","id":0,"inputs":["a"],"split":"dev"}`, 1, "split", "unknown split"},
		{"unknown expectation", `{"class":"C","functionality":"f","type":"MFT","id":0,"inputs":["a"],"expect":{"kind":"magic"}}`, 1, "expect", "unknown expectation kind"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tc.text), "bad.jsonl")
			var le *LineError
			if !errors.As(err, &le) {
				t.Fatalf("error %v is not a *LineError", err)
			}
			if le.File != "bad.jsonl" || le.Line != tc.line || le.Field != tc.field || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("got %q (line %d, field %q), want line %d field %q containing %q", err, le.Line, le.Field, tc.line, tc.field, tc.msg)
			}
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "missing.jsonl"))
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "missing.jsonl") {
		t.Errorf("error %v does not name the missing file", err)
	}
}

func FuzzRead(f *testing.F) {
	seed, err := os.ReadFile("testdata/tiny.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	for _, line := range strings.Split(string(seed), "\n") {
		f.Add([]byte(line))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Read(bytes.NewReader(data), "fuzz.jsonl")
		if err != nil {
			return
		}
		// Whatever reads must write and read back to the same suite.
		var buf bytes.Buffer
		if err := Write(&buf, s); err != nil {
			t.Fatalf("write of a suite that read: %v", err)
		}
		back, err := Read(&buf, "fuzz.jsonl")
		if err != nil {
			t.Fatalf("re-read: %v\n%s", err, buf.Bytes())
		}
		if !reflect.DeepEqual(s, back) {
			t.Fatalf("round trip changed the suite\n%s", buf.Bytes())
		}
	})
}
