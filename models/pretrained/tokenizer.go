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
	for _, name := range tokenize.Files {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		m.tokenizerFiles[name] = data
	}
	tk, err := tokenize.Load(dir, opt.MaxLength)
	if err != nil {
		return err
	}
	m.Tokenizer = tk
	return nil
}
