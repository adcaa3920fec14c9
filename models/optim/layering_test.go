package optim_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestModelsDoNotImportTrain: no package under models (the conformance
// suite included) depends on train — the optimiser lives here, below it,
// so the arrows run from train down to the models only.
func TestModelsDoNotImportTrain(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/beluga-nlp/beluga/models/...").Output()
	if err != nil {
		t.Skipf("go list: %v", err) // no go command beside the test binary
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "github.com/beluga-nlp/beluga/train" || strings.HasPrefix(pkg, "github.com/beluga-nlp/beluga/train/") {
			t.Errorf("a package under models depends on %s", pkg)
		}
	}
}
