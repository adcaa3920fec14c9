package pretrained

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/beluga-nlp/beluga/internal/atomicfile"
	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/tokenize"
)

// Spec says which model a run starts from: the model block of a run spec
// (package train's ModelSpec is this type). Kind names its Source; the
// other fields are the settings the kinds read (Source.Fields).
type Spec struct {
	// Kind is a registered Source: "bert" (a HuggingFace checkpoint of any
	// registered family, or a model directory beluga wrote, at Path),
	// "bert-tiny" (the BERT-tiny shape initialised from the run's seed,
	// tokenizing with the WordPiece vocabulary at Vocab or the tokenizer
	// at Tokenizer) or "wordvec" (GloVe vectors at GloVe, a pooler of
	// width Hidden).
	Kind  string `json:"kind" yaml:"kind"`
	Path  string `json:"path,omitempty" yaml:"path,omitempty"`
	Vocab string `json:"vocab,omitempty" yaml:"vocab,omitempty"`
	// Tokenizer, for bert-tiny, replaces Vocab with any tokenizer
	// tokenize.Open reads (a tokenizer.json from beluga tokenizer train, a
	// vocab.txt, a SentencePiece model, a model directory).
	Tokenizer string `json:"tokenizer,omitempty" yaml:"tokenizer,omitempty"`
	GloVe     string `json:"glove,omitempty" yaml:"glove,omitempty"`
	Hidden    int    `json:"hidden,omitempty" yaml:"hidden,omitempty"`
	// AllowMissing initialises encoder tensors a checkpoint lacks instead
	// of refusing it.
	AllowMissing bool `json:"allow_missing,omitempty" yaml:"allow_missing,omitempty"`
	// Precision is the arithmetic of the model's matrix products
	// (models.Precision), for every kind: empty for fp32, the default, so
	// that a run in fp32 keeps the identity it had before the setting
	// existed; bf16 is another run.
	Precision models.Precision `json:"precision,omitempty" yaml:"precision,omitempty"`
}

// set reports which of Spec's settings are given, by their model-block
// keys.
func (s Spec) set() map[string]bool {
	return map[string]bool{"path": s.Path != "", "vocab": s.Vocab != "", "tokenizer": s.Tokenizer != "",
		"glove": s.GloVe != "", "hidden": s.Hidden != 0, "allow_missing": s.AllowMissing}
}

// StartOptions are what a run adds to its Spec to build the model: the
// task's number of classes, the truncation length and the seed the fresh
// parameters are drawn from.
type StartOptions struct {
	Labels    int
	MaxLength int
	Seed      uint64
}

// Resolve turns a file option of an experiment spec (a path, or a name of
// beluga's data registry such as bert-vocab) into a local path.
type Resolve func(value string) (string, error)

// Source is one registered way a run gets its starting model, keyed by the
// kind a spec names it by (model.kind, --model-kind). A HuggingFace
// checkpoint's family is then picked by its config.json's model_type
// (models.LookupFamily); the other sources build a model afresh.
type Source struct {
	// Kind is the name specs and flags use.
	Kind string
	// Summary says in a few words what the kind is (flags' help, errors).
	Summary string
	// Fields are the Spec settings the kind reads, by their model-block
	// keys; giving another is an error.
	Fields []string
	// Options are the model options an experiment spec may give the kind,
	// with their kinds ("int", "string"); every kind has max_length.
	Options map[string]string
	// FromCheckpoint: the model is read from Spec.Path (a directory,
	// archive or hub id), which an experiment spec must give (model.path).
	FromCheckpoint bool
	// WordVectors: the tokenizer looks whole words up in word vectors, so
	// words the vectors lack are lost (the input checks' vector coverage).
	WordVectors bool

	start     func(ctx context.Context, s Spec, o StartOptions) (*Model, error)
	startSpan func(ctx context.Context, s Spec, o StartOptions) (*Span, error)
	// spec builds a Spec from an experiment spec's model block: its path
	// and options, file options resolved.
	spec func(path string, opts map[string]any, resolve Resolve) (Spec, error)
}

// CheckpointKind is the kind of the source that reads a HuggingFace
// checkpoint (of any registered family) or a model directory beluga wrote.
const CheckpointKind = "bert"

var sources []*Source

func registerSource(s *Source) {
	if s.Options == nil {
		s.Options = map[string]string{}
	}
	s.Options["max_length"] = "int"
	s.Options["precision"] = "string"
	sources = append(sources, s)
}

func init() {
	registerSource(&Source{
		Kind:           CheckpointKind,
		Summary:        "a HuggingFace checkpoint of any family, or a model beluga saved (--model)",
		Fields:         []string{"path", "allow_missing"},
		FromCheckpoint: true,
		start: func(ctx context.Context, s Spec, o StartOptions) (*Model, error) {
			// The head a checkpoint lacks is drawn from seed 0, as it
			// always was: runs from one checkpoint share it.
			return Load(ctx, s.Path, Options{Labels: o.Labels, MaxLength: o.MaxLength, AllowMissing: s.AllowMissing})
		},
		startSpan: func(ctx context.Context, s Spec, o StartOptions) (*Span, error) {
			return LoadSpan(ctx, s.Path, Options{Seed: o.Seed, AllowMissing: s.AllowMissing})
		},
		spec: func(path string, _ map[string]any, _ Resolve) (Spec, error) {
			return Spec{Kind: CheckpointKind, Path: path}, nil
		},
	})
	registerSource(&Source{
		Kind:    "bert-tiny",
		Summary: "BERT-tiny's shape from scratch (--vocab, or --tokenizer)",
		Fields:  []string{"vocab", "tokenizer"},
		Options: map[string]string{"vocab": "string", "tokenizer": "string"},
		start: func(_ context.Context, s Spec, o StartOptions) (*Model, error) {
			tk, save, err := tinyTokenizer(s, o.MaxLength)
			if err != nil {
				return nil, err
			}
			m, _, err := models.NewBERT(models.TinyConfig(tk.VocabSize()), o.Labels, nil, o.Seed)
			if err != nil {
				return nil, err
			}
			return &Model{Classifier: m, Tokenizer: tk, Config: &m.Config, save: func(dir string) error {
				vocab, err := save(dir)
				if err != nil {
					return err
				}
				return m.Save(dir, vocab)
			}}, nil
		},
		startSpan: func(_ context.Context, s Spec, o StartOptions) (*Span, error) {
			// Span features cut contexts into windows themselves: no
			// truncation.
			tk, save, err := tinyTokenizer(s, 0)
			if err != nil {
				return nil, err
			}
			m, _, err := models.NewSpanModel(models.TinyConfig(tk.VocabSize()), nil, o.Seed)
			if err != nil {
				return nil, err
			}
			return &Span{Model: m, Tokenizer: tk, Config: &m.Config, save: func(dir string) error {
				vocab, err := save(dir)
				if err != nil {
					return err
				}
				return m.Save(dir, vocab)
			}}, nil
		},
		spec: func(_ string, opts map[string]any, resolve Resolve) (Spec, error) {
			s := Spec{Kind: "bert-tiny"}
			var err error
			if tk, ok := opts["tokenizer"]; ok {
				// A tokenizer of the task's own (beluga tokenizer train).
				s.Tokenizer, err = resolve(fmt.Sprint(tk))
			} else {
				s.Vocab, err = resolve(fmt.Sprint(optionOr(opts, "vocab", "bert-vocab")))
			}
			return s, err
		},
	})
	registerSource(&Source{
		Kind:        "wordvec",
		Summary:     "GloVe word vectors and a pooler (--glove)",
		Fields:      []string{"glove", "hidden"},
		Options:     map[string]string{"glove": "string", "hidden": "int"},
		WordVectors: true,
		start: func(_ context.Context, s Spec, o StartOptions) (*Model, error) {
			words, vec, err := models.ReadGloVe(s.GloVe)
			if err != nil {
				return nil, err
			}
			hidden := s.Hidden
			if hidden == 0 {
				hidden = 128
			}
			m, err := models.NewWordVec(vec, hidden, o.Labels, o.Seed)
			if err != nil {
				return nil, err
			}
			tk, err := tokenize.NewWordLevel(words, o.MaxLength)
			if err != nil {
				return nil, err
			}
			return &Model{Classifier: m, Tokenizer: tk, words: words}, nil
		},
		spec: func(_ string, opts map[string]any, resolve Resolve) (Spec, error) {
			s := Spec{Kind: "wordvec", Hidden: wholeNumber(optionOr(opts, "hidden", 128))}
			var err error
			s.GloVe, err = resolve(fmt.Sprint(optionOr(opts, "glove", "glove-100d-50k")))
			return s, err
		},
	})
}

func optionOr(opts map[string]any, key string, def any) any {
	if v, ok := opts[key]; ok {
		return v
	}
	return def
}

// wholeNumber reads an option value given as an int or a float (YAML and
// JSON numbers).
func wholeNumber(v any) int {
	switch x := v.(type) {
	case int:
		return x
	case int64:
		return int(x)
	case float64:
		return int(x)
	}
	return 0
}

// SourceKinds lists the registered kinds in registration order (the
// checkpoint's first).
func SourceKinds() []string {
	out := make([]string, len(sources))
	for i, s := range sources {
		out[i] = s.Kind
	}
	return out
}

// LookupSource returns the source of kind; an unknown kind is an error
// listing the known ones.
func LookupSource(kind string) (*Source, error) {
	for _, s := range sources {
		if s.Kind == kind {
			return s, nil
		}
	}
	return nil, fmt.Errorf("unknown model kind %q (want %s)", kind, strings.Join(SourceKinds(), ", "))
}

// SourceHelp is one line per kind: its name and Summary.
func SourceHelp() string {
	parts := make([]string, len(sources))
	for i, s := range sources {
		parts[i] = s.Kind + ": " + s.Summary
	}
	return strings.Join(parts, "; ")
}

// Check refuses a Spec that gives a setting the kind does not read (but
// hidden, which beluga train's --hidden always sets).
func (src *Source) Check(s Spec) error {
	for _, key := range []string{"path", "vocab", "tokenizer", "glove", "allow_missing"} {
		if !s.set()[key] || slices.Contains(src.Fields, key) {
			continue
		}
		var owners []string
		for _, o := range sources {
			if slices.Contains(o.Fields, key) {
				owners = append(owners, o.Kind)
			}
		}
		hint := ""
		if key == "tokenizer" && src.FromCheckpoint {
			hint = " (a checkpoint brings its own tokenizer)"
		}
		return fmt.Errorf("model.%s is for kind %s, not %q%s", key, strings.Join(owners, " or "), src.Kind, hint)
	}
	return nil
}

// Spans says whether the source builds span (question-answering) models.
func (src *Source) Spans() bool { return src.startSpan != nil }

// SpanKinds lists the kinds that build span models.
func SpanKinds() []string {
	var out []string
	for _, s := range sources {
		if s.Spans() {
			out = append(out, s.Kind)
		}
	}
	return out
}

// Start builds the classifier s names, with its tokenizer.
func Start(ctx context.Context, s Spec, o StartOptions) (*Model, error) {
	src, err := LookupSource(s.Kind)
	if err != nil {
		return nil, err
	}
	return src.start(ctx, s, o)
}

// StartSpan builds the span model s names, with its tokenizer (which does
// not truncate).
func StartSpan(ctx context.Context, s Spec, o StartOptions) (*Span, error) {
	src, err := LookupSource(s.Kind)
	if err != nil {
		return nil, err
	}
	if !src.Spans() {
		return nil, fmt.Errorf("model kind %s has no token outputs (want %s)", s.Kind, strings.Join(SpanKinds(), " or "))
	}
	return src.startSpan(ctx, s, o)
}

// SpecFrom builds the Spec of an experiment spec's model block: the
// checkpoint path and the options, file options resolved through resolve
// (defaults: BERT's vocabulary, GloVe's 50k vectors).
func (src *Source) SpecFrom(path string, opts map[string]any, resolve Resolve) (Spec, error) {
	s, err := src.spec(path, opts, resolve)
	if err != nil {
		return s, err
	}
	if v, ok := opts["precision"]; ok {
		if s.Precision, err = CanonicalPrecision(fmt.Sprint(v)); err != nil {
			return s, fmt.Errorf("field model.precision: %w", err)
		}
	}
	return s, nil
}

// CanonicalPrecision reads a precision setting as a Spec holds it: fp32
// (or nothing) is empty, the default, so that it leaves a run's identity
// alone.
func CanonicalPrecision(v string) (models.Precision, error) {
	p, err := models.ParsePrecision(v)
	if err != nil || p == models.PrecisionFP32 {
		return "", err
	}
	return p, nil
}

// SetPrecision makes m's products run in p (a Spec's Precision; empty is
// fp32). A model that has no other precision than fp32 refuses bf16.
func SetPrecision(m any, p models.Precision) error {
	p, err := CanonicalPrecision(string(p))
	if err != nil {
		return fmt.Errorf("model.precision: %w", err)
	}
	if p == "" {
		return nil
	}
	s, ok := m.(interface{ SetPrecision(models.Precision) })
	if !ok {
		return fmt.Errorf("model.precision %s: a %T computes in fp32 only", p, m)
	}
	s.SetPrecision(p)
	return nil
}

// tinyTokenizer is a from-scratch model's tokenizer: the WordPiece
// vocabulary at s.Vocab, or any tokenizer at s.Tokenizer. save writes the
// tokenizer's files into a model directory and returns the vocabulary
// file the model's Save copies (s.Vocab, or none).
func tinyTokenizer(s Spec, maxLength int) (tokenize.Tokenizer, func(dir string) (string, error), error) {
	if s.Tokenizer != "" {
		tk, err := tokenize.Open(s.Tokenizer, maxLength)
		if err != nil {
			return nil, nil, err
		}
		return tk, func(dir string) (string, error) { return "", saveTokenizer(s.Tokenizer, dir) }, nil
	}
	tk, err := tokenize.NewWordPieceFromVocab(s.Vocab, maxLength)
	if err != nil {
		return nil, nil, err
	}
	return tk, func(string) (string, error) { return s.Vocab, nil }, nil
}

// saveTokenizer copies the tokenizer a from-scratch model was built with
// (src, as tokenize.Open reads it) into the model directory dir under the
// names tokenize.Load looks for; a SentencePiece model is named the BERT's
// way to wrap it in tokenizer_config.json, so that beluga predict reads it
// back.
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
