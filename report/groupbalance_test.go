package report

import (
	"strings"
	"testing"
)

// A held-out metadata value on fewer than 50 T_test cases is marked ¶ in
// the per-group view, with its note; a functionality fold, or the whole
// column, is not.
func TestSmallMetaGroupIsMarked(t *testing.T) {
	for _, tc := range []struct {
		line GroupLine
		want string
	}{
		{GroupLine{Score: "meta:target_ident", Group: "trans people", Cases: 40}, "¶"},
		{GroupLine{Score: "meta:target_ident", Group: "trans people", Cases: 62}, ""},
		{GroupLine{Score: "meta:target_ident", Group: "", Cases: 40}, ""},
		{GroupLine{Score: "func", Group: "negate_neg_nh", Cases: 34}, ""},
	} {
		if got := smallGroupMark(tc.line); got != tc.want {
			t.Errorf("%+v: mark %q, want %q", tc.line, got, tc.want)
		}
	}
	lines := []GroupLine{{Score: "meta:target_ident", Group: "women", Cases: 135}, {Score: "meta:target_ident", Group: "trans people", Cases: 40}}
	if n := smallGroupNote(lines); !strings.HasPrefix(n, "¶ fewer than 50 T_test cases") {
		t.Errorf("note %q", n)
	}
	if n := smallGroupNote(lines[:1]); n != "" {
		t.Errorf("note %q without a small group", n)
	}
}
