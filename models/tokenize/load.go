package tokenize

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/beluga-nlp/beluga/models"
)

// Files are the files a model directory's tokenizer may be built from, in
// the order Load prefers them, with the configuration files it reads.
var Files = []string{"tokenizer.json", "spm.model", "sentencepiece.bpe.model", "vocab.json", "merges.txt",
	"vocab.txt", "tokenizer_config.json", "special_tokens_map.json"}

// tokenizerConfig is the part of tokenizer_config.json Load reads.
type tokenizerConfig struct {
	DoLowerCase          *bool  `json:"do_lower_case"`
	StripAccents         *bool  `json:"strip_accents"`
	TokenizeChineseChars *bool  `json:"tokenize_chinese_chars"`
	AddPrefixSpace       *bool  `json:"add_prefix_space"`
	TokenizerClass       string `json:"tokenizer_class"`
}

// Load builds a model directory's tokenizer as HuggingFace's AutoTokenizer
// does: tokenizer.json (a BERT one runs on WordPiece's one-pass pipeline,
// any other on HF); else the files of the family's slow tokenizer — the
// family named by tokenizer_config.json's tokenizer_class, else by
// config.json's model_type (models.TokenizerDefaults): spm.model or
// sentencepiece.bpe.model (SentencePiece, wrapped as the family wraps it;
// without a family, by the file's name), vocab.json and merges.txt
// (RoBERTa's byte-level BPE), vocab.txt (WordPiece, lower-cased as
// tokenizer_config.json's do_lower_case says). Encodings are truncated to
// maxLength tokens (0: none).
func Load(dir string, maxLength int) (Tokenizer, error) {
	var cfg tokenizerConfig
	if err := readJSON(filepath.Join(dir, "tokenizer_config.json"), &cfg); err != nil {
		return nil, err
	}
	var mc struct {
		ModelType string `json:"model_type"`
	}
	if err := readJSON(filepath.Join(dir, "config.json"), &mc); err != nil {
		return nil, err
	}
	// famErr refuses a slow tokenizer's files for a model_type no family
	// knows (its tokenizer class is unknown); a tokenizer.json describes
	// itself.
	fam := models.FamilyByTokenizerClass(cfg.TokenizerClass)
	var famErr error
	if fam == nil && mc.ModelType != "" {
		fam, famErr = models.LookupFamily(mc.ModelType)
	}
	has := func(name string) bool {
		st, err := os.Stat(filepath.Join(dir, name))
		return err == nil && !st.IsDir()
	}
	switch {
	case has("tokenizer.json"):
		p := filepath.Join(dir, "tokenizer.json")
		if ok, err := bertShaped(p); err != nil {
			return nil, err
		} else if ok {
			return NewWordPieceFromJSON(p, maxLength)
		}
		return NewHF(p, maxLength)
	case famErr != nil && (has("spm.model") || has("sentencepiece.bpe.model") || has("vocab.json")):
		return nil, fmt.Errorf("%s: a slow tokenizer's files for %w", dir, famErr)
	case has("spm.model") || has("sentencepiece.bpe.model"):
		name := "spm.model"
		if !has(name) {
			name = "sentencepiece.bpe.model"
		}
		wrap := WrapDeBERTa
		switch {
		case fam != nil && fam.Tokenizer.SentencePiece == "":
			return nil, fmt.Errorf("%s: a SentencePiece tokenizer for model_type %q, whose tokenizer is not SentencePiece", dir, fam.ModelType)
		case fam != nil:
			wrap = fam.Tokenizer.SentencePiece
		case name == "sentencepiece.bpe.model":
			wrap = WrapXLMR
		}
		if cfg.DoLowerCase != nil && *cfg.DoLowerCase {
			return nil, fmt.Errorf("%s: tokenizer_config.json: do_lower_case true with a SentencePiece model is not supported", dir)
		}
		return NewSentencePiece(filepath.Join(dir, name), wrap, maxLength)
	case has("vocab.json") && has("merges.txt"):
		if fam != nil && !fam.Tokenizer.ByteLevelBPE {
			return nil, fmt.Errorf("%s: vocab.json and merges.txt for model_type %q, whose tokenizer is not byte-level BPE", dir, fam.ModelType)
		}
		return newByteLevelFromFiles(dir, cfg, fam != nil && fam.Tokenizer.BPENoSpecials, maxLength)
	case has("vocab.txt"):
		p := filepath.Join(dir, "vocab.txt")
		if cfg.DoLowerCase == nil {
			return NewWordPieceFromVocab(p, maxLength)
		}
		opt := BertOptions{Lowercase: *cfg.DoLowerCase, StripAccents: cfg.StripAccents, ChineseChars: true}
		if cfg.TokenizeChineseChars != nil {
			opt.ChineseChars = *cfg.TokenizeChineseChars
		}
		return NewWordPieceWithOptions(p, opt, maxLength)
	}
	return nil, fmt.Errorf("%s has no tokenizer (none of tokenizer.json, spm.model, sentencepiece.bpe.model, vocab.json+merges.txt, vocab.txt)", dir)
}

// readJSON reads a JSON file into v; a missing file leaves v as it is.
func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// bertShaped says whether a tokenizer.json is a BERT tokenizer that
// WordPiece runs exactly: BertNormalizer (or none), BertPreTokenizer,
// WordPiece, BERT's template, added tokens matched whole in the raw text.
func bertShaped(path string) (bool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return false, fmt.Errorf("tokenizer %s: %w", path, err)
	}
	var f struct {
		hfFile
		Normalizer   *struct{ Type string } `json:"normalizer"`
		PreTokenizer *struct{ Type string } `json:"pre_tokenizer"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return false, fmt.Errorf("tokenizer %s: %w", path, err)
	}
	if f.Normalizer != nil && f.Normalizer.Type != "BertNormalizer" {
		return false, nil
	}
	if f.PreTokenizer == nil || f.PreTokenizer.Type != "BertPreTokenizer" {
		return false, nil
	}
	var m hfModel
	if err := json.Unmarshal(f.Model, &m); err != nil || m.modelType() != "WordPiece" {
		return false, nil
	}
	for _, t := range f.AddedTokens {
		if t.Normalized || t.LStrip || t.RStrip || t.SingleWord {
			return false, nil
		}
	}
	if isNull(f.PostProcessor) {
		return false, nil
	}
	p, err := buildPost(f.PostProcessor)
	if err != nil {
		return false, nil
	}
	_, _, ok := bertTemplate(p)
	return ok, nil
}

// newByteLevelFromFiles builds a byte-level BPE tokenizer from its slow
// files, as HuggingFace's converters write its tokenizer.json: ByteLevel
// pre-tokenizer (add_prefix_space from tokenizer_config.json, else false),
// byte-level BPE, and RoBERTa's RobertaProcessing with <s> <pad> </s> <unk>
// <mask> (the mask taking the space before it) as added tokens — or, with
// noSpecials, GPT2Converter's: no special tokens added to an input (a
// ByteLevel post-processor) and <|endoftext|> the one added token.
func newByteLevelFromFiles(dir string, cfg tokenizerConfig, noSpecials bool, maxLength int) (*HF, error) {
	vb, err := os.ReadFile(filepath.Join(dir, "vocab.json"))
	if err != nil {
		return nil, err
	}
	var vocab map[string]int32
	if err := json.Unmarshal(vb, &vocab); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "vocab.json"), err)
	}
	mp := filepath.Join(dir, "merges.txt")
	f, err := os.Open(mp)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var merges []string
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimRight(sc.Text(), "\r")
		if (line == 1 && strings.HasPrefix(s, "#version")) || s == "" {
			continue
		}
		if strings.Count(s, " ") != 1 {
			return nil, fmt.Errorf("%s:%d: %q is not two tokens", mp, line, s)
		}
		merges = append(merges, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", mp, err)
	}
	id := func(tok string) (int32, error) {
		i, ok := vocab[tok]
		if !ok {
			return 0, fmt.Errorf("%s: no %s token", filepath.Join(dir, "vocab.json"), tok)
		}
		return i, nil
	}
	type added struct {
		ID         int32  `json:"id"`
		Content    string `json:"content"`
		LStrip     bool   `json:"lstrip"`
		Normalized bool   `json:"normalized"`
		Special    bool   `json:"special"`
	}
	prefix := cfg.AddPrefixSpace != nil && *cfg.AddPrefixSpace
	var toks []added
	var post map[string]any
	if noSpecials {
		if i, ok := vocab["<|endoftext|>"]; ok {
			toks = append(toks, added{ID: i, Content: "<|endoftext|>", Normalized: true, Special: true})
		}
		post = map[string]any{"type": "ByteLevel", "trim_offsets": false, "add_prefix_space": true}
	} else {
		for _, t := range []string{"<s>", "<pad>", "</s>", "<unk>", "<mask>"} {
			i, err := id(t)
			if err != nil {
				return nil, err
			}
			toks = append(toks, added{ID: i, Content: t, LStrip: t == "<mask>", Normalized: true, Special: true})
		}
		post = map[string]any{"type": "RobertaProcessing", "sep": []any{"</s>", toks[2].ID},
			"cls": []any{"<s>", toks[0].ID}, "trim_offsets": true, "add_prefix_space": prefix}
	}
	doc := map[string]any{
		"added_tokens":   toks,
		"normalizer":     nil,
		"pre_tokenizer":  map[string]any{"type": "ByteLevel", "add_prefix_space": prefix, "trim_offsets": true},
		"post_processor": post,
		"model": map[string]any{"type": "BPE", "vocab": vocab, "merges": merges, "continuing_subword_prefix": "",
			"end_of_word_suffix": "", "fuse_unk": false},
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	h, err := parseHF(b, maxLength)
	if err != nil {
		return nil, fmt.Errorf("%s: vocab.json and merges.txt: %w", dir, err)
	}
	return h, nil
}
