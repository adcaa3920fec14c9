package tokenize

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/beluga-nlp/beluga/internal/shareddata"
)

// The normaliser parity test: every tokenizer kind that reads tokenizer.json
// (byte-level BPE: ModernBERT, roberta-base; WordPiece: mBERT; Unigram:
// deberta-v3's converted spm.model), under its own normaliser and (but
// roberta-base, byte-level BPE as ModernBERT) under each of HuggingFace's
// others (testdata/parity/normalizers.json: NFC, NFD,
// NFKC, NFKD, Lowercase, StripAccents, Replace, BertNormalizer and
// sequences of them), gives HuggingFace's ids and character offsets on the
// NFD and NFC forms of real texts. testdata/parity/norm-NAME.bin.gz holds,
// per input, a hash of the ids, type ids and offsets HuggingFace's Rust
// tokenizers (npm @anush008/tokenizers) give it, written by gen_norm.mjs
// from the corpus and tokenizer files that
// BELUGA_WRITE_NORM_PARITY=DIR go test -run TestNormalizerOffsetsParity writes.

// normCorpus is the first 300 Multilingual HateCheck Arabic cases that NFD
// changes (Arabic letters with hamza and madda decompose: 662 of its 3,570
// cases; of the first 300 cases only 49 do, and an unchanged text cannot
// show an offset error) in NFD and as written (NFC),
// the SST-2 dev sentences with a non-ASCII character in NFD and as
// written, and the first 150 MLMA Arabic tweets (emoji, presentation
// forms, Latin) as written and in NFD.
func normCorpus(t testing.TB) (corpus []parityInput, nfdMHC int) {
	t.Helper()
	add := func(texts []string, forms ...norm.Form) {
		for _, f := range forms {
			for _, s := range texts {
				if f == norm.NFC {
					corpus = append(corpus, parityInput{Text: s}) // as written
				} else {
					corpus = append(corpus, parityInput{Text: f.String(s)})
				}
			}
		}
	}
	var mhc []string
	for _, s := range csvColumn(t, "data/mhc-arabic/mhc_arabic_cases.csv", "test_case") {
		if len(mhc) < 300 && !norm.NFD.IsNormalString(s) {
			mhc = append(mhc, s)
		}
	}
	if len(mhc) < 300 {
		t.Fatalf("%d Multilingual HateCheck cases that NFD changes, want 300", len(mhc))
	}
	add(mhc, norm.NFD)
	nfdMHC = len(corpus)
	add(mhc, norm.NFC)
	f, err := os.Open(shareddata.Path(t, "data/sst2/dev.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	var accented []string
	sc := bufio.NewScanner(f)
	for first := true; sc.Scan(); first = false {
		s, _, _ := strings.Cut(sc.Text(), "\t")
		if !first && !isASCII(s) {
			accented = append(accented, s)
		}
	}
	f.Close()
	add(accented, norm.NFD, norm.NFC)
	add(csvColumn(t, "data/mhc-arabic/mlma_ar_dataset.csv", "tweet")[:150], norm.NFC, norm.NFD)
	return corpus, nfdMHC
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// normTokenizers are the tokenizer.json files of the test, by golden name:
// each base tokenizer as it is and with each normaliser of
// normalizers.json in place of its own.
func normTokenizers(t testing.TB) map[string][]byte {
	t.Helper()
	dir := shareddata.Path(t, "data/tokenizers")
	bases := map[string][]byte{}
	for name, rel := range map[string]string{"modernbert": "answerdotai__ModernBERT-base/tokenizer.json",
		"roberta-base": "FacebookAI__roberta-base/tokenizer.json", "mbert-cased": "google-bert__bert-base-multilingual-cased/tokenizer.json"} {
		b, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			t.Fatal(err)
		}
		bases[name] = b
	}
	bases["deberta-v3-fast"] = debertaFastJSON(t)
	vb, err := os.ReadFile(filepath.Join("testdata", "parity", "normalizers.json"))
	if err != nil {
		t.Fatal(err)
	}
	var variants map[string]json.RawMessage
	if err := json.Unmarshal(vb, &variants); err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for base, b := range bases {
		out[base] = b
		for name, n := range variants {
			if base == "modernbert" && name == "strip-prepend" {
				// HuggingFace's tokenizers 0.22.2 panics on it ("AddedVocabulary
				// bad split": Prepend shifts ModernBERT's normalized added
				// tokens), so there is nothing to compare with.
				continue
			}
			if base == "deberta-v3-fast" && name != "nfd" && name != "nfkc" && name != "replace" {
				// Its 128k-piece Unigram model takes a second to read; its
				// own normaliser (Precompiled) and these three cover it.
				continue
			}
			if base == "roberta-base" {
				// Byte-level BPE as ModernBERT, which takes every normaliser.
				continue
			}
			var doc map[string]json.RawMessage
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			doc["normalizer"] = n
			vb, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			out[base+"-"+name] = vb
		}
	}
	return out
}

// normHash is gen_norm.mjs's hash of one input: the number of ids, the ids,
// type ids and character offsets, as uint32s.
func normHash(t *testing.T, tk Tokenizer, in parityInput) uint32 {
	e, err := tk.EncodeOffsets(in.Text, in.Pair, in.Is)
	if err != nil {
		t.Fatal(err)
	}
	offs := RuneOffsets(in.Text, e.Offsets)
	vals := append([]int{len(e.IDs)}, e.IDs...)
	vals = append(vals, e.TypeIDs...)
	for _, o := range offs {
		vals = append(vals, o.Start, o.End)
	}
	return idsHash(vals)
}

// diffFromGolden counts the corpus inputs whose ids and character offsets
// under tk differ from golden's (HuggingFace's), and those of them among the
// first nfdMHC (the NFD Multilingual HateCheck texts), naming the first
// three.
func diffFromGolden(t *testing.T, tk Tokenizer, golden string, corpus []parityInput, nfdMHC int) (bad, badNFD int) {
	t.Helper()
	ch, want := readGolden(t, golden)
	if ch != corpusHash(corpus) || len(want) != len(corpus) {
		t.Fatalf("golden %s was made from another corpus: regenerate it", golden)
	}
	for i, in := range corpus {
		if normHash(t, tk, in) == want[i] {
			continue
		}
		bad++
		if i < nfdMHC {
			badNFD++
		}
		if bad <= 3 {
			e, _ := tk.EncodeOffsets(in.Text, in.Pair, in.Is)
			t.Errorf("input %d %+q: ids %v offsets %v differ from HuggingFace's", i, in.Text, e.IDs, RuneOffsets(in.Text, e.Offsets))
		}
	}
	return bad, badNFD
}

// TestNormalizerOffsetsParity: ids and character offsets equal
// HuggingFace's for every tokenizer kind under every normaliser, on the
// NFD and NFC forms of real texts — ModernBERT's own NFC on the 300 NFD
// Multilingual HateCheck texts among them. Each tokenizer is read the way
// a model directory's is (Load: a BERT-shaped one on WordPiece's path).
func TestNormalizerOffsetsParity(t *testing.T) {
	corpus, nfdMHC := normCorpus(t)
	files := normTokenizers(t)
	if dir := os.Getenv("BELUGA_WRITE_NORM_PARITY"); dir != "" {
		writeNormParity(t, dir, corpus, files)
	}
	for name, b := range files {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), b, 0o644); err != nil {
				t.Fatal(err)
			}
			tk, err := Load(dir, 0)
			if err != nil {
				t.Fatal(err)
			}
			bad, badNFD := diffFromGolden(t, tk, "norm-"+name, corpus, nfdMHC)
			if name == "modernbert" {
				t.Logf("ModernBERT (NFC): %d of %d NFD Multilingual HateCheck texts differ from HuggingFace's offsets, %d of all %d inputs", badNFD, nfdMHC, bad, len(corpus))
			}
			if bad > 0 {
				t.Errorf("%d of %d inputs differ (%d of the %d NFD Multilingual HateCheck texts)", bad, len(corpus), badNFD, nfdMHC)
			}
		})
	}
}

// writeNormParity writes the corpus (corpus.jsonl) and every tokenizer
// (NAME.json) into dir, for gen_norm.mjs.
func writeNormParity(t *testing.T, dir string, corpus []parityInput, files map[string][]byte) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "corpus.jsonl"))
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
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name+".json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("wrote %d inputs (corpus hash %x) and %d tokenizers to %s", len(corpus), corpusHash(corpus), len(files), dir)
}

// TestSentencePieceOffsetsParity: deberta-v3-base's spm.model, read as
// SentencePiece (its own normaliser: the charsmap's longest rules, spaces
// collapsed), gives the ids, type ids and character offsets of the
// tokenizer.json transformers converts it to — the offsets transformers
// reports for such a model — on the normaliser corpus: a character the
// charsmap composes (ي and a hamza into ئ in the NFD Arabic texts) is
// aligned with the first it was composed from, and a run of spaces with
// its last.
func TestSentencePieceOffsetsParity(t *testing.T) {
	corpus, nfdMHC := normCorpus(t)
	tk, err := NewSentencePiece(shareddata.Path(t, "data/tokenizers/microsoft__deberta-v3-base/spm.model"), WrapDeBERTa, 0)
	if err != nil {
		t.Fatal(err)
	}
	bad, badNFD := diffFromGolden(t, tk, "norm-deberta-v3-fast", corpus, nfdMHC)
	if bad > 0 {
		t.Errorf("%d of %d inputs differ (%d of the %d NFD Multilingual HateCheck texts)", bad, len(corpus), badNFD, nfdMHC)
	}
}
