package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/internal/atomicfile"
	"github.com/beluga-nlp/beluga/report"
)

// The quickstart's store, pinned for the experiment-layer redesign (issue
// #23): Table 3 and Figure 1 built from it must stay byte for byte what the
// README shows.
//
// testdata/quickstart-store is the store "beluga quickstart --from
// ../shared/data --jobs 2" wrote on 2026-11-26 (main at 1d2bd0d), reduced to
// what reports read: sweep.json, and per run spec.json, result.json (i.i.d.
// correctness per example, per-case verdicts per functionality, sanity
// flags, constant-predictor scores) and done; no model, predictions, curve
// or timing. testdata/quickstart/table.md is its table.md (the README's
// table and footnotes); its heatmap.png is docs/quickstart-heatmap.png, which
// the test reads directly.
const (
	quickstartStore   = "testdata/quickstart-store"
	quickstartGoldens = "testdata/quickstart"
	quickstartHeatmap = "../../docs/quickstart-heatmap.png"
)

// copyStore copies the fixture store into a temporary directory, so that
// nothing a command writes beside its runs can touch testdata.
func copyStore(t *testing.T) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "quickstart-out")
	if err := os.CopyFS(dst, os.DirFS(quickstartStore)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// checkGolden compares got with the golden file (rewritten with -update).
func checkGolden(t *testing.T, golden string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/beluga -run Quickstart.*Pinned -update)", err)
	}
	if !bytes.Equal(got, want) {
		if d := lineDiff(string(want), string(got)); len(want)+len(got) < 1<<16 && !bytes.ContainsRune(want, 0) {
			t.Errorf("output differs from %s (-update only for an intended change):\n%s", golden, d)
		} else {
			t.Errorf("output differs from %s (%d bytes, want %d; -update only for an intended change)", golden, len(got), len(want))
		}
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// footnoteLabel is a footnote's run label after the held-out fold: the
// README shortens "(SENT IID-IID+T vanilla class -NER batch_size=32 …
// seed=42)" to "(SENT IID-IID+T vanilla class -NER …)".
var footnoteLabel = regexp.MustCompile(`(run [0-9a-f]{12} \([^)]*?) [a-z_]+=[^)]*\)`)

// TestQuickstartTablePinnedInREADME: the golden table is the README's (its
// footnotes' run labels shortened as the README shortens them), so that the
// pins below pin what users were shown.
func TestQuickstartTablePinnedInREADME(t *testing.T) {
	table := readFile(t, filepath.Join(quickstartGoldens, "table.md"))
	shown := footnoteLabel.ReplaceAll(table, []byte("$1 …)"))
	readme := readFile(t, "../../README.md")
	if !bytes.Contains(readme, shown) {
		t.Errorf("README.md does not show %s/table.md:\n%s", quickstartGoldens, shown)
	}
}

// TestQuickstartStorePinnedThroughCommands builds Table 3 (Markdown, CSV,
// LaTeX, p-values and pass rates) and Figure 1 from the fixture store as
// "beluga report quickstart-out" and "beluga plot heatmap quickstart-out"
// do, and compares them byte for byte with the goldens; the Markdown table
// is the README's and the figure docs/quickstart-heatmap.png.
func TestQuickstartStorePinnedThroughCommands(t *testing.T) {
	store := copyStore(t)
	out := t.TempDir()
	for _, c := range []struct{ format, file string }{
		{"md", "table.md"},
		{"csv", "table.csv"},
		{"latex", "table.tex"},
	} {
		path := filepath.Join(out, c.file)
		args := []string{"report", store, "--format", c.format, "-o", path}
		if c.format == "md" {
			// Once: the p-values and pass rates do not depend on the format.
			args = append(args, "--pass-rates", filepath.Join(out, "pass-rates.csv"))
		}
		if msg, err := execute(t, args...); err != nil {
			t.Fatalf("beluga %s: %v\n%s", strings.Join(args, " "), err, msg)
		}
		checkGolden(t, filepath.Join(quickstartGoldens, c.file), readFile(t, path))
	}
	checkGolden(t, filepath.Join(quickstartGoldens, "table-pvalues.csv"), readFile(t, filepath.Join(out, "table-pvalues.csv")))
	checkGolden(t, filepath.Join(quickstartGoldens, "pass-rates.csv"), readFile(t, filepath.Join(out, "pass-rates.csv")))

	png := filepath.Join(out, "heatmap.png")
	if msg, err := execute(t, "plot", "heatmap", store, "-o", png); err != nil {
		t.Fatalf("beluga plot heatmap: %v\n%s", err, msg)
	}
	if got, want := readFile(t, png), readFile(t, quickstartHeatmap); !bytes.Equal(got, want) {
		t.Errorf("beluga plot heatmap %s: %d bytes, not those of %s (%d bytes)", store, len(got), quickstartHeatmap, len(want))
	}
}

// TestQuickstartStorePinnedThroughQuickstartPath writes table.md and
// heatmap.png from the fixture store as "beluga quickstart" does once its
// runs are done: the sweep it recorded, report.FromStore with the default
// options, the heatmap with the default options.
func TestQuickstartStorePinnedThroughQuickstartPath(t *testing.T) {
	store := &experiments.Store{Dir: copyStore(t)}
	runs, err := store.Runs()
	if err != nil {
		t.Fatal(err)
	}
	tab, err := report.FromStore(store, runs, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	md, png := filepath.Join(out, "table.md"), filepath.Join(out, "heatmap.png")
	if err := atomicfile.Write(md, tab.WriteMarkdown); err != nil {
		t.Fatal(err)
	}
	if err := tab.WriteHeatmapFile(png, report.HeatmapOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, want := readFile(t, md), readFile(t, filepath.Join(quickstartGoldens, "table.md")); !bytes.Equal(got, want) {
		t.Errorf("quickstart's table.md differs from %s/table.md:\n%s", quickstartGoldens, lineDiff(string(want), string(got)))
	}
	if got, want := readFile(t, png), readFile(t, quickstartHeatmap); !bytes.Equal(got, want) {
		t.Errorf("quickstart's heatmap.png: %d bytes, not those of %s (%d bytes)", len(got), quickstartHeatmap, len(want))
	}
}
