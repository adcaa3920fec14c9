package experiments

import (
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// specKeys lists every key an experiment spec can hold, as a path from the
// root (tasks[].train.split.group), from the spec's types: their YAML
// tags, the model block's keys (modelKeys), and the grid's keys — each
// short key and each field path of train.RunSpec a grid may set
// (grid.hyper.loss.detach_inv).
func specKeys() []string {
	unmarshaler := reflect.TypeFor[yaml.Unmarshaler]()
	var keys []string
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name == "-" {
				continue
			}
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if strings.Contains(opts, "inline") {
				walk(ft, prefix)
				continue
			}
			if name == "" {
				name = strings.ToLower(f.Name)
			}
			path := prefix + name
			keys = append(keys, path)
			switch {
			case ft == reflect.TypeFor[Model]():
				for _, k := range modelKeys() {
					keys = append(keys, path+"."+k)
				}
			case path == "grid":
				for k := range gridKeys {
					keys = append(keys, "grid."+k)
				}
				keys = append(keys, gridFieldPaths()...)
			case reflect.PointerTo(ft).Implements(unmarshaler):
				// Read by its own rules (a list or a mapping): one key.
			case ft.Kind() == reflect.Struct:
				walk(ft, path+".")
			case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
				walk(ft.Elem(), path+"[].")
			}
		}
	}
	walk(reflect.TypeFor[Spec](), "")
	sort.Strings(keys)
	return slices.Compact(keys)
}

// documentedKeys are the keys docs/experiment-spec.md's reference tables
// name: a table row's first cell, each `key` in it.
func documentedKeys(doc string) []string {
	row := regexp.MustCompile("(?m)^\\| ((?:`[^`]+`(?:, )?)+) \\|")
	key := regexp.MustCompile("`([^`]+)`")
	var out []string
	for _, m := range row.FindAllStringSubmatch(doc, -1) {
		for _, k := range key.FindAllStringSubmatch(m[1], -1) {
			out = append(out, k[1])
		}
	}
	return out
}

// Every key a spec can hold has an entry in docs/experiment-spec.md's
// reference ("Every key"), and every entry there names a key a spec can
// hold: a key added to the spec's types (or to train.RunSpec, which grids
// reach by field path) without its documentation fails here.
func TestEverySpecKeyIsDocumented(t *testing.T) {
	b, err := os.ReadFile("../docs/experiment-spec.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	_, ref, ok := strings.Cut(doc, "\n## Every key\n")
	if !ok {
		t.Fatal(`docs/experiment-spec.md has no "## Every key" section`)
	}
	ref, _, _ = strings.Cut(ref, "\n## ")
	documented := documentedKeys(ref)
	keys := specKeys()
	for _, k := range keys {
		if !slices.Contains(documented, k) {
			t.Errorf("spec key %s has no entry in docs/experiment-spec.md's \"Every key\" tables", k)
		}
	}
	for _, k := range documented {
		if !slices.Contains(keys, k) {
			t.Errorf("docs/experiment-spec.md documents %s, which no spec can hold", k)
		}
	}
	if len(keys) < 60 {
		t.Errorf("%d keys found: the walk misses the spec's structure", len(keys))
	}
}

// The walk sees a key that is added, and the test then fails.
func TestDocumentedKeysCatchAMissingKey(t *testing.T) {
	doc := "| `name` | the experiment's name |\n| `budget.max_cases`, `budget.max_iid` | caps |\n"
	got := documentedKeys(doc)
	if !slices.Equal(got, []string{"name", "budget.max_cases", "budget.max_iid"}) {
		t.Fatalf("documented keys %q", got)
	}
	keys := specKeys()
	for _, want := range []string{"budget.fold_cap", "tasks[].train.split.group", "tasks[].eval[].labels", "model.kind", "grid.lr", "grid.hyper.loss.detach_inv", "search.lp_lr", "tasks[].folds"} {
		if !slices.Contains(keys, want) {
			t.Errorf("spec keys lack %s: %q", want, keys)
		}
	}
	if slices.Contains(keys, "grid.task") || slices.Contains(keys, "grid.seed") {
		t.Errorf("a spec field of its own is listed as a grid key: %q", keys)
	}
}
