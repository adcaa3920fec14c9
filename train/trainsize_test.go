package train

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/inputcheck"
)

// TestTrainSize: a count or a fraction of n, never more than n.
func TestTrainSize(t *testing.T) {
	for _, tc := range []struct {
		spec RunSpec
		n    int
		want int
	}{
		{RunSpec{}, 100, 100},
		{RunSpec{TrainSize: 30}, 100, 30},
		{RunSpec{TrainSize: 300}, 100, 100},
		{RunSpec{TrainFraction: 0.25}, 100, 25},
		{RunSpec{TrainFraction: 0.125}, 100, 13}, // 12.5 rounds half away from zero
		{RunSpec{TrainFraction: 0.001}, 100, 1},
		{RunSpec{TrainFraction: 1}, 100, 100},
	} {
		if got := tc.spec.trainSize(tc.n); got != tc.want {
			t.Errorf("%+v of %d: %d, want %d", tc.spec, tc.n, got, tc.want)
		}
	}
}

// TestSubsampleStratified: the kept examples keep the labels' shares (to
// the largest-remainder rounding), their order, and differ between seeds.
func TestSubsampleStratified(t *testing.T) {
	// 60 of label 0, 30 of label 1, 10 of label 2, each example its index.
	var xs []int
	for i := range 100 {
		xs = append(xs, i)
	}
	label := func(x int) int {
		switch {
		case x < 60:
			return 0
		case x < 90:
			return 1
		}
		return 2
	}
	for _, tc := range []struct {
		k    int
		want [3]int
	}{
		{10, [3]int{6, 3, 1}},
		{15, [3]int{9, 5, 1}}, // 9, 4.5, 1.5: one left, label 1 first on the tie
		{7, [3]int{4, 2, 1}},  // 4.2, 2.1, 0.7
		{100, [3]int{60, 30, 10}},
	} {
		got := subsample(xs, label, tc.k, 1)
		var counts [3]int
		for _, x := range got {
			counts[label(x)]++
		}
		if counts != tc.want || len(got) != tc.k {
			t.Errorf("k=%d: %d kept, labels %v, want %v", tc.k, len(got), counts, tc.want)
		}
		if !slices.IsSorted(got) {
			t.Errorf("k=%d: order changed: %v", tc.k, got)
		}
		if again := subsample(xs, label, tc.k, 1); !slices.Equal(again, got) {
			t.Errorf("k=%d: not deterministic", tc.k)
		}
	}
	if a, b := subsample(xs, label, 10, 1), subsample(xs, label, 10, 2); slices.Equal(a, b) {
		t.Errorf("seeds 1 and 2 keep the same examples %v", a)
	}
}

// TestTrainSizeValidate refuses sizes that cannot be meant.
func TestTrainSizeValidate(t *testing.T) {
	for _, tc := range []struct {
		spec RunSpec
		want string
	}{
		{RunSpec{TrainSize: -1}, "train_size -1 must not be negative (0 means all)"},
		{RunSpec{TrainFraction: 1.5}, "train_fraction 1.5 must be in (0, 1] (0 means all)"},
		{RunSpec{TrainSize: 10, TrainFraction: 0.5}, "train_size 10 and train_fraction 0.5: set at most one"},
	} {
		// Validate reports every bad value; the spec leaves the others out.
		if err := tc.spec.Validate(); err == nil || !strings.HasPrefix(err.Error(), tc.want+"\n") {
			t.Errorf("%+v: %v, want %q", tc.spec, err, tc.want)
		}
	}
}

// TestPrepareTrainsOnTheSubsample: a run with a training size trains on
// that many i.i.d. rows and scores the whole i.i.d. test set.
func TestPrepareTrainsOnTheSubsample(t *testing.T) {
	full, err := prepare(t.Context(), tinySpec(ConfigIID))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		size     int
		fraction float64
	}{{size: 3}, {fraction: 0.5}} {
		spec := tinySpec(ConfigIID)
		spec.TrainSize, spec.TrainFraction = tc.size, tc.fraction
		p, err := prepare(t.Context(), spec)
		if err != nil {
			t.Fatal(err)
		}
		want := spec.trainSize(len(full.data.IID))
		if len(p.data.IID) != want || want >= len(full.data.IID) {
			t.Errorf("%+v: %d i.i.d. rows of %d, want %d", tc, len(p.data.IID), len(full.data.IID), want)
		}
		if len(p.iidTest) != len(full.iidTest) || len(p.iidTest) == 0 {
			t.Errorf("%+v: %d i.i.d. test examples, the full run %d", tc, len(p.iidTest), len(full.iidTest))
		}
	}
}

// For one seed, a learning curve's sizes are nested: a smaller size's rows
// are among a larger one's (two labels: always; docs/experiment-spec.md
// says when three may not be).
func TestTrainSizesAreNested(t *testing.T) {
	labels := make([]int, 500)
	for i := range labels {
		labels[i] = (i*7 + i/13) % 2
	}
	idx := indices(len(labels))
	label := func(i int) int { return labels[i] }
	for seed := uint64(1); seed <= 3; seed++ {
		prev := map[int]bool{}
		for _, k := range []int{10, 20, 50, 100, 101, 250, 499} {
			kept := subsample(idx, label, k, seed)
			if len(kept) != k {
				t.Fatalf("seed %d size %d: %d rows", seed, k, len(kept))
			}
			now := map[int]bool{}
			for _, i := range kept {
				now[i] = true
			}
			for i := range prev {
				if !now[i] {
					t.Errorf("seed %d: row %d of a smaller size is not in size %d", seed, i, k)
				}
			}
			prev = now
		}
	}
}

// A learning curve's point records what trained: input_checks.json gives
// the subsample's real size and labels beside the pool, trained.json its
// rows.
func TestTrainSizeRecordsWhatTrained(t *testing.T) {
	spec := tinySpec(ConfigIID)
	spec.TrainSize = 3
	out := filepath.Join(t.TempDir(), "run")
	if _, err := Run(context.Background(), spec, out); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, InputChecksFile))
	if err != nil {
		t.Fatal(err)
	}
	var checks inputcheck.Report
	if err := json.Unmarshal(b, &checks); err != nil {
		t.Fatal(err)
	}
	var pool, trained *inputcheck.PartSize
	for i, p := range checks.Parts {
		switch p.Name {
		case "i.i.d. train":
			pool = &checks.Parts[i]
		case "i.i.d. train, trained on":
			trained = &checks.Parts[i]
		}
	}
	if pool == nil || trained == nil || pool.Rows != 8 || trained.Rows != 3 {
		t.Fatalf("parts %+v: want the pool of 8 rows and the 3 that trained", checks.Parts)
	}
	n := 0
	for _, l := range trained.Labels {
		n += l.Rows
	}
	if n != 3 {
		t.Errorf("trained labels %+v: %d rows, want 3", trained.Labels, n)
	}
	b, err = os.ReadFile(filepath.Join(out, TrainedFile))
	if err != nil {
		t.Fatal(err)
	}
	var rec Trained
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	if iid, cases := rec.TrainedCounts(); iid != 3 || cases != 0 || len(rec.IID) == 0 || len(strings.Split(rec.IID[0].Lines, ",")) > 3 {
		t.Errorf("trained.json %+v: want 3 i.i.d. rows and no suite case (configuration IID)", rec)
	}
}

// DataOf draws a run's data without its model or the runs it starts from:
// an IID→T run before its baseline exists, a searched run before its
// search chose.
func TestDataOfBeforeTheRunsItNeeds(t *testing.T) {
	spec := tinySpec(ConfigIIDThenT)
	spec.Hyper = Hyper{}
	spec.SuiteLimit = 1
	rec, err := DataOf(spec)
	if err != nil {
		t.Fatal(err)
	}
	iid, cases := rec.TrainedCounts()
	if iid != 0 || cases == 0 {
		t.Errorf("IID→T draws %d i.i.d. rows and %d suite cases: want none of the first (its baseline's), some of the second", iid, cases)
	}
	spec = tinySpec(ConfigIIDPlusT)
	spec.IIDLimit = 5
	if rec, err = DataOf(spec); err != nil {
		t.Fatal(err)
	}
	if iid, _ := rec.TrainedCounts(); iid != 5 {
		t.Errorf("IID+T with iid_limit 5 draws %d i.i.d. rows", iid)
	}
}
