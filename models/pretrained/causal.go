package pretrained

import (
	"context"
	"fmt"

	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/checkpoint"
	"github.com/beluga-nlp/beluga/models/tokenize"
)

// LM is a decoder family's language model with its tokenizer: what a
// prompted run scores label verbalizers with (models.CausalLM.Score).
type LM struct {
	Model     *models.CausalLM
	Tokenizer tokenize.Tokenizer
	Config    *checkpoint.Config
	// Report says which checkpoint tensors were ignored, which buffers and
	// tied copies were checked, and which parameters were initialised.
	Report models.LoadReport
	Dir    string // the directory read (a hub-cache snapshot for a hub id)
}

// LoadCausalLM resolves ref as Load does and reads the language model
// there (GPT2LMHeadModel, LlamaForCausalLM, Qwen2ForCausalLM, or a bare
// GPT2Model/LlamaModel state dict, whose names gain the family's prefix),
// with its tokenizer. A checkpoint of an encoder family is refused, as is
// one lacking a decoder tensor or an untied lm_head.weight unless
// opt.AllowMissing is set; opt.Labels is not read.
func LoadCausalLM(ctx context.Context, ref string, opt Options) (*LM, error) {
	path, dir, cleanup, err := open(ctx, ref, opt)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	lm, err := loadCausalLM(dir, opt)
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", ref, err)
	}
	if checkpoint.IsArchive(path) {
		lm.Dir = path
	}
	return lm, nil
}

func loadCausalLM(dir string, opt Options) (*LM, error) {
	ck, fam, weights, bufs, err := readFamily(dir)
	if err != nil {
		return nil, err
	}
	if fam.CausalLM == "" {
		return nil, fmt.Errorf("model_type %q is an encoder family: no language model to score with", fam.ModelType)
	}
	m, rep, err := models.NewCausalLM(ck.Config, weights, opt.Seed)
	if err != nil {
		return nil, err
	}
	if err := fam.CheckBuffers(ck.Config, bufs, &rep); err != nil {
		return nil, fmt.Errorf("%s: %w", ck.Source, err)
	}
	if !opt.AllowMissing && len(rep.Initialised) > 0 {
		return nil, fmt.Errorf("%s lacks %d of the language model's tensors (first %s): the wrong checkpoint? (--allow-missing initialises them afresh)",
			ck.Source, len(rep.Initialised), rep.Initialised[0])
	}
	if err := finite(m.Params()); err != nil {
		return nil, err
	}
	tk, err := tokenize.Load(dir, opt.MaxLength)
	if err != nil {
		return nil, err
	}
	return &LM{Model: m, Tokenizer: tk, Config: ck.Config, Report: rep, Dir: dir}, nil
}

// TextItem is ScoreTexts' form of a models.ScoreItem: an input's text
// after the prompt prefix, and one text per label's verbalizer.
type TextItem struct {
	Context string
	Options []string
}

// ScoreTexts tokenizes a prompt and scores it (models.CausalLM.Score): the
// prefix with the tokenizer's special tokens (a Llama's BOS), every context
// and option without them, each on its own — so an option's text carries
// the space that joins it to the context (" positive"), as byte-level BPE
// tokenizers expect, and no merge crosses a part's boundary.
func (lm *LM) ScoreTexts(prefix string, items []TextItem, opt models.ScoreOptions) ([][]float64, models.ScoreStats, error) {
	var pre []int
	if prefix != "" {
		enc, err := lm.Tokenizer.Encode(prefix, "", false)
		if err != nil {
			return nil, models.ScoreStats{}, fmt.Errorf("prefix: %w", err)
		}
		pre = enc.IDs
	}
	scored := make([]models.ScoreItem, len(items))
	for i, it := range items {
		var err error
		if scored[i].Context, err = lm.plainIDs(it.Context); err != nil {
			return nil, models.ScoreStats{}, fmt.Errorf("item %d: context: %w", i, err)
		}
		for o, text := range it.Options {
			ids, err := lm.plainIDs(text)
			if err != nil {
				return nil, models.ScoreStats{}, fmt.Errorf("item %d: option %d: %w", i, o, err)
			}
			scored[i].Options = append(scored[i].Options, ids)
		}
	}
	return lm.Model.Score(pre, scored, opt)
}

// plainIDs tokenizes text without the special tokens the tokenizer adds.
func (lm *LM) plainIDs(text string) ([]int, error) {
	if text == "" {
		return nil, nil
	}
	enc, err := lm.Tokenizer.EncodeOffsets(text, "", false)
	if err != nil {
		return nil, err
	}
	var ids []int
	for k, id := range enc.IDs {
		if enc.Seq[k] != -1 {
			ids = append(ids, id)
		}
	}
	return ids, nil
}
