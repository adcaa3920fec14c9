package experiments

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/models/hub"
	"github.com/beluga-nlp/beluga/suites"
)

// Inputs finds what a sweep's runs read and digests it: files and
// directories by their content (Digests), datasets of the registry by
// their registered checksums (nothing is fetched to identify them), hub
// checkpoints named by hub id by what the hub publishes for them
// (hub.Identity), never by their bytes. It also opens suites for
// the folds they are held out by, once each.
type Inputs struct {
	// Data resolves dataset names (nil: names resolve to the cache
	// layout's relative paths, for sweeps that are only listed).
	Data *datasets.Cache
	// Hub identifies checkpoints named by hub id (hub.Identify) and
	// resolves them when a run starts (nil: hub.FromEnv(), which downloads
	// a checkpoint missing from the hub cache unless HF_HUB_OFFLINE is
	// set).
	Hub *hub.Resolver
	// Digests computes and remembers the digests (nil: in memory only).
	Digests *Digests
	// Folds, when set, lists the held-out folds instead of the suites
	// (tests that expand sweeps without suite files).
	Folds FoldLister

	opened map[string]openedSuite
	dirs   map[string]Input // directories digested, by path

	lazy sync.Mutex // guards Digests' creation by concurrent runs
}

type openedSuite struct {
	suite *suites.Suite
	path  string
}

// FoldLister lists the held-out folds of a task's suite for one score: the
// functionality names for func, the class names for class, the test types
// for type, each in suite order.
type FoldLister interface {
	Folds(task Task, score string) ([]string, error)
}

func (in *Inputs) digests() *Digests {
	in.lazy.Lock()
	defer in.lazy.Unlock()
	if in.Digests == nil {
		in.Digests = &Digests{}
	}
	return in.Digests
}

// registeredDigest identifies a dataset's file by its registered checksum,
// which the data cache verifies the file against when it fetches it; a
// file verified through its archive (QQP's) by the archive's and its name
// in it.
func registeredDigest(f datasets.File) string {
	if f.SHA256 != "" {
		return f.SHA256
	}
	sum := sha256.Sum256([]byte("archive sha256:" + f.ArchiveSHA256 + " member:" + f.Member))
	return hex.EncodeToString(sum[:])
}

// file identifies what a spec value names for field: a file or directory
// (rel's base name inside a directory, when rel is set), else a registered
// dataset's file (rel, or its only file). Nothing is fetched.
func (in *Inputs) file(field, value, rel string) (Input, error) {
	if st, err := os.Stat(value); err == nil {
		path := value
		if rel != "" && st.IsDir() {
			path = filepath.Join(value, filepath.Base(rel))
		}
		return in.local(field, path)
	}
	d, err := datasets.Lookup(value)
	if err != nil {
		if looksLikeFile(value) {
			return Input{}, &NotFoundError{value}
		}
		return Input{}, err
	}
	for _, f := range d.Files {
		if rel != "" && f.Path != rel {
			continue
		}
		if rel == "" && len(d.Files) > 1 {
			return Input{}, fmt.Errorf("dataset %s has %d files: name one", value, len(d.Files))
		}
		path := filepath.FromSlash(f.Path)
		if in.Data != nil {
			path = in.Data.Path(f)
		}
		return Input{Field: field, Path: path, Name: d.Name, File: f.Path, SHA256: registeredDigest(f), Size: max(f.Size, f.ArchiveSize)}, nil
	}
	return Input{}, fmt.Errorf("dataset %s has no file %s", value, rel)
}

// local digests a file or directory.
func (in *Inputs) local(field, path string) (Input, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Input{}, err
	}
	// A directory (a checkpoint) is listed once a process: every run
	// reads the same.
	if x, ok := in.dirs[abs]; ok {
		x.Field = field
		return x, nil
	}
	sum, size, err := in.digests().Path(abs)
	if errors.Is(err, os.ErrNotExist) {
		return Input{}, &NotFoundError{path}
	}
	if err != nil {
		return Input{}, err
	}
	x := Input{Field: field, Path: abs, SHA256: sum, Size: size}
	if st, err := os.Stat(abs); err == nil && st.IsDir() {
		if in.dirs == nil {
			in.dirs = map[string]Input{}
		}
		in.dirs[abs] = x
	}
	return x, nil
}

// NotFoundError is a file or directory an input names that is not there.
type NotFoundError struct{ Path string }

func (e *NotFoundError) Error() string { return e.Path + ": file not found" }

// checkpoint identifies a model to start from: a directory or archive by
// its content, a hub id by what the hub publishes for it (hub.Identify:
// from the hub cache, else the hub's listing; nothing is downloaded). A
// checkpoint neither cached nor listable (offline) whose revision is not a
// commit is Pending: its runs are planned under provisional IDs.
func (in *Inputs) checkpoint(ctx context.Context, field, value string) (Input, error) {
	if _, err := os.Stat(value); err == nil {
		return in.local(field, value)
	}
	id, err := in.hub().Identify(ctx, value)
	if err != nil {
		return Input{}, err
	}
	return hubInput(field, value, id), nil
}

// hubInput is the input of a checkpoint a spec names by hub id (value)
// whose identity the hub cache or listing gave.
func hubInput(field, value string, id hub.Identity) Input {
	x := Input{Field: field, Path: id.Dir, Name: value, Commit: id.Commit, Files: id.Files, SHA256: id.Digest()}
	switch {
	case x.Path != "":
	case x.SHA256 != "":
		// Where the runner resolves it: the hub id pinned to the commit.
		x.Path = id.Repo + "@" + id.Commit
		x.Absent = fmt.Sprintf("checkpoint not fetched (%s at commit %.12s: not in the hub cache; beluga run fetches it)", value, id.Commit)
	default:
		x.Path = value
		x.Pending = fmt.Sprintf("checkpoint not fetched (%s: not in the hub cache and HF_HUB_OFFLINE is set; the run IDs are provisional until it is fetched or the spec pins a commit, %s@COMMIT)", value, id.Repo)
		x.Absent = x.Pending
		sum := sha256.Sum256([]byte("pending hub checkpoint " + id.Repo + "@" + id.Revision))
		x.SHA256 = "pending-" + hex.EncodeToString(sum[:])
	}
	return x
}

// checkpointDir is the local snapshot of a hub checkpoint input, at the
// commit its identity names, downloaded when the hub cache lacks it.
func (in *Inputs) checkpointDir(ctx context.Context, x Input) (string, error) {
	ref, err := hub.ParseRef(x.Name)
	if err != nil {
		return "", err
	}
	return in.hub().Resolve(ctx, ref.Repo+"@"+x.Commit)
}

// hub is the resolver of hub ids: Hub, else hub.FromEnv().
func (in *Inputs) hub() *hub.Resolver {
	if in.Hub == nil {
		in.Hub = hub.FromEnv()
	}
	return in.Hub
}

// suiteValue is the file or dataset a task's suite names: a file, or a
// CheckList release suite by task name (sentiment, qqp, squad) or dataset
// name.
func suiteValue(suite string) string {
	for _, t := range BuiltinTasks {
		if suite == t.Train {
			if _, err := os.Stat(suite); err != nil {
				return t.Suite
			}
			break
		}
	}
	return suite
}

// suite identifies a task's suite, with its number of test cases when it
// is a file (counted once per content: Digests keeps the count).
func (in *Inputs) suite(value string) (Input, error) {
	i, err := in.file("suite", suiteValue(value), "")
	if err != nil || i.Name != "" {
		return i, err
	}
	if e, err := in.digests().file(i.Path); err == nil && e.SHA256 == i.SHA256 && e.Cases > 0 {
		i.Cases = e.Cases
		return i, nil
	}
	s, err := suites.Open(i.Path)
	if err != nil {
		return Input{}, err
	}
	i.Cases = s.NumCases()
	in.digests().setCases(i.Path, i.SHA256, i.Cases)
	in.keep(value, s, i.Path)
	return i, nil
}

// Suite resolves a task's suite (fetching a dataset when needed, until ctx
// is done) and opens it, once.
func (in *Inputs) Suite(ctx context.Context, value string) (*suites.Suite, string, error) {
	if o, ok := in.opened[value]; ok {
		return o.suite, o.path, nil
	}
	path, err := ResolveSuite(ctx, in.Data, value)
	if err != nil {
		return nil, "", err
	}
	s, err := suites.Open(path)
	if err != nil {
		return nil, "", err
	}
	in.keep(value, s, path)
	return s, path, nil
}

func (in *Inputs) keep(value string, s *suites.Suite, path string) {
	if in.opened == nil {
		in.opened = map[string]openedSuite{}
	}
	in.opened[value] = openedSuite{s, path}
}

// folds lists a task's held-out folds for a score: those the spec lists,
// else those of its suite (Folds, when set, instead).
func (in *Inputs) folds(ctx context.Context, t Task, score string) ([]string, error) {
	if folds, ok := t.Folds[score]; ok {
		return folds, nil
	}
	if in.Folds != nil {
		return in.Folds.Folds(t, score)
	}
	// A suite's folds are remembered with its digest: listing a sweep
	// need not parse a suite it has listed the folds of before.
	o, opened := in.opened[t.Suite]
	path := o.path
	if !opened {
		var err error
		if path, err = ResolveSuite(ctx, in.Data, t.Suite); err != nil {
			return nil, fmt.Errorf("task %s: folds for %s: %w", t.Name, score, err)
		}
		if e, err := in.digests().file(path); err == nil && e.Folds[foldsKey(score)] != nil {
			return e.Folds[foldsKey(score)], nil
		}
	}
	s, _, err := in.Suite(ctx, t.Suite)
	if err != nil {
		return nil, fmt.Errorf("task %s: folds for %s: %w", t.Name, score, err)
	}
	if err := CheckFolds(s, score); err != nil {
		return nil, fmt.Errorf("task %s: %w", t.Name, err)
	}
	folds := FoldsOf(s, score)
	if e, err := in.digests().file(path); err == nil {
		in.digests().setFolds(path, e.SHA256, foldsKey(score), folds)
	}
	return folds, nil
}

// foldsKey is the key a suite's folds of a score are remembered under: the
// score, after the version of the listing (FoldsOf), so that folds listed
// by another version are listed again.
func foldsKey(score string) string { return foldsVersion + "/" + score }

// foldsVersion versions FoldsOf's listing: change it with splits.Folds.
const foldsVersion = "1"

// resolveData returns a local path for a dataset name or a path: a path as
// it is (rel's base name inside it, for a directory), a name through the
// data cache, fetching it when needed.
func resolveData(ctx context.Context, cache *datasets.Cache, nameOrPath, rel string) (string, error) {
	if st, err := os.Stat(nameOrPath); err == nil {
		if rel != "" && st.IsDir() {
			return filepath.Join(nameOrPath, filepath.Base(rel)), nil
		}
		return nameOrPath, nil
	}
	d, err := datasets.Lookup(nameOrPath)
	if err != nil {
		if looksLikeFile(nameOrPath) {
			return "", fmt.Errorf("%s: file not found", nameOrPath)
		}
		return "", err
	}
	if cache == nil {
		return "", fmt.Errorf("%s is neither a file nor, without a data cache, a dataset name", nameOrPath)
	}
	paths, err := cache.Ensure(ctx, d)
	if err != nil {
		return "", err
	}
	for i, f := range d.Files {
		if rel == "" || f.Path == rel {
			return paths[i], nil
		}
	}
	return "", fmt.Errorf("dataset %s has no file %s", nameOrPath, rel)
}

// looksLikeFile says whether a name that is no dataset was meant as a
// file: it has a directory or an extension (dataset names have neither).
func looksLikeFile(name string) bool {
	return strings.ContainsRune(name, filepath.Separator) || filepath.Ext(name) != ""
}

// ResolveSuite returns a local path for a task's suite: a file, or a
// CheckList release suite by task name (sentiment, qqp, squad) or dataset
// name, through the data cache.
func ResolveSuite(ctx context.Context, cache *datasets.Cache, suite string) (string, error) {
	return resolveData(ctx, cache, suiteValue(suite), "")
}
