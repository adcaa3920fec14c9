package datasets

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/internal/shareddata"
)

func TestHalveMatchesHuggingFace(t *testing.T) {
	f, err := os.Open(shareddata.Path(t, "data/sst2/dev_halves_seed42.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var halves [][]int
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "#") {
			continue
		}
		var xs []int
		for _, w := range strings.Fields(sc.Text()) {
			x, err := strconv.Atoi(w)
			if err != nil {
				t.Fatal(err)
			}
			xs = append(xs, x)
		}
		halves = append(halves, xs)
	}
	if len(halves) != 2 {
		t.Fatalf("read %d halves from the reference, want 2", len(halves))
	}
	dev, err := ReadSST2(shareddata.Path(t, "data/sst2/dev.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	val, test := Halve(len(dev), BeLUGAHalvingSeed)
	if !reflect.DeepEqual(val, halves[0]) {
		t.Errorf("validation half differs from HuggingFace's (first %v, want %v)", val[:5], halves[0][:5])
	}
	if !reflect.DeepEqual(test, halves[1]) {
		t.Errorf("test half differs from HuggingFace's (first %v, want %v)", test[:5], halves[1][:5])
	}
}

func TestReadSST2Shared(t *testing.T) {
	train, err := ReadSST2(shareddata.Path(t, "data/sst2/train.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	pos := 0
	for _, e := range train {
		pos += e.Label
	}
	if len(train) != 67349 || pos != 37569 {
		t.Errorf("train: %d rows, %d positive; want 67349 and 37569", len(train), pos)
	}
	test, err := ReadSST2(shareddata.Path(t, "data/sst2/test-labeled.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	if len(test) != 1821 || strings.HasSuffix(test[0].Text, "\r") {
		t.Errorf("labelled test: %d rows (want 1821), first %q", len(test), test[0].Text)
	}
}

func TestReadSQuADShared(t *testing.T) {
	qs, err := ReadSQuAD(shareddata.Path(t, "data/squad/dev-v1.1.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 10570 {
		t.Errorf("%d questions, want 10570", len(qs))
	}
	val, test := Halve(len(qs), BeLUGAHalvingSeed)
	if len(val) != 5285 || len(test) != 5285 {
		t.Errorf("halves %d / %d, want 5285 / 5285", len(val), len(test))
	}
}

func TestReadErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(text), 0o644)
		return p
	}
	tests := []struct {
		name string
		read func() error
		want string
	}{
		{"bad label", func() error {
			_, err := ReadSST2(write("a.tsv", "sentence\tlabel\ngood\t1\nbad\tx\n"))
			return err
		}, `a.tsv line 3 field "label": label "x" is not 0 or 1`},
		{"missing column", func() error {
			_, err := ReadSST2(write("b.tsv", "text\tlabel\ngood\t1\n"))
			return err
		}, `b.tsv line 1 field "sentence": missing column`},
		{"short row", func() error {
			_, err := ReadQQP(write("c.tsv", "id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate\n1\t2\t3\tq1\n"))
			return err
		}, "c.tsv line 2: 4 columns, header has 6"},
		{"squad not json", func() error {
			_, err := ReadSQuAD(write("d.json", "{"))
			return err
		}, "squad " + filepath.Join(dir, "d.json")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.read()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
	if _, err := ReadSST2(filepath.Join(dir, "missing.tsv")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestReadQQP(t *testing.T) {
	p := filepath.Join(t.TempDir(), "qqp.tsv")
	os.WriteFile(p, []byte("id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate\n7\t1\t2\tHow old?\tWhat age?\t1\n"), 0o644)
	got, err := ReadQQP(p)
	if err != nil {
		t.Fatal(err)
	}
	want := []Example{{Text: "How old?", Pair: "What age?", IsPair: true, Label: 1}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}
