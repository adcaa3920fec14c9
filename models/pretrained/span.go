package pretrained

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/beluga-nlp/beluga/internal/atomicfile"
	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/checkpoint"
	"github.com/beluga-nlp/beluga/models/tokenize"
)

// Span is a loaded span (question-answering) model with its tokenizer,
// what READ trains.
type Span struct {
	Model *models.SpanModel
	// Tokenizer does not truncate: span features cut contexts into windows
	// themselves (spans.FromTokenizer).
	Tokenizer tokenize.Tokenizer
	Config    *checkpoint.Config
	// Report says which checkpoint tensors were ignored and which
	// parameters (an encoder-only checkpoint's span head) were initialised.
	Report models.LoadReport
	// tokenizerFiles are the tokenizer's files, for Save.
	tokenizerFiles map[string][]byte
	// save replaces Save's own layout for a model built afresh
	// (StartSpan).
	save func(dir string) error
}

// LoadSpan resolves ref as Load does and reads the model there as its
// family's …ForQuestionAnswering (models.NewSpanModel: an encoder-only or
// sequence-classification checkpoint gets a fresh span head drawn from
// opt.Seed), with the model directory's tokenizer (tokenize.Load, without
// truncation). Tensor names are mapped as Load maps them; a missing encoder
// tensor is an error unless opt.AllowMissing. opt.Labels and opt.MaxLength
// are not used.
func LoadSpan(ctx context.Context, ref string, opt Options) (*Span, error) {
	_, dir, cleanup, err := open(ctx, ref, opt)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	s, err := loadSpan(dir, opt)
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", ref, err)
	}
	return s, nil
}

func loadSpan(dir string, opt Options) (*Span, error) {
	ck, fam, weights, bufs, err := readFamily(dir)
	if err != nil {
		return nil, err
	}
	m, rep, err := models.NewSpanModel(ck.Config, weights, opt.Seed)
	if err != nil {
		return nil, err
	}
	if err := fam.CheckBuffers(ck.Config, bufs, &rep); err != nil {
		return nil, fmt.Errorf("%s: %w", ck.Source, err)
	}
	if !opt.AllowMissing {
		if err := missingEncoder(ck.Source, m.Params(), rep, fam.Prefix); err != nil {
			return nil, err
		}
	}
	if err := finite(m.Params()); err != nil {
		return nil, err
	}
	files, err := readTokenizerFiles(dir)
	if err != nil {
		return nil, err
	}
	tk, err := tokenize.Load(dir, 0)
	if err != nil {
		return nil, err
	}
	return &Span{Model: m, Tokenizer: tk, Config: ck.Config, Report: rep, tokenizerFiles: files}, nil
}

// Save writes the span model and its tokenizer files to dir, in the layout
// LoadSpan reads; config.json last.
func (s *Span) Save(dir string) error {
	if s.save != nil {
		return s.save(dir)
	}
	if err := writeTokenizerFiles(dir, s.tokenizerFiles); err != nil {
		return err
	}
	return s.Model.Save(dir, "")
}

// writeTokenizerFiles writes a tokenizer's files into dir, each atomically.
func writeTokenizerFiles(dir string, files map[string][]byte) error {
	for name, data := range files {
		if err := atomicfile.WriteFile(filepath.Join(dir, name), data); err != nil {
			return err
		}
	}
	return nil
}
