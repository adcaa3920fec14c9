package suites

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/beluga-nlp/beluga/internal/atomicfile"
)

// The native suite format is JSON lines: an optional header line describing
// the suite, then one test case a line. docs/suite-format.md documents it for
// people writing suites by hand.

// LineError locates a problem in a suite file.
type LineError struct {
	File  string
	Line  int    // 1-based; 0 when the problem is not tied to a line
	Field string // JSON field, or "" for the whole line
	Err   error
}

func (e *LineError) Error() string {
	var b strings.Builder
	b.WriteString("suite ")
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, " line %d", e.Line)
	}
	if e.Field != "" {
		fmt.Fprintf(&b, " field %q", e.Field)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *LineError) Unwrap() error { return e.Err }

// header is the optional first line of a suite file.
type header struct {
	Suite       string   `json:"suite"`
	Task        string   `json:"task,omitempty"`
	Labels      []string `json:"labels,omitempty"`
	ModelLabels []string `json:"model_labels,omitempty"`
}

// caseLine is one test case as it appears in a suite file.
type caseLine struct {
	Class         string            `json:"class"`
	Functionality string            `json:"functionality"`
	Type          string            `json:"type"`
	Description   string            `json:"description,omitempty"`
	ID            *int              `json:"id"`
	Inputs        []json.RawMessage `json:"inputs"`
	Label         json.RawMessage   `json:"label,omitempty"`
	Labels        []json.RawMessage `json:"labels,omitempty"`
	Meta          json.RawMessage   `json:"meta,omitempty"`
	Expect        *expectJSON       `json:"expect,omitempty"`
	Train         *trainJSON        `json:"train,omitempty"`
	Split         string            `json:"split,omitempty"`
	Group         string            `json:"group,omitempty"`
}

type expectJSON struct {
	Kind             string  `json:"kind"`
	Value            *int    `json:"value,omitempty"`
	Tolerance        float64 `json:"tolerance,omitempty"`
	Increasing       bool    `json:"increasing,omitempty"`
	Direction        string  `json:"direction,omitempty"`
	Slice            string  `json:"slice,omitempty"`
	SliceAgg         string  `json:"slice_agg,omitempty"`
	Agg              string  `json:"agg,omitempty"`
	AllowSingleInput bool    `json:"allow_single_input,omitempty"`
}

type trainJSON struct {
	Type      string `json:"type,omitempty"`
	Label     string `json:"label,omitempty"`
	Direction string `json:"direction,omitempty"`
	Slice     string `json:"slice,omitempty"`
	Scored    bool   `json:"scored,omitempty"`
}

// Load reads a suite in the native JSON-lines format from path (gzip-compressed
// when the name ends in .gz).
func Load(path string) (*Suite, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("suite %s: %w", path, err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, &LineError{File: path, Err: fmt.Errorf("not gzip: %w", err)}
		}
		defer zr.Close()
		tail := &readErrs{r: zr}
		s, line, err := read(tail, path)
		// A truncated stream ends in a partial line, which would otherwise be
		// reported as bad JSON: say what happened, and where.
		if errors.Is(tail.err, io.ErrUnexpectedEOF) {
			return nil, &LineError{File: path, Line: line, Err: fmt.Errorf("the gzip stream is truncated: it breaks off in this line (an interrupted download or copy?): %w", tail.err)}
		}
		return s, err
	}
	return Read(r, path)
}

// readErrs remembers the error, other than io.EOF, its reader returned.
type readErrs struct {
	r   io.Reader
	err error
}

func (e *readErrs) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF {
		e.err = err
	}
	return n, err
}

// Read reads a suite in the native JSON-lines format; name is used in errors.
// A class label outside the header's labels is refused with its line.
func Read(r io.Reader, name string) (*Suite, error) {
	s, _, err := read(r, name)
	return s, err
}

// read reads a suite as Read does, and says which line it reached.
func read(r io.Reader, name string) (*Suite, int, error) {
	s := &Suite{}
	byName := map[string]*Functionality{}
	seenIDs := map[*Functionality]map[int]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<28)
	line := 0
	for sc.Scan() {
		line++
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		lerr := func(field string, err error) error {
			return &LineError{File: name, Line: line, Field: field, Err: err}
		}
		if line == 1 {
			raw = bytes.TrimPrefix(raw, []byte("\ufeff"))
		}
		if !utf8.Valid(raw) {
			// JSON decoding would turn each bad byte into U+FFFD silently.
			return nil, line, lerr("", errors.New("not UTF-8 (a file in another encoding, such as cp1256 or Latin-1?)"))
		}
		var probe map[string]json.RawMessage
		if err := json.Unmarshal(raw, &probe); err != nil {
			return nil, line, lerr("", fmt.Errorf("not a JSON object: %v", err))
		}
		if _, ok := probe["suite"]; ok {
			if _, isCase := probe["functionality"]; !isCase {
				if len(s.Functionalities) > 0 || s.Name != "" {
					return nil, line, lerr("suite", errors.New("the suite header must be the first line"))
				}
				var h header
				if err := json.Unmarshal(raw, &h); err != nil {
					return nil, line, lerr("suite", err)
				}
				s.Name, s.Task = h.Suite, h.Task
				if len(h.Labels) > 0 {
					s.Labels = h.Labels
				}
				if len(h.ModelLabels) > 0 {
					s.ModelLabels = h.ModelLabels
				}
				continue
			}
		}
		var cl caseLine
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&cl); err != nil {
			return nil, line, lerr(unknownField(err), err)
		}
		f, c, err := cl.toCase()
		if err != nil {
			var fe *fieldError
			if errors.As(err, &fe) {
				return nil, line, lerr(fe.field, fe.err)
			}
			return nil, line, lerr("", err)
		}
		for _, l := range c.Labels {
			if len(s.Labels) > 0 && !l.IsAnswer && l.Class >= len(s.Labels) {
				field := "label"
				if len(cl.Labels) > 0 {
					field = "labels"
				}
				return nil, line, lerr(field, fmt.Errorf("class %d is outside the suite's %d labels %q", l.Class, len(s.Labels), s.Labels))
			}
		}
		prev := byName[f.Name]
		if prev == nil {
			prev = f
			byName[f.Name] = f
			seenIDs[f] = map[int]bool{}
			s.Functionalities = append(s.Functionalities, f)
		} else if err := prev.consistentWith(f); err != nil {
			return nil, line, err.(*fieldError).at(name, line)
		}
		if seenIDs[prev][c.ID] {
			return nil, line, lerr("id", fmt.Errorf("duplicate case id %d in functionality %q", c.ID, f.Name))
		}
		seenIDs[prev][c.ID] = true
		prev.Cases = append(prev.Cases, c)
	}
	if err := sc.Err(); err != nil {
		return nil, line + 1, &LineError{File: name, Line: line + 1, Err: err}
	}
	if s.Name == "" {
		s.Name = strings.TrimSuffix(strings.TrimSuffix(baseName(name), ".gz"), ".jsonl")
	}
	return s, line, nil
}

func baseName(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}

// unknownField extracts the field name from encoding/json's errors, so that a
// misspelt or mistyped field is reported by name.
func unknownField(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return te.Field
	}
	msg := err.Error()
	if i := strings.Index(msg, `unknown field "`); i >= 0 {
		rest := msg[i+len(`unknown field "`):]
		if j := strings.IndexByte(rest, '"'); j >= 0 {
			return rest[:j]
		}
	}
	return ""
}

type fieldError struct {
	field string
	err   error
}

func (e *fieldError) Error() string { return e.field + ": " + e.err.Error() }

func (e *fieldError) at(file string, line int) *LineError {
	return &LineError{File: file, Line: line, Field: e.field, Err: e.err}
}

func ferr(field, format string, args ...any) error {
	return &fieldError{field: field, err: fmt.Errorf(format, args...)}
}

func (cl *caseLine) toCase() (*Functionality, *Case, error) {
	if cl.Functionality == "" {
		return nil, nil, ferr("functionality", "missing")
	}
	if cl.Type == "" {
		return nil, nil, ferr("type", "missing (want %s)", TypeList())
	}
	tt, err := ParseTestType(cl.Type)
	if err != nil {
		return nil, nil, &fieldError{"type", err}
	}
	if cl.ID == nil {
		return nil, nil, ferr("id", "missing")
	}
	if *cl.ID < 0 {
		return nil, nil, ferr("id", "negative case id %d", *cl.ID)
	}
	if len(cl.Inputs) == 0 {
		return nil, nil, ferr("inputs", "no inputs")
	}
	f := &Functionality{Name: cl.Functionality, Class: cl.Class, Type: tt, Description: cl.Description}
	if cl.Expect != nil {
		e := cl.Expect
		if !KnownExpectKind(e.Kind) {
			return nil, nil, ferr("expect", "unknown expectation kind %q", e.Kind)
		}
		f.Expect = Expectation{Kind: e.Kind, Value: e.Value, Tolerance: e.Tolerance, Increasing: e.Increasing,
			Direction: e.Direction, Slice: e.Slice, SliceAgg: e.SliceAgg, Agg: e.Agg, AllowSingleInput: e.AllowSingleInput}
	} else {
		f.Expect = DefaultExpectation(tt)
	}
	if err := f.Expect.validate(tt); err != nil {
		return nil, nil, err
	}
	if cl.Train != nil {
		f.Train = Training{Label: cl.Train.Label, Direction: cl.Train.Direction, Slice: cl.Train.Slice, Scored: cl.Train.Scored}
		if _, err := strconv.Atoi(f.Train.Label); f.Train.Scored && err != nil {
			return nil, nil, &fieldError{"train.scored", fmt.Errorf("needs a class index in train.label, not %q", f.Train.Label)}
		}
		if cl.Train.Type != "" {
			t, err := ParseTestType(cl.Train.Type)
			if err != nil {
				return nil, nil, &fieldError{"train", err}
			}
			f.Train.Type = t
		}
	}
	c := &Case{ID: *cl.ID}
	for i, raw := range cl.Inputs {
		in, err := decodeInput(raw)
		if err != nil {
			return nil, nil, ferr("inputs", "input %d: %v", i, err)
		}
		c.Inputs = append(c.Inputs, in)
	}
	if tt.Spec().Paired && len(c.Inputs) < 2 && !f.Expect.AllowSingleInput {
		return nil, nil, ferr("inputs", "%s case has a single input; %s cases need the original and at least one perturbation", tt, pairedList())
	}
	switch {
	case len(cl.Label) > 0 && len(cl.Labels) > 0:
		return nil, nil, ferr("labels", "give either label (one for all inputs) or labels (one per input), not both")
	case len(cl.Label) > 0 && string(cl.Label) != "null":
		l, err := decodeLabel(cl.Label)
		if err != nil {
			return nil, nil, &fieldError{"label", err}
		}
		c.Labels = []Label{l}
	case len(cl.Labels) > 0:
		if len(cl.Labels) != len(c.Inputs) {
			return nil, nil, ferr("labels", "%d labels for %d inputs", len(cl.Labels), len(c.Inputs))
		}
		for i, raw := range cl.Labels {
			l, err := decodeLabel(raw)
			if err != nil {
				return nil, nil, ferr("labels", "label %d: %v", i, err)
			}
			c.Labels = append(c.Labels, l)
		}
	}
	if len(cl.Meta) > 0 && string(cl.Meta) != "null" {
		c.Meta = cl.Meta
	}
	switch Split(cl.Split) {
	case "", SplitTrain, SplitValidation, SplitTest:
		c.Split = Split(cl.Split)
	default:
		return nil, nil, ferr("split", "unknown split %q (want train, validation or test)", cl.Split)
	}
	c.Group = cl.Group
	return f, c, nil
}

func decodeInput(raw json.RawMessage) (Input, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return Input{Text: s}, nil
	}
	var pair []string
	if err := json.Unmarshal(raw, &pair); err != nil || len(pair) != 2 {
		return Input{}, errors.New("want a string or a pair of strings")
	}
	return Input{Text: pair[0], Pair: pair[1], IsPair: true}, nil
}

func decodeLabel(raw json.RawMessage) (Label, error) {
	var n json.Number
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return Label{}, err
	}
	switch x := v.(type) {
	case json.Number:
		n = x
		i, err := n.Int64()
		if err != nil || i < 0 {
			return Label{}, fmt.Errorf("class label %s is not a non-negative integer", n)
		}
		return ClassLabel(int(i)), nil
	case string:
		return AnswerLabel(x), nil
	}
	return Label{}, fmt.Errorf("want a class index or an answer string, got %s", raw)
}

var knownExpectKinds = map[string]bool{
	ExpectEq: true, ExpectPredNot: true, ExpectAllowForNeutral: true, ExpectInv: true,
	ExpectMonotonic: true, ExpectPositiveChange: true, ExpectImplicationTriplet: true,
	ExpectSquadCleanEq: true, ExpectSquadInvSubstitution: true, ExpectAzimuth: true,
}

// Aggregations of a case's per-input results (CheckList's agg_fn).
const (
	AggAll            = "all"
	AggAllExceptFirst = "all_except_first"
)

func (e *Expectation) validate(tt TestType) error {
	if e.Kind == "" {
		return ferr("expect", "a %s functionality needs an expectation (kind and direction)", tt)
	}
	for _, a := range []struct{ field, v string }{{"agg", e.Agg}, {"slice_agg", e.SliceAgg}} {
		if a.v != "" && a.v != AggAll && a.v != AggAllExceptFirst {
			return ferr("expect", "%s %q (want all or all_except_first)", a.field, a.v)
		}
	}
	if e.Tolerance < 0 {
		return ferr("expect", "negative tolerance %g", e.Tolerance)
	}
	return nil
}

func (f *Functionality) consistentWith(g *Functionality) error {
	switch {
	case f.Class != g.Class:
		return ferr("class", "functionality %q has class %q here but %q earlier", f.Name, g.Class, f.Class)
	case f.Type != g.Type:
		return ferr("type", "functionality %q has type %s here but %s earlier", f.Name, g.Type, f.Type)
	case !sameExpectation(f.Expect, g.Expect):
		return ferr("expect", "functionality %q has a different expectation than on its first line", f.Name)
	case f.Train != g.Train:
		return ferr("train", "functionality %q has a different training view than on its first line", f.Name)
	}
	return nil
}

func sameExpectation(a, b Expectation) bool {
	if (a.Value == nil) != (b.Value == nil) || (a.Value != nil && *a.Value != *b.Value) {
		return false
	}
	a.Value, b.Value = nil, nil
	return a == b
}

// Save writes s to path in the native format (gzip-compressed when the name
// ends in .gz). The file appears only once it is complete.
func Save(path string, s *Suite) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		if strings.HasSuffix(path, ".gz") {
			zw := gzip.NewWriter(w)
			if err := Write(zw, s); err != nil {
				return err
			}
			return zw.Close()
		}
		return Write(w, s)
	})
}

// Write writes s in the native format: the header line, then one line per case
// in suite order.
func Write(w io.Writer, s *Suite) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(header{Suite: s.Name, Task: s.Task, Labels: s.Labels, ModelLabels: s.ModelLabels}); err != nil {
		return err
	}
	for _, f := range s.Functionalities {
		e := f.Expect
		ej := &expectJSON{Kind: e.Kind, Value: e.Value, Tolerance: e.Tolerance, Increasing: e.Increasing,
			Direction: e.Direction, Slice: e.Slice, SliceAgg: e.SliceAgg, Agg: e.Agg, AllowSingleInput: e.AllowSingleInput}
		var tj *trainJSON
		if f.Train != (Training{}) {
			tj = &trainJSON{Type: string(f.Train.Type), Label: f.Train.Label, Direction: f.Train.Direction, Slice: f.Train.Slice, Scored: f.Train.Scored}
		}
		for _, c := range f.Cases {
			id := c.ID
			cl := caseLine{Class: f.Class, Functionality: f.Name, Type: string(f.Type), Description: f.Description,
				ID: &id, Expect: ej, Train: tj, Meta: c.Meta, Split: string(c.Split), Group: c.Group}
			for _, in := range c.Inputs {
				var raw []byte
				if in.IsPair {
					raw, _ = marshalNoEscape([]string{in.Text, in.Pair})
				} else {
					raw, _ = marshalNoEscape(in.Text)
				}
				cl.Inputs = append(cl.Inputs, raw)
			}
			switch len(c.Labels) {
			case 0:
			case 1:
				cl.Label = encodeLabel(c.Labels[0])
			default:
				for _, l := range c.Labels {
					cl.Labels = append(cl.Labels, encodeLabel(l))
				}
			}
			if err := enc.Encode(cl); err != nil {
				return fmt.Errorf("functionality %q case %d: %w", f.Name, c.ID, err)
			}
		}
	}
	return bw.Flush()
}

func encodeLabel(l Label) json.RawMessage {
	if l.IsAnswer {
		b, _ := marshalNoEscape(l.Answer)
		return b
	}
	return json.RawMessage(fmt.Sprint(l.Class))
}

func marshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// Open reads a suite from any format the project knows, by file name: the
// native format (.jsonl, .jsonl.gz), a CheckList pickle (.pkl, .tar.gz, .tgz)
// or HateCheck's cases (.csv).
func Open(path string) (*Suite, error) {
	switch {
	case strings.HasSuffix(path, ".jsonl"), strings.HasSuffix(path, ".jsonl.gz"):
		return Load(path)
	case strings.HasSuffix(path, ".pkl"), strings.HasSuffix(path, ".tar.gz"), strings.HasSuffix(path, ".tgz"):
		return ImportCheckList(path)
	case strings.HasSuffix(path, ".csv"):
		res, err := ImportHateCheck(path)
		if err != nil {
			return nil, err
		}
		return res.Suite, nil
	}
	return nil, fmt.Errorf("suite %s: unknown format (want .jsonl, .jsonl.gz, a CheckList .pkl/.tar.gz or a HateCheck .csv)", path)
}
