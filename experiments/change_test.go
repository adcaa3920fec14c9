package experiments

import "testing"

// The line status and --dry-run print for a changed input says which
// file, since which run, and how it changed in the terms a user can check
// against what they did: a suite's cases (with thousands separated, as
// the issue that asked for it wrote "2,447 cases, was 3,378"), else a
// file's size, else its digest.
func TestDescribeChange(t *testing.T) {
	const id = "3f9a0c1d2e4b"
	for _, tc := range []struct {
		name string
		was  Input
		now  Input
		want string
	}{
		{"re-imported suite", Input{Field: "suite", Path: "/a/mhc.jsonl", SHA256: "aa", Cases: 3378}, Input{Field: "suite", Path: "/a/mhc.jsonl", SHA256: "bb", Cases: 2447},
			"suite mhc.jsonl changed since run 3f9a…: 2,447 cases, was 3,378"},
		{"registered dataset", Input{Field: "suite", Path: "/c/s.jsonl", Name: "checklist-sentiment", SHA256: "aa", Cases: 1234567}, Input{Field: "suite", Path: "/c/s.jsonl", Name: "checklist-sentiment", SHA256: "bb", Cases: 999},
			"suite checklist-sentiment changed since run 3f9a…: 999 cases, was 1,234,567"},
		{"tokenizer overwritten", Input{Field: "model.tokenizer", Path: "/t/vocab.txt", SHA256: "aa", Size: 231508}, Input{Field: "model.tokenizer", Path: "/t/vocab.txt", SHA256: "bb", Size: 1024},
			"input model.tokenizer vocab.txt changed since run 3f9a…: 1,024 bytes, was 231,508"},
		{"same size, other bytes", Input{Field: "iid_train_file.path", Path: "/d/train.csv", SHA256: "0123456789abcdef0", Size: 10}, Input{Field: "iid_train_file.path", Path: "/d/train.csv", SHA256: "fedcba9876543210f", Size: 10},
			"input iid_train_file.path train.csv changed since run 3f9a…: sha256 fedcba987654…, was 0123456789ab…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := describeChange(tc.was, tc.now, id); got != tc.want {
				t.Errorf("describeChange:\n got %s\nwant %s", got, tc.want)
			}
			got := changed([]Input{tc.was}, []Input{tc.now}, id)
			if len(got) != 1 || got[0] != tc.want {
				t.Errorf("changed: %q, want [%q]", got, tc.want)
			}
			if same := changed([]Input{tc.was}, []Input{tc.was}, id); len(same) != 0 {
				t.Errorf("an unchanged input is said changed: %q", same)
			}
		})
	}
}
