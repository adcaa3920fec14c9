package experimentstest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/splits"
)

// Reseal writes a finished run's done marker anew, vouching for its files
// as they are now: what a runner that wrote them so would have left. Tests
// that edit a run's files to stand in for such a runner call it; an edit
// it does not follow leaves the run damaged.
func Reseal(tb testing.TB, dir string) {
	tb.Helper()
	m := experiments.Manifest{ID: filepath.Base(dir), Files: map[string]experiments.ManifestFile{}}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil || rel == experiments.DoneFile || strings.HasPrefix(rel, experiments.ClaimFile) {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		m.Files[filepath.ToSlash(rel)] = experiments.ManifestFile{Size: int64(len(b)), SHA256: hex.EncodeToString(sum[:])}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	b, err := json.Marshal(m)
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, experiments.DoneFile), b, 0o644); err != nil {
		tb.Fatal(err)
	}
}

// RecordGroupBalance records bal as the split counts (splits.GroupBalance)
// of every run of runs held out by MetaScore, resealing each: what a
// held-out metadata run of today records, in a store of fake runs.
func RecordGroupBalance(tb testing.TB, store *experiments.Store, runs []experiments.Run, bal []splits.GroupBalance) {
	tb.Helper()
	for _, r := range runs {
		if r.Score != MetaScore {
			continue
		}
		dir := store.RunDir(r.ID())
		res, err := experiments.ReadResult(dir)
		if err != nil {
			tb.Fatal(err)
		}
		res.GroupBalance = bal
		if err := experiments.WriteResult(dir, res); err != nil {
			tb.Fatal(err)
		}
		Reseal(tb, dir)
	}
}
