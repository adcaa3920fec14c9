package inputcheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/models/tokenize"
)

func writeFile(t *testing.T, name, data string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func fileRows(t *testing.T, path string) []Row {
	t.Helper()
	xs, lines, err := datasets.FileSpec{Path: path, Labels: datasets.LabelNames("no", "yes")}.ReadLines()
	if err != nil {
		t.Fatal(err)
	}
	texts := make([]string, len(xs))
	for i, x := range xs {
		texts[i] = x.Text
	}
	return FileRows(path, texts, nil, lines)
}

func TestPlantedDuplicateAcrossTrainAndTestIsReportedWithBothLines(t *testing.T) {
	train := writeFile(t, "train.csv", "text,label\nthe cat sat,no\nحيوان لطيف,yes\nmy dog barks,yes\n")
	// Line 3 repeats train line 4 exactly; line 4 is train line 3 with
	// tatweel, harakat and punctuation: a normalised duplicate.
	test := writeFile(t, "test.csv", "text,label\nsomething new,no\nmy dog barks,yes\nحَيـوان لطيف!,no\n")
	var r Report
	r.AddOverlaps([]Part{{Name: "i.i.d. train", Rows: fileRows(t, train)}, {Name: "i.i.d. test", Rows: fileRows(t, test)}})
	if len(r.Overlaps) != 1 {
		t.Fatalf("overlaps %+v, want one", r.Overlaps)
	}
	o := r.Overlaps[0]
	if o.Exact != 1 || o.Normalised != 1 {
		t.Errorf("exact %d normalised %d, want 1 and 1", o.Exact, o.Normalised)
	}
	msg := r.Findings[0].Message
	for _, want := range []string{train + " line 4 = " + test + " line 3", train + " line 3 = " + test + " line 4", "share 2 texts"} {
		if !strings.Contains(msg, want) {
			t.Errorf("finding %q lacks %q", msg, want)
		}
	}
	if r.Findings[0].Level != Warning || r.Err() != nil {
		t.Errorf("an overlap is a warning, got %+v", r.Findings[0])
	}
}

// An exact copy is among the examples however many normalised duplicates
// come before it in the file.
func TestExactDuplicateIsShownBeforeNormalisedOnes(t *testing.T) {
	train := writeFile(t, "train.csv", "text,label\na b,no\nc d,no\ne f,no\ng h,yes\n")
	test := writeFile(t, "test.csv", "text,label\nA b!,no\nc d.,no\nE f?,no\nnew,no\ng h,yes\n")
	var r Report
	r.AddOverlaps([]Part{{Name: "i.i.d. train", Rows: fileRows(t, train)}, {Name: "i.i.d. test", Rows: fileRows(t, test)}})
	if len(r.Overlaps) != 1 || r.Overlaps[0].Exact != 1 || r.Overlaps[0].Normalised != 3 {
		t.Fatalf("overlaps %+v, want one with 1 exact and 3 normalised", r.Overlaps)
	}
	want := "(1 exact, 3 after normalising): " + train + " line 5 = " + test + " line 6; " + train + " line 2 = " + test + " line 2"
	if msg := r.Findings[0].Message; !strings.Contains(msg, want) {
		t.Errorf("finding %q lacks %q", msg, want)
	}
}

// Two tweets that differ only in their @-mentions and case (GermEval has
// such a pair across its validation and test halves) are one text to the
// overlap check, reported per side with both lines, as exact copies are.
func TestNearDuplicateDifferingInMentionsIsReported(t *testing.T) {
	dev := writeFile(t, "dev.tsv", "text\tlabel\n@SteinbachErika Die Grünen sind schuld |LBR| Typisch\tyes\nnothing alike\tno\n")
	test := writeFile(t, "test.tsv", "text\tlabel\nanother text\tno\n@Ralf_Stegner @welt die grünen SIND schuld |LBR| typisch\tyes\n")
	var r Report
	r.AddOverlaps([]Part{{Name: "i.i.d. dev", Rows: fileRows(t, dev)}, {Name: "i.i.d. test", Rows: fileRows(t, test)}})
	if len(r.Overlaps) != 1 || r.Overlaps[0].Exact != 0 || r.Overlaps[0].Normalised != 1 {
		t.Fatalf("overlaps %+v, want one near-duplicate", r.Overlaps)
	}
	if want := dev + " line 2 = " + test + " line 3"; !strings.Contains(r.Findings[0].Message, want) {
		t.Errorf("finding %q lacks %q", r.Findings[0].Message, want)
	}
}

func TestNoOverlapNoFinding(t *testing.T) {
	var r Report
	r.AddOverlaps([]Part{{Name: "a", Rows: []Row{{Text: "one"}}}, {Name: "b", Rows: []Row{{Text: "two"}}}, {Name: "c", Rows: []Row{{Text: ""}}}, {Name: "d", Rows: []Row{{Text: "!!"}}}})
	if len(r.Findings) != 0 {
		t.Errorf("findings %+v", r.Findings)
	}
}

func TestNormalise(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"  The  Cat,  sat! ", "the cat sat"},
		{"Ｆｕｌｌｗｉｄｔｈ", "fullwidth"},
		{"café", "cafe"},
		{"انا بكـــره النساء.", "انا بكره النساء"},
		{"مَرْحَبًا", "مرحبا"},
		{"@user @url 😀 ok", "user ok"},
		{"@Alice_99 Du bist https://t.co/xY1 SO dumm!!", "user du bist url so dumm"},
		{"@bob du BIST www.example.org/a so dumm", "user du bist url so dumm"},
		{"@bob du BIST Http://Example.org/a so dumm", "user du bist url so dumm"},
		{"@bob du BIST Www.example.org/a so dumm", "user du bist url so dumm"},
		{"3,000 Fans at 10:30 on 1.5.2018", "0 fans at 0 on 0"},
		{"Ça me plaît", "ca me plait"},
	} {
		if got := Normalise(c.in); got != c.want {
			t.Errorf("Normalise(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestSameFile(t *testing.T) {
	a := writeFile(t, "a.csv", "x")
	dir, base := filepath.Split(a)
	if !SameFile(a, filepath.Join(dir, ".", base)) {
		t.Error("one file by two spellings is not the same file")
	}
	if SameFile(a, writeFile(t, "a.csv", "x")) {
		t.Error("two files are the same")
	}
}

func TestCoverage(t *testing.T) {
	tk, err := tokenize.NewWordLevel([]string{"[PAD]", "[UNK]", "the", "cat", "sat"}, 4)
	if err != nil {
		t.Fatal(err)
	}
	rows := []Row{{Text: "the cat"}, {Text: "القط جلس هنا"}, {Text: "the dog"}}
	c, err := MeasureCoverage("suite", rows, tk, 4, false)
	if err != nil {
		t.Fatal(err)
	}
	if c.Tokens != 7 || c.Unknown != 4 || c.Words != 7 || c.Truncated != 0 {
		t.Errorf("coverage %+v: want 7 tokens, 4 unknown, 7 words", c)
	}
	cases := []struct {
		wordVectors bool
		check       string
		level       Level
	}{{false, "unknown_tokens", Warning}, {true, "vector_coverage", Error}}
	for _, k := range cases {
		var r Report
		r.AddCoverage(c, k.wordVectors)
		if len(r.Findings) != 1 || r.Findings[0].Check != k.check || r.Findings[0].Level != k.level {
			t.Errorf("word vectors %v: findings %+v, want one %s %s", k.wordVectors, r.Findings, k.level, k.check)
		}
		if (r.Err() != nil) != (k.level == Error) || (k.level == Error && !strings.Contains(r.Err().Error(), "42.9%")) {
			t.Errorf("word vectors %v: error %v", k.wordVectors, r.Err())
		}
	}
	var fine Report
	fine.AddCoverage(Coverage{Data: "x", Rows: 10, Tokens: 100, Unknown: 1, UnknownRate: 0.01, Truncated: 5, TruncatedRate: 0.5, MaxLength: 8}, true)
	if len(fine.Findings) != 1 || fine.Findings[0].Check != "truncation" {
		t.Errorf("findings %+v, want the truncation warning alone", fine.Findings)
	}
}

// A Chinese text is one white-space word: its tokens are measured per
// character and per row, with the script named, and no per-word figure is
// printed (a good tokenizer would score 5 tokens "per word" here).
func TestCoverageOfChineseIsPerCharacter(t *testing.T) {
	vocab := writeFile(t, "vocab.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n我\n恨\n女\n人\n。\n你\n")
	tk, err := tokenize.NewWordPieceFromVocab(vocab, 0)
	if err != nil {
		t.Fatal(err)
	}
	// BERT's pre-tokenizer cuts every ideograph: one token a character.
	c, err := MeasureCoverage("suite mandarin", []Row{{Text: "我恨女人。"}, {Text: "我恨你。"}}, tk, 64, false)
	if err != nil {
		t.Fatal(err)
	}
	if c.Tokens != 9 || c.Chars != 9 || c.Words != 2 || c.Script != "Han" || c.TokensPerChar != 1 || c.TokensPerRow != 4.5 {
		t.Errorf("coverage %+v: want 9 tokens, 9 characters, 2 white-space words, Han, 1 token per character, 4.5 per row", c)
	}
	got := c.String()
	if want := "suite mandarin: 2 rows, Han script, [UNK] 0.0% of 9 tokens, 0.0% of rows at max_length 64; tokens per row 4.50, per character 1.00 (Han is written without spaces between words: no per-word figure)"; got != want {
		t.Errorf("String() =\n%s\nwant\n%s", got, want)
	}
	// Arabic is written with spaces: per UAX #29 word, with the script.
	c, err = MeasureCoverage("suite arabic", []Row{{Text: "القط جلس"}}, tk, 64, false)
	if err != nil {
		t.Fatal(err)
	}
	if c.UAXWords != 2 || c.Chars != 7 || c.Script != "Arabic" || !strings.Contains(c.String(), "per word 1.00 (UAX #29), per character 0.29") {
		t.Errorf("coverage %+v %s", c, c)
	}
	// A store written before the figures prints as it did.
	old := Coverage{Data: "x", Rows: 1, Tokens: 3, Words: 2, TokensPerWord: 1.5, UnknownRate: -1, MaxLength: 8}
	if got := old.String(); got != "x: 1 rows, no unknown token, 0.0% of rows at max_length 8, 1.50 tokens per word" {
		t.Errorf("old coverage prints %q", got)
	}
}

// One shared text is "1 text".
func TestOneOverlapIsSingular(t *testing.T) {
	a := writeFile(t, "a.csv", "text,label\nthe cat sat,no\n")
	b := writeFile(t, "b.csv", "text,label\nthe cat sat,no\nother,yes\n")
	var r Report
	r.AddOverlaps([]Part{{Name: "i.i.d. train", Rows: fileRows(t, a)}, {Name: "i.i.d. test", Rows: fileRows(t, b)}})
	if len(r.Findings) != 1 || !strings.Contains(r.Findings[0].Message, "share 1 text (1 exact") {
		t.Errorf("findings %+v, want one saying share 1 text", r.Findings)
	}
}
