package termtext

import "testing"

func TestName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"negation", "negation"},
		{"مشتقات_لغوية", "مشتقات_لغوية"},
		{"Café 中文 ✓", "Café 中文 ✓"},
		{"\x1b]0;pwned\x07title", `\x1b]0;pwned\atitle`},
		{"clear\x1b[2J", `clear\x1b[2J`},
		{"hide\x1b[8mthis", `hide\x1b[8mthis`},
		{"csi\u009b2J", `csi\u009b2J`},
		{"rlo\u202egnp.exe", `rlo\u202egnp.exe`},
		{"two\nlines\ttab\r", `two\nlines\ttab\r`},
		{"bad\xffbyte", `bad\xffbyte`},
		{"nul\x00", `nul\x00`},
	} {
		if got := Name(tc.in); got != tc.want {
			t.Errorf("Name(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
