package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/internal/shareddata"
)

// hateCheckOverall is the HateCheck paper's overall accuracy of each model
// on the 3,728 cases (Röttger et al., ACL 2021, Table 2), in percent.
var hateCheckOverall = map[string]string{
	"BERT_davidson2017_weighted": "63.2",
	"BERT_founta2018_weighted":   "60.2",
	"perspective":                "76.6",
	"siftninja":                  "33.2",
}

// TestHateCheckPublishedNumbers scores the HateCheck paper's own per-case
// predictions of its four models (two BERTs, Google Jigsaw's Perspective,
// Two Hat's SiftNinja) with one beluga eval each, on the suite as released,
// and checks every published number: the 29 functionalities' accuracies
// of each model (published_accuracy.csv, one decimal) and the four overall
// accuracies. It is the worked example of docs/testing-published.md.
func TestHateCheckPublishedNumbers(t *testing.T) {
	suite := shareddata.Path(t, "data/hatecheck/test_suite_cases.csv")
	preds := shareddata.Path(t, "data/hatecheck/published_predictions.csv")
	published := readPublishedAccuracy(t, shareddata.Path(t, "data/hatecheck/published_accuracy.csv"))
	if len(published) != 4 {
		t.Fatalf("published accuracies of %d models, want 4", len(published))
	}
	overallRE := regexp.MustCompile(`cases passed, all scored functionalities together: \d+ of 3728 \(([0-9.]+)%\)`)
	checked := 0
	for model, want := range published {
		out := filepath.Join(t.TempDir(), model+".json")
		code, msg := beluga(t, "eval", "--suite", suite, "--predictions", preds, "--predictions-column", model, "-o", out)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", model, code, msg)
		}
		var res struct {
			Functionalities []struct {
				Functionality string
				PassRate      *float64 `json:"pass_rate"`
			}
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &res); err != nil {
			t.Fatal(err)
		}
		if len(res.Functionalities) != len(want) {
			t.Errorf("%s: %d functionalities, published %d", model, len(res.Functionalities), len(want))
		}
		for _, f := range res.Functionalities {
			w, ok := want[f.Functionality]
			if !ok || f.PassRate == nil {
				t.Errorf("%s: functionality %s (pass rate %v) not published", model, f.Functionality, f.PassRate)
				continue
			}
			if got := fmt.Sprintf("%.1f", *f.PassRate); got != w {
				t.Errorf("%s %s: %s %%, published %s", model, f.Functionality, got, w)
			}
			checked++
		}
		m := overallRE.FindStringSubmatch(msg)
		if m == nil || m[1] != hateCheckOverall[model] {
			t.Errorf("%s: overall accuracy %v, published %s, in\n%s", model, m, hateCheckOverall[model], msg)
		}
	}
	if checked != 29*4 {
		t.Errorf("checked %d published accuracies, want 29 × 4", checked)
	}
}

// readPublishedAccuracy reads published_accuracy.csv: functionality, then
// one column per model; it returns model → functionality → accuracy as
// printed.
func readPublishedAccuracy(t *testing.T, path string) map[string]map[string]string {
	t.Helper()
	rows := readCSV(t, path)
	out := map[string]map[string]string{}
	for _, model := range rows[0][1:] {
		out[model] = map[string]string{}
	}
	for _, r := range rows[1:] {
		for i, model := range rows[0][1:] {
			out[model][r[0]] = strings.TrimSpace(r[i+1])
		}
	}
	return out
}
