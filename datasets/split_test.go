package datasets

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestNonUTF8FileIsRefusedWithItsLine(t *testing.T) {
	// "الرجل" in cp1256 on line 3; line 2 is UTF-8 Arabic with a BOM-led file.
	cases := []struct {
		name, data string
		line       int
		ok         bool
	}{
		{"cp1256 csv", "text,label\n\"مرحبا\",a\n\xc7\xe1\xd1\xcc\xe1,b\n", 3, false},
		{"latin1 jsonl", "{\"text\":\"ok\",\"label\":\"a\"}\n{\"text\":\"caf\xe9\",\"label\":\"b\"}\n", 2, false},
		{"bom is fine", "\ufefftext,label\nمرحبا,a\nbye,b\n", 0, true},
		{"bom jsonl is fine", "\ufeff{\"text\":\"ok\",\"label\":\"a\"}\n", 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ext := ".csv"
			if strings.Contains(c.name, "jsonl") {
				ext = ".jsonl"
			}
			path := filepath.Join(t.TempDir(), "f"+ext)
			if err := os.WriteFile(path, []byte(c.data), 0o644); err != nil {
				t.Fatal(err)
			}
			xs, err := FileSpec{Path: path, Labels: LabelNames("a", "b")}.Read()
			if c.ok {
				if err != nil || len(xs) == 0 {
					t.Fatalf("got %v, %v", xs, err)
				}
				return
			}
			var re *RowError
			if !errors.As(err, &re) || !errors.Is(err, ErrNotUTF8) {
				t.Fatalf("error %v, want a RowError wrapping ErrNotUTF8", err)
			}
			if re.Line != c.line || re.File != path {
				t.Errorf("error at %s line %d, want line %d: %v", re.File, re.Line, c.line, err)
			}
		})
	}
}

func TestSplitIsStratifiedSeededAndExact(t *testing.T) {
	// 100 rows: 30 of class 1, 70 of class 0.
	labels := make([]int, 100)
	for i := range labels {
		if i%10 < 3 {
			labels[i] = 1
		}
	}
	seed := func(s uint32) *uint32 { return &s }
	cases := []struct {
		name              string
		split             Split
		dev, test         int
		devOnes, testOnes int
	}{
		{"fractions", Split{Dev: 0.1, Test: 0.2}, 10, 20, 3, 6},
		{"counts", Split{Dev: 15, Test: 25, Seed: seed(1)}, 15, 25, 5, 7},
		{"no dev", Split{Test: 0.5}, 0, 50, 0, 15},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr, dv, te, err := c.split.Indices(labels)
			if err != nil {
				t.Fatal(err)
			}
			if len(dv) != c.dev || len(te) != c.test || len(tr) != 100-c.dev-c.test {
				t.Fatalf("sizes %d/%d/%d, want %d/%d/%d", len(tr), len(dv), len(te), 100-c.dev-c.test, c.dev, c.test)
			}
			ones := func(idx []int) (n int) {
				for _, i := range idx {
					n += labels[i]
				}
				return n
			}
			if ones(dv) != c.devOnes || ones(te) != c.testOnes {
				t.Errorf("class-1 rows dev %d test %d, want %d and %d", ones(dv), ones(te), c.devOnes, c.testOnes)
			}
			all := slices.Concat(tr, dv, te)
			slices.Sort(all)
			for i, j := range all {
				if i != j {
					t.Fatalf("parts are not a partition of the rows: %v", all)
				}
			}
			tr2, dv2, te2, _ := c.split.Indices(labels)
			if !slices.Equal(tr, tr2) || !slices.Equal(dv, dv2) || !slices.Equal(te, te2) {
				t.Error("the same seed gave another split")
			}
			other := c.split
			other.Seed = seed(c.split.SeedOrDefault() + 1)
			if _, _, te3, _ := other.Indices(labels); slices.Equal(te, te3) {
				t.Error("another seed gave the same test part")
			}
		})
	}
}

func TestSplitRefusesSizesWithoutTraining(t *testing.T) {
	for _, s := range []Split{{Dev: 0.5, Test: 0.5}, {Dev: 60, Test: 40}, {Test: 1.5}, {Dev: -0.1, Test: 0.2}, {Dev: 0.1}} {
		if _, _, _, err := s.Indices(make([]int, 100)); err == nil {
			t.Errorf("split %+v accepted", s)
		}
	}
}

func TestFileSpecPartsKeepLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "one.csv")
	var b strings.Builder
	b.WriteString("text,label\n")
	for i := range 20 {
		b.WriteString("row" + string(rune('a'+i)) + "," + []string{"x", "y"}[i%2] + "\n")
	}
	os.WriteFile(path, []byte(b.String()), 0o644)
	parts, lines, err := FileSpec{Path: path, Labels: LabelNames("x", "y"), Split: &Split{Dev: 4, Test: 6}}.Parts()
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range []int{10, 4, 6} {
		if len(parts[k]) != want || len(lines[k]) != want {
			t.Fatalf("part %d: %d rows, want %d", k, len(parts[k]), want)
		}
		for i, x := range parts[k] {
			if want := "row" + string(rune('a'+lines[k][i]-2)); x.Text != want {
				t.Errorf("part %d row %d: %q at line %d", k, i, x.Text, lines[k][i])
			}
		}
	}
	if _, _, err := (FileSpec{Path: path, Labels: LabelNames("x", "y")}).Parts(); err == nil {
		t.Error("a file without split was split")
	}
}

func TestBuiltinReaderRefusesNonUTF8(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dev.tsv")
	os.WriteFile(path, []byte("sentence\tlabel\ngood\t1\ncaf\xe9\t0\n"), 0o644)
	_, err := ReadSST2(path)
	var re *RowError
	if !errors.As(err, &re) || re.Line != 3 || re.Column != 4 || !errors.Is(err, ErrNotUTF8) {
		t.Errorf("error %v, want line 3 column 4 not UTF-8", err)
	}
}

// mnliLike returns labels and groups shaped like MNLI's dev set: about
// 3,270 premises with one to five hypotheses each (three mostly), labels
// of three classes drawn per hypothesis.
func mnliLike() (labels []int, groups []string) {
	rng := rand.New(rand.NewPCG(5, 9))
	for g := 0; len(labels) < 9815; g++ {
		n := []int{1, 2, 3, 3, 3, 3, 3, 4, 5}[rng.IntN(9)]
		for range n {
			labels = append(labels, rng.IntN(3))
			groups = append(groups, fmt.Sprintf("premise %d", g))
		}
	}
	return labels[:9815], groups[:9815]
}

// A split by group keeps each group whole in one part, comes within a
// group's size of the declared sizes and keeps each class's share within a
// point of the file's; the same seed gives the same parts.
func TestGroupSplitKeepsGroupsWholeAndStratified(t *testing.T) {
	labels, groups := mnliLike()
	s := Split{Dev: 500, Test: 2000, Group: "premise"}
	tr, dv, te, err := s.GroupIndices(labels, groups)
	if err != nil {
		t.Fatal(err)
	}
	partOf := map[string]int{}
	for k, idx := range [][]int{tr, dv, te} {
		for _, i := range idx {
			if p, ok := partOf[groups[i]]; ok && p != k {
				t.Fatalf("%s in parts %d and %d", groups[i], p, k)
			}
			partOf[groups[i]] = k
		}
	}
	if all := slices.Sorted(slices.Values(slices.Concat(tr, dv, te))); len(all) != len(labels) || all[0] != 0 || all[len(all)-1] != len(labels)-1 {
		t.Fatal("parts are not a partition of the rows")
	}
	share := func(idx []int, c int) float64 {
		n := 0
		for _, i := range idx {
			if labels[i] == c {
				n++
			}
		}
		return float64(n) / float64(len(idx))
	}
	all := make([]int, len(labels))
	for i := range all {
		all[i] = i
	}
	for _, p := range []struct {
		name string
		idx  []int
		want int
	}{{"dev", dv, 500}, {"test", te, 2000}} {
		if d := len(p.idx) - p.want; d < -5 || d > 5 {
			t.Errorf("%s: %d rows, declared %d", p.name, len(p.idx), p.want)
		}
		for c := range 3 {
			if d := share(p.idx, c) - share(all, c); d < -0.01 || d > 0.01 {
				t.Errorf("%s: class %d share %.3f, file %.3f", p.name, c, share(p.idx, c), share(all, c))
			}
		}
	}
	tr2, dv2, te2, _ := s.GroupIndices(labels, groups)
	if !slices.Equal(tr, tr2) || !slices.Equal(dv, dv2) || !slices.Equal(te, te2) {
		t.Error("the same seed gave another split")
	}
	// Without a group, MNLI-like premises leak: most test rows share their
	// premise with a training row.
	_, _, plain, _ := s.Indices(labels)
	trPlain, _, _, _ := s.Indices(labels)
	inTrainPlain := map[string]bool{}
	for _, i := range trPlain {
		inTrainPlain[groups[i]] = true
	}
	leaked := 0
	for _, i := range plain {
		if inTrainPlain[groups[i]] {
			leaked++
		}
	}
	if leaked < len(plain)/2 {
		t.Errorf("row split: %d of %d test rows share a premise with train; the fixture is not MNLI-like", leaked, len(plain))
	}
	t.Logf("by group: train %d, dev %d, test %d rows; by row: %d of %d test rows share a premise with train", len(tr), len(dv), len(te), leaked, len(plain))
}

// Groups too large for a part are refused, naming the part.
func TestGroupSplitRefusesGroupsLargerThanAPart(t *testing.T) {
	labels := make([]int, 100)
	groups := make([]string, 100)
	for i := range groups {
		groups[i] = fmt.Sprint(i / 50)
		labels[i] = i % 2
	}
	if _, _, _, err := (Split{Test: 10, Group: "g"}).GroupIndices(labels, groups); err == nil || !strings.Contains(err.Error(), "test part") {
		t.Errorf("error %v, want the test part named", err)
	}
}

// quotas is a controlled rounding: margins exact, every cell its exact
// share rounded down or up — where apportioning test, then dev from the
// rest, left train (the remainder) up to two off its share.
func TestQuotasRoundEveryCellWithinOne(t *testing.T) {
	tests := [][]int{{13, 13, 13, 12, 12}, {1, 2, 3}, {0, 5}, {7}, {16, 14, 14, 14, 14, 14, 14, 13}, {101, 1, 1, 1}}
	for _, sizes := range tests {
		n := 0
		for _, s := range sizes {
			n += s
		}
		valTest := (n + 1) / 2
		parts := []int{(valTest + 1) / 2, valTest - (valTest+1)/2, n - valTest}
		q := quotas(sizes, parts)
		col := make([]int, len(parts))
		for v, row := range q {
			sum := 0
			for p, k := range row {
				exact := float64(sizes[v]) * float64(parts[p]) / float64(n)
				if math.Abs(float64(k)-exact) >= 1 {
					t.Errorf("sizes %v: stratum %d part %d: %d, exact share %.2f", sizes, v, p, k, exact)
				}
				sum += k
				col[p] += k
			}
			if sum != sizes[v] {
				t.Errorf("sizes %v: stratum %d gets %d, has %d", sizes, v, sum, sizes[v])
			}
		}
		if !slices.Equal(col, parts) {
			t.Errorf("sizes %v: parts %v, want %v", sizes, col, parts)
		}
	}
}
