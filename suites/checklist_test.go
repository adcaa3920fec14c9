package suites

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/beluga-nlp/beluga/internal/shareddata"
)

// refCase is one line of the converted reference in ../shared/data/checklist/converted.
type refCase struct {
	Capability    string            `json:"capability"`
	Functionality string            `json:"functionality"`
	Type          string            `json:"type"`
	TestCase      int               `json:"test_case"`
	Inputs        []json.RawMessage `json:"inputs"`
	Label         json.RawMessage   `json:"label"`
	Meta          json.RawMessage   `json:"meta"`
	Direction     *string           `json:"direction"`
	Beluga        map[string]any    `json:"beluga"`
}

func readReference(t testing.TB, path string) []refCase {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []refCase
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<26)
	for sc.Scan() {
		var c refCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestImportMatchesConvertedReference checks every case of the three release
// suites against the independently converted reference.
func TestImportMatchesConvertedReference(t *testing.T) {
	for _, task := range []string{"sentiment", "qqp", "squad"} {
		t.Run(task, func(t *testing.T) {
			pkl := shareddata.Path(t, filepath.Join("data/checklist", task+"_suite.tar.gz"))
			ref := readReference(t, shareddata.Path(t, filepath.Join("data/checklist/converted", task+".jsonl.gz")))
			s, err := ImportCheckList(pkl)
			if err != nil {
				t.Fatal(err)
			}
			i := 0
			for _, f := range s.Functionalities {
				for _, c := range f.Cases {
					if i >= len(ref) {
						t.Fatalf("imported suite has more cases than the reference (%d)", len(ref))
					}
					if err := compareCase(f, c, ref[i]); err != nil {
						t.Fatalf("reference line %d (%s case %d): %v", i+1, f.Name, c.ID, err)
					}
					i++
				}
			}
			if i != len(ref) {
				t.Fatalf("imported %d cases, reference has %d", i, len(ref))
			}
		})
	}
}

func compareCase(f *Functionality, c *Case, r refCase) error {
	if f.Name != r.Functionality || f.Class != r.Capability || string(f.Type) != r.Type || c.ID != r.TestCase {
		return fmt.Errorf("identity %q/%q/%s/%d, want %q/%q/%s/%d", f.Name, f.Class, f.Type, c.ID, r.Functionality, r.Capability, r.Type, r.TestCase)
	}
	if len(c.Inputs) != len(r.Inputs) {
		return fmt.Errorf("%d inputs, want %d", len(c.Inputs), len(r.Inputs))
	}
	for j, raw := range r.Inputs {
		want, err := decodeInput(raw)
		if err != nil {
			return err
		}
		if c.Inputs[j] != want {
			return fmt.Errorf("input %d = %+v, want %+v", j, c.Inputs[j], want)
		}
	}
	var wantLabels []Label
	if len(r.Label) > 0 && string(r.Label) != "null" {
		var list []json.RawMessage
		if json.Unmarshal(r.Label, &list) == nil {
			for _, l := range list {
				x, err := decodeLabel(l)
				if err != nil {
					return err
				}
				wantLabels = append(wantLabels, x)
			}
		} else {
			x, err := decodeLabel(r.Label)
			if err != nil {
				return err
			}
			wantLabels = []Label{x}
		}
	}
	if !reflect.DeepEqual(c.Labels, wantLabels) {
		return fmt.Errorf("labels %+v, want %+v", c.Labels, wantLabels)
	}
	if len(r.Meta) > 0 && string(r.Meta) != "null" {
		var got, want any
		json.Unmarshal(c.Meta, &got)
		json.Unmarshal(r.Meta, &want)
		if !reflect.DeepEqual(got, want) {
			return fmt.Errorf("meta %s, want %s", c.Meta, r.Meta)
		}
	}
	wantDir := ""
	if r.Direction != nil {
		wantDir = *r.Direction
	}
	if f.Expect.Direction != wantDir {
		return fmt.Errorf("direction %q, want %q", f.Expect.Direction, wantDir)
	}
	wantTrain := Training{}
	for k, v := range r.Beluga {
		if v == nil {
			continue
		}
		s := fmt.Sprint(v)
		switch k {
		case "label":
			wantTrain.Label = s
		case "direction":
			wantTrain.Direction = s
		case "slice":
			wantTrain.Slice = s
		case "type":
			tt, err := ParseTestType(s)
			if err != nil {
				return err
			}
			wantTrain.Type = tt
		}
	}
	// The reference records BeLUGA's training CSV edits; which of them BeLUGA
	// also applied to the suite it scores with is not in it (see
	// Training.Scored), so that bit is compared apart.
	if want := f.Name == "Order does matter for asymmetric relations"; f.Train.Scored != want {
		return fmt.Errorf("training view scored %v, want %v", f.Train.Scored, want)
	}
	wantTrain.Scored = f.Train.Scored
	if f.Train != wantTrain {
		return fmt.Errorf("training view %+v, want %+v", f.Train, wantTrain)
	}
	return nil
}
