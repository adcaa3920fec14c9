package datasets

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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
// test cases', a model's id2label — onto the label names of what reads
// them: a task's, a suite's. It is the one label map of beluga: an i.i.d.
// file's (Labels.Map, labels: {neutral: non-entailment}), beluga suite
// import table's and beluga test's (--label-map FROM=TO).
type LabelMap map[string]string

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
		out[k] = v
	}
	return out, nil
}

// Check refuses a label the map maps onto that is not one of names, with
// the map's key; what names the names ("the task", "the suite").
func (m LabelMap) Check(names []string, what string) error {
	for _, k := range slices.Sorted(mapKeys(m)) {
		if !slices.Contains(names, m[k]) {
			return fmt.Errorf("labels.%s: %q is not a label of %s (%s)", k, m[k], what, strings.Join(names, ", "))
		}
	}
	return nil
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
			return index[to], true, nil
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
