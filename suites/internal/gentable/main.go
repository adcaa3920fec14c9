// Command gentable writes suites/checklist_expectations.json, the table of the
// decoded expectations and BeLUGA training overrides of the three CheckList
// release suites. CheckList pickles its expectations as closures that cannot be
// run outside Python; their decoded form is a fact about the release, taken
// once from the converted manifests in ../shared/data/checklist/converted.
//
// Run it with `go generate ./suites` from a checkout with ../shared beside it.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

type manifest struct {
	Task  string `json:"task"`
	Tests []struct {
		Name       string         `json:"name"`
		Capability string         `json:"capability"`
		Type       string         `json:"type"`
		AggFn      string         `json:"agg_fn"`
		Expect     map[string]any `json:"expect_compact"`
		Beluga     map[string]any `json:"beluga"`
	} `json:"tests"`
}

type entry struct {
	Task       string            `json:"task"`
	Name       string            `json:"name"`
	Capability string            `json:"capability"`
	Type       string            `json:"type"`
	Agg        string            `json:"agg"`
	Expect     map[string]any    `json:"expect"`
	Train      map[string]string `json:"train,omitempty"`
}

var sliceCode = map[string]string{"orig_pred != 1": "orig_pred != 1", "orig_pred == 1": "orig_pred == 1"}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: gentable CONVERTED_DIR OUT.json")
		os.Exit(2)
	}
	var out []entry
	for _, task := range []string{"sentiment", "qqp", "squad"} {
		raw, err := os.ReadFile(filepath.Join(os.Args[1], task+"_manifest.json"))
		if err != nil {
			fail(err)
		}
		var m manifest
		if err := json.Unmarshal(raw, &m); err != nil {
			fail(fmt.Errorf("%s manifest: %w", task, err))
		}
		for _, t := range m.Tests {
			e := entry{Task: task, Name: t.Name, Capability: t.Capability, Type: t.Type, Agg: t.AggFn, Expect: map[string]any{}}
			for k, v := range t.Expect {
				switch k {
				case "kind", "tolerance", "increasing", "direction":
					e.Expect[k] = v
				case "val":
					if v != nil {
						e.Expect["value"] = v
					}
				case "slice_code":
					s, ok := sliceCode[v.(string)]
					if !ok {
						fail(fmt.Errorf("%s %q: unknown slice %v", task, t.Name, v))
					}
					e.Expect["slice"] = s
				case "slice_agg_fn":
					e.Expect["slice_agg"] = v
				}
			}
			if len(t.Beluga) > 0 {
				e.Train = map[string]string{}
				for k, v := range t.Beluga {
					if v == nil {
						continue
					}
					e.Train[k] = fmt.Sprint(v)
				}
				// BeLUGA also re-labels this test in the suite it scores with
				// (suite_evaluation.ipynb cells 41–42: labels = 0, then
				// suite.save), not only in its training CSV.
				if task == "qqp" && t.Name == "Order does matter for asymmetric relations" {
					e.Train["scored"] = "true"
				}
			}
			out = append(out, e)
		}
	}
	b, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		fail(err)
	}
	if err := os.WriteFile(os.Args[2], append(b, '\n'), 0o644); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gentable:", err)
	os.Exit(1)
}
