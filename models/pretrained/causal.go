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
	ck, err := checkpoint.LoadDir(dir)
	if err != nil {
		return nil, err
	}
	fam, err := models.LookupFamily(ck.Config.ModelType)
	if err != nil {
		return nil, err
	}
	if fam.CausalLM == "" {
		return nil, fmt.Errorf("model_type %q is an encoder family: no language model to score with", fam.ModelType)
	}
	weights, bufs, err := familyNames(fam, ck)
	if err != nil {
		return nil, err
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
