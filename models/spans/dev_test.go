package spans

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/internal/shareddata"
	"github.com/beluga-nlp/beluga/metrics"
	"github.com/beluga-nlp/beluga/models/tokenize"
)

// squadDev is SQuAD v1.1 dev with its features under BeLUGA's configuration,
// built once per test process.
var squadDev struct {
	once  sync.Once
	exs   []datasets.QAExample
	fs    []Feature
	tk    Tokenizer
	cfg   Config
	vocab []string
	err   error
}

func loadSQuADDev(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("tokenizes all of SQuAD dev")
	}
	dev := shareddata.Path(t, "data/squad/dev-v1.1.json")
	vocab := shareddata.Path(t, "data/vocab/bert-base-uncased-vocab.txt")
	d := &squadDev
	d.once.Do(func() {
		if d.exs, d.err = datasets.ReadSQuAD(dev); d.err != nil {
			return
		}
		var wp *tokenize.WordPiece
		if wp, d.err = tokenize.NewWordPieceFromVocab(vocab, 0); d.err != nil {
			return
		}
		if d.tk, d.cfg, d.err = FromTokenizer(wp); d.err != nil {
			return
		}
		if d.fs, d.err = Features(d.tk, d.exs, d.cfg); d.err != nil {
			return
		}
		var f *os.File
		if f, d.err = os.Open(vocab); d.err != nil {
			return
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			d.vocab = append(d.vocab, sc.Text())
		}
		d.err = sc.Err()
	})
	if d.err != nil {
		t.Fatal(d.err)
	}
}

// TestSQuADDevOffsets checks every token offset of SQuAD dev's contexts and
// questions independently of the tokenizer: the characters a token claims,
// normalised as BERT does, must spell its vocabulary entry (less "##").
func TestSQuADDevOffsets(t *testing.T) {
	loadSQuADDev(t)
	d := &squadDev
	seen := map[string]bool{}
	var tokens, unknown, wrong int
	check := func(text string) {
		if seen[text] {
			return
		}
		seen[text] = true
		toks, err := d.tk.TokenizeOffsets(text)
		if err != nil {
			t.Fatal(err)
		}
		rs := []rune(text)
		prevEnd := 0
		for _, tok := range toks {
			tokens++
			if tok.Start < prevEnd || tok.End <= tok.Start || tok.End > len(rs) {
				wrong++
				t.Errorf("token %d has characters [%d,%d) after %d in a text of %d", tok.ID, tok.Start, tok.End, prevEnd, len(rs))
				continue
			}
			prevEnd = tok.End
			piece := strings.TrimPrefix(d.vocab[tok.ID], "##")
			if piece == "[UNK]" {
				unknown++
				continue
			}
			var got strings.Builder
			for _, r := range rs[tok.Start:tok.End] {
				got.WriteString(lowerStripAccents(r))
			}
			if got.String() != piece {
				wrong++
				if wrong <= 10 {
					t.Errorf("token %q claims %q", piece, string(rs[tok.Start:tok.End]))
				}
			}
		}
	}
	for _, ex := range d.exs {
		check(ex.Context)
		check(ex.Question)
	}
	t.Logf("%d distinct texts, %d tokens: %d [UNK], %d with wrong offsets", len(seen), tokens, unknown, wrong)
}

// TestSQuADDevAnswerRoundTrip maps every gold answer of SQuAD dev (all of
// them, not only the first that training uses) to token positions in each
// window and back: the characters from the start token's first to the end
// token's last must hold the answer exactly where answer_start says.
func TestSQuADDevAnswerRoundTrip(t *testing.T) {
	loadSQuADDev(t)
	d := &squadDev
	byExample := make([][]Feature, len(d.exs))
	for _, f := range d.fs {
		byExample[f.Example] = append(byExample[f.Example], f)
	}
	var answers, exact, normalised, wider, outside, lastToken, multiWindow, badData, bad int
	for i, ex := range d.exs {
		if len(byExample[i]) > 1 {
			multiWindow++
		}
		ctx := []rune(ex.Context)
		for k, text := range ex.Answers {
			answers++
			startChar := ex.AnswerStarts[k]
			endChar := startChar + len([]rune(text))
			if endChar > len(ctx) || string(ctx[startChar:endChar]) != text {
				badData++
				continue
			}
			inAny := false
			for _, f := range byExample[i] {
				first, last := contextSpan(f)
				s, e := answerPositions(f.Offsets, first, last, startChar, endChar)
				if s == 0 && e == 0 {
					continue
				}
				inAny = true
				if s == last {
					lastToken++
				}
				from, to := f.Offsets[s][0], f.Offsets[e][1]
				covered := string(ctx[from:to])
				switch {
				case from > startChar || to < endChar || s > e || !f.Context[s] || !f.Context[e]:
					bad++
					t.Errorf("%s answer %q: tokens %d..%d cover characters [%d,%d), the answer is [%d,%d)", ex.ID, text, s, e, from, to, startChar, endChar)
				case covered == text:
					exact++
				case metrics.ExactMatch(covered, []string{text}) == 1:
					normalised++
				default:
					wider++ // the answer starts or ends inside a word piece
				}
			}
			if !inAny {
				outside++
			}
		}
	}
	t.Logf("%d examples (%d features, %d examples over several windows), %d gold answers", len(d.exs), len(d.fs), multiWindow, answers)
	t.Logf("answer-window round trips: %d exact, %d equal after SQuAD normalisation, %d wider (answer boundary inside a token), %d wrong", exact, normalised, wider, bad)
	t.Logf("%d answers in no window whole, %d answer_start not matching the text, %d starting in a window's last token", outside, badData, lastToken)
	if exact == 0 || bad > 0 {
		t.Errorf("round trip failed: %d exact, %d wrong", exact, bad)
	}
}

// contextSpan returns the first and last context positions of f.
func contextSpan(f Feature) (first, last int) {
	first, last = -1, -1
	for i, c := range f.Context {
		if c {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	return first, last
}

// TestSQuADDevMatchesPairTokenizer compares the features of SQuAD dev
// questions whose context fits one window with the project's pair
// tokenizer (models/tokenize) on (question, context): the same ids. (A
// text holding a space separator other than U+0020 is counted apart: the
// former sugarme-based tokenizer of this package differed there.)
func TestSQuADDevMatchesPairTokenizer(t *testing.T) {
	loadSQuADDev(t)
	d := &squadDev
	pair, err := tokenize.NewWordPieceFromVocab(shareddata.Path(t, "data/vocab/bert-base-uncased-vocab.txt"), 0)
	if err != nil {
		t.Fatal(err)
	}
	single := map[int]int{}
	for i, f := range d.fs {
		if _, seen := single[f.Example]; seen {
			single[f.Example] = -1
		} else {
			single[f.Example] = i
		}
	}
	var same, spaces, differ int
	for k := 0; k < len(d.exs); k += 7 { // every 7th example keeps it quick
		fi := single[k]
		if fi < 0 {
			continue
		}
		ex, f := d.exs[k], d.fs[fi]
		enc, err := pair.Encode(ex.Question, ex.Context, true)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case reflect.DeepEqual(enc.IDs, f.IDs[:f.Len]) && reflect.DeepEqual(enc.TypeIDs, f.TypeIDs[:f.Len]):
			same++
		case strings.IndexFunc(ex.Question+ex.Context, func(r rune) bool { return r != ' ' && unicode.Is(unicode.Zs, r) }) >= 0:
			spaces++
		default:
			differ++
			if differ <= 3 {
				t.Errorf("%s: ids differ from the pair tokenizer's", ex.ID)
			}
		}
	}
	t.Logf("%d features equal to the pair tokenizer's, %d differ in texts with non-ASCII spaces, %d differ otherwise", same, spaces, differ)
}

// TestSQuADDevFeaturesUnchanged: BERT's features of all of SQuAD dev (ids,
// types, context marks, offsets, answer positions, at BeLUGA's 384/128)
// hash to the digest testdata/squad_dev_features.sha256 holds, which the
// former sugarme-based WordPiece of this package produced: READ's move to
// package tokenize's tokenizers changed no BERT feature.
func TestSQuADDevFeaturesUnchanged(t *testing.T) {
	loadSQuADDev(t)
	want, err := os.ReadFile("testdata/squad_dev_features.sha256")
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	var buf [8]byte
	put := func(v int) {
		binary.LittleEndian.PutUint64(buf[:], uint64(int64(v)))
		h.Write(buf[:])
	}
	for _, f := range squadDev.fs {
		put(f.Example)
		put(f.Len)
		put(f.Start)
		put(f.End)
		for i := range f.IDs {
			put(f.IDs[i])
			put(f.TypeIDs[i])
			put(f.Offsets[i][0])
			put(f.Offsets[i][1])
			c := 0
			if f.Context[i] {
				c = 1
			}
			put(c)
		}
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != strings.TrimSpace(string(want)) {
		t.Errorf("%d features hash to %s, want %s", len(squadDev.fs), got, strings.TrimSpace(string(want)))
	}
}

// lowerStripAccents is BERT's uncased normalisation of one character:
// lower case, canonical decomposition, combining marks (Mn) dropped.
func lowerStripAccents(r rune) string {
	var buf [utf8.UTFMax]byte
	n := utf8.EncodeRune(buf[:], unicode.ToLower(r))
	d := norm.NFD.Bytes(buf[:n])
	return strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Mn, r) {
			return -1
		}
		return r
	}, string(d))
}
