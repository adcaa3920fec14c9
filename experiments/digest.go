package experiments

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/beluga-nlp/beluga/internal/atomicfile"
)

// Digests computes the SHA-256 content digests that identify a run's
// inputs, and remembers each file's digest with what its content cannot
// change without changing too: its path, inode, size, modification time
// and status-change time (ctime). A 420 MB checkpoint is read once, and
// again only when it changes. Size and modification time alone are no
// proof: a retrained checkpoint of the same size unpacked from a tarball
// with normalised timestamps, or a file edited and then `touch -r`-ed,
// keeps both; neither tar nor touch can restore an inode or a ctime. As git
// does with its index, an entry whose file was modified (mtime or ctime)
// no earlier than racyWindow before its digest was taken is racy — the
// file may have changed again within the same timestamp tick — and is
// digested again each time until the file is older. With File set, the digests are kept in that file between
// processes (DigestsFile in the data cache); several processes may share
// it: each writes the union of what it found and what the file holds, and a
// digest lost to a race is only computed again.
type Digests struct {
	// File is the file the digests are kept in ("" keeps them in memory).
	File string

	mu     sync.Mutex
	loaded bool
	m      map[string]digestEntry
	added  map[string]digestEntry
	warned bool // SaveOrWarn said the file cannot be written
}

// DigestsFile is the name of the digest file in a data cache directory.
const DigestsFile = "digests.json"

// digestEntry is one file's digest, valid while the file keeps its inode,
// size, modification and change times (fileKey) and the entry is not
// racy.
type digestEntry struct {
	fileKey
	// Seen is when the file was digested (Unix ns, taken before reading).
	Seen   int64  `json:"seen_ns"`
	SHA256 string `json:"sha256"`
	// Cases is a suite's number of test cases (0: not a suite, or not
	// counted yet), Folds its held-out folds by score (those listed yet).
	Cases int                 `json:"cases,omitempty"`
	Folds map[string][]string `json:"folds,omitempty"`
	// Checked names the task declarations the suite was found fit for
	// (checkKey).
	Checked []string `json:"checked,omitempty"`
}

// file returns the digest of the regular file at path (symbolic links
// followed), from the cache when the file is unchanged.
func (d *Digests) file(path string) (digestEntry, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return digestEntry{}, err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return digestEntry{}, err
	}
	if !st.Mode().IsRegular() {
		return digestEntry{}, fmt.Errorf("%s: not a regular file", path)
	}
	key := keyOf(st)
	d.mu.Lock()
	d.load()
	e, ok := d.m[abs]
	d.mu.Unlock()
	if ok && e.valid(key) {
		return e, nil
	}
	seen := digestNow().UnixNano()
	sum, n, err := hashFile(abs)
	if err != nil {
		return digestEntry{}, err
	}
	// The file's state when it was read: one changed while it was read
	// is digested again next time.
	after, err := os.Stat(abs)
	if err != nil {
		return digestEntry{}, err
	}
	// A racy entry digested again keeps what it knew of the content
	// (cases, folds, checks) when the content is the same.
	keep := e
	e = digestEntry{fileKey: key, Seen: seen, SHA256: sum}
	if ok && keep.SHA256 == sum && keep.Size == n {
		e.Cases, e.Folds, e.Checked = keep.Cases, keep.Folds, keep.Checked
	}
	e.Size = n
	if keyOf(after) == key && n == st.Size() {
		d.remember(abs, e)
	}
	return e, nil
}

// fileKey is what identifies a file's state on disk without reading it:
// the inode, the size, and the modification and status-change times (ns).
type fileKey struct {
	Inode   uint64 `json:"inode"`
	Size    int64  `json:"size"`
	ModTime int64  `json:"mtime_ns"`
	CTime   int64  `json:"ctime_ns"`
}

func keyOf(st os.FileInfo) fileKey {
	ino, ctime := inodeCtime(st)
	return fileKey{Inode: ino, Size: st.Size(), ModTime: st.ModTime().UnixNano(), CTime: ctime}
}

// racyWindow is how close to its digest a file's change may be for the
// entry to be distrusted: timestamps come from a coarse clock (a tick of up
// to 10 ms, 2 s on FAT), and a network filesystem's from the server's, a
// little off ours.
const racyWindow = 2 * time.Second

// digestNow is the clock entries are dated by (a variable: tests move it).
var digestNow = time.Now

// valid reports whether the entry still describes the file whose state is
// k: the same key, and not racy.
func (e digestEntry) valid(k fileKey) bool {
	if e.fileKey != k || e.Seen == 0 {
		return false
	}
	limit := e.Seen - racyWindow.Nanoseconds()
	return k.ModTime < limit && k.CTime < limit
}

// setCases records the number of test cases of the suite at path, whose
// digest is sum (so that a count never outlives the content it counts).
func (d *Digests) setCases(path, sum string, cases int) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.load()
	if e, ok := d.m[abs]; ok && e.SHA256 == sum && e.Cases != cases {
		e.Cases = cases
		d.m[abs] = e
		d.added[abs] = e
	}
}

// setFolds records the folds of a score of the suite at path, whose digest
// is sum.
func (d *Digests) setFolds(path, sum, score string, folds []string) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.load()
	if e, ok := d.m[abs]; ok && e.SHA256 == sum {
		f := maps.Clone(e.Folds)
		if f == nil {
			f = map[string][]string{}
		}
		f[score] = slices.Clone(folds)
		e.Folds = f
		d.m[abs] = e
		d.added[abs] = e
	}
}

// checked says whether the file at path, unchanged, was found fit for the
// task key names.
func (d *Digests) checked(path, key string) bool {
	e, err := d.file(path)
	return err == nil && slices.Contains(e.Checked, key)
}

// setChecked records that the file at path, as it is, is fit for the task
// key names.
func (d *Digests) setChecked(path, key string) {
	e, err := d.file(path)
	if err != nil {
		return
	}
	abs, _ := filepath.Abs(path)
	d.mu.Lock()
	defer d.mu.Unlock()
	if cur, ok := d.m[abs]; ok && cur.SHA256 == e.SHA256 && !slices.Contains(cur.Checked, key) {
		cur.Checked = append(slices.Clone(cur.Checked), key)
		d.m[abs] = cur
		d.added[abs] = cur
	}
}

func (d *Digests) remember(abs string, e digestEntry) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.m[abs] = e
	d.added[abs] = e
}

// load reads File once; an unreadable or damaged file is an empty cache
// (every digest is computed again).
func (d *Digests) load() {
	if d.loaded {
		return
	}
	d.loaded = true
	d.m, d.added = map[string]digestEntry{}, map[string]digestEntry{}
	if d.File == "" {
		return
	}
	if b, err := os.ReadFile(d.File); err == nil {
		json.Unmarshal(b, &d.m)
		if d.m == nil {
			d.m = map[string]digestEntry{}
		}
	}
}

// Save writes the digests computed since the last Save into File, merged
// with what the file holds now. Nothing is written without File or without
// a new digest.
func (d *Digests) Save() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.File == "" || len(d.added) == 0 {
		return nil
	}
	all := map[string]digestEntry{}
	if b, err := os.ReadFile(d.File); err == nil {
		json.Unmarshal(b, &all)
	}
	if all == nil {
		all = map[string]digestEntry{}
	}
	for k, e := range d.added {
		all[k] = e
	}
	// Entries of files that are gone would only grow the file.
	for k, e := range all {
		if _, ok := d.added[k]; ok {
			continue
		}
		if st, err := os.Stat(k); err != nil || keyOf(st) != e.fileKey {
			delete(all, k)
		}
	}
	b, err := json.MarshalIndent(all, "", " ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(d.File), 0o755); err != nil {
		return fmt.Errorf("digest cache: %w", err)
	}
	if err := atomicfile.WriteFile(d.File, append(b, '\n')); err != nil {
		return fmt.Errorf("digest cache: %w", err)
	}
	clear(d.added)
	return nil
}

// SaveOrWarn is Save where the cache is only a saving: a digest file that
// cannot be written (a read-only $BELUGA_DATA, a shared cache of another
// user) costs the digests being computed again next time, so it is a
// warning on w, never a failed status or report.
// It warns once per Digests.
func (d *Digests) SaveOrWarn(w io.Writer) {
	if err := d.Save(); err != nil && !d.warned {
		d.warned = true
		fmt.Fprintf(w, "warning: %v (not kept: the inputs are digested again next time)\n", err)
	}
}

// hashFile returns the SHA-256 of a file's content and its length (a
// variable: tests count the reads).
var hashFile = hashFileOf

func hashFileOf(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, fmt.Errorf("digest %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// Path returns the digest of what a run reads at path: a file's content,
// or for a directory (a model checkpoint) the digest of the list of its
// files — the name and digest of every regular file in it, not in its
// sub-directories, whose name does not start with a dot — with their total
// size.
func (d *Digests) Path(path string) (sum string, size int64, err error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", 0, err
	}
	if !st.IsDir() {
		e, err := d.file(path)
		return e.SHA256, e.Size, err
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return "", 0, err
	}
	var lines []string
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		p := filepath.Join(path, name)
		fi, err := os.Stat(p) // a hub snapshot's files are links to its blobs
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue // a dangling link reads as no file
			}
			return "", 0, err
		}
		if !fi.Mode().IsRegular() {
			continue
		}
		fe, err := d.file(p)
		if err != nil {
			return "", 0, err
		}
		lines = append(lines, name+"\x00"+fe.SHA256+"\n")
		size += fe.Size
	}
	if len(lines) == 0 {
		return "", 0, fmt.Errorf("%s: a directory without files", path)
	}
	slices.Sort(lines)
	h := sha256.New()
	for _, l := range lines {
		io.WriteString(h, l)
	}
	return hex.EncodeToString(h.Sum(nil)), size, nil
}
