package suites

import (
	"strings"
	"testing"
)

func TestParseTestType(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want TestType
		err  string
	}{
		{in: "MFT", want: MFT},
		{in: "inv", want: INV},
		{in: "DIR", want: DIR},
		{in: "Dir", err: `unknown test type "Dir" (want MFT, INV or DIR)`},
		{in: "PAIRWISE", err: `unknown test type "PAIRWISE" (want MFT, INV or DIR)`},
		{in: "", err: `unknown test type ""`},
	} {
		got, err := ParseTestType(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseTestType(%q) = %v, %v; want error %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseTestType(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

// The shipped types keep CheckList's semantics: MFT labelled with eq/all,
// INV paired with inv/0.1/all_except_first, DIR paired and directional
// with no default (each DIR states its expectation).
func TestShippedTypeSpecs(t *testing.T) {
	if got := TestTypes(); len(got) < 3 || got[0] != MFT || got[1] != INV || got[2] != DIR {
		t.Fatalf("registration order %v, want MFT, INV, DIR first", got)
	}
	mft, inv, dir := MFT.Spec(), INV.Spec(), DIR.Spec()
	if mft.Paired || mft.Expect != (Expectation{Kind: ExpectEq, Agg: AggAll}) {
		t.Errorf("MFT: %+v", mft)
	}
	if !inv.Paired || inv.Directional || inv.Expect != (Expectation{Kind: ExpectInv, Tolerance: 0.1, Agg: AggAllExceptFirst}) {
		t.Errorf("INV: %+v", inv)
	}
	if !dir.Paired || !dir.Directional || dir.Expect.Kind != "" {
		t.Errorf("DIR: %+v", dir)
	}
	if got := DIR.Spec().Violation(0.25); got != "moved 0.250 the wrong way" {
		t.Errorf("DIR violation %q", got)
	}
	if u := TestType("OLD").Spec(); TestType("OLD").Registered() || u.Paired || u.Violation(1) == "" {
		t.Errorf("unregistered type's spec: %+v", u)
	}
}

func TestRegisterTestTypeRefuses(t *testing.T) {
	v := func(float64) string { return "" }
	for _, tc := range []struct {
		name string
		spec TypeSpec
		err  string
	}{
		{"duplicate", TypeSpec{Name: DIR, Violation: v}, "registered twice"},
		{"lower case", TypeSpec{Name: "dec", Violation: v}, "upper-case"},
		{"no name", TypeSpec{Violation: v}, "upper-case"},
		{"no violation text", TypeSpec{Name: "DEC"}, "no Violation"},
		{"expectation without agg", TypeSpec{Name: "DEC", Violation: v, Expect: Expectation{Kind: ExpectMonotonic}}, "no agg"},
	} {
		if err := RegisterTestType(tc.spec); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
		}
	}
	if TestType("DEC").Registered() {
		t.Error("a refused registration registered DEC")
	}
}
