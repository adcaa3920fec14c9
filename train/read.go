package train

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/inputcheck"
	"github.com/beluga-nlp/beluga/internal/atomicfile"
	"github.com/beluga-nlp/beluga/losses"
	"github.com/beluga-nlp/beluga/metrics"
	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/pretrained"
	"github.com/beluga-nlp/beluga/models/spans"
	"github.com/beluga-nlp/beluga/splits"
	"github.com/beluga-nlp/beluga/suites"
	"github.com/beluga-nlp/beluga/suitescore"
)

// Reading comprehension (BeLUGA's READ) trains a span model
// (models.SpanBERT) on SQuAD v1.1 and CheckList's SQuAD suite as BeLUGA does
// (REFERENCE 1.2, 1.4, 1.5, 1.8):
//
//   - Features are HuggingFace's question-answering recipe (package spans):
//     question first, the context cut into windows of MaxLength tokens with a
//     stride, the first answer's characters mapped to its first and last
//     token, (0, 0) — [CLS] — when a window does not hold it whole. The
//     tokens are the model's own tokenizer's (its directory's, as
//     classification loads it, or model.tokenizer's for a from-scratch
//     model), in that tokenizer's pair layout (RoBERTa's <s> q </s></s> c
//     </s>, say); a saved span model keeps the tokenizer's files.
//   - MFT inputs train on the span cross-entropy at their expected answer
//     (its first occurrence in the context, as BeLUGA's str.find).
//   - INV cases train on the aligned-token invariance loss: BeLUGA splits
//     tokenised features, not inputs, into originals and perturbations, so
//     the first feature of a case is the original and every other feature —
//     a perturbation's, or an overflow window of the original — is a
//     perturbation of it, aligned by difflib on the padded input ids.
//   - The suite has no DIR tests; BeLUGA trains none for SQuAD.
//   - Suite-phase batches carry no token types (BeLUGA's SQuAD collator and
//     losses keep input_ids and attention_mask only); the IID baseline, a
//     plain HuggingFace Trainer, and every prediction pass them.
//   - The i.i.d. score is SQuAD's exact match on the test half of dev
//     (BeLUGA's halving); F1 is reported beside it. The suite's T_test
//     inputs are answered with n-best postprocessing and scored by
//     CheckList's SQuAD expectations from a pred_only file.

// TaskRead is the reading-comprehension task's name in run specs.
const TaskRead = "squad"

// ReadStride is the document stride of features of maxLength tokens:
// BeLUGA's 128 at 384, a third of maxLength at other lengths.
func ReadStride(maxLength int) int { return maxLength / 3 }

// spanTaskKind is the kind of span tasks: READ (squad), and any task a
// spec declares with kind span, reading SQuAD-format files.
type spanTaskKind struct{}

// check refuses what a span task cannot train, and a declaration of labels
// for one: a span task predicts answer spans, not classes (READ's name
// with labels is a declared classification task under a built-in name).
func (spanTaskKind) check(s *RunSpec) error {
	if s.TaskDef != nil {
		if _, builtin := builtinKind(s.Task); builtin {
			return fmt.Errorf("task %q is built in: declare a task under another name", s.Task)
		}
		return fmt.Errorf("task %s is a span task: it predicts answer spans and declares no labels (task_def)", s.Task)
	}
	if s.IIDTrainFile != nil || s.IIDDevFile != nil {
		return fmt.Errorf("task %s is a span task: its i.i.d. data are SQuAD-format files (iid_train, iid_dev), not files of columns", s.Task)
	}
	if src, err := pretrained.LookupSource(s.Model.Kind); err == nil && !src.Spans() {
		return fmt.Errorf("task %s trains a span model: model kind %s has no token outputs (want %s)", s.Task, s.Model.Kind, strings.Join(pretrained.SpanKinds(), " or "))
	}
	if !s.config().UsesIID() {
		trained := func(c ConfigurationInfo) bool { return !c.Prompt && c.UsesIID() }
		return fmt.Errorf("task %s: configuration %s is for suites without i.i.d. data; a span task has SQuAD-format data (want %s)", s.Task, s.Configuration, strings.Join(configurationNames(trained), ", "))
	}
	if s.Method == "irm-domainbed" {
		return fmt.Errorf("task %s: DomainBed's IRM splits batches by example, which span batches do not support (use irm)", s.Task)
	}
	if len(s.IIDEval) > 0 {
		return fmt.Errorf("task %s: iid_eval: extra evaluation sets are classification data (a file of labels); a span task scores its test half only", s.Task)
	}
	if s.MaxLength < 16 {
		return fmt.Errorf("task %s: max_length %d leaves no room for a question and a context window (want at least 16; BeLUGA %d)", s.Task, s.MaxLength, s.profile().Span.MaxLength)
	}
	return nil
}

// checkFold refuses folds keyed by case metadata: READ's evaluation scores
// whole functionalities and keeps no per-case restriction.
func (spanTaskKind) checkFold(k splits.FoldKind) error {
	if _, ok := k.MetaColumn(); ok {
		return fmt.Errorf("held-out fold %s: READ runs hold out whole functionalities only (func, class, type)", k)
	}
	return nil
}

func (spanTaskKind) prepare(ctx context.Context, spec RunSpec) (kindRun, error) {
	return asKindRun(prepareRead(ctx, spec))
}

// readRun is a READ run ready to train.
type readRun struct {
	model *models.SpanModel
	tk    spans.Tokenizer
	cfg   spans.Config
	// save writes the model and its tokenizer's files.
	save  func(dir string) error
	suite *suites.Suite
	fold  *splits.Fold
	data  Data
	phase []Phase
	test  []datasets.QAExample // the i.i.d. test half
	// trained is what the run reads, by question position and case id.
	trained *Trained
}

func (p *readRun) batches() (models.Classifier, Data, []Phase) { return p.model, p.data, p.phase }

// inputChecks is nil: the input checks cover classification rows, and a
// READ run checks none of its questions and contexts.
func (p *readRun) inputChecks() *inputcheck.Report { return nil }

func (p *readRun) trainedOn() *Trained { return p.trained }

func (p *readRun) saveModel(dir string) error { return p.save(dir) }

// evaluate scores the i.i.d. test half by SQuAD's exact match, BeLUGA's
// i.i.d. score, with F1 beside it, and the suite by CheckList's SQuAD
// expectations.
func (p *readRun) evaluate(ctx context.Context, evalLimit int, outDir string) (*Result, error) {
	em, f1, correct, err := evalSQuAD(ctx, p, filepath.Join(outDir, "iid_predictions.json"))
	if err != nil {
		return nil, err
	}
	sr, err := evalSpanSuite(ctx, p, scoredSuite(p.suite, p.fold, evalLimit), outDir)
	if err != nil {
		return nil, err
	}
	return &Result{IIDScore: &em, IIDMetrics: map[string]float64{"exact_match": em, "f1": f1}, IIDCorrect: correct, Suite: sr}, nil
}

// objective scores the model on T_val's span data (spanObjective).
func (p *readRun) objective(ctx context.Context, seed uint64) (Trial, error) {
	val, err := BuildSpanSuiteData(ctx, p.suite, suites.SplitValidation, nil, p.tk, p.cfg)
	if err != nil {
		return Trial{}, err
	}
	return spanObjective(p.model, val, p.cfg.MaxLength, seed)
}

// prepareRead loads the suite, the fold, the starting span model and the
// configuration's training data.
func prepareRead(ctx context.Context, spec RunSpec) (*readRun, error) {
	spec = spec.Effective() // what the run computes, whoever prepares it
	suite, fold, err := spec.openSuite()
	if err != nil {
		return nil, err
	}
	if suite.Task != TaskRead {
		return nil, fmt.Errorf("suite %s tests task %q, not %s", suite.Name, suite.Task, TaskRead)
	}
	p := &readRun{suite: suite, fold: fold}
	if err := p.startModel(ctx, spec); err != nil {
		return nil, err
	}
	p.cfg.MaxLength, p.cfg.Stride = spec.MaxLength, ReadStride(spec.MaxLength)
	p.data.SpanLength = spec.MaxLength

	dev, train, q, err := spec.spanIID()
	if err != nil {
		return nil, err
	}
	p.test = datasets.Pick(dev, q.test)
	p.trained = spanTrainedRecord(spec, q, suite, fold)
	if spec.config().IID {
		// The IID baseline is iid_finetuning.py's Trainer, with token types;
		// the suite phases' SQuAD batches have none.
		if p.data.IID, err = SpanRows(ctx, datasets.Pick(train, q.train), p.tk, p.cfg, spec.Configuration == ConfigIID); err != nil {
			return nil, err
		}
	}
	if spec.Configuration == ConfigIID {
		p.phase = vanillaFamily{name: "vanilla"}.Phases(spec.IIDHyper, Hyper{})
		return p, nil
	}
	if p.data.Suite, err = BuildSpanSuiteData(ctx, spec.trainingSuite(suite, p.fold), suites.SplitTrain, p.fold, p.tk, p.cfg); err != nil {
		return nil, err
	}
	method, err := NewMethod(spec.Method, spec.defaults())
	if err != nil {
		return nil, err
	}
	p.phase = method.Phases(spec.Hyper, spec.ProbeHyper)
	return p, nil
}

// spanIID reads a span run's SQuAD files: dev, the file its training
// questions come from (nil where its configuration trains on none) and the
// positions of the questions it trains on, validates on and is scored on.
func (spec RunSpec) spanIID() (dev, train []datasets.QAExample, q spanQuestions, err error) {
	if dev, err = datasets.ReadSQuAD(spec.IIDDev); err != nil {
		return nil, nil, q, err
	}
	q.val, q.test = datasets.Halve(len(dev), datasets.BeLUGAHalvingSeed)
	if !spec.config().IID {
		return dev, nil, q, nil
	}
	noLabel := func(int) int { return 0 }
	if sameFile(spec.IIDTrain, spec.IIDDev) {
		// Training on dev (where SQuAD train is not at hand) takes its
		// validation half only: never the i.i.d. test half.
		q.trainFile, train, q.train = spec.IIDDev, dev, trainPart(&spec, q.val, noLabel)
		return dev, train, q, nil
	}
	if train, err = datasets.ReadSQuAD(spec.IIDTrain); err != nil {
		return nil, nil, q, err
	}
	q.trainFile, q.train = spec.IIDTrain, trainPart(&spec, indices(len(train)), noLabel)
	return dev, train, q, nil
}

// sameFile says whether two paths name the same file.
func sameFile(a, b string) bool {
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	return err == nil && os.SameFile(sa, sb)
}

// startModel builds the run's initial span model, its tokenizer and span
// configuration (spans.FromTokenizer: the tokenizer's pair layout and
// special ids): the IID model (IID→T, IID→(IID+T)) or a checkpoint (a
// directory or hub id; an encoder-only one gets a fresh qa_outputs), each
// with its own tokenizer, or BERT-tiny from scratch over model.vocab's
// WordPiece or model.tokenizer's tokenizer.
func (p *readRun) startModel(ctx context.Context, spec RunSpec) error {
	var sm *pretrained.Span
	var err error
	if spec.config().FromIID {
		sm, err = pretrained.LoadSpan(ctx, spec.FromIID, pretrained.Options{Seed: spec.Seed, AllowMissing: spec.Model.AllowMissing})
	} else {
		sm, err = pretrained.StartSpan(ctx, spec.Model, pretrained.StartOptions{Seed: spec.Seed})
	}
	if err != nil {
		return err
	}
	if err := pretrained.SetPrecision(sm.Model, spec.Model.Precision); err != nil {
		return err
	}
	p.model, p.save = sm.Model, sm.Save
	if p.tk, p.cfg, err = spans.FromTokenizer(sm.Tokenizer); err != nil {
		return fmt.Errorf("task %s: %w", TaskRead, err)
	}
	return nil
}

// featureChunk is how many examples are turned into features at once:
// features are MaxLength tokens with offsets, so SQuAD train's 88k at once
// would take gigabytes.
const featureChunk = 512

// SpanRows turns SQuAD examples into training rows: one per feature, its
// span the answer's token positions, without token types unless types.
func SpanRows(ctx context.Context, exs []datasets.QAExample, tk spans.Tokenizer, cfg spans.Config, types bool) ([]Row, error) {
	var rows []Row
	for lo := 0; lo < len(exs); lo += featureChunk {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hi := min(lo+featureChunk, len(exs))
		fs, err := spans.Features(tk, exs[lo:hi], cfg)
		if err != nil {
			return nil, fmt.Errorf("i.i.d. examples %d-%d: %w", lo, hi-1, err)
		}
		for _, f := range fs {
			rows = append(rows, Row{Enc: rowEncoding(f, types), Span: [2]int{f.Start, f.End}, Env: "iid"})
		}
	}
	return rows, nil
}

// rowEncoding copies a feature's tokens without the padding (Data.SpanLength
// pads batches back, masked).
func rowEncoding(f spans.Feature, types bool) models.Encoding {
	e := models.Encoding{IDs: append([]int(nil), f.IDs[:f.Len]...), TypeIDs: make([]int, f.Len)}
	if types {
		copy(e.TypeIDs, f.TypeIDs[:f.Len])
	}
	return e
}

// BuildSpanSuiteData turns the cases of split of a SQuAD suite (skipping the
// functionalities fold removes, when it is not nil) into span training data
// as BeLUGA does: MFT inputs as rows labelled with their expected answer,
// INV cases as an original feature and its perturbations with their token
// alignments. Suite batches carry no token types.
func BuildSpanSuiteData(ctx context.Context, s *suites.Suite, split suites.Split, fold *splits.Fold, tk spans.Tokenizer, cfg spans.Config) (*SuiteData, error) {
	d := &SuiteData{}
	for _, f := range s.Functionalities {
		if fold != nil && fold.Remove(f) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		tt := f.TrainType()
		tr, err := trainingOf(f)
		if err != nil {
			return nil, err
		}
		kind := kinds[tr.Kind]
		if kinds[kind.span].suite {
			// No span form: the kind's loss reads class logits.
			return nil, fmt.Errorf("functionality %q: task %s trains no %s tests (BeLUGA has none for SQuAD)", f.Name, TaskRead, tt)
		}
		env := string(tt) + "/" + f.Name
		for c := range f.CasesIn(split) {
			exs := make([]datasets.QAExample, len(c.Inputs))
			for i, in := range c.Inputs {
				if !in.IsPair {
					return nil, fmt.Errorf("functionality %q case %d input %d: want a (context, question) pair", f.Name, c.ID, i)
				}
				// BeLUGA's CSV leaves unlabelled inputs "NaN" (INV); only MFT
				// rows use the answer.
				label := "NaN"
				if l, ok := c.LabelFor(i); ok && l.IsAnswer {
					label = l.Answer
				} else if kind.rows != nil {
					return nil, fmt.Errorf("functionality %q case %d input %d: an %s input without an answer", f.Name, c.ID, i, tt)
				}
				exs[i] = spans.SuiteExample(fmt.Sprintf("%d/%d", c.ID, i), in.Text, in.Pair, label)
			}
			fs, err := spans.Features(tk, exs, cfg)
			if err != nil {
				return nil, fmt.Errorf("functionality %q case %d: %w", f.Name, c.ID, err)
			}
			if kind.rows != nil {
				rows := kind.rows(d)
				for _, ft := range fs {
					*rows = append(*rows, Row{Enc: rowEncoding(ft, false), Span: [2]int{ft.Start, ft.End}, Env: env})
				}
			} else {
				if len(fs) < 2 {
					continue // nothing to compare the original with
				}
				p := Perturbed{Orig: rowEncoding(fs[0], false), Env: env}
				for _, ft := range fs[1:] {
					a, err := losses.AlignSpans(fs[0].IDs, ft.IDs, cfg.MaxLength)
					if err != nil {
						return nil, fmt.Errorf("functionality %q case %d: %w", f.Name, c.ID, err)
					}
					p.Perts = append(p.Perts, rowEncoding(ft, false))
					p.Aligns = append(p.Aligns, a)
				}
				pairs := kind.pairs(d)
				*pairs = append(*pairs, p)
			}
		}
	}
	return d, nil
}

// predictAnswers answers exs with p's model in chunks, stopping when ctx is
// cancelled.
func predictAnswers(ctx context.Context, p *readRun, exs []datasets.QAExample) ([]string, error) {
	out := make([]string, 0, len(exs))
	for lo := 0; lo < len(exs); lo += featureChunk {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hi := min(lo+featureChunk, len(exs))
		a, err := spans.Predict(p.model, p.tk, exs[lo:hi], p.cfg, 32)
		if err != nil {
			return nil, err
		}
		out = append(out, a...)
	}
	return out, nil
}

// evalSQuAD answers the i.i.d. test half, writes the answers as the
// official evaluation script reads them ({id: answer}) and returns the
// exact match, F1 and which answers match exactly.
func evalSQuAD(ctx context.Context, p *readRun, path string) (em, f1 float64, correct []bool, err error) {
	answers, err := predictAnswers(ctx, p, p.test)
	if err != nil {
		return 0, 0, nil, err
	}
	byID := make(map[string]string, len(answers))
	correct = make([]bool, len(answers))
	for i, ex := range p.test {
		byID[ex.ID] = answers[i]
		e := metrics.ExactMatch(answers[i], ex.Answers)
		correct[i] = e == 1
		em += e
		f1 += metrics.TokenF1(answers[i], ex.Answers)
	}
	if n := float64(len(answers)); n > 0 {
		em, f1 = em/n, f1/n
	}
	err = atomicfile.Write(path, func(w io.Writer) error { return json.NewEncoder(w).Encode(byID) })
	return em, f1, correct, err
}

// evalSpanSuite answers every input of the T_test cases of s in suite
// order (suitescore.Inputs: a context and its question), writes
// CheckList's pred_only file (BeLUGA's SQuAD predictions) and
// scores what it reads back, as CheckList reads it.
func evalSpanSuite(ctx context.Context, p *readRun, s *suites.Suite, outDir string) (*metrics.Result, error) {
	var exs []datasets.QAExample
	for _, in := range suitescore.Inputs(s, suites.SplitTest) {
		ex := datasets.QAExample{Context: in.Text}
		if in.TextPair != nil {
			ex.Question = *in.TextPair
		}
		exs = append(exs, ex)
	}
	answers, err := predictAnswers(ctx, p, exs)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(outDir, "suite_predictions.txt")
	if err := atomicfile.Write(path, func(w io.Writer) error { return spans.WritePredOnly(w, answers) }); err != nil {
		return nil, err
	}
	preds, err := metrics.ReadPredictions(path, metrics.PredOnly, len(answers), true)
	if err != nil {
		return nil, err
	}
	return scoreSuite(s, preds, outDir)
}

// spanObjective scores a span model on validation data as BeLUGA's
// compute_metrics does for SQuAD (REFERENCE 1.4): the MFT start and end
// token accuracies and their mean, and for INV the share of cases whose
// aligned start (and end) argmax is the original's, one perturbation drawn
// per case; the objective is mft_mean_acc + inv_mean_pass.
func spanObjective(m *models.SpanBERT, val *SuiteData, length int, seed uint64) (Trial, error) {
	var t Trial
	rng := rand.New(rand.NewPCG(seed, 0x0b1))
	infer := func(encs []models.Encoding) ([]models.SpanLogits, error) {
		var out []models.SpanLogits
		for lo := 0; lo < len(encs); lo += 32 {
			l, err := m.InferSpans(padBatch(encs[lo:min(lo+32, len(encs))], length))
			if err != nil {
				return nil, err
			}
			out = append(out, l)
		}
		return out, nil
	}
	// row returns the start and end logits of input i of encs's batches.
	row := func(ls []models.SpanLogits, i int) ([]float32, []float32) { return ls[i/32].Row(i % 32) }
	if len(val.MFT) > 0 {
		encs := make([]models.Encoding, len(val.MFT))
		for i, r := range val.MFT {
			encs[i] = r.Enc
		}
		ls, err := infer(encs)
		if err != nil {
			return t, err
		}
		start, end := 0, 0
		for i, r := range val.MFT {
			s, e := row(ls, i)
			if metrics.Argmax(s) == r.Span[0] {
				start++
			}
			if metrics.Argmax(e) == r.Span[1] {
				end++
			}
		}
		n := float64(len(val.MFT))
		t.MFTAcc = (float64(start)/n + float64(end)/n) / 2
	}
	if len(val.INV) > 0 {
		encs := make([]models.Encoding, 0, 2*len(val.INV))
		picked := make([]int, len(val.INV))
		for i, p := range val.INV {
			picked[i] = rng.IntN(len(p.Perts))
			encs = append(encs, p.Orig, p.Perts[picked[i]])
		}
		ls, err := infer(encs)
		if err != nil {
			return t, err
		}
		gather := func(z []float32, at []int) []float32 {
			out := make([]float32, len(at))
			for k, j := range at {
				out[k] = z[j]
			}
			return out
		}
		start, end := 0, 0
		for i, p := range val.INV {
			a := p.Aligns[picked[i]]
			os, oe := row(ls, 2*i)
			ps, pe := row(ls, 2*i+1)
			if metrics.Argmax(gather(ps, a.Pert)) == metrics.Argmax(gather(os, a.Orig)) {
				start++
			}
			if metrics.Argmax(gather(pe, a.Pert)) == metrics.Argmax(gather(oe, a.Orig)) {
				end++
			}
		}
		n := float64(len(val.INV))
		t.INVPass = (float64(start)/n + float64(end)/n) / 2
	}
	t.Objective = t.MFTAcc + t.INVPass
	return t, nil
}
