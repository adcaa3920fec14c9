package pretrained

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/beluga-nlp/beluga/models/tokenize"
)

// loadTokenizer builds the tokenizer of the model in dir as HuggingFace's
// AutoTokenizer would (tokenize.Load) and keeps its files for Save.
func (m *Model) loadTokenizer(dir string, opt Options) error {
	files, err := readTokenizerFiles(dir)
	if err != nil {
		return err
	}
	m.tokenizerFiles = files
	tk, err := tokenize.Load(dir, opt.MaxLength)
	if err != nil {
		return err
	}
	m.Tokenizer = tk
	return nil
}

// readTokenizerFiles reads those of tokenize.Files that dir holds, kept in
// memory so that a model saves them after an archive's extraction is gone.
func readTokenizerFiles(dir string) (map[string][]byte, error) {
	files := map[string][]byte{}
	for _, name := range tokenize.Files {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		files[name] = data
	}
	return files, nil
}
