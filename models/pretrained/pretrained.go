// Package pretrained is beluga's one model loader: it turns what a user
// names as a model — a HuggingFace model directory, a .tar.gz of one, a
// hub id such as google/bert_uncased_L-2_H-128_A-2[@revision] (resolved by
// package hub), or a model directory beluga wrote (BERT or word vectors) —
// into a classifier, its tokenizer, and a way to save both; LoadSpan does
// the same for a span (question-answering) model, READ's. beluga predict
// and training start from it.
//
// It loads the way transformers' from_pretrained does for the
// …ForSequenceClassification of the checkpoint's model family (config.json
// model_type, models.LookupFamily): legacy names (LayerNorm gamma/beta, a
// state dict saved without the family's "bert."/"roberta."/… prefix) are
// mapped, tensors the model does not use are ignored, and a missing pooler
// or head is initialised afresh; both are reported. Unlike transformers, a missing
// embedding or encoder-layer tensor is an error unless AllowMissing is set
// (a checkpoint that lacks one is nearly always the wrong file), and a
// non-finite weight is refused with its name.
package pretrained

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/checkpoint"
	"github.com/beluga-nlp/beluga/models/hub"
	"github.com/beluga-nlp/beluga/models/predict"
	"github.com/beluga-nlp/beluga/models/tokenize"
)

// Options tune Load.
type Options struct {
	// Labels is the number of classifier outputs the task needs; 0 keeps
	// the checkpoint's (num_labels / id2label, else 2). When it differs from
	// the checkpoint's, the checkpoint's classifier is ignored and a new one
	// initialised.
	Labels int
	// MaxLength truncates encodings to this many tokens (0: no truncation).
	MaxLength int
	// Seed draws the parameters the checkpoint lacks.
	Seed uint64
	// AllowMissing lets embedding and encoder-layer tensors missing from the
	// checkpoint be initialised afresh instead of failing.
	AllowMissing bool
	// Resolver resolves hub ids; nil means hub.FromEnv().
	Resolver *hub.Resolver
}

// Model is a loaded classifier with its tokenizer.
type Model struct {
	Classifier models.Model
	Tokenizer  predict.Tokenizer
	Config     *checkpoint.Config
	// Report says which checkpoint tensors were ignored and which
	// parameters were initialised.
	Report models.LoadReport
	// Dir is the directory the model was read from (a hub-cache snapshot
	// for a hub id); for an archive, the archive.
	Dir string
	// tokenizerFiles are the tokenizer's files, kept in memory so that Save
	// works after an archive's extraction is gone.
	tokenizerFiles map[string][]byte
	words          []string // the word-vector model's vocabulary
	// save replaces Save's own layout for a model built afresh (Start),
	// whose tokenizer's files are where its spec names them.
	save func(dir string) error
}

// open resolves ref (a hub id through opt.Resolver, else hub.FromEnv) to
// the path it names and the directory that holds the model there (an
// archive is extracted; cleanup removes the extraction).
func open(ctx context.Context, ref string, opt Options) (path, dir string, cleanup func(), err error) {
	r := opt.Resolver
	if r == nil {
		r = hub.FromEnv()
	}
	if path, err = r.Resolve(ctx, ref); err != nil {
		return "", "", nil, err
	}
	if dir, cleanup, err = checkpoint.Open(path); err != nil {
		return "", "", nil, err
	}
	return path, dir, cleanup, nil
}

// Load resolves ref and reads the model there.
func Load(ctx context.Context, ref string, opt Options) (*Model, error) {
	path, dir, cleanup, err := open(ctx, ref, opt)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	ck, err := checkpoint.LoadDir(dir)
	if err != nil {
		return nil, err
	}
	m := &Model{Config: ck.Config, Dir: dir, tokenizerFiles: map[string][]byte{}}
	if checkpoint.IsArchive(path) {
		m.Dir = path
	}
	if ck.Config.ModelType == models.WordVecModelType {
		err = m.loadWordVec(dir, opt)
	} else {
		err = m.loadBERT(ck, dir, opt)
	}
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", ref, err)
	}
	if err := finite(m.Classifier.Params()); err != nil {
		return nil, fmt.Errorf("model %s: %w", ref, err)
	}
	return m, nil
}

// finite refuses parameters holding NaN or ±Inf, naming the tensor.
func finite(ps []*models.Param) error {
	for _, p := range ps {
		for i, v := range p.Value {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return fmt.Errorf("tensor %s holds %v at index %d: refusing non-finite weights", p.Name, v, i)
			}
		}
	}
	return nil
}

func (m *Model) loadBERT(ck *checkpoint.Checkpoint, dir string, opt Options) error {
	fam, err := models.LookupFamily(ck.Config.ModelType)
	if err != nil {
		return err
	}
	weights, bufs, err := familyNames(fam, ck)
	if err != nil {
		return err
	}
	labels := ck.Config.Labels()
	var dropped []string
	if opt.Labels > 0 && opt.Labels != labels {
		// A head trained for other classes is of no use where its shape
		// says so: start those tensors afresh.
		specs, err := fam.HeadSpecs(ck.Config, opt.Labels)
		if err != nil {
			return err
		}
		for _, s := range specs {
			if t, ok := weights[s.Name]; ok && !sameShape(t.Shape, s.Shape) {
				delete(weights, s.Name)
				dropped = append(dropped, s.Name)
			}
		}
		labels = opt.Labels
	}
	b, rep, err := models.NewClassifier(ck.Config, labels, weights, opt.Seed)
	if err != nil {
		return err
	}
	rep.Ignored = append(rep.Ignored, dropped...)
	if err := fam.CheckBuffers(ck.Config, bufs, &rep); err != nil {
		return fmt.Errorf("%s: %w", ck.Source, err)
	}
	if !opt.AllowMissing {
		if err := missingEncoder(ck.Source, b.Params(), rep, fam.Prefix); err != nil {
			return err
		}
	}
	m.Classifier, m.Report = b, rep
	return m.loadTokenizer(dir, opt)
}

// readFamily reads the checkpoint in dir, its family, and its weights and
// buffers under the names of the family's model.
func readFamily(dir string) (*checkpoint.Checkpoint, *models.Family, checkpoint.Tensors, checkpoint.Buffers, error) {
	ck, err := checkpoint.LoadDir(dir)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	fam, err := models.LookupFamily(ck.Config.ModelType)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	weights, bufs, err := familyNames(fam, ck)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	return ck, fam, weights, bufs, nil
}

// familyNames is a checkpoint's weights and buffers under the names of its
// family's model (normaliseNames).
func familyNames(fam *models.Family, ck *checkpoint.Checkpoint) (checkpoint.Tensors, checkpoint.Buffers, error) {
	known, err := fam.EncoderNames(ck.Config)
	if err != nil {
		return nil, nil, err
	}
	return normaliseNames(ck.Weights, fam.Prefix, known), normaliseNames(ck.Buffers, fam.Prefix, known), nil
}

// missingEncoder refuses a checkpoint (source) that lacked encoder tensors
// other than the pooler's: rep lists them as initialised.
func missingEncoder(source string, ps []*models.Param, rep models.LoadReport, prefix string) error {
	var missing []string
	enc := map[string]bool{}
	for _, p := range ps {
		enc[p.Name] = p.Encoder
	}
	for _, n := range rep.Initialised {
		if enc[n] && !isPooler(n, prefix) {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s lacks %d encoder tensors (first %s): the wrong checkpoint? (--allow-missing initialises them afresh)", source, len(missing), missing[0])
	}
	return nil
}

func (m *Model) loadWordVec(dir string, opt Options) error {
	wv, rep, ck, err := models.Load(dir)
	if err != nil {
		return err
	}
	if opt.Labels > 0 && opt.Labels != ck.Config.Labels() {
		return fmt.Errorf("a word-vector model with %d labels cannot be loaded for %d", ck.Config.Labels(), opt.Labels)
	}
	words, err := tokenize.ReadVocab(filepath.Join(dir, "vocab.txt"))
	if err != nil {
		return err
	}
	tk, err := tokenize.NewWordLevel(words, opt.MaxLength)
	if err != nil {
		return err
	}
	m.Classifier, m.Report, m.Tokenizer, m.words = wv, rep, tk, words
	return nil
}

// normaliseNames maps the tensor names older or headless checkpoints use to
// the model's, as transformers does on loading: LayerNorm's gamma and beta
// become weight and bias, and a tensor of a bare encoder's state dict
// (saved without the family's base_model_prefix: "embeddings.…",
// "encoder.…") gains the prefix ("bert.", "roberta.", "model.", …) when
// the prefixed name is one of the encoder's (known: Family.EncoderNames)
// and its own name is not.
func normaliseNames[T any](ts map[string]T, prefix string, known map[string]bool) map[string]T {
	out := make(map[string]T, len(ts))
	for name, t := range ts {
		n := name
		if strings.Contains(n, "LayerNorm.") {
			n = strings.Replace(n, "LayerNorm.gamma", "LayerNorm.weight", 1)
			n = strings.Replace(n, "LayerNorm.beta", "LayerNorm.bias", 1)
		}
		if !known[n] && known[prefix+"."+n] {
			n = prefix + "." + n
		}
		if _, clash := ts[n]; clash && n != name {
			n = name // the checkpoint has both spellings: keep each as it is
		}
		out[n] = t
	}
	return out
}

// isPooler says whether an encoder parameter is the pooler's, which a
// checkpoint saved without one (an MLM's) may lack.
func isPooler(name, prefix string) bool { return strings.HasPrefix(name, prefix+".pooler.") }

func sameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Save writes the model and its tokenizer files to dir, in the layout Load
// reads; config.json is written last, so a directory with a config is
// complete.
func (m *Model) Save(dir string) error {
	if m.save != nil {
		return m.save(dir)
	}
	switch c := m.Classifier.(type) {
	case *models.SequenceClassifier:
		if err := writeTokenizerFiles(dir, m.tokenizerFiles); err != nil {
			return err
		}
		return c.Save(dir, "")
	case *models.WordVec:
		return c.Save(dir, m.words)
	}
	return fmt.Errorf("save: unsupported model %T", m.Classifier)
}
