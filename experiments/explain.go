package experiments

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/beluga-nlp/beluga/train"
)

// Explained is one value of a resolved spec and where it came from.
type Explained struct {
	// Key is the value's path from the root (tasks[0].train.split.group;
	// a run-spec setting as runs[TASK].hyper.lr).
	Key, Value string
	// Origin is "file" (the spec sets it), "default" (the spec's own
	// default, filled when it is read: seeds 42, every score, …),
	// "profile NAME" (the profile's value of a run-spec setting the spec
	// leaves out), "grid" (each run takes one of the values) or "budget.X"
	// / "model.options.X" for a run-spec setting the spec sets there.
	Origin string
}

// ExplainFile reads an experiment spec and lists every value it resolves
// to, each with its origin (beluga run --explain): the spec's keys, then
// per task the run-spec settings every run of it starts from before the
// grid's values.
func ExplainFile(path string) ([]Explained, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("experiment spec: %w", err)
	}
	s, err := LoadSpec(path)
	if err != nil {
		return nil, err
	}
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		return nil, fmt.Errorf("experiment spec %s: %w", path, err)
	}
	given := map[string]bool{}
	givenKeys(&root, "", given)
	return s.explain(given)
}

// givenKeys records the path of every key n's mappings hold.
func givenKeys(n *yaml.Node, prefix string, out map[string]bool) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			givenKeys(c, prefix, out)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := n.Content[i].Value
			if prefix == "model" || prefix == "model.options" {
				if c, ok := modelAliases[key]; ok {
					key = c
				}
				if slices.Contains(modelOptionKeys, key) || prefix == "model.options" {
					// Beside options or in it: one option.
					out["model.options."+key] = true
					continue
				}
			}
			p := key
			if prefix != "" {
				p = prefix + "." + key
			}
			out[p] = true
			givenKeys(n.Content[i+1], p, out)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			givenKeys(c, fmt.Sprintf("%s[%d]", prefix, i), out)
		}
	}
}

// explain lists the spec's values with their origins.
func (s *Spec) explain(given map[string]bool) ([]Explained, error) {
	var out []Explained
	add := func(key string, v any, zero bool) {
		origin := "default"
		if given[key] {
			origin = "file"
		} else if zero {
			return
		}
		out = append(out, Explained{Key: key, Value: explainValue(v), Origin: origin})
	}
	var walk func(v reflect.Value, prefix string)
	walk = func(v reflect.Value, prefix string) {
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name == "-" {
				continue
			}
			fv := v.Field(i)
			if strings.Contains(opts, "inline") {
				walk(fv, prefix)
				continue
			}
			key := prefix + name
			switch {
			case f.Type == reflect.TypeFor[Model]():
				m := fv.Interface().(Model)
				add("model.kind", m.Name, m.Name == "")
				add("model.path", m.Checkpoint, m.Checkpoint == "")
				for _, k := range slices.Sorted(maps.Keys(m.Options)) {
					add("model.options."+k, m.Options[k], false)
				}
			case fv.Kind() == reflect.Pointer && fv.Elem().Kind() == reflect.Struct && !isLeaf(f.Type):
				if !fv.IsNil() {
					walk(fv.Elem(), key+".")
				}
			case fv.Kind() == reflect.Struct && !isLeaf(f.Type):
				walk(fv, key+".")
			case fv.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct && !isLeaf(f.Type.Elem()):
				for j := range fv.Len() {
					walk(fv.Index(j), fmt.Sprintf("%s[%d].", key, j))
				}
			default:
				add(key, fv.Interface(), fv.IsZero())
			}
		}
	}
	walk(reflect.ValueOf(*s), "")
	if s.Profile == "" {
		out = append(out, Explained{Key: "profile", Value: train.DefaultProfile, Origin: "default"})
	}
	if s.Budget.FoldCap == "" {
		out = append(out, Explained{Key: "budget.fold_cap", Value: FoldCapBefore, Origin: "default"})
	}
	// The profile's values depend on the configuration (LP-FT's probing
	// from the initial model, READ's): the baseline's, then what each
	// configuration sets otherwise.
	configs := append([]string{ConfigIID}, s.Configurations...)
	for _, t := range s.Tasks {
		var first []Explained
		for k, config := range configs {
			runs, err := s.explainRuns(t, config, given)
			if err != nil {
				return nil, err
			}
			added := 0
			for i, e := range runs {
				if k > 0 && i < len(first) && e.Value == first[i].Value && e.Origin == first[i].Origin {
					continue
				}
				out = append(out, e)
				added++
			}
			if added == 0 {
				out = append(out, Explained{Key: "runs[" + t.Name + " " + config + "]", Value: "as runs[" + t.Name + " " + ConfigIID + "]", Origin: "profile " + cmp.Or(s.Profile, train.DefaultProfile)})
			}
			if k == 0 {
				first = runs
			}
		}
	}
	return out, nil
}

// isLeaf says whether a type reads itself (a list or a mapping): one value.
func isLeaf(t reflect.Type) bool {
	return reflect.PointerTo(t).Implements(reflect.TypeFor[yaml.Unmarshaler]()) || t.Kind() == reflect.Pointer && t.Implements(reflect.TypeFor[yaml.Unmarshaler]())
}

// explainRuns lists the run-spec settings a task's runs of a configuration
// start from: each field path a grid can set (in gridFieldPaths' order),
// with its value and where it comes from.
func (s *Spec) explainRuns(t Task, config string, given map[string]bool) ([]Explained, error) {
	c, err := train.ParseConfiguration(config)
	if err != nil {
		return nil, err
	}
	tr := train.RunSpec{Task: t.Name, Kind: t.kind(), Profile: s.Profile, Configuration: c}
	if b, _, ok := LookupBuiltinTask(t.Name); ok {
		tr.Task = b.Train
	}
	from := s.setBudget(&tr)
	if s.Budget.FoldCap == FoldCapAfter {
		from["suite_limit_after_hold_out"] = "budget.fold_cap (a capped metadata fold's runs)"
	}
	set := map[string]bool{}
	for path := range from {
		f, err := runSpecField(reflect.ValueOf(&tr).Elem(), path)
		if err == nil && !f.IsZero() {
			set[path] = true
		}
	}
	if err := tr.FillDefaults(); err != nil {
		return nil, err
	}
	gridOf := map[string]string{}
	for k := range s.Grid {
		gridOf[gridPath(k)] = k
	}
	// A search chooses the suite phase's epochs, batch size and learning
	// rate (LP-FT's probing rate too) of every configuration but IID.
	searched := map[string]any{}
	if s.Search != nil && c != train.ConfigIID {
		batch := s.Search.BatchSize
		if s.Search.batchDefault && t.kind() == train.KindSpan {
			// READ's searches take the span profile's sizes (Expand).
			p, err := train.LookupProfile(s.Profile)
			if err != nil {
				return nil, err
			}
			batch = p.Span.Search.BatchSize
		}
		searched = map[string]any{"hyper.epochs": s.Search.Epochs, "hyper.batch_size": batch, "hyper.lr": s.Search.LR, "probe_hyper.lr": s.Search.LPLR}
	}
	var out []Explained
	for _, key := range gridFieldPaths() {
		path := strings.TrimPrefix(key, "grid.")
		e := Explained{Key: "runs[" + t.Name + " " + config + "]." + path}
		if v, ok := searched[path]; ok {
			e.Value, e.Origin = explainValue(v), "search (one of)"
			out = append(out, e)
			continue
		}
		if k, ok := gridOf[path]; ok {
			e.Value, e.Origin = explainValue(s.Grid[k]), "grid"
			if given["grid."+k] && k != path {
				e.Origin = "grid (" + k + ")"
			}
			out = append(out, e)
			continue
		}
		f, err := runSpecField(reflect.ValueOf(&tr).Elem(), path)
		if err != nil {
			return nil, err
		}
		if f.IsZero() && !set[path] {
			continue // none: no limit, BeLUGA's behaviour
		}
		e.Value, e.Origin = explainValue(f.Interface()), "profile "+tr.Profile
		if set[path] || path == "suite_limit_after_hold_out" && from[path] != "" {
			e.Origin = from[path]
		}
		out = append(out, e)
	}
	return out, nil
}

// explainValue writes a value as a spec would: scalars bare, lists and
// mappings as compact JSON (which YAML reads).
func explainValue(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case fmt.Stringer:
		return x.String()
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer && !rv.IsNil() {
		v = rv.Elem().Interface()
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// gridFieldPaths are the field paths of train.RunSpec a grid key may name
// (runSpecField accepts them), as grid.PATH.
func gridFieldPaths() []string {
	var out []string
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "" || name == "-" {
				continue
			}
			if f.Type.Kind() == reflect.Struct {
				walk(f.Type, prefix+name+".")
				continue
			}
			if fieldPathError(prefix+name) == nil {
				out = append(out, "grid."+prefix+name)
			}
		}
	}
	walk(reflect.TypeFor[train.RunSpec](), "")
	return out
}
