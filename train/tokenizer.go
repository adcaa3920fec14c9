package train

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/beluga-nlp/beluga/internal/atomicfile"
	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/predict"
	"github.com/beluga-nlp/beluga/models/tokenize"
)

// tinyWithTokenizer is a BERT-tiny from scratch over spec.Model.Tokenizer's
// ids (a tokenizer trained on the task's own texts, say). Its saved model
// directory holds the tokenizer's file under the name tokenize.Load looks
// for, so that beluga predict reads it back.
func tinyWithTokenizer(spec RunSpec, classes int) (models.Model, predict.Tokenizer, func(dir string) error, error) {
	tk, err := tokenize.Open(spec.Model.Tokenizer, spec.MaxLength)
	if err != nil {
		return nil, nil, nil, err
	}
	m, _, err := models.NewBERT(models.TinyConfig(tk.VocabSize()), classes, nil, spec.Seed)
	if err != nil {
		return nil, nil, nil, err
	}
	save := func(dir string) error {
		if err := saveTokenizer(spec.Model.Tokenizer, dir); err != nil {
			return err
		}
		return m.Save(dir, "")
	}
	return m, tk, save, nil
}

// saveTokenizer copies the tokenizer a from-scratch model was built with
// (src, as tokenize.Open reads it) into the model directory dir under the
// names tokenize.Load looks for; a SentencePiece model is named the BERT's
// way to wrap it in tokenizer_config.json.
func saveTokenizer(src, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	files := map[string]string{} // source → name in dir
	if st, err := os.Stat(src); err == nil && st.IsDir() {
		for _, n := range tokenize.Files {
			if _, err := os.Stat(filepath.Join(src, n)); err == nil {
				files[filepath.Join(src, n)] = n
			}
		}
	} else {
		base := filepath.Base(src)
		switch {
		case strings.HasSuffix(base, ".json"):
			files[src] = "tokenizer.json"
		case strings.HasSuffix(base, ".txt"):
			files[src] = "vocab.txt"
		case base == "spm.model":
			files[src] = "spm.model"
		default:
			files[src] = "sentencepiece.bpe.model"
		}
	}
	for from, name := range files {
		b, err := os.ReadFile(from)
		if err != nil {
			return err
		}
		if err := atomicfile.WriteFile(filepath.Join(dir, name), b); err != nil {
			return err
		}
		// The model is a BERT: name the SentencePiece wrapping.
		class := map[string]string{"spm.model": "DebertaV2Tokenizer", "sentencepiece.bpe.model": "XLMRobertaTokenizer"}[name]
		if class != "" {
			cfg := `{"tokenizer_class": "` + class + `", "do_lower_case": false}` + "\n"
			if err := atomicfile.WriteFile(filepath.Join(dir, "tokenizer_config.json"), []byte(cfg)); err != nil {
				return err
			}
		}
	}
	return nil
}
