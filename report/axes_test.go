package report

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// TestMethodSettingRows: runs that differ in a method setting are different
// models, so each value is a row of its own (labelled with it, named in the
// CSV), not a replicate averaged into IRM's one row; the IID baseline and
// vanilla, which do not read the setting, keep one row each.
func TestMethodSettingRows(t *testing.T) {
	store, runs := sweepOf(t, `name: irm-lambda
tasks:
  - {name: SENT, data: sst2, suite: sentiment}
model: {name: synthetic}
configurations: [IID+T]
methods: [vanilla, irm]
scores: [seen]
seeds: [1, 2]
grid: {irm_lambda: [10, 100]}
`)
	tab, err := FromStore(store, runs, Options{Trials: 10})
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, r := range tab.Rows {
		labels = append(labels, r.Label())
	}
	want := []string{"IID: Vanilla", "IID+T: Vanilla", "IID+T: IRM (irm_lambda=10)", "IID+T: IRM (irm_lambda=100)"}
	if !slices.Equal(labels, want) {
		t.Errorf("rows %q, want %q", labels, want)
	}
	if got := strings.Join(tab.Replicates, ","); got != "seed=1,seed=2" {
		t.Errorf("replicates %s, want the seeds only", got)
	}
	var csv bytes.Buffer
	if err := tab.WriteCSV(&csv); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"irm irm_lambda=10", "irm irm_lambda=100"} {
		if !strings.Contains(csv.String(), m) {
			t.Errorf("CSV names no row %q:\n%s", m, csv.String())
		}
	}
}
