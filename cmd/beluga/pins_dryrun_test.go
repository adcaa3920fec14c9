package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/internal/shareddata"
)

// Pins for the experiment-layer redesign (issue #23): every shipped spec must
// list the same runs, with the same IDs, in the same order, before and after
// it. A run's ID names its directory in every user's store, so a change here
// orphans finished runs; the order is what --shard slices.

var update = flag.Bool("update", false, "rewrite the golden files in testdata/ (the pins of issue #23: only when a change of run IDs, tables or figures is intended)")

// runIDLine is a run's line in beluga run --dry-run's listing.
var runIDLine = regexp.MustCompile(`^([0-9a-f]{12})  `)

// TestDryRunListingsPinned expands every spec in specs/ as
// "beluga run specs/NAME.yaml --dry-run --from ../shared/data" does from the
// repository root, and compares each run's ID and label, in order, with
// testdata/dryrun/NAME.txt; the command's own listing must list the same
// IDs in the same order.
//
// The specs are copied into a temporary checkout laid out like the real one
// (repo/specs/, with shared/ beside repo/), because paths in a spec resolve
// against the spec's directory. The files two specs name are made there as
// their comments say, in the repository's root: azimuth-sst2.jsonl.gz
// (beluga suite generate azimuth), mhc_arabic.jsonl (beluga suite import
// hatecheck) and ar-wordpiece.json (beluga tokenizer train): a run's
// identity holds their content. The full grids start from
// google-bert/bert-base-uncased, which their runs' identity names by the
// commit the hub cache resolves main to (hub.Identity): a stand-in snapshot
// (hubStandIn) is put in a hub cache of the test's own, so their IDs here
// are those of the stand-in's commit, not of the real checkpoint's.
func TestDryRunListingsPinned(t *testing.T) {
	data := shareddata.Path(t, "data")
	golden, err := filepath.Abs(filepath.Join("testdata", "dryrun"))
	if err != nil {
		t.Fatal(err)
	}
	specFiles, err := filepath.Glob(filepath.Join("..", "..", "specs", "*.yaml"))
	if err != nil || len(specFiles) == 0 {
		t.Fatalf("no specs in ../../specs: %v", err)
	}

	// A data cache of its own: the files come from ../shared/data, as on a
	// fresh machine, never from (or into) the user's cache.
	t.Setenv("BELUGA_DATA", t.TempDir())
	work := t.TempDir()
	repo := filepath.Join(work, "repo")
	if err := os.MkdirAll(filepath.Join(repo, "specs"), 0o755); err != nil {
		t.Fatal(err)
	}
	// mhc-arabic's i.i.d. file is ../shared/data/… from the repository root.
	if err := os.Symlink(filepath.Dir(data), filepath.Join(work, "shared")); err != nil {
		t.Fatal(err)
	}
	for _, f := range specFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, "specs", filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// hatecheck-prompted's language model is a fixture of the repository,
	// its content part of the prompted runs' identity.
	if err := os.MkdirAll(filepath.Join(repo, "prompt", "testdata"), 0o755); err != nil {
		t.Fatal(err)
	}
	lm, err := filepath.Abs(filepath.Join("..", "..", "prompt", "testdata", "gpt2-512"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(lm, filepath.Join(repo, "prompt", "testdata", "gpt2-512")); err != nil {
		t.Fatal(err)
	}
	hubStandIn(t, "google-bert/bert-base-uncased")
	for _, args := range [][]string{
		{"suite", "generate", "azimuth", filepath.Join(data, "sst2", "test-labeled.tsv"), "-o", filepath.Join(repo, "azimuth-sst2.jsonl.gz")},
		{"suite", "import", "hatecheck", filepath.Join(data, "mhc-arabic", "mhc_arabic_cases.csv"), "-o", filepath.Join(repo, "mhc_arabic.jsonl")},
		{"tokenizer", "train", "--spec", filepath.Join(repo, "specs", "mhc-arabic.yaml"), "-o", filepath.Join(repo, "ar-wordpiece.json")},
	} {
		if out, err := execute(t, args...); err != nil {
			t.Fatalf("beluga %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	t.Chdir(repo)

	names := map[string]bool{}
	for _, f := range specFiles {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		names[name+".txt"] = true
		t.Run(name, func(t *testing.T) {
			spec := filepath.Join("specs", name+".yaml")
			_, runs, err := loadRuns(spec, data)
			if err != nil {
				t.Fatal(err)
			}
			var got strings.Builder
			var ids []string
			for _, r := range runs {
				fmt.Fprintf(&got, "%s\t%s\n", r.ID(), r.Label())
				ids = append(ids, r.ID())
			}
			path := filepath.Join(golden, name+".txt")
			if *update {
				if err := os.MkdirAll(golden, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (a new spec? run go test ./cmd/beluga -run TestDryRunListingsPinned -update)", err)
			}
			if d := lineDiff(string(want), got.String()); d != "" {
				t.Errorf("%s lists other runs than %s (run IDs name the directories of users' stores; -update only for an intended change):\n%s", spec, path, d)
			}

			// The command itself: its listing (before the checks, which
			// may refuse a spec on this machine) has the same IDs.
			out, _ := execute(t, "run", spec, "--dry-run", "--from", data)
			var listed []string
			sc := bufio.NewScanner(strings.NewReader(out))
			for sc.Scan() {
				if m := runIDLine.FindStringSubmatch(sc.Text()); m != nil {
					listed = append(listed, m[1])
				}
			}
			if d := lineDiff(strings.Join(ids, "\n"), strings.Join(listed, "\n")); d != "" {
				t.Errorf("beluga run %s --dry-run lists other IDs than the expansion:\n%s\n\noutput:\n%s", spec, d, out)
			}
			if tail := fmt.Sprintf("%s into ", plural(len(runs), "run")); !strings.Contains(out, tail) {
				t.Errorf("beluga run %s --dry-run: no %q line:\n%s", spec, tail, out)
			}
		})
	}
	// A golden whose spec is gone is a spec removed: say so.
	entries, _ := os.ReadDir(golden)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".txt") && !names[e.Name()] {
			t.Errorf("testdata/dryrun/%s has no spec in specs/ (a shipped spec removed?)", e.Name())
		}
	}
}

// hubStandIn puts a snapshot of fixed content for repo into a hub cache of
// the test's own and keeps the hub offline: a stand-in for a checkpoint
// the tests cannot download, whose commit a run's identity holds.
func hubStandIn(t testing.TB, repo string) {
	t.Helper()
	cache := t.TempDir()
	t.Setenv("HF_HUB_CACHE", cache)
	t.Setenv("HF_HUB_OFFLINE", "1")
	const commit = "0123456789abcdef0123456789abcdef01234567"
	dir := filepath.Join(cache, "models--"+strings.ReplaceAll(repo, "/", "--"))
	snap := filepath.Join(dir, "snapshots", commit)
	if err := os.MkdirAll(snap, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"refs/main":                                  commit,
		"snapshots/" + commit + "/config.json":       `{"model_type": "bert", "note": "a stand-in of fixed content"}`,
		"snapshots/" + commit + "/model.safetensors": "stand-in weights",
		"snapshots/" + commit + "/vocab.txt":         "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n",
	} {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDocsQuoteTheListedRunIDs: the run IDs the README and docs/tasks.md
// quote are those the shipped specs list today, as the runs they name.
func TestDocsQuoteTheListedRunIDs(t *testing.T) {
	for _, c := range []struct{ spec, id, label string }{
		// README: the quickstart table's footnotes.
		{"quickstart", "467be3b0c0bd", "SENT IID-IID+T vanilla class -NER "},
		{"quickstart", "58143e9140df", "SENT IID-IID+T vanilla type -INV "},
		// docs/tasks.md: the mhc-arabic walk-through's dry run, status and failures.
		{"mhc-arabic", "8b4e5279067b", "HATE-AR IID vanilla iid "},
		{"mhc-arabic", "e44ed176f599", "HATE-AR IID+T vanilla seen "},
		{"mhc-arabic", "f9cc7f7bc514", "HATE-AR IID+T vanilla class -Derogation "},
	} {
		b, err := os.ReadFile(filepath.Join("testdata", "dryrun", c.spec+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), c.id+"\t"+c.label) {
			t.Errorf("testdata/dryrun/%s.txt has no run %s %q, which the docs quote", c.spec, c.id, c.label)
		}
	}
}

// lineDiff is empty when a and b are equal, else the first lines that
// differ and the line counts.
func lineDiff(a, b string) string {
	if a == b {
		return ""
	}
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out []string
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			out = append(out, fmt.Sprintf("line %d:\n  want %q\n  got  %q", i+1, x, y))
			if len(out) == 5 {
				break
			}
		}
	}
	return fmt.Sprintf("%d lines wanted, %d got; first differences:\n%s", len(al), len(bl), strings.Join(out, "\n"))
}
