package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/internal/shareddata"
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

// TestQuickstartRefusesProvisionalRuns: quickstart executes its sweep as
// beluga run does (experiments.Sweep.Execute). Offline, with a hub
// checkpoint not in the hub cache, its runs' IDs are provisional: it says
// so once and writes no store. (Its own pipeline recorded the sweep and
// failed every run, into directories named by provisional IDs.)
func TestQuickstartRefusesProvisionalRuns(t *testing.T) {
	data := shareddata.Path(t, "data")
	t.Setenv("BELUGA_DATA", t.TempDir())
	t.Setenv("HF_HUB_CACHE", t.TempDir())
	t.Setenv("HF_HUB_OFFLINE", "1")
	store := filepath.Join(t.TempDir(), "qs")
	out, err := execute(t, "quickstart", "-o", store, "--from", data, "--checkpoint", "google/bert_uncased_L-2_H-128_A-2")
	if err == nil || !strings.Contains(err.Error(), "checkpoint not fetched") || !strings.Contains(err.Error(), "provisional") {
		t.Fatalf("quickstart offline with an absent checkpoint: %v\n%s", err, out)
	}
	if strings.Contains(out, "failed") {
		t.Errorf("runs were started:\n%s", out)
	}
	if _, err := os.Stat(store); !os.IsNotExist(err) {
		t.Errorf("the store was written: %v", err)
	}
}
