package report

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/internal/csvcell"
)

// TestCSVWritersNeutraliseNames gives the two-seed table a task, a
// functionality and a class named as spreadsheet formulas and writes every
// CSV the table has: no cell of any of them starts a formula, numbers
// (negative gaps included) stay numbers, and the hostile names arrive
// behind a quote.
func TestCSVWritersNeutraliseNames(t *testing.T) {
	tab := seedsTable(t)
	const fn, class = `=cmd|' /C calc'!A0`, "@SUM(1+1)*cmd|' /C calc'!A0"
	fs := tab.Functionalities["SENT"]
	fs[0].Name, fs[0].Class = fn, class
	for _, tc := range []struct {
		name  string
		write func(*bytes.Buffer) error
		want  []string
	}{
		{"table", func(b *bytes.Buffer) error { return tab.WriteCSV(b) }, nil},
		{"pvalues", func(b *bytes.Buffer) error { return tab.WritePValuesCSV(b) }, nil},
		{"pass rates", func(b *bytes.Buffer) error { return tab.WritePassRatesCSV(b) }, []string{"'" + fn}},
		{"comparisons", func(b *bytes.Buffer) error { return tab.WriteComparisonsCSV(b) }, []string{"'" + fn, "'" + class}},
		{"spread", func(b *bytes.Buffer) error { return tab.WriteSpreadCSV(b, 0) }, []string{"'" + fn, "'" + class}},
		{"groups", func(b *bytes.Buffer) error { return tab.WriteGroupsCSV(b) }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.write(&b); err != nil {
				t.Fatal(err)
			}
			recs, err := csv.NewReader(&b).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for _, r := range recs {
				for _, c := range r {
					seen[c] = true
					if c != "" && strings.ContainsRune("=+-@\t\r", rune(c[0])) && !csvcell.IsNumber(c) {
						t.Errorf("cell %q starts a formula", c)
					}
				}
			}
			for _, w := range tc.want {
				if !seen[w] {
					t.Errorf("no cell %q", w)
				}
			}
		})
	}
}
