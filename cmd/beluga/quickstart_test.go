package main

import (
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/specs"
)

// TestQuickstartSpecs: every --task's embedded spec parses and is one
// TrainRunner can train; READ's trains on SQuAD dev alone (its validation
// half) and SENT's is still specs/quickstart.yaml.
func TestQuickstartSpecs(t *testing.T) {
	for task, qs := range quickstartSpecs {
		raw, err := specs.FS.ReadFile(qs.file)
		if err != nil {
			t.Fatalf("%s: %v", task, err)
		}
		spec, err := experiments.ParseSpec(raw)
		if err != nil {
			t.Fatalf("%s: %v", task, err)
		}
		if err := (&experiments.TrainRunner{}).Check(spec); err != nil {
			t.Errorf("%s: %v", task, err)
		}
		if len(spec.Tasks) != 1 || spec.Tasks[0].Name != task {
			t.Errorf("%s runs tasks %+v", task, spec.Tasks)
		}
	}
	if qs := quickstartSpecs["SENT"]; qs.file != "quickstart.yaml" || qs.out != "quickstart-out" {
		t.Errorf("SENT quickstart %+v, want quickstart.yaml into quickstart-out", qs)
	}
	raw, _ := specs.FS.ReadFile(quickstartSpecs["READ"].file)
	spec, _ := experiments.ParseSpec(raw)
	if d := spec.Tasks[0].Data; d != "squad-dev" || spec.Budget.MaxIID == 0 {
		t.Errorf("READ quickstart trains on %q with max_iid %d, want a part of squad-dev", d, spec.Budget.MaxIID)
	}
}

func TestQuickstartUnknownTask(t *testing.T) {
	code, out := beluga(t, "quickstart", "--task", "PARA", "-o", t.TempDir())
	if code == 0 || !strings.Contains(out, "want SENT or READ") {
		t.Errorf("exit %d, output %q: want a refusal naming the tasks", code, out)
	}
}
