package report

import (
	"bytes"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// templateSweep is a prompted sweep over two templates beside an IID
// baseline (synthetic results; the language model is the decoder tests'
// tiny GPT-2, which only the inputs' digests read).
func templateSweep(t *testing.T, grid string) *Table {
	t.Helper()
	gpt2, err := filepath.Abs("../models/testdata/decoders/gpt2")
	if err != nil {
		t.Fatal(err)
	}
	store, runs := sweepOf(t, `
name: report-templates
tasks:
  - {name: SENT, data: sst2, suite: sentiment}
model: {name: synthetic}
configurations: [IID, 0-shot, k-shot T]
methods: [vanilla]
scores: [seen, func]
grid: `+grid+`
prompt:
  model: `+gpt2+`
  templates:
    - {name: qa, input: "{text} ="}
    - {name: plain, input: "{text}:"}
  verbalizers: {negative: " bad", positive: " good"}
`)
	tab, err := FromStore(store, runs, Options{Trials: 10, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// A sweep over prompt.template gets a per-template table: per prompted row
// and Table 3 column, each template's value is the cell of that template's
// row, with the mean, minimum and maximum across templates.
func TestTemplateTable(t *testing.T) {
	tab := templateSweep(t, "{prompt.template: [qa, plain]}")
	templates, lines, err := tab.TemplateLines()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(templates, ",") != "qa,plain" {
		t.Fatalf("templates %q, want qa, plain", templates)
	}
	cols := tab.Columns()
	byLabel := map[string]*Row{}
	for _, r := range tab.Rows {
		byLabel[r.Label()] = r
	}
	seen := map[string]bool{}
	for _, l := range lines {
		seen[l.Configuration] = true
		var col Column
		for _, c := range cols {
			if c.Header == l.Column {
				col = c
			}
		}
		sum, n, lo, hi := 0.0, 0, math.Inf(1), math.Inf(-1)
		for _, tpl := range templates {
			r := byLabel[l.Configuration+": prompt ("+TemplateAxis+"="+tpl+")"]
			if r == nil {
				t.Fatalf("no row of %s with template %s", l.Configuration, tpl)
			}
			want := col.Value(r)
			if got := l.Cells[tpl].Value; !(got == want || math.IsNaN(got) && math.IsNaN(want)) {
				t.Errorf("%s %s %s: %v, Table 3 has %v", l.Label(), l.Column, tpl, got, want)
			}
			if !math.IsNaN(want) {
				sum, n, lo, hi = sum+want, n+1, min(lo, want), max(hi, want)
			}
		}
		if n == 0 || l.N != n || math.Abs(l.Mean-sum/float64(n)) > 1e-12 || l.Min != lo || l.Max != hi || l.Cells[l.Worst].Value != lo || l.Cells[l.Best].Value != hi {
			t.Errorf("%s %s: spread %v [%v, %v] over %d, want %v [%v, %v] over %d", l.Label(), l.Column, l.Mean, l.Min, l.Max, l.N, sum/float64(n), lo, hi, n)
		}
	}
	if !seen["0-shot"] || !seen["k-shot T"] || seen["IID"] || len(seen) != 2 {
		t.Errorf("lines of %v, want the two prompted configurations", seen)
	}
	var md, csv bytes.Buffer
	if err := tab.WriteTemplatesMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := tab.WriteTemplatesCSV(&csv); err != nil {
		t.Fatal(err)
	}
	golden(t, "templates.md", md.Bytes())
	golden(t, "templates.csv", csv.Bytes())
}

// A sweep with no prompt.template axis has no per-template table, and
// says what gives one.
func TestTemplateTableNeedsTheAxis(t *testing.T) {
	tab := templateSweep(t, "{prompt.k: [1]}")
	if _, _, err := tab.TemplateLines(); err == nil || !strings.Contains(err.Error(), "grid key "+TemplateAxis) {
		t.Errorf("err %v, want one naming the grid key %s", err, TemplateAxis)
	}
	var b bytes.Buffer
	if err := tab.WriteTemplatesMarkdown(&b); err == nil || b.Len() > 0 {
		t.Errorf("wrote %q, err %v; want nothing and an error", b.String(), err)
	}
}
