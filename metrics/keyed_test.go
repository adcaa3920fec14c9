package metrics

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/suites"
)

// keyedSuite is a two-label MFT suite of three one-input cases numbered
// 10, 11 and 20 across two functionalities, one of them in the test split.
const keyedSuite = `{"suite":"keyed","labels":["non-hateful","hateful"]}
{"class":"C","functionality":"f","type":"MFT","id":10,"inputs":["a"],"label":1}
{"class":"C","functionality":"f","type":"MFT","id":11,"inputs":["b"],"label":0,"split":"test"}
{"class":"C","functionality":"g","type":"MFT","id":20,"inputs":["c"],"label":1}
`

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestReadCasePredictions lays a table keyed by case id out in suite
// order, whatever the table's row order, by label name or class index, and
// refuses what cannot be matched, naming the file, line and column.
func TestReadCasePredictions(t *testing.T) {
	s, err := suites.Open(writeFile(t, "suite.jsonl", keyedSuite))
	if err != nil {
		t.Fatal(err)
	}
	table := writeFile(t, "preds.csv", "case_id,model\n20,hateful\n11.0,1\n10,non-hateful\n")
	preds, err := ReadCasePredictions(s, "", CaseTable{Path: table, Pred: "model"})
	if err != nil {
		t.Fatal(err)
	}
	if len(preds) != 3 || preds[0].Class != 0 || preds[1].Class != 1 || preds[2].Class != 1 || preds[0].Conf != 1 {
		t.Errorf("predictions %+v, want classes 0 1 1 in suite order", preds)
	}
	preds, err = ReadCasePredictions(s, suites.SplitTest, CaseTable{Path: table, Pred: "model"})
	if err != nil || len(preds) != 1 || preds[0].Class != 1 {
		t.Errorf("test split: %+v (%v), want case 11's class 1 alone", preds, err)
	}
	for _, tc := range []struct{ name, table, want string }{
		{"missing case", "case_id,model\n10,hateful\n11,hateful\n", "no prediction for case 20"},
		{"unknown case", "case_id,model\n10,hateful\n11,hateful\n20,hateful\n99,hateful\n", "line 5 field case_id: suite keyed has no case 99"},
		{"twice", "case_id,model\n10,hateful\n11,hateful\n10,hateful\n20,hateful\n", "line 4 field case_id: case 10 again (line 2)"},
		{"not an id", "case_id,model\n10,hateful\nx,hateful\n", `line 3 field case_id: "x" is not a case id`},
		{"bad label", "case_id,model\n10,hateful\n11,offensive\n", "line 3"},
		{"no column", "case_id,other\n10,hateful\n", "model"},
	} {
		_, err := ReadCasePredictions(s, "", CaseTable{Path: writeFile(t, "p.csv", tc.table), Pred: "model"})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	inv, err := suites.Open(writeFile(t, "inv.jsonl", `{"suite":"inv","labels":["a","b"]}
{"class":"C","functionality":"f","type":"INV","id":0,"inputs":["a","b"]}
`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ReadCasePredictions(inv, "", CaseTable{Path: table, Pred: "model"}); err == nil || !strings.Contains(err.Error(), "has 2 inputs") {
		t.Errorf("an INV suite: error %v, want one naming the case's 2 inputs", err)
	}
}
