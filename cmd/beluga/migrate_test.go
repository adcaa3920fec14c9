package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/experiments"
)

// legacyIdentityRecord is a run of identitySpec as spec.json and
// sweep.json recorded it before runs were identified by what they compute
// (as beluga at 05ad59e wrote it): the spec as written, paths relative to
// the working directory, grid keys as spelt.
func legacyIdentityRecord(r experiments.Run) map[string]any {
	labels := []string{"greeting", "question", "complaint"}
	file := func(path string) map[string]any {
		return map[string]any{"path": path, "text": "utterance", "label": "intent", "labels": labels}
	}
	rec := map[string]any{
		"task":          "INTENT",
		"task_def":      map[string]any{"name": "INTENT", "labels": labels, "mft_loss": "ce", "train": file("train.csv"), "dev": file("dev.csv")},
		"data":          "",
		"suite":         "suite.jsonl",
		"model":         "wordvec",
		"model_options": map[string]any{"glove": "glove.txt", "hidden": 8, "max_length": 16},
		"configuration": r.Configuration,
		"method":        r.Method,
		"score":         r.Score,
		"seed":          r.Seed,
		"budget":        map[string]any{},
		"hyper":         map[string]any{"batch_size": 4, "epochs": 1, "iid_epochs": 1, "iid_lr": 0.01, "lr": 0.01},
	}
	if r.Fold != "" {
		rec["fold"] = r.Fold
	}
	return rec
}

// beluga migrate on a store an older beluga wrote, from the directory it
// ran in: every run moves to the ID the spec lists today, nothing is
// retrained (results and models untouched), the table after is the table
// before byte for byte, and the files whose digests it assumed — the
// older runs never recorded their inputs' content — are said, each with
// its digest (registered datasets, identified by their registered
// checksums, are not assumptions and are not listed).
func TestMigrateSaysWhatItAssumed(t *testing.T) {
	spec := identityDir(t)
	dir := filepath.Dir(spec)
	mustRun(t, "run", spec)
	ids := listedIDs(mustRun(t, "run", spec, "--dry-run"))
	table := mustRun(t, "report", spec)
	store := &experiments.Store{Dir: filepath.Join(dir, "store")}

	// The store as the older beluga left it: older records, a done
	// marker naming the run only, directories named by older IDs.
	var sweep []map[string]any
	kept := map[string][]byte{}
	for i, id := range ids {
		r, err := experiments.ReadRun(store.RunDir(id))
		if err != nil {
			t.Fatal(err)
		}
		old := fmt.Sprintf("0123456789%02d", i)
		rec := legacyIdentityRecord(r)
		sweep = append(sweep, rec)
		b, _ := json.Marshal(rec)
		os.WriteFile(filepath.Join(store.RunDir(id), experiments.SpecFile), b, 0o644)
		os.WriteFile(filepath.Join(store.RunDir(id), experiments.DoneFile), []byte(`{"id": "`+old+`"}`), 0o644)
		for _, f := range []string{experiments.ResultFile, "train/model/model.safetensors"} {
			kept[id+"/"+f] = readFile(t, filepath.Join(store.RunDir(id), f))
		}
		if err := os.Rename(store.RunDir(id), store.RunDir(old)); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := json.Marshal(sweep)
	os.WriteFile(filepath.Join(store.Dir, experiments.SweepFile), b, 0o644)
	if _, err := execute(t, "status", spec); err == nil || !strings.Contains(err.Error(), "beluga migrate") {
		t.Fatalf("status of the older store: %v, want a pointer to beluga migrate", err)
	}

	t.Chdir(dir) // the older beluga read relative paths from here
	out := mustRun(t, "migrate", "store")
	for i, id := range ids {
		if !strings.Contains(out, fmt.Sprintf("moved 0123456789%02d -> %s", i, id)) {
			t.Errorf("migrate does not say it moved run %d to %s:\n%s", i, id, out)
		}
	}
	if !strings.Contains(out, "5 runs moved (0 of them damaged, without done), 0 merged into another, 0 unfinished removed, 0 not migrated; nothing retrained") {
		t.Errorf("migrate's summary:\n%s", out)
	}
	// The assumed inputs, each by its field, path and digest.
	if !strings.Contains(out, "their new IDs assume these files are what they read") {
		t.Errorf("migrate does not warn that the inputs' digests are assumed:\n%s", out)
	}
	for field, file := range map[string]string{"suite": "suite.jsonl", "iid_train_file.path": "train.csv", "iid_dev_file.path": "dev.csv", "model.glove": "glove.txt"} {
		h := sha256.Sum256(readFile(t, filepath.Join(dir, file)))
		sum := hex.EncodeToString(h[:])
		if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(field) + ` \S*` + regexp.QuoteMeta(file) + `: sha256 ` + sum + `$`).MatchString(out) {
			t.Errorf("migrate does not say it assumed %s %s (sha256 %s):\n%s", field, file, sum, out)
		}
	}

	for f, want := range kept {
		if got := readFile(t, filepath.Join(store.Dir, f)); string(got) != string(want) {
			t.Errorf("%s changed by the migration", f)
		}
	}
	if out := mustRun(t, "status", spec); !strings.Contains(out, "5 runs: 5 done") {
		t.Errorf("status after migration:\n%s", out)
	}
	if out := mustRun(t, "verify", "store"); !strings.Contains(out, "5 finished runs checked, 0 damaged") {
		t.Errorf("verify after migration:\n%s", out)
	}
	if got := mustRun(t, "report", spec); got != table {
		t.Errorf("the table after migration:\n%s\nbefore:\n%s", got, table)
	}
	if out := mustRun(t, "run", spec); !strings.Contains(out, "5 skipped (already done), 0 ran") {
		t.Errorf("run after migration retrained:\n%s", out)
	}
}
