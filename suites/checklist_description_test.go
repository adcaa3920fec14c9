package suites

import "testing"

// A test's description is read from suite.info, where CheckList's
// suite.add keeps it (the test object's own is empty in the release
// suites).
func TestCheckListDescriptionsAreKept(t *testing.T) {
	s, err := Open("testdata/described_suite.pkl")
	if err != nil {
		t.Fatal(err)
	}
	f := s.Functionality("my words")
	if f == nil || f.Description != "Short positive and negative words" {
		t.Fatalf("description %+v, want suite.info's", f)
	}
}
