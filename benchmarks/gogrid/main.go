// Command gogrid projects the wall time of BeLUGA's full SENT grid
// (specs/sent-full.yaml: 1 IID baseline, 21 searches and their 378
// trials, 3 configurations × 8 methods × (1 seen + 38 func + 7 class + 3
// type runs) = 1,576 runs) on this machine, for benchmarks/grid.sh. It counts every
// run's updates exactly, with package train's own planning (Method.Phases,
// Updater.Plan) on the real data: SST-2 and the CheckList sentiment suite
// with BeLUGA's split and folds, at the hyper-parameters BeLUGA falls back
// to (set_hyperparams: a search may choose others). It measures what each
// kind of run costs per update — a few updates of each configuration ×
// method, and of the IID baseline, on real batches, at the spec's model shape
// (bert-base, randomly initialised: no weights offline) — what scoring an
// input costs, and what preparing a run costs (opening the suite,
// tokenising). The projection is Σ over runs of updates × cost per update +
// scored inputs / inputs per second + preparation.
//
// It builds against the tree before issue 15's work too (-tags before),
// which lacks the token cache and the lp-frozen-eval correction.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/losses"
	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/checkpoint"
	"github.com/beluga-nlp/beluga/models/predict"
	"github.com/beluga-nlp/beluga/models/tokenize"
	"github.com/beluga-nlp/beluga/splits"
	"github.com/beluga-nlp/beluga/suites"
	"github.com/beluga-nlp/beluga/train"
)

// BeLUGA's set_hyperparams fallbacks for sentiment (REFERENCE 1.5): epochs
// and batch size, T only and with the i.i.d. data (IID+T, IID→(IID+T)).
var fallback = map[string][2]train.Hyper{
	"vanilla": {{Epochs: 1, BatchSize: 8, LR: 2e-5}, {Epochs: 2, BatchSize: 16, LR: 2e-5}},
	"dropout": {{Epochs: 1, BatchSize: 8, LR: 2e-5}, {Epochs: 2, BatchSize: 8, LR: 3e-5}},
	"l2":      {{Epochs: 1, BatchSize: 8, LR: 2e-5}, {Epochs: 2, BatchSize: 8, LR: 5e-5}},
	"lp":      {{Epochs: 3, BatchSize: 8, LR: 1e-3}, {Epochs: 3, BatchSize: 8, LR: 1e-3}},
	"irm":     {{Epochs: 1, BatchSize: 8, LR: 5e-5}, {Epochs: 1, BatchSize: 8, LR: 5e-5}},
	"dro":     {{Epochs: 1, BatchSize: 8, LR: 2e-5}, {Epochs: 1, BatchSize: 8, LR: 2e-5}},
	"fish":    {{Epochs: 2, BatchSize: 8, LR: 2e-5}, {Epochs: 2, BatchSize: 8, LR: 2e-5}},
}

var (
	configs = []string{train.ConfigIIDThenT, train.ConfigIIDPlusT, train.ConfigIIDThenIT}
	methods = []string{"vanilla", "l2", "dropout", "lp", "lp-ft", "irm", "dro", "fish"}
)

// baselineOnly stops after the IID baseline's measurement.
var baselineOnly bool

// maxLength is the spec's padding length (BeLUGA's for SENT).
const maxLength = 128

// searchLRs is the number of learning rates of BeLUGA's search grid (× batch
// {8, 16} × epochs {1, 2, 3}).
const searchLRs = 3

func main() {
	data := flag.String("data", "../shared/data", "the shared data directory")
	shape := flag.String("shape", "base", "model shape: base (bert-base, the spec's), mini or tiny")
	steps := flag.Int("steps", 3, "updates measured per kind of run, after one left out (IRM and Fish: 1)")
	evalN := flag.Int("eval", 256, "T_test inputs scored to measure scoring throughput")
	label := flag.String("label", "", "name of this tree in the output")
	flag.BoolVar(&baselineOnly, "baseline-only", false, "measure the IID baseline's update and stop (an A/B of two trees)")
	flag.Parse()
	if err := run(*data, *shape, *steps, *evalN, *label); err != nil {
		fmt.Fprintln(os.Stderr, "gogrid:", err)
		os.Exit(1)
	}
}

// memo tokenises each distinct input once while the grid's data is built.
type memo struct {
	tk    train.Tokenizer
	cache map[[3]string]models.Encoding
}

func (m *memo) Encode(text, pair string, isPair bool) (models.Encoding, error) {
	k := [3]string{text, pair, fmt.Sprint(isPair)}
	if e, ok := m.cache[k]; ok {
		return e, nil
	}
	e, err := m.tk.Encode(text, pair, isPair)
	if err == nil {
		m.cache[k] = e
	}
	return e, err
}

func since(t time.Time) float64 { return time.Since(t).Seconds() }

func run(dataDir, shape string, steps, evalN int, label string) error {
	ctx := context.Background()
	vocab := filepath.Join(dataDir, "vocab/bert-base-uncased-vocab.txt")
	fmt.Printf("tree %s, shape %s, GOMAXPROCS %d, load %s\n", label, shape, runtime.GOMAXPROCS(0), loadavg())

	// Preparing a run: open the suite, tokenise the suite and SST-2.
	t := time.Now()
	suite, err := suites.Open(filepath.Join(dataDir, "checklist/sentiment_suite.tar.gz"))
	if err != nil {
		return err
	}
	splits.Ensure(suite, suites.SplitTest)
	openSecs := since(t)
	iidTrain, err := datasets.ReadSST2(filepath.Join(dataDir, "sst2/train.tsv"))
	if err != nil {
		return err
	}
	dev, err := datasets.ReadSST2(filepath.Join(dataDir, "sst2/dev.tsv"))
	if err != nil {
		return err
	}
	var suiteInputs []suites.Input
	testInputs := map[string]int{} // T_test inputs per functionality
	var testAll []suites.Input
	valInputs := 0 // what a trial's objective scores: MFT inputs, 2 per INV/DIR case
	for _, f := range suite.Functionalities {
		for _, c := range f.Cases {
			suiteInputs = append(suiteInputs, c.Inputs...)
			switch c.Split {
			case suites.SplitTest:
				testInputs[f.Name] += len(c.Inputs)
				testAll = append(testAll, c.Inputs...)
			case suites.SplitValidation:
				if !f.TrainType().Spec().Paired {
					valInputs += len(c.Inputs)
				} else if len(c.Inputs) > 1 {
					valInputs += 2
				}
			}
		}
	}
	fresh, err := tokenize.NewWordPieceFromVocab(vocab, maxLength)
	if err != nil {
		return err
	}
	tokSecs := map[string]float64{}
	t = time.Now()
	for _, in := range suiteInputs {
		fresh.Encode(in.Text, in.Pair, in.IsPair)
	}
	tokSecs["suite"] = since(t)
	for name, set := range map[string][]datasets.Example{"train": iidTrain, "dev": dev} {
		t = time.Now()
		for _, e := range set {
			fresh.Encode(e.Text, e.Pair, e.IsPair)
		}
		tokSecs[name] = since(t)
	}
	cachedTokSecs := tokenCacheSeconds(fresh, suiteInputs, iidTrain, dev)
	fmt.Printf("prepare: open suite %.1f s; tokenise suite (%d inputs) %.1f s, SST-2 train %.1f s, dev %.2f s; from the token cache %s\n",
		openSecs, len(suiteInputs), tokSecs["suite"], tokSecs["train"], tokSecs["dev"], secsOrNone(cachedTokSecs))

	// The grid's data.
	tk := &memo{tk: fresh, cache: map[[3]string]models.Encoding{}}
	iidRows, err := iidRows(iidTrain, tk)
	if err != nil {
		return err
	}
	type foldData struct {
		name   string
		fold   *splits.Fold
		scored int // T_test inputs scored
		data   *train.SuiteData
	}
	all := 0
	for _, n := range testInputs {
		all += n
	}
	folds := []foldData{{name: "seen", scored: all}}
	for _, kind := range []splits.FoldKind{splits.ByFunctionality, splits.ByClass, splits.ByType} {
		for _, f := range splits.Folds(suite, kind, splits.DefaultFoldOptions) {
			f := f
			n := 0
			for _, s := range f.Scored {
				n += testInputs[s]
			}
			folds = append(folds, foldData{name: string(kind) + ":" + f.Name, fold: &f, scored: n})
		}
	}
	for i := range folds {
		if folds[i].data, err = buildSuiteData(suite, folds[i].fold, tk); err != nil {
			return err
		}
	}
	fmt.Printf("data: SST-2 train %d rows; T_train %d MFT rows, %d INV, %d DIR cases; T_test %d inputs; T_val objective %d inputs; %d folds\n",
		len(iidRows), len(folds[0].data.MFT), len(folds[0].data.INV), len(folds[0].data.DIR), all, valInputs, len(folds)-1)
	dataOf := func(config string, s *train.SuiteData) train.Data {
		d := train.Data{Suite: s}
		if train.MustConfiguration(config).IID {
			d.IID = iidRows
		}
		return d
	}

	// The model, and what scoring costs.
	var cfg *checkpoint.Config
	switch shape {
	case "base":
		cfg = models.TinyConfig(fresh.VocabSize())
		cfg.NumHiddenLayers, cfg.HiddenSize, cfg.NumAttentionHeads, cfg.IntermediateSize = 12, 768, 12, 3072
	case "mini":
		cfg = models.TinyConfig(fresh.VocabSize())
		cfg.NumHiddenLayers, cfg.HiddenSize, cfg.NumAttentionHeads, cfg.IntermediateSize = 4, 256, 4, 1024
	case "tiny":
		cfg = models.TinyConfig(fresh.VocabSize())
	default:
		return fmt.Errorf("unknown shape %q (want base, mini or tiny)", shape)
	}
	m, _, err := models.NewBERT(cfg, 2, nil, 42)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(42, 15))
	sample := make([]predict.Input, min(evalN, len(testAll)))
	for i, j := range rng.Perm(len(testAll))[:len(sample)] {
		in := testAll[j]
		sample[i] = predict.NewInput(in.Text, in.Pair, in.IsPair)
	}
	t = time.Now()
	if _, err := predict.Run(m, fresh, sample, 64); err != nil {
		return err
	}
	perInput := since(t) / float64(len(sample))
	fmt.Printf("scoring: %.1f inputs/s (%d T_test inputs drawn at random, batch 64, tokenisation included)\n", 1/perInput, len(sample))

	// Updates: counted for every run, measured for each kind.
	type kind struct{ config, method string }
	perUpdate := map[kind][]float64{} // per phase
	// An update's cost is the time from one call of the method's update
	// to the next (the loop's optimiser step included), the first left out
	// (it allocates the optimiser's moments); the median of steps of them.
	measure := func(k kind, phases []train.Phase, d train.Data) error {
		for pi, ph := range phases {
			n := steps
			if k.method == "irm" || k.method == "fish" {
				n = 1 // an update takes a batch of every environment, or five
			}
			m.SetDropout(0.1, 0.1)
			tu := &timed{Updater: ph.Update}
			ph.Update = tu
			if _, err := train.Train(ctx, m, d, []train.Phase{ph}, train.TrainOptions{Seed: 42, MaxSteps: n + 1}); err != nil {
				return fmt.Errorf("%s %s phase %d: %w", k.config, k.method, pi, err)
			}
			tu.stamps = append(tu.stamps, time.Now())
			var iv []float64
			for i := 2; i < len(tu.stamps); i++ {
				iv = append(iv, tu.stamps[i].Sub(tu.stamps[i-1]).Seconds())
			}
			sort.Float64s(iv)
			perUpdate[k] = append(perUpdate[k], iv[len(iv)/2])
		}
		return nil
	}
	plan := func(phases []train.Phase, d train.Data) ([]int, error) {
		var out []int
		for i, ph := range phases {
			n, _, err := ph.Update.Plan(d, ph.Hyper, uint64(42+i))
			if err != nil {
				return nil, err
			}
			out = append(out, n)
		}
		return out, nil
	}
	phasesOf := func(config, method string, hp train.Hyper, lpCached bool) ([]train.Phase, error) {
		var mt train.Method
		var err error
		if lpCached {
			mt, err = lpCachedMethod(method)
		} else {
			mt, err = train.NewMethod(method, train.BeLUGA.Methods)
		}
		if err != nil {
			return nil, err
		}
		return mt.Phases(hp, train.BeLUGA.Classification.ProbeHyper), nil
	}
	hyperOf := func(config, method string) train.Hyper {
		plus := 0
		if train.MustConfiguration(config).IID {
			plus = 1
		}
		if method == "lp-ft" {
			return fallback["vanilla"][plus]
		}
		return fallback[method][plus]
	}

	// The IID baseline: 3 epochs, batch 16, softmax CE.
	iidHyper := train.Hyper{Epochs: 3, BatchSize: 16, LR: 2e-5, Loss: train.LossOptions{MFT: losses.SoftmaxCE}}
	iidPhases, _ := phasesOf(train.ConfigIID, "vanilla", iidHyper, false)
	iidPhases[0].Hyper = iidHyper
	iidData := train.Data{IID: iidRows}
	iidSteps, err := plan(iidPhases, iidData)
	if err != nil {
		return err
	}
	base := kind{train.ConfigIID, "vanilla"}
	if err := measure(base, iidPhases, iidData); err != nil {
		return err
	}
	if baselineOnly {
		fmt.Printf("IID baseline: %.3f s/update, load %s\n", perUpdate[base][0], loadavg())
		return nil
	}
	prep := func(config string) float64 {
		if cachedTokSecs >= 0 {
			return openSecs + cachedTokSecs
		}
		s := openSecs + tokSecs["suite"] + tokSecs["dev"]
		if train.MustConfiguration(config).IID {
			s += tokSecs["train"]
		}
		return s
	}
	type total struct{ train, score, prepare float64 }
	var tot, totCached total
	add := func(t *total, trainS, scoreS, prepS float64) {
		t.train += trainS
		t.score += scoreS
		t.prepare += prepS
	}
	b := float64(iidSteps[0])*perUpdate[base][0] + float64(all+len(dev)/2)*perInput + prep(train.ConfigIIDThenIT)
	add(&tot, float64(iidSteps[0])*perUpdate[base][0], float64(all+len(dev)/2)*perInput, prep(train.ConfigIIDThenIT))
	add(&totCached, float64(iidSteps[0])*perUpdate[base][0], float64(all+len(dev)/2)*perInput, prep(train.ConfigIIDThenIT))
	fmt.Printf("\n%-12s %-8s %9s %12s %14s %12s\n", "config", "method", "runs", "updates/run", "s/update", "h (all runs)")
	fmt.Printf("%-12s %-8s %9d %12d %14s %12.1f\n", "iid", "vanilla", 1, iidSteps[0], fmt.Sprintf("%.3f", perUpdate[base][0]), b/3600)
	runs := 1
	// The critical path on a cluster with a slot for every run: per kind,
	// the IID baseline (for the configurations that start from it), then
	// the search's longest trial (its trials are runs, side by side), then
	// its longest run; and, for comparison, with the search's 18 trials
	// one after another in one run (beluga before trials were runs).
	critical, criticalWhat := b, "the IID baseline alone"
	criticalSerial, criticalSerialWhat := b, criticalWhat
	lpFeatureInputs := map[string]bool{} // distinct inputs whose features lp-frozen-eval computes, per encoder
	for _, config := range configs {
		for _, method := range methods {
			k := kind{config, method}
			hp := hyperOf(config, method)
			phases, err := phasesOf(config, method, hp, false)
			if err != nil {
				return err
			}
			if err := measure(k, phases, dataOf(config, folds[0].data)); err != nil {
				return err
			}
			var cachedCost []float64
			if method == "lp" || method == "lp-ft" {
				cachedCost, err = measureCachedProbe(ctx, m, method, phasesOf, config, hp, dataOf(config, folds[0].data))
				if err != nil {
					return err
				}
			}
			var kindSecs, kindTrain, kindTrainCached, longestRun float64
			var kindUpdates int
			for _, f := range folds {
				d := dataOf(config, f.data)
				ns, err := plan(phases, d)
				if err != nil {
					return err
				}
				trainS, trainCachedS := 0.0, 0.0
				for i, n := range ns {
					trainS += float64(n) * perUpdate[k][i]
					kindUpdates += n
					if cachedCost != nil && phases[i].Frozen {
						trainCachedS += float64(n) * cachedCost[i]
					} else {
						trainCachedS += float64(n) * perUpdate[k][i]
					}
				}
				scoreS := float64(f.scored+len(dev)/2) * perInput
				add(&tot, trainS, scoreS, prep(config))
				add(&totCached, trainCachedS, scoreS, prep(config))
				kindTrain += trainS
				kindTrainCached += trainCachedS
				kindSecs += trainS + scoreS + prep(config)
				longestRun = max(longestRun, trainS+scoreS+prep(config))
				runs++
			}
			if cachedCost != nil {
				for _, e := range distinctInputs(dataOf(config, folds[0].data)) {
					// The IID+T probes the pretrained encoder, the other two
					// the IID baseline's.
					lpFeatureInputs[fmt.Sprint(config == train.ConfigIIDPlusT)+e] = true
				}
			}
			// The search: 18 trials on the seen data, each prepared,
			// trained and scored on T_val (LP-FT is not searched).
			var searchSecs, longestTrial float64
			if method != "lp-ft" {
				var trialSecs, trialCached float64
				d := dataOf(config, folds[0].data)
				for _, bs := range []int{8, 16} {
					for _, ep := range []float64{1, 2, 3} {
						h := hp
						h.BatchSize, h.Epochs = bs, ep
						ph, err := phasesOf(config, method, h, false)
						if err != nil {
							return err
						}
						ns, err := plan(ph, d)
						if err != nil {
							return err
						}
						// Cost per update measured at the run's batch size,
						// scaled by the trial's.
						scale := float64(bs) / float64(hp.BatchSize)
						s := float64(ns[0])*perUpdate[k][0]*scale + float64(valInputs)*perInput + prep(config)
						trialSecs += s
						longestTrial = max(longestTrial, s)
						if cachedCost != nil {
							trialCached += float64(ns[0])*cachedCost[0] + float64(valInputs)*perInput + prep(config)
						} else {
							trialCached += s
						}
					}
				}
				add(&tot, searchLRs*trialSecs, 0, 0)
				add(&totCached, searchLRs*trialCached, 0, 0)
				kindSecs += searchLRs * trialSecs
				runs += 1 + 6*searchLRs // the search and its 18 trials
				searchSecs = searchLRs * trialSecs
			}
			// Each trial is a run of its own, in a slot of its own: the
			// search (which only picks) waits for its longest trial. In
			// one search run, as before, the 18 trials ran in turn.
			chain, what := longestTrial+longestRun, fmt.Sprintf("%s %s: its search's longest trial %.1f h, then its longest run %.1f h", config, method, longestTrial/3600, longestRun/3600)
			serial, serialWhat := searchSecs+longestRun, fmt.Sprintf("%s %s: search of 18 trials in turn %.1f h, then its longest run %.1f h", config, method, searchSecs/3600, longestRun/3600)
			if train.MustConfiguration(config).FromIID {
				chain, what = chain+b, "the IID baseline, then "+what
				serial, serialWhat = serial+b, "the IID baseline, then "+serialWhat
			}
			if chain > critical {
				critical, criticalWhat = chain, what
			}
			if serial > criticalSerial {
				criticalSerial, criticalSerialWhat = serial, serialWhat
			}
			extra := ""
			if cachedCost != nil {
				extra = fmt.Sprintf("  (training %.1f h; lp-frozen-eval %s s/update, training %.2f h)", kindTrain/3600, fmtCosts(cachedCost), kindTrainCached/3600)
			}
			fmt.Printf("%-12s %-8s %9d %12d %14s %12.1f%s\n", config, method, len(folds), kindUpdates/len(folds), fmtCosts(perUpdate[k]), kindSecs/3600, extra)
		}
	}
	fmt.Printf("\nfull SENT grid, %s tree: %d runs (each search's 18 trials runs of their own)\n", label, runs)
	report := func(name string, t total) {
		fmt.Printf("%s: training %.0f h + scoring %.0f h + preparing %.1f h = %.0f h (%.1f days)\n",
			name, t.train/3600, t.score/3600, t.prepare/3600, (t.train+t.score+t.prepare)/3600, (t.train+t.score+t.prepare)/86400)
	}
	report("projected, faithful", tot)
	fmt.Printf("critical path: %.1f h (%s)\n", critical/3600, criticalWhat)
	fmt.Printf("critical path, trials in turn in one search run: %.1f h (%s)\n", criticalSerial/3600, criticalSerialWhat)
	if len(lpFeatureInputs) > 0 {
		feat := float64(len(lpFeatureInputs)) * perInput
		totCached.train += feat
		report(fmt.Sprintf("projected, lp-frozen-eval (features of %d inputs computed once per encoder, %.1f h)", len(lpFeatureInputs), feat/3600), totCached)
	}
	fmt.Printf("load after: %s\n", loadavg())
	return nil
}

// timed records when each update starts.
type timed struct {
	train.Updater
	stamps []time.Time
}

func (t *timed) Update(st *train.UpdateState) (train.Step, error) {
	t.stamps = append(t.stamps, time.Now())
	return t.Updater.Update(st)
}

// distinctInputs lists the distinct inputs of a phase's data (keys).
func distinctInputs(d train.Data) []string {
	seen := map[string]bool{}
	add := func(e models.Encoding) { seen[fmt.Sprint(e.IDs, e.TypeIDs)] = true }
	for _, r := range d.IID {
		add(r.Enc)
	}
	if s := d.Suite; s != nil {
		for _, r := range s.MFT {
			add(r.Enc)
		}
		for _, ps := range [][]train.Perturbed{s.INV, s.DIR, s.LabelDIR} {
			for _, p := range ps {
				add(p.Orig)
				for _, q := range p.Perts {
					add(q)
				}
			}
		}
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func fmtCosts(cs []float64) string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = fmt.Sprintf("%.3f", c)
		switch {
		case c == 0:
			out[i] = "-" // not measured: the faithful cost applies
		case c < 0.01:
			out[i] = fmt.Sprintf("%.5f", c)
		}
	}
	return strings.Join(out, "+")
}

func secsOrNone(s float64) string {
	if s < 0 {
		return "(no token cache in this tree)"
	}
	return fmt.Sprintf("%.2f s", s)
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:3], " ")
}
