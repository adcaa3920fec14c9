package train

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/models/spans"
	"github.com/beluga-nlp/beluga/models/tokenize"
	"github.com/beluga-nlp/beluga/suites"
)

// The READ fixtures: a SQuAD-format train and dev file of short generated
// paragraphs, a suite of two MFT functionalities and one INV (question
// typos), and a WordPiece vocabulary of their words.
func tinyReadSpec(config string) RunSpec {
	return RunSpec{
		Task: TaskRead, Suite: "testdata/tiny_squad_suite.jsonl",
		IIDTrain: "testdata/tiny_squad_train.json", IIDDev: "testdata/tiny_squad_dev.json",
		Model:         ModelSpec{Kind: "bert-tiny", Vocab: "testdata/tiny_vocab.txt"},
		Configuration: config, Method: "vanilla",
		Hyper:      Hyper{Epochs: 1, BatchSize: 4, LR: 1e-3},
		ProbeHyper: Hyper{Epochs: 1, BatchSize: 4, LR: 1e-3},
		IIDHyper:   Hyper{Epochs: 1, BatchSize: 4, LR: 1e-3},
		MaxLength:  32, Seed: 1,
	}
}

func TestReadRunConfigurations(t *testing.T) {
	dir := t.TempDir()
	iidDir := filepath.Join(dir, "iid")
	res, err := Run(context.Background(), tinyReadSpec(ConfigIID), iidDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"model/config.json", "model/model.safetensors", "model/vocab.txt", "iid_predictions.json",
		"suite_predictions.txt", "results.json", "cases.jsonl", "curve.jsonl", "metrics.json"} {
		if _, err := os.Stat(filepath.Join(iidDir, f)); err != nil {
			t.Errorf("IID run lacks %s", f)
		}
	}
	// 12 paragraphs × 2 questions, one feature each, in batches of 4.
	if res.SuiteScore == nil || res.G == nil || res.Steps != 6 || len(res.IIDCorrect) != 8 {
		t.Errorf("IID result %+v: want a suite score, G, 6 steps and 8 i.i.d. test answers", res)
	}
	var answers map[string]string
	b, _ := os.ReadFile(filepath.Join(iidDir, "iid_predictions.json"))
	if err := json.Unmarshal(b, &answers); err != nil || len(answers) != 8 {
		t.Errorf("iid_predictions.json holds %d answers (%v), want the 8 of the test half by id", len(answers), err)
	}
	var cfg struct{ Architectures []string }
	b, _ = os.ReadFile(filepath.Join(iidDir, "model", "config.json"))
	json.Unmarshal(b, &cfg)
	if !slices.Equal(cfg.Architectures, []string{"BertForQuestionAnswering"}) {
		t.Errorf("saved model architectures %v, want BertForQuestionAnswering", cfg.Architectures)
	}
	for _, config := range []string{ConfigIIDThenT, ConfigIIDThenIT, ConfigIIDPlusT} {
		spec := tinyReadSpec(config)
		spec.MaxSteps = 3
		if config != ConfigIIDPlusT {
			spec.FromIID = filepath.Join(iidDir, "model")
		}
		for _, method := range MethodNames() {
			if method == "irm-domainbed" {
				continue // refused (TestReadRefuses)
			}
			spec.Method = method
			if _, err := Run(context.Background(), spec, filepath.Join(dir, config+"-"+method)); err != nil {
				t.Fatalf("%s %s: %v", config, method, err)
			}
		}
	}
}

func TestReadRefuses(t *testing.T) {
	for name, edit := range map[string]func(*RunSpec){
		"wordvec":         func(s *RunSpec) { s.Model = ModelSpec{Kind: "wordvec", GloVe: "testdata/tiny_glove.txt"} },
		"irm-domainbed":   func(s *RunSpec) { s.Method = "irm-domainbed" },
		"max_length":      func(s *RunSpec) { s.MaxLength = 8 },
		"configuration t": func(s *RunSpec) { s.Configuration = ConfigT },
	} {
		s := tinyReadSpec(ConfigIIDPlusT)
		edit(&s)
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), TaskRead) {
			t.Errorf("%s: error %v, want a refusal naming the task", name, err)
		}
	}
	s := tinyReadSpec(ConfigIIDPlusT)
	s.Suite = "testdata/tiny_suite.jsonl" // a sentiment suite
	if _, err := Run(context.Background(), s, t.TempDir()); err == nil || !strings.Contains(err.Error(), "sentiment") {
		t.Errorf("a sentiment suite for READ: error %v", err)
	}
}

func tinyReadData(t *testing.T) (*suites.Suite, spans.Tokenizer, spans.Config, *SuiteData) {
	t.Helper()
	s, err := suites.Open("testdata/tiny_squad_suite.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	tk, cfg := tinyReadTokenizer(t, "testdata/tiny_vocab.txt")
	cfg.MaxLength, cfg.Stride = 32, ReadStride(32)
	d, err := BuildSpanSuiteData(context.Background(), s, suites.SplitTrain, nil, tk, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s, tk, cfg, d
}

// TestReadMFTTargetIsTheAnswer: every MFT row's span covers exactly the
// tokens of its expected answer, and the rows carry no token types.
func TestReadMFTTargetIsTheAnswer(t *testing.T) {
	s, tk, _, d := tinyReadData(t)
	var want [][]int
	for _, f := range s.Functionalities {
		if f.Type != suites.MFT {
			continue
		}
		for _, c := range f.Cases {
			if c.Split != suites.SplitTrain {
				continue
			}
			for i := range c.Inputs {
				l, _ := c.LabelFor(i)
				toks, err := tk.TokenizeOffsets(l.Answer)
				if err != nil {
					t.Fatal(err)
				}
				var ids []int
				for _, tok := range toks {
					ids = append(ids, tok.ID)
				}
				want = append(want, ids)
			}
		}
	}
	if len(d.MFT) != len(want) || len(d.MFT) == 0 {
		t.Fatalf("%d MFT rows for %d labelled train inputs", len(d.MFT), len(want))
	}
	for i, r := range d.MFT {
		if r.Span[0] == 0 || r.Span[1] < r.Span[0] {
			t.Fatalf("row %d: span %v, want the answer inside the context", i, r.Span)
		}
		if got := r.Enc.IDs[r.Span[0] : r.Span[1]+1]; !slices.Equal(got, want[i]) {
			t.Errorf("row %d: span tokens %v, want the answer's %v", i, got, want[i])
		}
		if slices.ContainsFunc(r.Enc.TypeIDs, func(x int) bool { return x != 0 }) {
			t.Errorf("row %d has token types; BeLUGA's SQuAD suite batches carry none", i)
		}
	}
}

// TestReadINVAlignment: each INV case pairs its original with every
// perturbation, whose alignment maps equal tokens onto equal tokens and
// covers all but the typo's.
func TestReadINVAlignment(t *testing.T) {
	_, _, cfg, d := tinyReadData(t)
	if len(d.INV) != 4 {
		t.Fatalf("%d INV cases, want the 4 train cases", len(d.INV))
	}
	for i, p := range d.INV {
		if len(p.Perts) != 2 || len(p.Aligns) != 2 {
			t.Fatalf("case %d: %d perturbations, %d alignments, want 2 and 2", i, len(p.Perts), len(p.Aligns))
		}
		for k, a := range p.Aligns {
			if len(a.Orig) != cfg.MaxLength {
				t.Fatalf("case %d: alignment of %d positions, want max_length %d", i, len(a.Orig), cfg.MaxLength)
			}
			matched := 0
			for j := range a.Orig {
				o, q := a.Orig[j], a.Pert[j]
				if o == 0 && q == 0 {
					continue // BeLUGA's padding: [CLS] with [CLS]
				}
				if o >= len(p.Orig.IDs) || q >= len(p.Perts[k].IDs) {
					continue // padding tokens matched by difflib
				}
				matched++
				if p.Orig.IDs[o] != p.Perts[k].IDs[q] {
					t.Errorf("case %d pert %d: position %d (%d) aligned with %d (%d)", i, k, o, p.Orig.IDs[o], q, p.Perts[k].IDs[q])
				}
			}
			if matched < len(p.Orig.IDs)-3 {
				t.Errorf("case %d pert %d: %d of %d original tokens aligned", i, k, matched, len(p.Orig.IDs))
			}
		}
	}
}

// TestReadTrainingLowersTheLoss: IID+T on the fixtures for a few epochs
// ends with lower span losses than it starts with.
func TestReadTrainingLowersTheLoss(t *testing.T) {
	spec := tinyReadSpec(ConfigIIDPlusT)
	spec.Hyper.Epochs = 6
	p, err := prepareRead(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	curve, err := Train(context.Background(), p.model, p.data, p.phase, TrainOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, c := range curve {
		kinds[c.Kind] = true
	}
	for _, k := range []string{"span-MFT", "span-INV", "span-iid"} {
		if !kinds[k] {
			t.Errorf("no %s batch in %d updates", k, len(curve))
		}
	}
	mean := func(cs []CurvePoint) float64 {
		s := 0.0
		for _, c := range cs {
			s += c.Loss
		}
		return s / float64(len(cs))
	}
	n := len(curve) / 4
	if first, last := mean(curve[:n]), mean(curve[len(curve)-n:]); !(last < 0.7*first) {
		t.Errorf("mean loss of the first %d updates %.3f, of the last %.3f: want a clear fall", n, first, last)
	}
}

// TestReadTrainsOnDevValidationHalf: with dev as the training file (SQuAD
// train not at hand), training takes dev's validation half, never a
// question of the i.i.d. test half.
func TestReadTrainsOnDevValidationHalf(t *testing.T) {
	spec := tinyReadSpec(ConfigIID)
	spec.IIDTrain = spec.IIDDev
	p, err := prepareRead(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	dev, err := datasets.ReadSQuAD(spec.IIDDev)
	if err != nil {
		t.Fatal(err)
	}
	val, _ := datasets.Halve(len(dev), datasets.BeLUGAHalvingSeed)
	if len(p.data.IID) != len(val) || len(p.test)+len(val) != len(dev) {
		t.Fatalf("%d training rows and %d test questions of %d, want the validation half's %d rows", len(p.data.IID), len(p.test), len(dev), len(val))
	}
	tk, cfg := tinyReadTokenizer(t, spec.Model.Vocab)
	cfg.MaxLength, cfg.Stride = spec.MaxLength, ReadStride(spec.MaxLength)
	want, err := SpanRows(context.Background(), datasets.Pick(dev, val), tk, cfg, true)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if !slices.Equal(want[i].Enc.IDs, p.data.IID[i].Enc.IDs) {
			t.Fatalf("training row %d is not the validation half's", i)
		}
	}
}

// tinyReadTokenizer is the span tokenizer and configuration READ builds for
// a BERT-tiny over a WordPiece vocab.txt.
func tinyReadTokenizer(t *testing.T, vocab string) (spans.Tokenizer, spans.Config) {
	t.Helper()
	wp, err := tokenize.NewWordPieceFromVocab(vocab, 0)
	if err != nil {
		t.Fatal(err)
	}
	tk, cfg, err := spans.FromTokenizer(wp)
	if err != nil {
		t.Fatal(err)
	}
	return tk, cfg
}

// SQuAD's dev file as both i.i.d. files is READ's offline setting (the
// READ quickstart): Validate accepts it, where it refuses one file twice
// for a classification task, and the run trains on dev's validation half.
func TestReadRunsOnDevAlone(t *testing.T) {
	spec := tinyReadSpec(ConfigIID)
	spec.IIDTrain = spec.IIDDev
	if err := spec.Validate(); err != nil {
		t.Fatalf("READ on dev alone refused: %v", err)
	}
	if _, err := Run(context.Background(), spec, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	class := tinySpec(ConfigIID)
	class.IIDTrain = class.IIDDev
	if err := class.Validate(); err == nil {
		t.Error("a classification task's one file named twice was accepted")
	}
}

// A span run records what it read as a classification run does: its
// training questions by position (dev's validation half when it trains on
// dev, a train_size draw of them), the halves it validates and is scored
// on, and the suite's parts; DataOf draws the same record without a model.
func TestReadRecordsWhatTrained(t *testing.T) {
	dev, err := datasets.ReadSQuAD("testdata/tiny_squad_dev.json")
	if err != nil {
		t.Fatal(err)
	}
	val, test := datasets.Halve(len(dev), datasets.BeLUGAHalvingSeed)
	spec := tinyReadSpec(ConfigIID)
	spec.IIDTrain, spec.TrainSize = spec.IIDDev, 5
	out := t.TempDir()
	if _, err := Run(context.Background(), spec, out); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, TrainedFile))
	if err != nil {
		t.Fatalf("a span run wrote no %s: %v", TrainedFile, err)
	}
	var rec Trained
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	byRole := map[string]TrainedPart{}
	for _, p := range rec.IID {
		byRole[p.Role] = p
	}
	positions := func(idx []int) map[int]bool {
		m := map[int]bool{}
		for _, i := range idx {
			m[i+1] = true
		}
		return m
	}
	inVal, inTest := positions(val), positions(test)
	tr := byRole["trained"]
	if tr.Rows != 5 || tr.File != spec.IIDDev {
		t.Errorf("trained part %+v: want 5 questions of %s", tr, spec.IIDDev)
	}
	for _, q := range expandRanges(t, tr.Questions) {
		if !inVal[q] || inTest[q] {
			t.Errorf("trained on question %d, not of dev's validation half", q)
		}
	}
	if got := expandRanges(t, byRole["scored"].Questions); len(got) != len(test) || !inTest[got[0]] {
		t.Errorf("scored questions %v, want the test half's %d", got, len(test))
	}
	if byRole["validation"].Rows != len(val) {
		t.Errorf("validation part %+v, want the validation half's %d", byRole["validation"], len(val))
	}
	if len(rec.Suite) != 2 || rec.Suite[1].Role != "scored" || rec.Suite[1].Cases == 0 {
		t.Errorf("suite parts %+v: want T_val and the scored T_test (an IID run trains on no suite case)", rec.Suite)
	}
	drawn, err := DataOf(spec)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := json.Marshal(rec); string(want) != string(mustJSON(t, drawn)) {
		t.Errorf("DataOf differs from the run's record:\n%s\n%s", mustJSON(t, drawn), want)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
