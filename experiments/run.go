package experiments

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/beluga-nlp/beluga/train"
)

// Run is one run of a sweep: what it computes — package train's run spec,
// typed and resolved, with the content digests of the files it reads — and
// its place in the experiment's design (task, configuration, method,
// score, fold), which names its cell in the tables.
//
// A run's identity (ID) is the hash of what it computes, never of how the
// spec that asked for it was written:
//
//   - Train in its canonical form: every grid key set as the field path it
//     names (lr and hyper.lr are one setting), every default resolved from
//     the named profile, the task kind resolved, and every field at its
//     zero value left out — so that a field added to train.RunSpec keeps
//     every existing ID for as long as its zero value means what runs did
//     before it existed;
//   - in place of every path a run reads (Input), the SHA-256 of its
//     content: not the path, nor the working directory, nor the name it was
//     given — a suite re-imported with other cases under the same name is
//     another run, a file moved elsewhere the same one;
//   - in place of what another run provides, that run's ID: the IID
//     baseline a run starts from (From) and the searches whose choice it
//     trains with (HyperFrom, ProbeFrom);
//   - a search run's grid (Search), and for a search's trial that it is
//     one (its Train holds the trial's point of the grid). A search's
//     Trials are not hashed: its grid and Train determine them.
type Run struct {
	// Task is the task's name in the spec and the tables (SENT, PARA,
	// READ, or a declared task's).
	Task string `json:"task"`
	// Configuration is Table 3's name of Train's configuration (IID,
	// IID-T, IID+T, IID-IID+T, T).
	Configuration string `json:"configuration"`
	Method        string `json:"method"`
	// Score is ScoreIID for the baseline, ScoreSeen for the run trained on
	// all of T_train, ScoreFunc/ScoreClass/ScoreType or "meta:COLUMN"
	// (IsMetaScore) for a held-out run, ScoreSearch for a search.
	Score string `json:"score"`
	// Fold names what a held-out run leaves out (Train.HeldOut's name).
	Fold string `json:"fold,omitempty"`
	Seed int64  `json:"seed"`
	// Swept are the field paths of Train the sweep's grid set that the run
	// depends on — that it reads (Reads) or that a run it needs reads (its
	// IID baseline's iid_lr) — sorted: a run's label, its row in the
	// tables (Axes) and its replicate (Replicate) name them; they are no
	// part of its identity (Train holds their values). Unread are the
	// others the grid set: one run stands for every value of each.
	Swept  []string `json:"swept,omitempty"`
	Unread []string `json:"unread,omitempty"`
	// Train is the run's spec, resolved: what it computes is its
	// effective form (train.RunSpec.Effective), which its ID hashes; the
	// settings it does not read keep the values the sweep gave, for its
	// label. Its input fields hold the paths where the sweep found them
	// (Inputs); FromIID and the settings a search chooses are left empty:
	// the runner fills them from the runs that provide them.
	Train train.RunSpec `json:"train"`
	// Inputs are the files and directories Train reads, one per input
	// field, with their digests.
	Inputs []Input `json:"inputs,omitempty"`
	// Search is a search run's grid (nil for any other run).
	Search *SearchGrid `json:"search,omitempty"`
	// Trials are the IDs of a search's trials, in the grid's order (lr,
	// then batch size, then epochs): the search runs none itself, it
	// reads their scores and picks the best.
	Trials []string `json:"trials,omitempty"`
	// From is the ID of the IID baseline whose model the run starts from.
	From string `json:"from,omitempty"`
	// HyperFrom is the ID of the search whose choice of epochs, batch size
	// and learning rate the suite phase trains with; ProbeFrom that of the
	// search whose choice of batch size and learning rate LP-FT's probing
	// phase trains with.
	HyperFrom string `json:"hyper_from,omitempty"`
	ProbeFrom string `json:"probe_from,omitempty"`

	// id and slot are computed once, when the run is made (seal): a run
	// Expand, ReadRun or a store's sweep made is not changed after.
	id, slot string
}

// Input is a file or directory a run reads, as the run records it.
type Input struct {
	// Field is the train.RunSpec field that names it (train.InputField).
	Field string `json:"field"`
	// Path is where the sweep found it: a file or directory, the data
	// cache's copy of a dataset's file, a hub-cache snapshot.
	Path string `json:"path"`
	// Name is the registered dataset (sst2, checklist-sentiment) or hub id
	// it was named by; File the dataset's file (its path in the cache).
	Name string `json:"name,omitempty"`
	File string `json:"file,omitempty"`
	// SHA256 is the digest of its content (Digests.Path); a dataset's file
	// is identified by its registered checksum.
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size,omitempty"`
	// Cases is a suite's number of test cases (0 when not counted).
	Cases int `json:"cases,omitempty"`
	// Commit and Files identify a checkpoint named by hub id as the hub
	// publishes it (hub.Identity): SHA256 is then the identity's digest,
	// not a hash of bytes, so that a sweep is planned and its IDs known
	// without the checkpoint's bytes.
	Commit string            `json:"commit,omitempty"`
	Files  map[string]string `json:"files,omitempty"`
	// Pending says why the input's identity is not known yet (a hub
	// checkpoint not in the cache, offline, its revision not a commit):
	// the run's ID is provisional and the run cannot start.
	Pending string `json:"pending,omitempty"`
	// Absent says why the input is not on this machine yet (a hub
	// checkpoint the cache lacks: the runs fetch it); "" when it is, and
	// in a run read back from a store, which does not know.
	Absent string `json:"-"`
}

// IDLength is the number of hex digits of a run ID.
const IDLength = 12

// ID is the run's identity: the first IDLength hex digits of the SHA-256 of
// its canonical identity record (the type's comment). Two runs that compute
// the same share an ID and therefore a directory.
func (r Run) ID() string {
	if r.id != "" {
		return r.id
	}
	return r.hash(true)
}

// Slot is the run's place in a sweep regardless of its inputs' content:
// the hash of its identity with every input digest and every run it needs
// left out. A run whose inputs changed has a new ID in the same slot,
// which is how status finds the finished run it replaces (Stale).
func (r Run) Slot() string {
	if r.slot != "" {
		return r.slot
	}
	return r.hash(false)
}

// sortSwept splits the settings the grid set into those the run depends
// on (Swept: it reads them, or they are among needed, the Swept of the
// runs it needs) and the others (Unread).
func (r *Run) sortSwept(needed []string) {
	swept := slices.Concat(r.Swept, r.Unread)
	r.Swept, r.Unread = nil, nil
	for _, p := range swept {
		switch {
		case slices.Contains(r.Swept, p) || slices.Contains(r.Unread, p):
		case r.Reads(p) || slices.Contains(needed, p):
			r.Swept = append(r.Swept, p)
		default:
			r.Unread = append(r.Unread, p)
		}
	}
	slices.Sort(r.Swept)
	slices.Sort(r.Unread)
}

// seal computes the run's ID and slot once, for a run made whole; a run
// that has none (a record without an input's digest) is refused.
func (r *Run) seal() error {
	r.id, r.slot = "", ""
	id, slot, err := r.identities()
	if err != nil {
		return fmt.Errorf("run %s: %w", r.Label(), err)
	}
	r.id, r.slot = shortHash(id), shortHash(slot)
	return nil
}

func (r Run) hash(contents bool) string {
	id, slot, err := r.identities()
	if err != nil {
		// A run holds only JSON-encodable values, and every input field
		// its digest: Expand makes runs so.
		panic(fmt.Sprintf("experiments: run %s: %v", r.Label(), err))
	}
	if contents {
		return shortHash(id)
	}
	return shortHash(slot)
}

func shortHash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:IDLength]
}

// identityJSON is the canonical identity record: with contents, input
// digests and the IDs of the runs it needs; without, neither.
func (r Run) identityJSON(contents bool) ([]byte, error) {
	id, slot, err := r.identities()
	if contents {
		return id, err
	}
	return slot, err
}

// identities encodes the run's canonical identity record with input
// digests and the IDs of the runs it needs (its ID's), and without (its
// slot's), the train spec encoded once for both.
func (r Run) identities() (id, slot []byte, err error) {
	s := r.Train.Effective()
	s.FromIID, s.Cache = "", ""
	fields := s.InputFields()
	digests := make([]string, len(fields))
	for i, f := range fields {
		in, ok := r.Input(f.Field)
		if !ok {
			return nil, nil, fmt.Errorf("input %s (%s) has no digest", f.Field, *f.Path)
		}
		digests[i] = "sha256:" + in.SHA256
	}
	train, err := genericJSON(s)
	if err != nil {
		return nil, nil, err
	}
	search, err := genericJSON(r.Search)
	if err != nil {
		return nil, nil, err
	}
	record := func(inputs func(int) string, from, hyper, probe string) ([]byte, error) {
		for i, f := range fields {
			if err := setJSONPath(train, f.Field, inputs(i)); err != nil {
				return nil, err
			}
		}
		rec := map[string]any{"train": train, "search": search, "from": from, "hyper_from": hyper, "probe_from": probe, "trial": r.Score == ScoreTrial}
		return json.Marshal(pruneZero(rec))
	}
	if id, err = record(func(i int) string { return digests[i] }, r.From, r.HyperFrom, r.ProbeFrom); err != nil {
		return nil, nil, err
	}
	slot, err = record(func(int) string { return "input" }, mark(r.From), mark(r.HyperFrom), mark(r.ProbeFrom))
	return id, slot, err
}

// genericJSON is v as encoding/json decodes its encoding: maps, lists,
// strings, booleans and numbers (kept as written), nil.
func genericJSON(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var generic any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return generic, dec.Decode(&generic)
}

// setJSONPath sets the value at a field path (a.b, a[2].b) of a decoded
// JSON object.
func setJSONPath(v any, path, value string) error {
	parts := strings.Split(path, ".")
	for i, p := range parts {
		name, index, indexed := strings.Cut(strings.TrimSuffix(p, "]"), "[")
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("field path %s: %s is no object", path, strings.Join(parts[:i], "."))
		}
		if i == len(parts)-1 && !indexed {
			m[name] = value
			return nil
		}
		v = m[name]
		if indexed {
			n, err := strconv.Atoi(index)
			list, ok := v.([]any)
			if err != nil || !ok || n < 0 || n >= len(list) {
				return fmt.Errorf("field path %s: no element %s", path, p)
			}
			v = list[n]
		}
	}
	return nil
}

// mark stands for a run's ID in a slot: whether there is one.
func mark(id string) string {
	if id == "" {
		return ""
	}
	return "run"
}

func cloneFile[T any](p *T) *T {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}

// Input returns the run's input of a field.
func (r Run) Input(field string) (Input, bool) {
	for _, in := range r.Inputs {
		if in.Field == field {
			return in, true
		}
	}
	return Input{}, false
}

// Reads says whether the run depends on the setting a field path of its
// train spec names: whether another value there changes what it computes
// (its effective spec). The settings a search chooses are read from the
// search, not from the field: a run trained with a search's choice, and a
// search itself, read none of them.
func (r Run) Reads(path string) bool {
	searched := []string{"hyper.epochs", "hyper.batch_size", "hyper.lr"}
	if r.Search != nil || r.HyperFrom != "" {
		if slices.Contains(searched, path) {
			return false
		}
	}
	if r.ProbeFrom != "" && (path == "probe_hyper.batch_size" || path == "probe_hyper.lr") {
		return false
	}
	alt := r.Train
	alt.Corrections = slices.Clone(r.Train.Corrections)
	if alt.Prompt != nil {
		p := *alt.Prompt // changed below: not the run's own
		alt.Prompt = &p
	}
	f, err := runSpecField(reflect.ValueOf(&alt).Elem(), path)
	if err != nil {
		return true // not a setting: kept, as it was given
	}
	switch f.Kind() {
	case reflect.Bool:
		f.SetBool(!f.Bool())
	case reflect.Float64:
		if x := f.Float(); x != 0 {
			f.SetFloat(x / 2)
		} else {
			f.SetFloat(0.5)
		}
	case reflect.Uint64:
		f.SetUint(f.Uint() + 1)
	case reflect.String:
		f.SetString(f.String() + "'")
	default:
		f.SetInt(f.Int() + 1)
	}
	a, errA := canonicalJSON(r.Train.Effective())
	b, errB := canonicalJSON(alt.Effective())
	return errA != nil || errB != nil || string(a) != string(b)
}

// MarshalJSON writes the run with its ID and slot first, for the people
// and tools that read spec.json and sweep.json; they are computed again
// when it is read (ReadRun checks the ID against the directory's name).
func (r Run) MarshalJSON() ([]byte, error) {
	type plain Run
	b, err := json.Marshal(plain(r))
	if err != nil {
		return nil, err
	}
	head := fmt.Sprintf(`{"id":%q,"slot":%q,`, r.ID(), r.Slot())
	return append([]byte(head), b[1:]...), nil
}

// Label is a short human-readable description of the run: its task,
// configuration, method, score, fold, the values of the grid keys it was
// swept over and its seed.
func (r Run) Label() string {
	s := fmt.Sprintf("%s %s %s %s", r.Task, r.Configuration, r.Method, r.Score)
	if p := r.TrialPoint(); p != "" {
		s += " " + p
	}
	if r.Fold != "" {
		s += " -" + r.Fold
	}
	if kv := r.settings(func(string) bool { return true }); kv != "" {
		s += " " + kv
	}
	return s + fmt.Sprintf(" seed=%d", r.Seed)
}

// TrialPoint is a search trial's point of its search's grid, "lr=…
// batch_size=… epochs=…"; empty for any other run.
func (r Run) TrialPoint() string {
	if r.Score != ScoreTrial {
		return ""
	}
	h := r.Train.Hyper
	return fmt.Sprintf("lr=%g batch_size=%d epochs=%g", h.LR, h.BatchSize, h.Epochs)
}

// Axes is the run's values of the swept settings that make a different
// model rather than a replicate of one (IsAxis), as "key=value" sorted by
// key; empty when it has none. Reports give each value its own row.
func (r Run) Axes() string { return r.settings(IsAxis) }

// Replicate names the replicate the run belongs to: its seed and the
// values of its swept settings that are no axis (learning rates, batch
// sizes, epochs). Reports pair each run with the baseline run of its
// replicate.
func (r Run) Replicate() string {
	s := fmt.Sprintf("seed=%d", r.Seed)
	if kv := r.settings(func(k string) bool { return !IsAxis(k) }); kv != "" {
		s += " " + kv
	}
	return s
}

// settings writes the swept settings keep says to keep as "key=value",
// each under its grid key (SettingName), sorted by it.
func (r Run) settings(keep func(path string) bool) string {
	type kv struct{ k, v string }
	var out []kv
	for _, p := range r.Swept {
		if !keep(p) {
			continue
		}
		v, err := fieldValue(&r.Train, p)
		if err != nil {
			continue
		}
		out = append(out, kv{SettingName(p), v})
	}
	slices.SortFunc(out, func(a, b kv) int { return strings.Compare(a.k, b.k) })
	parts := make([]string, len(out))
	for i, x := range out {
		parts[i] = x.k + "=" + x.v
	}
	return strings.Join(parts, " ")
}

// UnreadSettings says, for each setting the sweep's grid gives several
// values (by its grid key, SettingName; every setting when grid is nil)
// that some of runs do not read, which: "probe_lr: read by no run", "lr:
// not read by IID vanilla (2 runs)". A run that does not read a setting is
// one run for every value of it, not one per value.
func UnreadSettings(runs []Run, grid map[string][]any) []string {
	several := map[string]bool{}
	for k, vs := range grid {
		several[SettingName(gridPath(k))] = len(vs) > 1
	}
	type count struct {
		read   int
		unread map[string]int // "configuration method" → runs
	}
	counts := map[string]*count{}
	for _, r := range runs {
		for _, paths := range [][]string{r.Swept, r.Unread} {
			for _, p := range paths {
				k := SettingName(p)
				if counts[k] == nil {
					counts[k] = &count{unread: map[string]int{}}
				}
				if slices.Contains(r.Swept, p) {
					counts[k].read++
				} else {
					counts[k].unread[r.Configuration+" "+r.Method]++
				}
			}
		}
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		c := counts[k]
		switch {
		case len(c.unread) == 0, grid != nil && !several[k]:
		case c.read == 0:
			out = append(out, k+": read by no run")
		default:
			var rows []string
			for _, row := range slices.Sorted(maps.Keys(c.unread)) {
				rows = append(rows, fmt.Sprintf("%s (%d %s)", row, c.unread[row], map[bool]string{true: "run", false: "runs"}[c.unread[row] == 1]))
			}
			out = append(out, fmt.Sprintf("%s: not read by %s", k, strings.Join(rows, ", ")))
		}
	}
	return out
}

// SweptValues are the values of the run's swept settings, by their grid
// keys (SettingName), for pages that show them.
func (r Run) SweptValues() map[string]any {
	out := map[string]any{}
	for _, p := range r.Swept {
		if f, err := runSpecField(reflect.ValueOf(&r.Train).Elem(), p); err == nil {
			out[SettingName(p)] = f.Interface()
		}
	}
	return out
}

// TrainSize is the run's training-set size as its grid set it: a count
// of i.i.d. training examples, a fraction of them in (0, 1), or 0 when it
// trains on all of them.
func (r Run) TrainSize() float64 {
	if r.Train.TrainSize > 0 {
		return float64(r.Train.TrainSize)
	}
	return r.Train.TrainFraction
}

// SettingName is the name a field path of the run spec goes by in grids,
// labels and tables: BeLUGA's short key where it has one (hyper.lr is lr,
// method_settings.irm_lambda irm_lambda, train_fraction train_size), the
// path itself otherwise.
func SettingName(path string) string {
	if path == "train_fraction" {
		return TrainSizeKey
	}
	for k, p := range gridKeys {
		if p == path {
			return k
		}
	}
	return path
}

// fieldValue formats the value of the field a path names in s.
func fieldValue(s *train.RunSpec, path string) (string, error) {
	f, err := runSpecField(reflect.ValueOf(s).Elem(), path)
	if err != nil {
		return "", err
	}
	switch f.Kind() {
	case reflect.Float64:
		return strconv.FormatFloat(f.Float(), 'g', -1, 64), nil
	case reflect.Bool:
		return strconv.FormatBool(f.Bool()), nil
	case reflect.Uint64:
		return strconv.FormatUint(f.Uint(), 10), nil
	case reflect.String:
		// A named choice swept as an axis (prompt.template).
		return f.String(), nil
	}
	return strconv.FormatInt(f.Int(), 10), nil
}

// canonicalJSON encodes v with object keys sorted at every level and every
// object member at its zero value (0, false, "", null, an empty list or
// object) left out; list elements are kept in place whatever they are.
func canonicalJSON(v any) ([]byte, error) {
	generic, err := genericJSON(v)
	if err != nil {
		return nil, err
	}
	return json.Marshal(pruneZero(generic))
}

// pruneZero removes the zero-valued members of every object in v.
func pruneZero(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			e = pruneZero(e)
			if isZeroJSON(e) {
				delete(x, k)
				continue
			}
			x[k] = e
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = pruneZero(e)
		}
		return x
	}
	return v
}

func isZeroJSON(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case bool:
		return !x
	case string:
		return x == ""
	case json.Number:
		f, err := x.Float64()
		return err == nil && f == 0
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return false
}
