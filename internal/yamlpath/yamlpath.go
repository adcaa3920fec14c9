// Package yamlpath decodes YAML into Go values strictly and reports what
// does not fit in the YAML's own words: the line, the field's path from the
// document's root (tasks[0].train.text), an unknown key with the closest
// known key ("did you mean text?") and the keys known there, and a value of
// the wrong kind as "is not a whole number" rather than Go's type names.
package yamlpath

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/beluga-nlp/beluga/internal/difflib"
)

// Decode decodes the YAML document b into v (a pointer) after checking it
// against v's type: every mapping key must be a field of the struct it
// fills (by its yaml tag) and every scalar must suit its field's kind.
// Values of types with their own UnmarshalYAML are left to it.
func Decode(b []byte, v any) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return err
	}
	if len(doc.Content) == 0 {
		return errors.New("empty document")
	}
	if err := check(doc.Content[0], reflect.TypeOf(v).Elem(), ""); err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	return dec.Decode(v)
}

// Error is a value that does not fit its field.
type Error struct {
	Line  int
	Field string // path from the root, e.g. tasks[0].train.text
	Msg   string
}

func (e *Error) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return fmt.Sprintf("line %d: field %s: %s", e.Line, e.Field, e.Msg)
}

var unmarshaler = reflect.TypeFor[yaml.Unmarshaler]()

// A Checker checks the YAML node of a value that decodes itself (a
// yaml.Unmarshaler taking more than one shape): Decode reports its error at
// the node's line and field path.
type Checker interface {
	CheckYAML(n *yaml.Node) error
}

var checker = reflect.TypeFor[Checker]()

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func check(n *yaml.Node, t reflect.Type, path string) error {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil // leaves the field's zero value
	}
	if t.Kind() == reflect.Pointer {
		return check(n, t.Elem(), path)
	}
	if reflect.PointerTo(t).Implements(checker) {
		if err := reflect.New(t).Interface().(Checker).CheckYAML(n); err != nil {
			return &Error{Line: n.Line, Field: path, Msg: err.Error()}
		}
		return nil
	}
	if t.Implements(unmarshaler) || reflect.PointerTo(t).Implements(unmarshaler) {
		return nil
	}
	fail := func(format string, a ...any) error {
		return &Error{Line: n.Line, Field: path, Msg: fmt.Sprintf(format, a...)}
	}
	switch t.Kind() {
	case reflect.Interface:
		return nil
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return fail("want a mapping of keys (%s), not %s", strings.Join(fieldNames(t), ", "), describe(n))
		}
		fields := structFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			if k.Value == "<<" {
				continue
			}
			f, ok := fields[k.Value]
			if !ok {
				msg := "unknown key"
				if m := Closest(k.Value, fieldNames(t)); m != "" {
					msg += " (did you mean " + m + "?)"
				}
				return &Error{Line: k.Line, Field: join(path, k.Value), Msg: msg + "; known keys: " + strings.Join(fieldNames(t), ", ")}
			}
			if err := check(val, f, join(path, k.Value)); err != nil {
				return err
			}
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return fail("want a mapping, not %s", describe(n))
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if err := check(n.Content[i+1], t.Elem(), join(path, n.Content[i].Value)); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		if n.Kind != yaml.SequenceNode {
			return fail("want a list, not %s", describe(n))
		}
		for i, item := range n.Content {
			if err := check(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			return fail("want a text, not %s", describe(n))
		}
	case reflect.Bool:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
			return fail("%s is not true or false", describe(n))
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
			return fail("%s is not a whole number", describe(n))
		}
	case reflect.Float32, reflect.Float64:
		if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") {
			return fail("%s is not a number", describe(n))
		}
	}
	return nil
}

// describe names a node's value for a message: a scalar quoted, else its kind.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return strconv.Quote(n.Value)
}

// structFields maps a struct's YAML keys to their types (embedded structs
// inlined as yaml.v3 does with ",inline").
func structFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("yaml")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if strings.Contains(opts, "inline") {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			for k, v := range structFields(ft) {
				out[k] = v
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = f.Type
	}
	return out
}

func fieldNames(t reflect.Type) []string {
	var names []string
	for k := range structFields(t) {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// Closest returns the candidate most like word by Python's
// difflib.get_close_matches (SequenceMatcher ratio 2M/T, at least 0.6), or
// "" when none is that close.
func Closest(word string, candidates []string) string {
	best, bestRatio := "", 0.6
	for _, c := range candidates {
		a, b := []rune(strings.ToLower(word)), []rune(strings.ToLower(c))
		m := 0
		for _, blk := range difflib.MatchingBlocks(b, a, false) {
			m += blk.N
		}
		if r := 2 * float64(m) / float64(len(a)+len(b)); r >= bestRatio && (best == "" || r > bestRatio) {
			best, bestRatio = c, r
		}
	}
	return best
}

// Line is the line of the value the path names in the YAML document b —
// each step a mapping key (a string, taken whole: "hyper.lr" is one key)
// or a list index (an int) — or of the deepest node the path reaches; 0
// when b does not parse.
func Line(b []byte, path ...any) int {
	var doc yaml.Node
	if yaml.Unmarshal(b, &doc) != nil || len(doc.Content) == 0 {
		return 0
	}
	n := doc.Content[0]
	for _, step := range path {
		var next *yaml.Node
		switch k := step.(type) {
		case string:
			if n.Kind == yaml.MappingNode {
				for i := 0; i+1 < len(n.Content); i += 2 {
					if n.Content[i].Value == k {
						next = n.Content[i+1]
					}
				}
			}
		case int:
			if n.Kind == yaml.SequenceNode && k >= 0 && k < len(n.Content) {
				next = n.Content[k]
			}
		}
		if next == nil {
			break
		}
		n = next
	}
	return n.Line
}
