package experiments

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Manifest is the content of a run's DoneFile: the run's ID and the size
// and SHA-256 of every file of its directory it vouches for — all of them
// but done itself and the claim files (ClaimFile and its tokens) —
// by their slash-separated paths in the directory.
type Manifest struct {
	ID    string                  `json:"id"`
	Files map[string]ManifestFile `json:"files"`
}

// ManifestFile is one file a done marker vouches for.
type ManifestFile struct {
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// QuickFiles are the files of a run whose content every state check
// (status, run, report) hashes: those a table is computed from. The
// others are checked by their size there, and by their content by Verify
// (beluga verify).
var QuickFiles = []string{SpecFile, ResultFile, SearchFile}

// manifestOf lists and digests the files of a run directory.
func manifestOf(dir string) (Manifest, error) {
	m := Manifest{ID: filepath.Base(dir), Files: map[string]ManifestFile{}}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		if d.IsDir() || !vouched(rel) {
			return nil
		}
		sum, size, err := hashFile(path)
		if err != nil {
			return err
		}
		m.Files[filepath.ToSlash(rel)] = ManifestFile{Size: size, SHA256: sum}
		return nil
	})
	return m, err
}

// vouched says whether done vouches for the file at rel in a run
// directory: every file but done and the claims.
func vouched(rel string) bool {
	return rel != DoneFile && !strings.HasPrefix(rel, ClaimFile)
}

// writeDone writes the run's done marker, last: its Manifest.
func writeDone(dir string) error {
	m, err := manifestOf(dir)
	if err != nil {
		return fmt.Errorf("run %s: %w", dir, err)
	}
	return writeJSON(filepath.Join(dir, DoneFile), m)
}

// readManifest reads a done marker; one that is empty, not JSON, of
// another run or listing no file is no record (an older beluga's marker
// names its run only: beluga migrate writes it anew).
func readManifest(dir string) (Manifest, error) {
	var m Manifest
	b, err := os.ReadFile(filepath.Join(dir, DoneFile))
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("%s is not a record of the run's files (%d bytes): %w", DoneFile, len(b), err)
	}
	if m.ID != filepath.Base(dir) {
		return m, fmt.Errorf("%s records run %q, not this run", DoneFile, m.ID)
	}
	if len(m.Files) == 0 {
		return m, fmt.Errorf("%s records no files (a marker of an older beluga: beluga migrate writes its record)", DoneFile)
	}
	return m, nil
}

// verifyRun checks a run directory against its done marker: every file it
// vouches for must be there with its size, and with its content when full
// or when it is one of QuickFiles.
func verifyRun(dir string, full bool) error {
	m, err := readManifest(dir)
	if err != nil {
		return err
	}
	for _, rel := range sortedKeys(m.Files) {
		want := m.Files[rel]
		path := filepath.Join(dir, filepath.FromSlash(rel))
		st, err := os.Stat(path)
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s is missing", path)
		}
		if err != nil {
			return err
		}
		if st.Size() != want.Size {
			return fmt.Errorf("%s is %d bytes; done recorded %d (truncated or rewritten)", path, st.Size(), want.Size)
		}
		if !full && !slices.Contains(QuickFiles, rel) {
			continue
		}
		sum, _, err := hashFile(path)
		if err != nil {
			return err
		}
		if sum != want.SHA256 {
			return fmt.Errorf("%s is not what done recorded (sha256 %.12s…, recorded %.12s…): edited or damaged", path, sum, want.SHA256)
		}
	}
	return nil
}

// VerifyPart checks what a later step reads from a finished run — a file,
// or a directory such as the model a dependent run fine-tunes — against
// the run's done marker before it is used: every file at or under rel (a
// slash-separated path in the run directory dir) must be one done vouches
// for, with its size and content, and every file done lists there must
// be present. Digests, when not nil, remembers the contents checked (a
// baseline's model, read by every run that starts from it, is read once
// while it stays as it is; see Digests). The error names the file at
// fault.
func VerifyPart(dir, rel string, digests *Digests) error {
	m, err := readManifest(dir)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	under := func(f string) bool { return f == rel || strings.HasPrefix(f, rel+"/") }
	root := filepath.Join(dir, filepath.FromSlash(rel))
	if _, err := os.Stat(root); err != nil {
		return fmt.Errorf("%s: %w", root, err)
	}
	seen := map[string]bool{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		r, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		r = filepath.ToSlash(r)
		want, ok := m.Files[r]
		if !ok {
			return fmt.Errorf("%s is not one of the files the run's %s vouches for (added after the run finished)", path, DoneFile)
		}
		seen[r] = true
		var sum string
		var size int64
		if digests != nil {
			e, err := digests.file(path)
			if err != nil {
				return err
			}
			sum, size = e.SHA256, e.Size
		} else if sum, size, err = hashFile(path); err != nil {
			return err
		}
		if size != want.Size || sum != want.SHA256 {
			return fmt.Errorf("%s is not what the run's %s recorded (%d bytes, sha256 %.12s…; recorded %d bytes, %.12s…): edited or damaged since the run finished", path, DoneFile, size, sum, want.Size, want.SHA256)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, f := range sortedKeys(m.Files) {
		if under(f) && !seen[f] {
			return fmt.Errorf("%s is missing", filepath.Join(dir, filepath.FromSlash(f)))
		}
	}
	return nil
}

// Verify checks the content of every file of every run of ids that holds
// done (beluga verify): the damaged ones are returned with why, by ID.
func (s *Store) Verify(ids []string) (checked int, damaged map[string]string) {
	damaged = map[string]string{}
	for _, id := range ids {
		dir := s.RunDir(id)
		if !exists(filepath.Join(dir, DoneFile)) {
			continue
		}
		checked++
		if err := verifyRun(dir, true); err != nil {
			damaged[id] = err.Error()
		}
	}
	return checked, damaged
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
