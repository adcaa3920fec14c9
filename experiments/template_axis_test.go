package experiments

import (
	"context"
	"strings"
	"testing"
)

// prompt.template is a grid axis of names: each prompted run is labelled
// by its template, and a run's label and replicate name it (they once
// formatted every swept setting as a number and panicked on a name, so a
// sweep over templates failed when it started its first run).
func TestTemplateAxisLabelsRuns(t *testing.T) {
	spec := promptSpec(t, "[0-shot]", "[seen]", "{prompt.template: [review, plain]}")
	runs, err := Expand(context.Background(), spec, &Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	got, prompted := map[string]int{}, 0
	for _, r := range runs {
		if r.Configuration != "0-shot" {
			continue
		}
		prompted++
		for _, tpl := range []string{"review", "plain"} {
			if strings.Contains(r.Label(), "prompt.template="+tpl) && strings.Contains(r.Axes(), "prompt.template="+tpl) {
				got[tpl]++
			}
		}
	}
	if got["review"] == 0 || got["review"] != got["plain"] || got["review"]+got["plain"] != prompted {
		t.Errorf("prompted runs by template %v of %d, want each labelled by one of the two", got, prompted)
	}
}
