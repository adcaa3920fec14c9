package models

import (
	"fmt"
	"sort"
	"strings"

	"github.com/beluga-nlp/beluga/models/checkpoint"
)

// ParamSpec is one parameter a family's encoder or head declares.
type ParamSpec struct {
	Name  string // HuggingFace's name, e.g. "roberta.encoder.layer.0.output.dense.weight"
	Shape []int  // HuggingFace's shape (a Linear weight is [out, in])
	// Norm marks a normalisation layer's weight or bias: initialised to
	// ones (weight) or zeros (bias), and exempt from weight decay.
	Norm bool
	// Std is the standard deviation of a weight drawn afresh; 0 means the
	// config's initializer_range (ModernBERT draws its classifier and
	// output projections at other scales).
	Std float64
}

// Encoder is a family's transformer body: embeddings and layers, from a
// padded batch of ids to the final hidden state of every token.
type Encoder interface {
	// Specs lists the encoder's parameters in HuggingFace's order, named
	// under the family's prefix.
	Specs() []ParamSpec
	// Bind gives the encoder its parameters (every name of Specs resolves).
	Bind(param func(name string) *Param)
	// HiddenSize is the width of the final hidden states.
	HiddenSize() int
	// Forward runs the encoder on b: with r.Train, dropout is drawn from r
	// and the pass keeps what its backward needs.
	Forward(r *Run, b Batch) (EncoderPass, error)
}

// EncoderPass is one forward pass of an Encoder.
type EncoderPass interface {
	// Hidden returns the final hidden states, Size×SeqLen×HiddenSize
	// row-major, valid until the run is released.
	Hidden() []float32
	// Backward adds d(loss)/d(encoder parameters) into their gradients,
	// given dHidden = d(loss)/d(Hidden()): a buffer of the run's pool
	// (Run.Zeroed), which Backward takes over.
	Backward(r *Run, dHidden []float32)
}

// Pooler turns the final hidden states into the per-row features a
// classification head reads: BERT's tanh pooler on [CLS], or the first
// token's state as it is. Its parameters belong to the encoder (they carry
// the family's prefix): linear probing freezes them and caches its output.
// A pooling layer HuggingFace keeps outside the prefix (DeBERTa's
// ContextPooler, "pooler.dense") trains with the head: it belongs in the
// Head (denseHead is dropout, dense, activation, dropout, out).
type Pooler interface {
	Specs() []ParamSpec
	Bind(param func(name string) *Param)
	// Width is the number of features per row.
	Width() int
	Forward(r *Run, hidden []float32, b Batch) PoolPass
}

// PoolPass is one forward pass of a Pooler.
type PoolPass interface {
	Features() []float32 // Size × Width
	// Backward adds the pooler's parameter gradients and d(loss)/d(hidden)
	// into dHidden (zeroed by the caller), given dFeatures.
	Backward(r *Run, dFeatures, dHidden []float32)
}

// Head is a trainable stack on per-row inputs: a classification head on
// the pooler's features, or a span head on every token's hidden state.
type Head interface {
	Specs() []ParamSpec
	Bind(param func(name string) *Param)
	// In and Out are the widths of a row's input and output.
	In() int
	Out() int
	// Forward runs the head on rows×In inputs x, which it does not change.
	Forward(r *Run, x []float32, rows int) HeadPass
}

// HeadPass is one forward pass of a Head.
type HeadPass interface {
	Out() []float32 // rows × Out
	// Backward adds d(loss)/d(head parameters) into their gradients and,
	// when dx is not nil, writes d(loss)/d(x) into dx.
	Backward(r *Run, dOut, dx []float32)
}

// Family is one registered model family: one HuggingFace architecture,
// keyed by config.json's model_type — how its encoder computes the final
// hidden states, and the heads HuggingFace gives it for sequence
// classification and extractive question answering. Every family's
// classifier is a SequenceClassifier and every family's span model a
// SpanModel: the graph around the encoder (the logits' layout, dropout,
// freezing, linear probing on cached features, loading with a LoadReport,
// saving) is written once.
//
// Adding a family is one file in this package with one registration in
// it (roberta.go is a whole example), and no other site: the checkpoint
// reader, the config reader (checkpoint.ReadConfig), the tokenizer loader
// (tokenize.Load), the model loader (package pretrained) and the run
// kinds (pretrained.Source) read what the family declares:
//
//	func init() {
//		Register(Family{
//			ModelType:   "roberta",         // config.json's model_type
//			Prefix:      "roberta",         // base_model_prefix: the encoder's tensors are "roberta.…"
//			Classifier:  "RobertaForSequenceClassification",
//			Span:        "RobertaForQuestionAnswering",
//			NewEncoder:  newRobertaEncoder, // an Encoder: embeddings and layers (and its buffers)
//			NewPooler:   newFirstToken,     // hidden states → the features the head reads
//			NewHead:     newTanhHead,       // features → logits
//			NewSpanHead: newQAOutputs(nil), // every token's hidden state → start, end
//			Config:      checkpoint.FamilyConfig{…}, // config.json keys and defaults unlike BERT's
//			Tokenizer:   TokenizerDefaults{Class: "RobertaTokenizer", ByteLevelBPE: true},
//		})
//	}
//
// The encoder and heads list their parameters (ParamSpec) with HuggingFace's
// names in HuggingFace's order, and the encoder the integer buffers
// HuggingFace keeps in its state dict (BufferSpec: position_ids), which a
// checkpoint's copy is checked against; the model allocates and loads the
// parameters, draws the missing ones, and hands them back through Bind. A
// bare encoder's state dict (saved without the prefix) is recognised by
// those names. A forward pass gets a Run: the pass's buffers (Run.Alloc)
// and its dropout (Run.Keep), drawn from the model's one seeded stream in
// the order the layers ask for it. The pieces families share are in
// heads.go (first-token pooling, linear and dense heads, qa_outputs, HF's
// dropout rules) and kernels.go; a BERT-shaped encoder is a bertLayout
// (bert.go); a decoder shares decoder.go (gpt2.go, llama.go). Its checks: a
// reference checkpoint from testdata/families/gen.py (or, for a family
// transformers 4.27.1 has, testdata/hfsaved/gen.py; a decoder's,
// testdata/decoders/gen.py) and the family's name in the families lists of
// the tests that range over them (models, pretrained, train, cmd/beluga),
// and an entry in benchmarks/gostep's tinyFamily and torch_step.py's
// FAMILIES.
type Family struct {
	// ModelType is config.json's model_type ("bert", "roberta", …).
	ModelType string
	// Prefix is HuggingFace's base_model_prefix: every encoder tensor's
	// name starts with Prefix + ".", and a bare encoder's state dict (saved
	// without it) gains it on loading.
	Prefix string
	// CausalLM is the HuggingFace class of a decoder family's language
	// model (GPT2LMHeadModel, LlamaForCausalLM), which NewCausalLM builds
	// and scores with; empty for an encoder family. A decoder family's
	// NewEncoder returns an encoder of causal attention that can continue
	// a cached prefix (decoder.go).
	CausalLM string
	// Classifier and Span are the HuggingFace classes the classifier and
	// the span model are saved as (config.json's architectures); Span is
	// empty when HuggingFace has no question-answering model.
	Classifier, Span string
	// NewEncoder builds the encoder of cfg, or says why cfg cannot be built.
	NewEncoder func(cfg *checkpoint.Config) (Encoder, error)
	// NewPooler and NewHead are the sequence-classification head.
	NewPooler func(cfg *checkpoint.Config, hidden int) Pooler
	NewHead   func(cfg *checkpoint.Config, features, labels int) Head
	// NewSpanHead is the question-answering head (Out 2: start, end); nil
	// when Span is empty.
	NewSpanHead func(cfg *checkpoint.Config, hidden int) Head
	// Config is how the family's config.json differs from BERT's (its
	// keys, defaults and the keys it lacks); zero when it does not.
	Config checkpoint.FamilyConfig
	// Tokenizer is how a model directory of the family is tokenized when it
	// has no tokenizer.json: its slow tokenizer's files and class.
	Tokenizer TokenizerDefaults

	// spanDrawsPooler: a training pass of the span model draws (and
	// discards) a first-token dropout mask after the encoder, as BERT's
	// span model did when it ran the classifier's graph, so that its
	// dropout stream, hence every READ run, stays as it was.
	spanDrawsPooler bool
}

var families = map[string]*Family{}

// Register adds a family; it is called from the family file's init. A
// second family of the same model_type, or one missing a part, is a
// programming error and panics.
func Register(f Family) {
	switch {
	case f.ModelType == "" || f.Prefix == "" || f.Classifier == "":
		panic(fmt.Sprintf("models.Register: family %q needs ModelType, Prefix and Classifier", f.ModelType))
	case f.NewEncoder == nil || f.NewPooler == nil || f.NewHead == nil:
		panic(fmt.Sprintf("models.Register: family %q needs NewEncoder, NewPooler and NewHead", f.ModelType))
	case (f.Span == "") != (f.NewSpanHead == nil):
		panic(fmt.Sprintf("models.Register: family %q: Span and NewSpanHead go together", f.ModelType))
	}
	if _, dup := families[f.ModelType]; dup {
		panic(fmt.Sprintf("models.Register: family %q registered twice", f.ModelType))
	}
	families[f.ModelType] = &f
	if f.Config.Keys != nil || f.Config.Defaults != nil || f.Config.Omit != nil || f.Config.Validate != nil || f.Config.Derive != nil {
		checkpoint.RegisterConfig(f.ModelType, f.Config)
	}
}

// TokenizerDefaults say how transformers' AutoTokenizer builds a family's
// tokenizer from a model directory without tokenizer.json: from the files
// of the family's slow tokenizer (tokenize.Load reads these).
type TokenizerDefaults struct {
	// Class is the family's slow tokenizer class (tokenizer_config.json's
	// tokenizer_class), by which a directory whose config.json names no
	// model_type is recognised.
	Class string
	// SentencePiece is how the family wraps a SentencePiece model
	// (spm.model, sentencepiece.bpe.model) with its special tokens:
	// SentencePieceDeBERTa or SentencePieceXLMR; empty when the family has
	// no SentencePiece tokenizer.
	SentencePiece string
	// ByteLevelBPE says the family's vocab.json and merges.txt are
	// RoBERTa's byte-level BPE.
	ByteLevelBPE bool
	// BPENoSpecials says its byte-level BPE adds no special tokens
	// (GPT2Tokenizer: add_bos_token false, <|endoftext|> its one added
	// token) where RoBERTa's wraps every input in <s> … </s>.
	BPENoSpecials bool
}

// The SentencePiece wrappings of TokenizerDefaults.SentencePiece.
const (
	// SentencePieceDeBERTa is DebertaV2Tokenizer's: [CLS] a [SEP] b [SEP].
	SentencePieceDeBERTa = "deberta-v2"
	// SentencePieceXLMR is XLMRobertaTokenizer's: <s> a </s></s> b </s>,
	// fairseq's id offset.
	SentencePieceXLMR = "xlm-roberta"
)

// FamilyByTokenizerClass returns the family whose slow tokenizer class is
// class, or nil.
func FamilyByTokenizerClass(class string) *Family {
	for _, f := range families {
		if f.Tokenizer.Class != "" && f.Tokenizer.Class == class {
			return f
		}
	}
	return nil
}

// FamilyNames lists the registered model_types, sorted.
func FamilyNames() []string {
	out := make([]string, 0, len(families))
	for n := range families {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// LookupFamily returns the family of a config.json model_type; an unknown
// one is an error listing the known ones. An empty model_type (configs
// written before model_type was required) is BERT's.
func LookupFamily(modelType string) (*Family, error) {
	if modelType == "" {
		modelType = "bert"
	}
	if f, ok := families[modelType]; ok {
		return f, nil
	}
	return nil, fmt.Errorf("model_type %q: not a known model family (known: %s)", modelType, strings.Join(FamilyNames(), ", "))
}

// HeadSpecs lists the parameters of the classification head for labels
// outputs: those linear probing trains, and those a checkpoint trained for
// other labels cannot give.
func (f *Family) HeadSpecs(cfg *checkpoint.Config, labels int) ([]ParamSpec, error) {
	enc, err := f.encoder(cfg)
	if err != nil {
		return nil, err
	}
	return f.NewHead(cfg, f.NewPooler(cfg, enc.HiddenSize()).Width(), labels).Specs(), nil
}

// encoder checks cfg (its sizes, and that its parameters would fit in
// memory) and builds the family's encoder of it, which lists its
// parameters but allocates none.
func (f *Family) encoder(cfg *checkpoint.Config) (Encoder, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	params, need := configBytes(cfg)
	if err := checkFits(fmt.Sprintf("the %s model's %.3g parameters (hidden_size %d, num_hidden_layers %d, vocab_size %d, intermediate_size %d)",
		f.ModelType, params, cfg.HiddenSize, cfg.NumHiddenLayers, cfg.VocabSize, cfg.IntermediateSize), need); err != nil {
		return nil, err
	}
	enc, err := f.NewEncoder(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s encoder: %w", f.ModelType, err)
	}
	return enc, nil
}
