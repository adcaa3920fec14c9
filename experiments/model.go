package experiments

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/beluga-nlp/beluga/internal/yamlpath"
)

// The model block of an experiment spec (docs/experiment-spec.md) speaks
// beluga train's words: kind and path, and train's vocab, tokenizer, glove and hidden
// beside options. An older spelling is accepted as an alias of each — name
// for kind, checkpoint for path — and both spellings of one key are an
// error. The spelling never reaches a run's identity: the run spec's model
// (train.ModelSpec) is the same either way, and vocab, glove and hidden
// are options.
var modelAliases = map[string]string{"name": "kind", "checkpoint": "path"}

// modelOptionKeys are train's model keys an experiment passes as options.
var modelOptionKeys = []string{"vocab", "tokenizer", "glove", "hidden", "precision"}

// modelKeys are the model block's keys, aliases included.
func modelKeys() []string {
	keys := append([]string{"kind", "path", "options"}, modelOptionKeys...)
	for alias := range modelAliases {
		keys = append(keys, alias)
	}
	return keys
}

// UnmarshalYAML reads the model block in either spelling.
func (m *Model) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return &yamlpath.Error{Line: n.Line, Field: "model", Msg: "want a mapping (kind, path, options)"}
	}
	known := append([]string{"kind", "path", "options"}, modelOptionKeys...)
	given := map[string]string{} // canonical key → spelling used
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := k.Value
		if c, ok := modelAliases[key]; ok {
			key = c
		}
		field := "model." + k.Value
		if !slices.Contains(known, key) {
			msg := "unknown key"
			if c := yamlpath.Closest(k.Value, known); c != "" {
				msg += " (did you mean " + c + "?)"
			}
			return &yamlpath.Error{Line: k.Line, Field: field, Msg: msg + "; known keys: " + strings.Join(known, ", ") + " (name and checkpoint are aliases of kind and path)"}
		}
		if prev, ok := given[key]; ok {
			return &yamlpath.Error{Line: k.Line, Field: field, Msg: fmt.Sprintf("given twice, as %s and %s", prev, k.Value)}
		}
		given[key] = k.Value
		if m.spelt == nil {
			m.spelt = map[string]string{}
		}
		m.spelt[key] = k.Value
		switch key {
		case "kind", "path":
			if v.Kind != yaml.ScalarNode {
				return &yamlpath.Error{Line: v.Line, Field: field, Msg: "want a text"}
			}
			if key == "kind" {
				m.Name = v.Value
			} else {
				m.Checkpoint = v.Value
			}
		case "options":
			var opts map[string]any
			if err := v.Decode(&opts); err != nil {
				return &yamlpath.Error{Line: v.Line, Field: field, Msg: "want a mapping of option names to values"}
			}
			for k, x := range opts {
				if m.Options == nil {
					m.Options = map[string]any{}
				}
				if _, dup := m.Options[k]; dup {
					return &yamlpath.Error{Line: v.Line, Field: field + "." + k, Msg: "given twice, in options and beside them"}
				}
				m.Options[k] = x
			}
		default: // vocab, glove, hidden: options
			var x any
			if err := v.Decode(&x); err != nil {
				return &yamlpath.Error{Line: v.Line, Field: field, Msg: err.Error()}
			}
			if m.Options == nil {
				m.Options = map[string]any{}
			}
			if _, dup := m.Options[key]; dup {
				return &yamlpath.Error{Line: k.Line, Field: field, Msg: "given twice, in options and beside them"}
			}
			m.Options[key] = x
		}
	}
	return nil
}

// field is the spec path of a model key as the spec spells it (model.name
// where it says name; a key left out in the spelling of the others).
func (m Model) field(key string) string {
	if s, ok := m.spelt[key]; ok {
		return "model." + s
	}
	// A key left out, spelt as the spec spells the others.
	for alias, canonical := range modelAliases {
		if canonical != key {
			continue
		}
		for k, s := range m.spelt {
			if s != k && modelAliases[s] != "" {
				return "model." + alias
			}
		}
	}
	return "model." + key
}
