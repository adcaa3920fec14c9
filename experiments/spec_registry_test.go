package experiments

import (
	"testing"

	"github.com/beluga-nlp/beluga/train"
)

// The configurations' Table 3 names that specs and stored runs use are the
// registry's (train.Configurations), in its order.
func TestConfigurationNamesAreTheRegistrys(t *testing.T) {
	all := append([]string{ConfigIID}, Configurations...)
	if len(all) != len(train.Configurations) {
		t.Fatalf("%d configurations, the registry has %d", len(all), len(train.Configurations))
	}
	for i, c := range train.Configurations {
		if all[i] != c.Display || configNames[c.Display] != c.Name {
			t.Errorf("configuration %d: %s (%s), registry %s (%s)", i, all[i], configNames[all[i]], c.Display, c.Name)
		}
	}
	for _, name := range []string{ConfigIID, ConfigIIDT, ConfigIIDPlusT, ConfigIIDIIDPlT, ConfigT} {
		if _, ok := configNames[name]; !ok {
			t.Errorf("%s is not a configuration of the registry", name)
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
