package experiments

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/train"
)

// The configurations' Table 3 names that specs and stored runs use are the
// registry's (train.Configurations), in its order, and each names its
// registry entry in a spec, in either spelling.
func TestConfigurationNamesAreTheRegistrys(t *testing.T) {
	all := append([]string{ConfigIID}, Configurations...)
	if len(all) != len(train.Configurations) {
		t.Fatalf("%d configurations, the registry has %d", len(all), len(train.Configurations))
	}
	for i, c := range train.Configurations {
		if all[i] != c.Display {
			t.Errorf("configuration %d: %s, registry %s (%s)", i, all[i], c.Display, c.Name)
		}
	}
}

// A spec names a configuration in either spelling, any case; a validated
// spec holds Table 3's, the registry's Display, which stores and reports
// read.
func TestSpecConfigurationsInEitherSpelling(t *testing.T) {
	for _, c := range train.Configurations[1:] { // IID, the baseline, is no column
		for _, name := range []string{c.Display, c.Name, strings.ToUpper(c.Name)} {
			spec := promptSpec(t, fmt.Sprintf("[%q]", name), "[seen]", "{}")
			if !slices.Equal(spec.Configurations, []string{c.Display}) {
				t.Errorf("configurations: [%s] reads as %q; want [%s]", name, spec.Configurations, c.Display)
			}
		}
	}
}

// Every held-out score of the registry names its partition and what a fold
// of it holds out; metadata scores are partitions by their column.
func TestScoreRegistry(t *testing.T) {
	for _, s := range ScoreRegistry {
		kind, held := FoldKindOf(s.Name)
		if held != (s.Name != ScoreSeen) || kind != s.Fold || (held && s.Unit == "") || s.Title == "" {
			t.Errorf("%+v: FoldKindOf = %q, %v", s, kind, held)
		}
	}
	if kind, ok := FoldKindOf("meta:target_ident"); !ok || kind != "meta:target_ident" {
		t.Errorf("meta:target_ident: %q, %v", kind, ok)
	}
	if _, ok := FoldKindOf(ScoreIID); ok {
		t.Error("the baseline's score holds something out")
	}
}

// A configuration's error names its place in the spec as written: the IID
// baseline, which validation drops from the list, used to shift the
// places of those after it.
func TestConfigurationErrorNamesItsPlace(t *testing.T) {
	_, err := ParseSpec([]byte("tasks: [{name: SENT}]\nmodel: {name: bert-tiny}\nconfigurations: [IID, 0-shot]\nmethods: [vanilla]\n"))
	if err == nil || !strings.Contains(err.Error(), "configurations[1]: 0-shot asks a language model") {
		t.Errorf("got %v, want configurations[1]: 0-shot asks a language model", err)
	}
}
