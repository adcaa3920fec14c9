package datasets

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Labels say how a file's label cells name the task's classes. Names are
// the task's label names in class order; a cell is one of them, or an
// integer index into them. Map, when set, maps the file's own labels onto
// Names first: a three-way NLI file read by a two-way task,
//
//	labels: {entailment: entailment, neutral: non-entailment, contradiction: non-entailment}
//
// A cell Map does not name is read as a name or index of Names, so a map
// lists only the labels that differ. In YAML and JSON, Labels is either a
// list (Names) or a mapping (Map); the names of a mapped file are the
// task's, which its runner sets.
type Labels struct {
	Names []string
	Map   LabelMap
}

// LabelMap maps labels as a source writes them — a data file's, a table of
// test cases', a model's id2label, a suite's — onto the label names of what
// reads them: a task's, a suite's. It is the one label map of beluga: an
// i.i.d. file's (Labels.Map, labels: {neutral: non-entailment}), beluga
// suite import table's and beluga test's (--label-map FROM=TO), and a
// task's suite_labels, the one map whose targets may be soft (Targets).
type LabelMap map[string]Target

// Target is what a label maps onto: a label name, or — a soft target, as
// BeLUGA trains its not_0 cases on [⅓, ⅔] — one probability per label of
// what reads it. In YAML and JSON it is a name or a list of numbers. Only
// Targets accepts a soft one; Check refuses it, since a file's or a
// model's label is read as one class.
type Target struct {
	Name  string
	Probs []float64
}

// LabelMapOf returns the map of labels onto label names.
func LabelMapOf(names map[string]string) LabelMap {
	m := LabelMap{}
	for k, v := range names {
		m[k] = Name(v)
	}
	return m
}

// Name returns the target of a label name.
func Name(name string) Target { return Target{Name: name} }

func (t Target) String() string {
	if t.Probs != nil {
		return fmt.Sprint(t.Probs)
	}
	return t.Name
}

// MarshalJSON writes the name, or the list of probabilities.
func (t Target) MarshalJSON() ([]byte, error) {
	if t.Probs != nil {
		return json.Marshal(t.Probs)
	}
	return json.Marshal(t.Name)
}

// UnmarshalJSON reads a name or a list of probabilities.
func (t *Target) UnmarshalJSON(b []byte) error {
	*t = Target{}
	if s := bytes.TrimSpace(b); len(s) > 0 && s[0] == '[' {
		return json.Unmarshal(b, &t.Probs)
	}
	return json.Unmarshal(b, &t.Name)
}

// MarshalYAML writes the name, or the list of probabilities.
func (t Target) MarshalYAML() (any, error) {
	if t.Probs != nil {
		return t.Probs, nil
	}
	return t.Name, nil
}

// UnmarshalYAML reads a name or a list of probabilities (checked by
// CheckYAML first).
func (t *Target) UnmarshalYAML(n *yaml.Node) error {
	*t = Target{}
	if err := t.CheckYAML(n); err != nil {
		return err
	}
	if n.Kind == yaml.SequenceNode {
		t.Probs = []float64{}
		return n.Decode(&t.Probs)
	}
	return n.Decode(&t.Name)
}

// CheckYAML refuses what is neither a label name nor a list of numbers,
// naming the list item at fault.
func (t *Target) CheckYAML(n *yaml.Node) error {
	switch {
	case n.Kind == yaml.ScalarNode && n.Tag != "!!null":
		return nil
	case n.Kind == yaml.SequenceNode:
		for i, c := range n.Content {
			if c.Kind != yaml.ScalarNode || (c.Tag != "!!int" && c.Tag != "!!float") {
				return fmt.Errorf("[%d]: %q is not a number (a soft target is one probability per label)", i, c.Value)
			}
		}
		return nil
	}
	return errors.New("want a label name or a list of probabilities, one per label")
}

// LabelError is a label map's entry that does not fit what reads it: Key
// is the mapped label, so that a caller can name the entry where it was
// written (a spec's line and field). Field is the map's field ("labels"
// when empty).
type LabelError struct {
	Field string
	Key   string
	Msg   string
}

func (e *LabelError) Error() string {
	f := e.Field
	if f == "" {
		f = "labels"
	}
	return f + "." + e.Key + ": " + e.Msg
}

// Targets returns each mapped label's probabilities over names: a name's
// one-hot, a soft target's own (one per name, each in [0, 1], summing to
// 1); a name that is not one of names, or a soft target of another length,
// is a *LabelError. what names the names ("the task").
func (m LabelMap) Targets(names []string, what string) (map[string][]float64, error) {
	out := map[string][]float64{}
	for _, k := range slices.Sorted(mapKeys(m)) {
		t := m[k]
		if t.Probs == nil {
			c := slices.Index(names, t.Name)
			if c < 0 {
				return nil, &LabelError{"", k, fmt.Sprintf("%q is not a label of %s (%s)", t.Name, what, strings.Join(names, ", "))}
			}
			y := make([]float64, len(names))
			y[c] = 1
			out[k] = y
			continue
		}
		if len(t.Probs) != len(names) {
			return nil, &LabelError{"", k, fmt.Sprintf("%d probabilities for %d labels (%s)", len(t.Probs), len(names), strings.Join(names, ", "))}
		}
		sum := 0.0
		for _, p := range t.Probs {
			if !(p >= 0 && p <= 1) {
				return nil, &LabelError{"", k, fmt.Sprintf("%v is not a probability", p)}
			}
			sum += p
		}
		if math.Abs(sum-1) > 1e-6 {
			return nil, &LabelError{"", k, fmt.Sprintf("probabilities sum to %v, not 1", sum)}
		}
		out[k] = slices.Clone(t.Probs)
	}
	return out, nil
}

// ParseLabelMap reads a flag's FROM=TO pairs (spaces around either
// trimmed); a pair without both sides, or a label mapped twice, is
// refused, naming the flag.
func ParseLabelMap(flag string, pairs []string) (LabelMap, error) {
	out := LabelMap{}
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" || v == "" {
			return nil, fmt.Errorf("%s %q: want FROM_LABEL=TO_LABEL", flag, p)
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("%s: %q given twice", flag, k)
		}
		out[k] = Name(v)
	}
	return out, nil
}

// Check refuses a label the map maps onto that is not one of names, and a
// soft target, as a *LabelError; what names the names ("the task", "the
// suite").
func (m LabelMap) Check(names []string, what string) error {
	for _, k := range slices.Sorted(mapKeys(m)) {
		if m[k].Probs != nil {
			return &LabelError{"", k, fmt.Sprintf("%v: a label here is read as one label of %s, not probabilities", m[k].Probs, what)}
		}
	}
	_, err := m.Targets(names, what)
	return err
}

// LabelNames returns Labels of the given names, in class order.
func LabelNames(names ...string) Labels { return Labels{Names: names} }

// MarshalJSON writes the list of names, or the mapping when there is one.
func (l Labels) MarshalJSON() ([]byte, error) {
	if len(l.Map) > 0 {
		return json.Marshal(l.Map)
	}
	return json.Marshal(l.Names)
}

// UnmarshalJSON reads a list of names or a mapping of file labels to task
// labels.
func (l *Labels) UnmarshalJSON(b []byte) error {
	*l = Labels{}
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '{' {
		return json.Unmarshal(b, &l.Map)
	}
	return json.Unmarshal(b, &l.Names)
}

// UnmarshalYAML reads a list of names or a mapping of file labels to task
// labels (checked by CheckYAML first).
func (l *Labels) UnmarshalYAML(n *yaml.Node) error {
	*l = Labels{}
	if err := l.CheckYAML(n); err != nil {
		return err
	}
	if n.Kind == yaml.MappingNode {
		return n.Decode(&l.Map)
	}
	return n.Decode(&l.Names)
}

// CheckYAML refuses what is neither a list of label names nor a mapping
// of label names to label names.
func (l *Labels) CheckYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.SequenceNode:
		for i, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				return fmt.Errorf("[%d]: want a label name", i)
			}
		}
		return nil
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode || v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
				return fmt.Errorf("%s: want the task label the file's label %q is read as (a name; drop_labels leaves rows out)", k.Value, k.Value)
			}
		}
		return nil
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return nil
		}
	}
	return errors.New("want a list of the task's label names, or a mapping from the file's labels to the task's (neutral: non-entailment)")
}

// validate checks the map and drop list against the names.
func (l Labels) validate(drop []string) error {
	if len(l.Names) < 2 {
		return fmt.Errorf("labels %q: a task needs at least two label names", l.Names)
	}
	if err := l.Map.Check(l.Names, "the task"); err != nil {
		return err
	}
	for _, k := range slices.Sorted(mapKeys(l.Map)) {
		if slices.Contains(drop, k) {
			return fmt.Errorf("labels.%s: also in drop_labels: map it or drop it", k)
		}
	}
	for _, d := range drop {
		if slices.Contains(l.Names, d) {
			return fmt.Errorf("drop_labels: %q is a label of the task: a task does not leave out rows of a class it predicts (declare the task without it)", d)
		}
	}
	return nil
}

// mapper returns the reader of a label cell: dropped (ok false), or its
// class.
func (l Labels) mapper(drop []string) func(string) (class int, keep bool, err error) {
	index := map[string]int{}
	for i, name := range l.Names {
		index[name] = i
	}
	dropped := map[string]bool{}
	for _, d := range drop {
		dropped[strings.TrimSpace(d)] = true
	}
	return func(v string) (int, bool, error) {
		v = strings.TrimSpace(v)
		if dropped[v] {
			return 0, false, nil
		}
		if to, ok := l.Map[v]; ok {
			return index[to.Name], true, nil
		}
		if i, ok := index[v]; ok {
			return i, true, nil
		}
		if i, err := strconv.Atoi(v); err == nil && i >= 0 && i < len(l.Names) {
			return i, true, nil
		}
		msg := fmt.Sprintf("label %q is none of %q nor an index below %d", v, l.Names, len(l.Names))
		if len(l.Map) > 0 {
			msg += fmt.Sprintf(", and the label map names only %q", slices.Sorted(mapKeys(l.Map)))
		}
		return 0, false, fmt.Errorf("%s (map it with labels: {%s: …} or leave its rows out with drop_labels: [%s])", msg, v, v)
	}
}

// LabelCount is a label and how many rows have it.
type LabelCount struct {
	Label string `json:"label"`
	Rows  int    `json:"rows"`
}

// sortedCounts returns a map's counts by label name.
func sortedCounts(m map[string]int) []LabelCount {
	out := make([]LabelCount, 0, len(m))
	for k, v := range m {
		out = append(out, LabelCount{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Label < out[j].Label })
	return out
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
