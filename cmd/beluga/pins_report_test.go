package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/internal/atomicfile"
	"github.com/beluga-nlp/beluga/internal/shareddata"
	"github.com/beluga-nlp/beluga/report"
)

// Stores of the shipped specs, pinned for the experiment-layer redesign
// (issue #23): Table 3 and Figure 1 built from them must stay byte for byte
// what the README shows. readmePins are the stores whose table the README
// shows verbatim and which "beluga report DIR" reads as their spec does;
// hatecheck-identout's README table is edited (short headers, no bold) and
// a store directory lists its identities in run-ID order, not the spec's,
// so it is read through its spec only (specPins).
//
// Each fixture store is reduced to what reports read: sweep.json, and per
// run spec.json, result.json (i.i.d. correctness per example, per-case
// verdicts per functionality, sanity flags, constant-predictor scores) and
// done; no model, predictions, curve or timing. Its goldens directory holds
// the table.md the quickstart wrote (the README's table) and the other
// formats; its heatmap is the docs figure, read directly.
//
//   - testdata/quickstart-store: "beluga quickstart --from ../shared/data
//     --jobs 2" on 2026-11-26, main at 1d2bd0d; its heatmap.png was
//     docs/quickstart-heatmap.png byte for byte.
//   - testdata/quickstart-read-store: "beluga quickstart --task READ --from
//     ../shared/data --jobs 2" built at cbc53ec (0b6cb3a^): since 0b6cb3a
//     train refuses squad-dev as both training and dev file, so the READ
//     quickstart does not train on main; the runs' IDs are main's (the
//     dry-run pin of quickstart-read), sweep.json is main's RecordSweep of
//     them, and main's report and heatmap give the README's table and
//     docs/quickstart-read-heatmap.png from it byte for byte.
//   - testdata/hatecheck-store, testdata/hatecheck-identout-store: "beluga
//     run specs/NAME.yaml --from ../shared/data --jobs 2" on main at 1d2bd0d;
//     "beluga plot heatmap specs/NAME.yaml" gave docs/NAME-heatmap.png from
//     them byte for byte.
//   - testdata/hatecheck-identout-stratified-store: "beluga run
//     specs/hatecheck-identout-stratified.yaml --from ../shared/data" on the
//     reader branch (issue #39), the README's IdentOut table on the
//     stratified split.
var readmePins = []struct {
	name, store, goldens, heatmap string
}{
	{"quickstart", "testdata/quickstart-store", "testdata/quickstart", "../../docs/quickstart-heatmap.png"},
	{"quickstart-read", "testdata/quickstart-read-store", "testdata/quickstart-read", "../../docs/quickstart-read-heatmap.png"},
	{"hatecheck", "testdata/hatecheck-store", "testdata/hatecheck", "../../docs/hatecheck-heatmap.png"},
}

// dirPins are the stores pinned through their directory: the README's, and
// two whose order a directory once lost, which keep their spec's (the sweep
// the store recorded): identities in suite order, training sizes by number.
var dirPins = append(slices.Clone(readmePins), []struct {
	name, store, goldens, heatmap string
}{
	{"hatecheck-identout", "testdata/hatecheck-identout-store", "testdata/hatecheck-identout", "../../docs/hatecheck-identout-heatmap.png"},
	{"learning-curve", "testdata/learning-curve-store", "testdata/learning-curve", ""},
}...)

// specPins are the stores of specs whose table and figure the README shows,
// each read through its spec as "beluga report specs/NAME.yaml" and "beluga
// plot heatmap specs/NAME.yaml" read it; fetch is the dataset the spec's
// suite resolves through. heatmap is the docs' figure, or empty where the
// docs show none: then goldens/heatmap.png.sha256 pins it. curve is the
// docs' learning curve ("beluga plot learning-curve specs/NAME.yaml"), if
// any. baselines adds the computed rows (--baselines), as the docs show
// the table. An empty fetch is a spec whose suite is a file made in the
// working directory (mhc-arabic's), read through the library only.
var specPins = []struct {
	spec, store, goldens, heatmap, curve, fetch string
	baselines                                   bool
}{
	{"quickstart", "testdata/quickstart-store", "testdata/quickstart", "../../docs/quickstart-heatmap.png", "", "checklist-sentiment", false},
	{"quickstart-read", "testdata/quickstart-read-store", "testdata/quickstart-read", "../../docs/quickstart-read-heatmap.png", "", "checklist-squad", false},
	{"hatecheck", "testdata/hatecheck-store", "testdata/hatecheck", "../../docs/hatecheck-heatmap.png", "", "hatecheck", false},
	{"hatecheck-identout", "testdata/hatecheck-identout-store", "testdata/hatecheck-identout", "../../docs/hatecheck-identout-heatmap.png", "", "hatecheck", false},
	{"hatecheck-identout-stratified", "testdata/hatecheck-identout-stratified-store", "testdata/hatecheck-identout-stratified", "", "", "hatecheck", false},
	{"learning-curve", "testdata/learning-curve-store", "testdata/learning-curve", "", "../../docs/learning-curve.png", "checklist-sentiment", false},
	{"mhc-arabic", "testdata/mhc-arabic-store", "testdata/mhc-arabic", "", "", "", true},
}

// checkFigure compares a figure with the docs' (docs set) or with the
// SHA-256 in goldens/name.sha256.
func checkFigure(t *testing.T, what string, got []byte, docs, goldens, name string) {
	t.Helper()
	if docs == "" {
		sum := sha256.Sum256(got)
		checkGolden(t, filepath.Join(goldens, name+".sha256"), []byte(hex.EncodeToString(sum[:])+"\n"))
		return
	}
	if want := readFile(t, docs); !bytes.Equal(got, want) {
		t.Errorf("%s: %d bytes, not those of %s (%d bytes)", what, len(got), docs, len(want))
	}
}

// copyStore copies the fixture store into a temporary directory, so that
// nothing a command writes beside its runs can touch testdata.
func copyStore(t *testing.T, store string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "quickstart-out")
	if err := os.CopyFS(dst, os.DirFS(store)); err != nil {
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
		t.Fatalf("%v (run go test ./cmd/beluga -run Pinned -update)", err)
	}
	if !bytes.Equal(got, want) {
		if d := lineDiff(string(want), string(got)); len(want)+len(got) < 1<<16 && !bytes.ContainsRune(want, 0) {
			t.Errorf("output differs from %s (-update only for an intended change):\n%s", golden, d)
		} else {
			t.Errorf("output differs from %s (%d bytes, want %d; -update only for an intended change)", golden, len(got), len(want))
		}
	}
}

// footnoteLabel is a footnote's run label after the held-out fold: the
// README shortens "(SENT IID-IID+T vanilla class -NER batch_size=32 …
// seed=42)" to "(SENT IID-IID+T vanilla class -NER …)".
var footnoteLabel = regexp.MustCompile(`(run [0-9a-f]{12} \([^)]*?) [a-z_]+=[^)]*\)`)

// TestTablesPinnedInREADME: the golden tables are the README's
// (footnotes' run labels shortened as the README shortens them), so that
// the pins below pin what users were shown.
func TestTablesPinnedInREADME(t *testing.T) {
	readme := readFile(t, "../../README.md")
	for _, q := range readmePins {
		table := readFile(t, filepath.Join(q.goldens, "table.md"))
		shown := footnoteLabel.ReplaceAll(table, []byte("$1 …)"))
		if !bytes.Contains(readme, shown) {
			t.Errorf("%s: README.md does not show %s/table.md:\n%s", q.name, q.goldens, shown)
		}
	}
	// The IdentOut section shows the per-group table's rows (--groups) and
	// the learning-curve section the whole --learning-curve table with its
	// footnotes: what the pinned stores give today, not an earlier render.
	for _, q := range []struct{ golden, what string }{
		{"testdata/hatecheck-identout/groups.md", "rows"},
		{"testdata/hatecheck-identout-stratified/groups.md", "rows"},
		{"testdata/learning-curve/learning-curve.md", "all"},
	} {
		shown := readFile(t, q.golden)
		if q.what == "rows" {
			at := bytes.Index(shown, []byte("| Row |"))
			end := bytes.Index(shown[at:], []byte("\n\n"))
			if at < 0 || end < 0 {
				t.Fatalf("%s has no table", q.golden)
			}
			shown = shown[at : at+end+1]
		}
		if !bytes.Contains(readme, shown) {
			t.Errorf("README.md does not show %s (%s):\n%s", q.golden, q.what, shown)
		}
	}
	// docs/tasks.md shows mhc-arabic's table (--baselines) with its footnote
	// cut short: its rows, verbatim.
	tasks := readFile(t, "../../docs/tasks.md")
	table := readFile(t, "testdata/mhc-arabic/table.md")
	rows := table[:bytes.Index(table, []byte("\n\n"))+1]
	if !bytes.Contains(tasks, rows) {
		t.Errorf("docs/tasks.md does not show the rows of testdata/mhc-arabic/table.md:\n%s", rows)
	}
}

// TestStoreDirsPinnedThroughCommands builds Table 3 (Markdown, CSV, LaTeX,
// p-values and pass rates) and Figure 1 from each fixture store directory as
// "beluga report quickstart-out" and "beluga plot heatmap quickstart-out"
// do, and compares them byte for byte with the goldens; the Markdown table
// is the README's and the figure the docs'.
func TestStoreDirsPinnedThroughCommands(t *testing.T) {
	for _, q := range dirPins {
		t.Run(q.name, func(t *testing.T) {
			store := copyStore(t, q.store)
			out := t.TempDir()
			for _, c := range []struct{ format, file string }{
				{"md", "table.md"},
				{"csv", "table.csv"},
				{"latex", "table.tex"},
			} {
				path := filepath.Join(out, c.file)
				args := []string{"report", store, "--format", c.format, "-o", path}
				if c.format == "md" {
					// Once: the pass rates do not depend on the format.
					args = append(args, "--pass-rates", filepath.Join(out, "pass-rates.csv"))
				}
				if msg, err := execute(t, args...); err != nil {
					t.Fatalf("beluga %s: %v\n%s", strings.Join(args, " "), err, msg)
				}
				checkGolden(t, filepath.Join(q.goldens, c.file), readFile(t, path))
			}
			checkGolden(t, filepath.Join(q.goldens, "table-pvalues.csv"), readFile(t, filepath.Join(out, "table-pvalues.csv")))
			checkGolden(t, filepath.Join(q.goldens, "pass-rates.csv"), readFile(t, filepath.Join(out, "pass-rates.csv")))

			png := filepath.Join(out, "heatmap.png")
			if msg, err := execute(t, "plot", "heatmap", store, "-o", png); err != nil {
				t.Fatalf("beluga plot heatmap: %v\n%s", err, msg)
			}
			checkFigure(t, "beluga plot heatmap "+store, readFile(t, png), q.heatmap, q.goldens, "heatmap.png")
		})
	}
}

// TestStoresPinnedThroughLibrary writes table.md and heatmap.png from each
// fixture store as "beluga quickstart" does once its runs are done: the
// sweep recorded in the store, report.FromStore with the default options,
// the heatmap with the default options; and the table's CSV, LaTeX,
// p-values and pass rates, and the learning curve where the docs show one.
// It needs no shared data.
func TestStoresPinnedThroughLibrary(t *testing.T) {
	for _, q := range specPins {
		t.Run(q.spec, func(t *testing.T) {
			store := &experiments.Store{Dir: copyStore(t, q.store)}
			runs, err := store.Runs()
			if err != nil {
				t.Fatal(err)
			}
			tab, err := report.FromStore(store, runs, report.Options{Baselines: q.baselines})
			if err != nil {
				t.Fatal(err)
			}
			out := t.TempDir()
			md, png := filepath.Join(out, "table.md"), filepath.Join(out, "heatmap.png")
			if err := atomicfile.Write(md, tab.WriteMarkdown); err != nil {
				t.Fatal(err)
			}
			// The figure never has the computed rows (beluga plot heatmap).
			fig := tab
			if q.baselines {
				if fig, err = report.FromStore(store, runs, report.Options{}); err != nil {
					t.Fatal(err)
				}
			}
			if err := fig.WriteHeatmapFile(png, report.HeatmapOptions{}); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, filepath.Join(q.goldens, "table.md"), readFile(t, md))
			// The other formats of the same table, as beluga report
			// --format csv|latex -o FILE and --pass-rates write them.
			files := map[string]func(io.Writer) error{
				"table.csv":         tab.WriteCSV,
				"table.tex":         tab.WriteLaTeX,
				"table-pvalues.csv": tab.WritePValuesCSV,
				"pass-rates.csv":    tab.WritePassRatesCSV,
				"groups.md":         tab.WriteGroupsMarkdown,
				"groups.csv":        tab.WriteGroupsCSV,
			}
			if q.curve != "" {
				files["learning-curve.md"] = tab.WriteLearningCurveMarkdown
				files["learning-curve.csv"] = tab.WriteLearningCurveCSV
			}
			for f, write := range files {
				var b bytes.Buffer
				if err := write(&b); err != nil {
					t.Fatal(err)
				}
				checkGolden(t, filepath.Join(q.goldens, f), b.Bytes())
			}
			checkFigure(t, "heatmap.png", readFile(t, png), q.heatmap, q.goldens, "heatmap.png")
			if q.curve != "" {
				curve := filepath.Join(out, "curve.png")
				if err := tab.WriteLearningCurveFile(curve, "accuracy", q.spec); err != nil {
					t.Fatal(err)
				}
				checkFigure(t, "learning curve", readFile(t, curve), q.curve, q.goldens, "learning-curve.png")
			}
		})
	}
}

// TestSpecStoresPinnedThroughCommands builds Table 3 (Markdown, p-values,
// pass rates) and Figure 1 (and the learning curve) as "beluga report specs/NAME.yaml
// --store STORE" and "beluga plot heatmap specs/NAME.yaml --store STORE" do
// (the runs come from the spec, its suite from a data cache filled from
// ../shared/data), and compares them byte for byte with the goldens and the
// docs' figures.
func TestSpecStoresPinnedThroughCommands(t *testing.T) {
	data := shareddata.Path(t, "data")
	t.Setenv("BELUGA_DATA", t.TempDir())
	fetched := map[string]bool{}
	for _, q := range specPins {
		t.Run(q.spec, func(t *testing.T) {
			if q.fetch == "" {
				t.Skipf("specs/%s.yaml names a suite file made in the working directory: pinned through the library only", q.spec)
			}
			if !fetched[q.fetch] {
				if msg, err := execute(t, "data", "fetch", q.fetch, "--from", data); err != nil {
					t.Fatalf("beluga data fetch %s: %v\n%s", q.fetch, err, msg)
				}
				fetched[q.fetch] = true
			}
			spec := filepath.Join("..", "..", "specs", q.spec+".yaml")
			store := copyStore(t, q.store)
			out := t.TempDir()
			// Markdown only: the other formats are the same table, pinned
			// through the library (TestStoresPinnedThroughLibrary).
			md := filepath.Join(out, "table.md")
			args := []string{"report", spec, "--store", store, "-o", md, "--pass-rates", filepath.Join(out, "pass-rates.csv")}
			if msg, err := execute(t, args...); err != nil {
				t.Fatalf("beluga %s: %v\n%s", strings.Join(args, " "), err, msg)
			}
			for _, f := range []string{"table.md", "table-pvalues.csv", "pass-rates.csv"} {
				checkGolden(t, filepath.Join(q.goldens, f), readFile(t, filepath.Join(out, f)))
			}

			png := filepath.Join(out, "heatmap.png")
			if msg, err := execute(t, "plot", "heatmap", spec, "--store", store, "-o", png); err != nil {
				t.Fatalf("beluga plot heatmap: %v\n%s", err, msg)
			}
			checkFigure(t, "beluga plot heatmap "+spec, readFile(t, png), q.heatmap, q.goldens, "heatmap.png")
			if q.curve != "" {
				curve := filepath.Join(out, "curve.png")
				if msg, err := execute(t, "plot", "learning-curve", spec, "--store", store, "-o", curve); err != nil {
					t.Fatalf("beluga plot learning-curve: %v\n%s", err, msg)
				}
				checkFigure(t, "beluga plot learning-curve "+spec, readFile(t, curve), q.curve, q.goldens, "learning-curve.png")
			}
		})
	}
}
