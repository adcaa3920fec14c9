package tokenize

import (
	"bufio"
	"compress/gzip"
	"encoding/base64"
	"encoding/binary"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/internal/shareddata"
)

// The parity corpus is real text from ../shared/data: SST-2 dev, HateCheck,
// Multilingual HateCheck's Arabic cases, the MLMA Arabic tweets, the first
// 10,000 distinct CheckList sentiment inputs and the first 3,000 distinct
// QQP suite pairs. testdata/parity/NAME.bin.gz holds, per input, a hash of
// the ids HuggingFace's tokenizers (or SentencePiece) give it, written by
// testdata/parity/gen.mjs and gen_spm.py from the corpus that
// BELUGA_WRITE_PARITY_CORPUS=FILE go test -run TestParity writes.

// parityInput is one text or pair of the corpus.
type parityInput struct {
	Text string `json:"text"`
	Pair string `json:"pair,omitempty"`
	Is   bool   `json:"is_pair,omitempty"`
}

func csvColumn(t testing.TB, rel, col string) []string {
	t.Helper()
	f, err := os.Open(shareddata.Path(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	head, err := r.Read()
	if err != nil {
		t.Fatal(err)
	}
	k := -1
	for i, h := range head {
		if h == col {
			k = i
		}
	}
	if k < 0 {
		t.Fatalf("%s: no column %q", rel, col)
	}
	var out []string
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rec[k])
	}
	return out
}

func suiteInputs(t testing.TB, rel string, limit int) []parityInput {
	t.Helper()
	f, err := os.Open(shareddata.Path(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[parityInput]bool{}
	var out []parityInput
	sc := bufio.NewScanner(gz)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() && len(out) < limit {
		var row struct {
			Inputs []json.RawMessage `json:"inputs"`
		}
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatal(err)
		}
		for _, raw := range row.Inputs {
			var in parityInput
			var pair []string
			if err := json.Unmarshal(raw, &in.Text); err != nil {
				if err := json.Unmarshal(raw, &pair); err != nil || len(pair) != 2 {
					t.Fatalf("%s: input %s", rel, raw)
				}
				in = parityInput{pair[0], pair[1], true}
			}
			if !seen[in] && len(out) < limit {
				seen[in] = true
				out = append(out, in)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// parityCorpus reads the corpus (skipping the test without ../shared).
func parityCorpus(t testing.TB) []parityInput {
	t.Helper()
	var out []parityInput
	for i, in := range provenanceInputs {
		out = append(out, parityInput{in[0], in[1], i == 2})
	}
	texts := func(ts []string) {
		for _, s := range ts {
			out = append(out, parityInput{Text: s})
		}
	}
	f, err := os.Open(shareddata.Path(t, "data/sst2/dev.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(f)
	for first := true; sc.Scan(); first = false {
		if !first {
			s, _, _ := strings.Cut(sc.Text(), "\t")
			out = append(out, parityInput{Text: s})
		}
	}
	f.Close()
	texts(csvColumn(t, "data/hatecheck/test_suite_cases.csv", "test_case"))
	texts(csvColumn(t, "data/mhc-arabic/mhc_arabic_cases.csv", "test_case"))
	texts(csvColumn(t, "data/mhc-arabic/mlma_ar_dataset.csv", "tweet"))
	out = append(out, suiteInputs(t, "data/checklist/converted/sentiment.jsonl.gz", 10000)...)
	out = append(out, suiteInputs(t, "data/checklist/converted/qqp.jsonl.gz", 3000)...)
	return out
}

// idsHash is FNV-1a (32 bits) over the ids as little-endian uint32s.
func idsHash(ids []int) uint32 {
	h := fnv.New32a()
	var b [4]byte
	for _, id := range ids {
		binary.LittleEndian.PutUint32(b[:], uint32(id))
		h.Write(b[:])
	}
	return h.Sum32()
}

// corpusHash identifies the corpus a golden was made from.
func corpusHash(in []parityInput) uint64 {
	h := fnv.New64a()
	for _, x := range in {
		fmt.Fprintf(h, "%d:%s|%d:%s|%v\n", len(x.Text), x.Text, len(x.Pair), x.Pair, x.Is)
	}
	return h.Sum64()
}

// readGolden reads a golden: the corpus hash, the count, the id hashes.
func readGolden(t testing.TB, name string) (uint64, []uint32) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "parity", name+".bin.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(gz)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 12 {
		t.Fatalf("golden %s: %d bytes", name, len(b))
	}
	corpus := binary.LittleEndian.Uint64(b)
	n := int(binary.LittleEndian.Uint32(b[8:]))
	if len(b) != 12+4*n {
		t.Fatalf("golden %s: %d bytes for %d hashes", name, len(b), n)
	}
	hs := make([]uint32, n)
	for i := range hs {
		hs[i] = binary.LittleEndian.Uint32(b[12+4*i:])
	}
	return corpus, hs
}

// checkParity encodes the corpus (its first limit inputs if limit > 0,
// or 2,000 with -short) and compares with the golden.
func checkParity(t *testing.T, tk Tokenizer, golden string, corpus []parityInput, limit int) {
	ch, want := readGolden(t, golden)
	if ch != corpusHash(corpus) || len(want) != len(corpus) {
		t.Fatalf("golden %s was made from another corpus (%d inputs, hash %x; now %d, %x): regenerate it",
			golden, len(want), ch, len(corpus), corpusHash(corpus))
	}
	n := len(corpus)
	if testing.Short() {
		n = 2000
	}
	if limit > 0 {
		n = min(n, limit)
	}
	bad := 0
	for i, in := range corpus[:n] {
		enc, err := tk.Encode(in.Text, in.Pair, in.Is)
		if err != nil {
			t.Fatalf("%q: %v", in.Text, err)
		}
		if idsHash(enc.IDs) != want[i] {
			bad++
			if bad <= 5 {
				t.Errorf("input %d %q %q: ids %v differ from the reference (node testdata/parity/gen.mjs --show shows them)", i, in.Text, in.Pair, enc.IDs)
			}
		}
	}
	t.Logf("%s: %d of %d inputs differ", golden, bad, n)
	if bad > 0 {
		t.Errorf("%s: %d of %d inputs differ from the reference", golden, bad, n)
	}
}

func TestParity(t *testing.T) {
	corpus := parityCorpus(t)
	if path := os.Getenv("BELUGA_WRITE_PARITY_CORPUS"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		enc := json.NewEncoder(f)
		enc.SetEscapeHTML(false)
		for _, in := range corpus {
			if err := enc.Encode(in); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %d inputs (corpus hash %x) to %s", len(corpus), corpusHash(corpus), path)
	}
	dir := shareddata.Path(t, "data/tokenizers")
	tests := []struct {
		name, golden string
		build        func() (Tokenizer, error)
	}{
		{"roberta-base tokenizer.json", "roberta-base", func() (Tokenizer, error) {
			return NewHF(filepath.Join(dir, "FacebookAI__roberta-base/tokenizer.json"), 0)
		}},
		{"ModernBERT tokenizer.json", "modernbert", func() (Tokenizer, error) {
			return NewHF(filepath.Join(dir, "answerdotai__ModernBERT-base/tokenizer.json"), 0)
		}},
		{"mBERT tokenizer.json (HF)", "mbert-cased", func() (Tokenizer, error) {
			return NewHF(filepath.Join(dir, "google-bert__bert-base-multilingual-cased/tokenizer.json"), 0)
		}},
		{"mBERT tokenizer.json (WordPiece)", "mbert-cased", func() (Tokenizer, error) {
			return NewWordPieceFromJSON(filepath.Join(dir, "google-bert__bert-base-multilingual-cased/tokenizer.json"), 0)
		}},
		{"mBERT vocab.txt (cased by its vocabulary)", "mbert-cased", func() (Tokenizer, error) {
			return NewWordPieceFromVocab(filepath.Join(dir, "google-bert__bert-base-multilingual-cased/vocab.txt"), 0)
		}},
		{"mBERT vocab.txt (do_lower_case false)", "mbert-cased", func() (Tokenizer, error) {
			return NewWordPieceWithOptions(filepath.Join(dir, "google-bert__bert-base-multilingual-cased/vocab.txt"),
				BertOptions{ChineseChars: true}, 0)
		}},
		{"deberta-v3-base spm.model", "deberta-v3", func() (Tokenizer, error) {
			return NewSentencePiece(filepath.Join(dir, "microsoft__deberta-v3-base/spm.model"), WrapDeBERTa, 0)
		}},
		{"small unigram spm as XLM-R", "small-unigram-xlmr", func() (Tokenizer, error) {
			return NewSentencePiece(filepath.Join("testdata", "parity", "small-unigram.model"), WrapXLMR, 0)
		}},
		{"small BPE spm as XLM-R", "small-bpe-xlmr", func() (Tokenizer, error) {
			return NewSentencePiece(filepath.Join("testdata", "parity", "small-bpe.model"), WrapXLMR, 0)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tk, err := tc.build()
			if err != nil {
				t.Fatal(err)
			}
			checkParity(t, tk, tc.golden, corpus, 0)
		})
	}
}

// offsetsHash is gen.mjs's --offsets hash of one input: for the untruncated
// and the truncated tokenizer, the length, ids, type ids and character
// offsets, as uint32s.
func offsetsHash(t *testing.T, tks [2]Tokenizer, in parityInput) uint32 {
	var vals []int
	for _, tk := range tks {
		e, err := tk.EncodeOffsets(in.Text, in.Pair, in.Is)
		if err != nil {
			t.Fatal(err)
		}
		ra, rb := RuneOffsets(in.Text, e.Offsets), RuneOffsets(in.Pair, e.Offsets)
		vals = append(vals, len(e.IDs))
		vals = append(vals, e.IDs...)
		vals = append(vals, e.TypeIDs...)
		for j := range e.IDs {
			o := ra[j]
			if e.Seq[j] == 1 {
				o = rb[j]
			}
			vals = append(vals, o.Start, o.End)
		}
	}
	return idsHash(vals)
}

// TestOffsetsParity: offsets (in characters, as HuggingFace reports them),
// type ids and longest-first truncation to 12 tokens equal HuggingFace's on
// every 8th input of the corpus (pairs included).
func TestOffsetsParity(t *testing.T) {
	corpus := parityCorpus(t)
	dir := shareddata.Path(t, "data/tokenizers")
	hf := func(rel string) func(int) (Tokenizer, error) {
		return func(n int) (Tokenizer, error) { return NewHF(filepath.Join(dir, rel), n) }
	}
	tests := []struct {
		name, golden string
		build        func(maxLength int) (Tokenizer, error)
	}{
		{"roberta-base (HF)", "roberta-base", hf("FacebookAI__roberta-base/tokenizer.json")},
		{"ModernBERT (HF)", "modernbert", hf("answerdotai__ModernBERT-base/tokenizer.json")},
		{"mBERT (HF)", "mbert-cased", hf("google-bert__bert-base-multilingual-cased/tokenizer.json")},
		{"mBERT tokenizer.json (WordPiece)", "mbert-cased", func(n int) (Tokenizer, error) {
			return NewWordPieceFromJSON(filepath.Join(dir, "google-bert__bert-base-multilingual-cased/tokenizer.json"), n)
		}},
		{"mBERT vocab.txt (WordPiece)", "mbert-cased", func(n int) (Tokenizer, error) {
			return NewWordPieceFromVocab(filepath.Join(dir, "google-bert__bert-base-multilingual-cased/vocab.txt"), n)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var tks [2]Tokenizer
			for i, n := range []int{0, 12} {
				tk, err := tc.build(n)
				if err != nil {
					t.Fatal(err)
				}
				tks[i] = tk
			}
			ch, want := readGolden(t, tc.golden+"-offsets")
			if ch != corpusHash(corpus) {
				t.Fatalf("golden %s-offsets was made from another corpus: regenerate it", tc.golden)
			}
			bad := 0
			for k, i := 0, 0; i < len(corpus); k, i = k+1, i+8 {
				if offsetsHash(t, tks, corpus[i]) != want[k] {
					bad++
					if bad <= 5 {
						e, _ := tks[0].EncodeOffsets(corpus[i].Text, corpus[i].Pair, corpus[i].Is)
						t.Errorf("input %d %q %q: ids %v offsets %v differ from HuggingFace's (untruncated or at 12)", i, corpus[i].Text, corpus[i].Pair, e.IDs, e.Offsets)
					}
				}
			}
			if bad > 0 {
				t.Errorf("%d of %d inputs differ", bad, len(want))
			}
		})
	}
}

// debertaFastJSON is deberta-v3-base's spm.model as transformers'
// DebertaV2Converter writes it as a tokenizer.json (no lower-casing, no
// punctuation split): Strip, Precompiled (the model's charsmap),
// Replace(" {2,}", " "), Metaspace, Unigram without byte fallback, and
// [CLS] A [SEP] B [SEP].
func debertaFastJSON(t testing.TB) []byte {
	data, err := os.ReadFile(shareddata.Path(t, "data/tokenizers/microsoft__deberta-v3-base/spm.model"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := parseSPM(data)
	if err != nil {
		t.Fatal(err)
	}
	vocab := make([]any, len(m.pieces))
	for i, p := range m.pieces {
		vocab[i] = []any{p, float64(m.scores[i])}
	}
	var added []any
	for _, tok := range []string{"[PAD]", "[CLS]", "[SEP]", "[UNK]"} {
		added = append(added, map[string]any{"id": m.pieceID(tok), "content": tok, "single_word": false, "lstrip": false,
			"rstrip": false, "normalized": false, "special": true})
	}
	added = append(added, map[string]any{"id": len(m.pieces), "content": "[MASK]", "single_word": false, "lstrip": false,
		"rstrip": false, "normalized": false, "special": true})
	sp := func(tok string, typ int) any {
		return map[string]any{"SpecialToken": map[string]any{"id": tok, "type_id": typ}}
	}
	seq := func(id string, typ int) any {
		return map[string]any{"Sequence": map[string]any{"id": id, "type_id": typ}}
	}
	doc := map[string]any{
		"version": "1.0", "truncation": nil, "padding": nil, "added_tokens": added,
		"normalizer": map[string]any{"type": "Sequence", "normalizers": []any{
			map[string]any{"type": "Strip", "strip_left": true, "strip_right": true},
			map[string]any{"type": "Precompiled", "precompiled_charsmap": base64.StdEncoding.EncodeToString(m.charsmapRaw)},
			map[string]any{"type": "Replace", "pattern": map[string]any{"Regex": " {2,}"}, "content": " "},
		}},
		"pre_tokenizer": map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": true}}},
		"post_processor": map[string]any{"type": "TemplateProcessing",
			"single": []any{sp("[CLS]", 0), seq("A", 0), sp("[SEP]", 0)},
			"pair":   []any{sp("[CLS]", 0), seq("A", 0), sp("[SEP]", 0), seq("B", 1), sp("[SEP]", 1)},
			"special_tokens": map[string]any{
				"[CLS]": map[string]any{"id": "[CLS]", "ids": []int{m.pieceID("[CLS]")}, "tokens": []string{"[CLS]"}},
				"[SEP]": map[string]any{"id": "[SEP]", "ids": []int{m.pieceID("[SEP]")}, "tokens": []string{"[SEP]"}},
			}},
		"decoder": nil,
		"model":   map[string]any{"type": "Unigram", "unk_id": m.unk, "vocab": vocab, "byte_fallback": false},
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPrecompiledParity: the tokenizer.json HuggingFace's converter makes
// of deberta-v3-base's spm.model (Precompiled charsmap, Metaspace, Unigram)
// gives HuggingFace's ids on every 8th input of the corpus.
func TestPrecompiledParity(t *testing.T) {
	corpus := parityCorpus(t)
	b := debertaFastJSON(t)
	if path := os.Getenv("BELUGA_WRITE_DEBERTA_FAST"); path != "" {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tk, err := parseHF(b, 0)
	if err != nil {
		t.Fatal(err)
	}
	ch, want := readGolden(t, "deberta-v3-fast")
	if ch != corpusHash(corpus) {
		t.Fatal("golden deberta-v3-fast was made from another corpus: regenerate it")
	}
	bad := 0
	for k, i := 0, 0; i < len(corpus); k, i = k+1, i+8 {
		e, err := tk.Encode(corpus[i].Text, corpus[i].Pair, corpus[i].Is)
		if err != nil {
			t.Fatal(err)
		}
		if idsHash(e.IDs) != want[k] {
			bad++
			if bad <= 5 {
				t.Errorf("input %d %q %q: ids %v differ from HuggingFace's", i, corpus[i].Text, corpus[i].Pair, e.IDs)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d inputs differ", bad, len(want))
	}
}
