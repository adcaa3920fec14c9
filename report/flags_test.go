package report

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/experiments"
)

// tableOf is a one-task table of i.i.d. scores only, one row per value.
func tableOf(flagged map[int]bool, iid ...float64) *Table {
	nan := math.NaN()
	t := &Table{Tasks: []string{"X"}, Scores: []string{experiments.ScoreSeen}}
	for i, v := range iid {
		r := &Row{Configuration: "C", Method: string(rune('a' + i)),
			IID: map[string]float64{"X": v}, PIID: map[string]float64{"X": nan},
			G: map[string]map[string]float64{"X": {experiments.ScoreSeen: nan}}, PG: map[string]map[string]float64{"X": {experiments.ScoreSeen: nan}},
			Avg: nan, PAvg: nan}
		if flagged[i] {
			r.Flags = map[string]map[string][]RunFlag{"X": {experiments.ScoreIID: {{Run: "r", Label: "l", Flag: experiments.Flag{Kind: experiments.FlagConstantIID, Reason: "constant predictor: all one class"}}}}}
		}
		t.Rows = append(t.Rows, r)
	}
	return t
}

// The bold value is the largest as shown, unique, and never a flagged
// cell's.
func TestBoldSkipsTiesAndFlaggedCells(t *testing.T) {
	for _, tc := range []struct {
		name    string
		iid     []float64
		flagged map[int]bool
		bold    string // the bold cell, "" for none
	}{
		{"unique largest", []float64{70, 80, 75}, nil, "80.00"},
		{"tie", []float64{80, 80, 75}, nil, ""},
		{"tie as shown", []float64{80.001, 80.004, 75}, nil, ""},
		{"flagged largest", []float64{70, 90, 75}, map[int]bool{1: true}, "75.00"},
		{"flagged equal to the largest is no tie", []float64{80, 80, 75}, map[int]bool{0: true}, "80.00"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tableOf(tc.flagged, tc.iid...).WriteMarkdown(&b); err != nil {
				t.Fatal(err)
			}
			md := b.String()
			n := strings.Count(md, "**")
			switch {
			case tc.bold == "" && n != 0:
				t.Errorf("bold cells in\n%s", md)
			case tc.bold != "" && (n != 2 || !strings.Contains(md, "**"+tc.bold+"**")):
				t.Errorf("want only %s bold in\n%s", tc.bold, md)
			}
			if len(tc.flagged) > 0 && (!strings.Contains(md, "†") || !strings.Contains(md, "\n† a constant predictor")) {
				t.Errorf("no marker or footnote in\n%s", md)
			}
		})
	}
}
