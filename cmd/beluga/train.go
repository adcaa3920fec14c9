package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/internal/yamlpath"
	"github.com/beluga-nlp/beluga/models/pretrained"
	"github.com/beluga-nlp/beluga/splits"
	"github.com/beluga-nlp/beluga/train"
)

// trainOptions are beluga train's flags and streams, and the run spec an
// execution completes them into.
type trainOptions struct {
	commandOptions
	specFile, out, heldOut, hyperFrom string
	search                            bool
	gridLR, gridEpochs                []float64
	gridBatch                         []int

	spec train.RunSpec
}

// NewCmdTrain builds beluga train.
func NewCmdTrain() *cobra.Command {
	o := &trainOptions{}
	cmd := &cobra.Command{
		Use:   "train",
		Short: "Train and evaluate one run (configuration × method × fold) from flags or a YAML spec",
		Long: `train runs one BeLUGA training run: it starts from the model (or, for iid-t and
iid-(iid+t), from the IID run's model), trains with the method on the configuration's data
(T_train of the suite without the held-out fold, and/or the i.i.d. training set), then
writes into --out the model, T_test and i.i.d. test predictions, CheckList results per
functionality and per case, the training curve, timing, metrics.json and, last, done.
Tasks: sentiment, qqp and squad (READ) are built in; declare any other in the spec (task_def, with
iid_train_file / iid_dev_file, or iid_train_file with split: {dev: …, test: …}; docs/tasks.md).
Configuration t trains on the suite alone. Before training, the input checks run (texts shared
across parts, tokenizer coverage) and are written to input_checks.json in --out.
A flag given on the command line overrides the YAML spec; a field the spec leaves out keeps
the flag's default. docs/train-spec.md documents the YAML with an example; suite_limit,
eval_limit and hyper.loss are spec-only.`,
		Example: `  beluga train --suite sentiment.jsonl.gz --iid-train sst2/train.tsv --iid-dev sst2/dev.tsv \
      --model-kind wordvec --glove glove.6B.100d.top50k.txt.gz --configuration iid --out runs/iid
  beluga train --spec run.yaml --configuration "iid-(iid+t)" --from-iid runs/iid/model --method l2 --out runs/l2
  beluga train --spec run.yaml --method l2 --search --out runs/l2
  beluga train --spec run.yaml --method l2 --held-out class:Negation --hyper-from runs/l2 --out runs/l2-negation`,
		Args: cobra.NoArgs,
		RunE: runE(o),
	}
	fl := cmd.Flags()
	fl.StringVar(&o.specFile, "spec", "", "YAML run spec (fields as train.RunSpec)")
	fl.StringVarP(&o.out, "out", "o", "", "run directory to write")
	// The spec's flags hold their values here; each execution's complete
	// builds its spec afresh from the ones given (runSpec), so nothing
	// carries over between executions.
	var flagged train.RunSpec
	bindTrainFlags(fl, &flagged)
	fl.StringVar(&o.heldOut, "held-out", "", "held-out fold KIND:NAME, e.g. class:Negation, type:DIR, func:reducers")
	fl.BoolVar(&o.search, "search", false, "choose the suite phase's lr, batch size and epochs on T_val first (BeLUGA's grid and objective)")
	fl.Float64SliceVar(&o.gridLR, "grid-lr", nil, "learning rates to search (default BeLUGA's)")
	fl.IntSliceVar(&o.gridBatch, "grid-batch-size", nil, "batch sizes to search (default BeLUGA's for the task)")
	fl.Float64SliceVar(&o.gridEpochs, "grid-epochs", nil, "epochs to search (default BeLUGA's)")
	fl.StringVar(&o.hyperFrom, "hyper-from", "", "reuse the suite-phase hyper-parameters this done run directory trained with (its search's choice when it searched; held-out runs reuse the full run's)")
	enumFlag(cmd, "method", train.MethodNames()...)
	enumFlag(cmd, "configuration", train.ConfigurationNames()...)
	enumFlag(cmd, "model-kind", pretrained.SourceKinds()...)
	enumFlag(cmd, "correct", slices.Sorted(maps.Keys(train.Corrections))...)
	cmd.MarkFlagRequired("out")
	return cmd
}

// complete builds the run spec: the flags' defaults, the YAML file, the
// flags given, the held-out fold, the reused hyper-parameters, then what
// the profile supplies for the task and configuration.
func (o *trainOptions) complete(cmd *cobra.Command, _ []string) error {
	spec, err := runSpec(cmd.Flags(), o.specFile)
	if err != nil {
		return err
	}
	if o.heldOut != "" {
		kind, name, ok := cutFold(o.heldOut)
		if !ok {
			return fmt.Errorf("--held-out %q: want KIND:NAME with KIND func, class or type", o.heldOut)
		}
		spec.HeldOut = &train.FoldSpec{Kind: kind, Name: name}
	}
	if o.hyperFrom != "" {
		if spec.Hyper, err = experiments.TrainedHyper(o.hyperFrom); err != nil {
			return fmt.Errorf("--hyper-from: %w", err)
		}
	}
	// What neither the flags nor the file set is the profile's for
	// the task and configuration, as in beluga run.
	if err := spec.FillDefaults(); err != nil {
		return err
	}
	o.spec = spec
	return nil
}

// validate refuses bad flags before the run directory is touched.
func (o *trainOptions) validate() error { return o.spec.Validate() }

// run trains (after the search, with --search) into --out and prints the
// scores.
func (o *trainOptions) run(ctx context.Context) error {
	grid, err := o.grid()
	if err != nil {
		return err
	}
	spec := o.spec
	var res *train.Result
	err = experiments.RunOne(ctx, o.out, spec, func(ctx context.Context, dir string) error {
		if o.search {
			best, trials, err := experiments.Search(ctx, spec, grid, dir)
			if err != nil {
				return err
			}
			spec.Hyper = best
			fmt.Fprintf(o.Out, "chose lr %g, batch size %d, epochs %g from %d trials on T_val\n", best.LR, best.BatchSize, best.Epochs, len(trials))
		}
		var err error
		res, err = train.Run(ctx, spec, dir)
		return err
	})
	if errors.Is(err, experiments.ErrAlreadyDone) {
		fmt.Fprintf(o.Out, "%s is already done (remove it to train again)\n", o.out)
		return nil
	}
	if err != nil {
		return err
	}
	o.printResult(res)
	return nil
}

// grid is the search grid: BeLUGA's for the method, with each --grid-*
// flag given in place of its axis.
func (o *trainOptions) grid() (train.Grid, error) {
	defaults, err := o.spec.Defaults()
	if err != nil {
		return train.Grid{}, err
	}
	grid := defaults.Grid(o.spec.Method)
	if len(o.gridLR) > 0 {
		grid.LR = o.gridLR
	}
	if len(o.gridBatch) > 0 {
		grid.BatchSize = o.gridBatch
	}
	if len(o.gridEpochs) > 0 {
		grid.Epochs = o.gridEpochs
	}
	return grid, nil
}

// printResult prints a run's i.i.d. metrics, T_test pass rate and
// evaluation sets.
func (o *trainOptions) printResult(res *train.Result) {
	iid, score := "none", "none"
	if res.IIDScore != nil {
		iid = metricsLine(res.IIDMetrics)
	}
	if res.SuiteScore != nil {
		score = fmt.Sprintf("%.1f%%", 100**res.SuiteScore)
		if res.G != nil {
			score += fmt.Sprintf(", G %.1f", 100**res.G)
		}
	}
	fmt.Fprintf(o.Out, "%s: i.i.d. %s, T_test pass rate %s (%d steps, %.0f s)\n",
		o.out, iid, score, res.Steps, res.Seconds)
	for _, set := range slices.Sorted(maps.Keys(res.IIDEval)) {
		fmt.Fprintf(o.Out, "%s: evaluation set %s: %s\n", o.out, set, metricsLine(res.IIDEval[set]))
	}
}

// metricsLine prints i.i.d. metrics, accuracy first, in percent.
func metricsLine(m map[string]float64) string {
	s := fmt.Sprintf("accuracy %.1f%%", 100*m["accuracy"])
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if k != "accuracy" {
			s += fmt.Sprintf(", %s %.1f%%", k, 100*m[k])
		}
	}
	return s
}

// runSpec is the run spec of one execution: the flags' defaults, then
// the YAML file's fields (when there is one), then the flags given on the
// command line.
func runSpec(flags *pflag.FlagSet, specFile string) (train.RunSpec, error) {
	var spec train.RunSpec
	fs := pflag.NewFlagSet("spec", pflag.ContinueOnError)
	bindTrainFlags(fs, &spec)
	if specFile != "" {
		b, err := os.ReadFile(specFile)
		if err != nil {
			return spec, err
		}
		if err := yamlpath.Decode(b, &spec); err != nil {
			return spec, fmt.Errorf("spec %s: %w", specFile, err)
		}
	}
	var err error
	// Changed, not Visit: Visit walks every flag ever set on the command,
	// which in one process (tests) outlives an execution.
	flags.VisitAll(func(f *pflag.Flag) {
		if g := fs.Lookup(f.Name); f.Changed && g != nil && err == nil {
			err = copyFlag(g, f)
		}
	})
	return spec, err
}

// bindTrainFlags defines the flags that set fields of spec. A setting the
// profile supplies (train.BeLUGA) defaults to zero here: FillDefaults gives
// it the task's and configuration's value.
func bindTrainFlags(fl *pflag.FlagSet, spec *train.RunSpec) {
	fl.StringVar(&spec.Task, "task", "sentiment", "a built-in task (sentiment, qqp; squad: READ, a span model) or the name of the spec's task_def")
	fl.StringVar(&spec.Suite, "suite", "", "suite (any format beluga reads)")
	fl.StringVar(&spec.IIDTrain, "iid-train", "", "i.i.d. training set (SST-2 train.tsv)")
	fl.StringVar(&spec.IIDDev, "iid-dev", "", "i.i.d. dev set, halved into validation and test (SST-2 dev.tsv)")
	fl.IntVar(&spec.IIDLimit, "iid-limit", 0, "use only the first N i.i.d. training examples (0: all)")
	fl.StringVar(&spec.Model.Kind, "model-kind", "bert-tiny", "the model a run starts from: "+pretrained.SourceHelp())
	fl.StringVar(&spec.Model.Path, "model", "", "model for --model-kind "+pretrained.CheckpointKind+": a directory, .tar.gz or HuggingFace hub id (org/name[@revision])")
	fl.StringVar(&spec.Model.Vocab, "vocab", "", "WordPiece vocab.txt for bert-tiny")
	fl.StringVar(&spec.Model.Tokenizer, "tokenizer", "", "any tokenizer for bert-tiny instead of --vocab: a tokenizer.json (beluga tokenizer train), vocab.txt, SentencePiece .model or model directory")
	fl.StringVar(&spec.Model.GloVe, "glove", "", "GloVe vectors for wordvec")
	fl.IntVar(&spec.Model.Hidden, "hidden", 128, "pooler width of wordvec")
	fl.StringVar(&spec.Configuration, "configuration", train.ConfigIID, strings.Join(train.ConfigurationNames(), ", ")+" (t: the suite alone; Table 3's spellings such as IID-IID+T too)")
	fl.StringVar(&spec.Method, "method", "vanilla", strings.Join(train.MethodNames(), ", "))
	fl.IntVar(&spec.ProbeHyper.BatchSize, "probe-batch-size", 0, "lp-ft: batch size of the linear-probing phase "+profileDefault(func(d train.RunDefaults) any { return d.ProbeHyper.BatchSize }))
	fl.Float64Var(&spec.ProbeHyper.LR, "probe-lr", 0, "lp-ft: learning rate of the linear-probing phase "+profileDefault(func(d train.RunDefaults) any { return d.ProbeHyper.LR }))
	fl.StringSliceVar(&spec.Corrections, "correct", nil, "correct these BeLUGA behaviours: "+strings.Join(slices.Sorted(maps.Keys(train.Corrections)), ", "))
	fl.IntVar(&spec.MaxSteps, "max-steps", 0, "cap each training phase at this many updates (0: none)")
	fl.StringVar((*string)(&spec.Model.Precision), "precision", "", "arithmetic of the model's matrix products: fp32 (the default) or bf16 (operands rounded to bfloat16, fp32 sums; fast on CPUs with AVX512_BF16): another run")
	fl.BoolVar(&spec.Model.AllowMissing, "allow-missing", false, "initialise encoder tensors the checkpoint lacks instead of refusing it")
	fl.StringVar(&spec.FromIID, "from-iid", "", "the IID run's model directory (iid-t, iid-(iid+t))")
	fl.Float64Var(&spec.Hyper.Epochs, "epochs", 0, "epochs of the suite phase "+profileDefault(func(d train.RunDefaults) any { return d.Hyper.Epochs }))
	fl.IntVar(&spec.Hyper.BatchSize, "batch-size", 0, "batch size of the suite phase "+profileDefault(func(d train.RunDefaults) any { return d.Hyper.BatchSize }))
	fl.Float64Var(&spec.Hyper.LR, "lr", 0, "learning rate of the suite phase "+profileDefault(func(d train.RunDefaults) any { return d.Hyper.LR }))
	fl.Float64Var(&spec.IIDHyper.Epochs, "iid-epochs", 0, "epochs of the IID configuration "+profileDefault(func(d train.RunDefaults) any { return d.IIDHyper.Epochs }))
	fl.IntVar(&spec.IIDHyper.BatchSize, "iid-batch-size", 0, "batch size of the IID configuration "+profileDefault(func(d train.RunDefaults) any { return d.IIDHyper.BatchSize }))
	fl.Float64Var(&spec.IIDHyper.LR, "iid-lr", 0, "learning rate of the IID configuration "+profileDefault(func(d train.RunDefaults) any { return d.IIDHyper.LR }))
	fl.IntVar(&spec.MaxLength, "max-length", 0, "truncate encodings to this many tokens "+profileDefault(func(d train.RunDefaults) any { return d.MaxLength }))
	fl.Uint64Var(&spec.Seed, "seed", 42, "seed of initialisation, batching and dropout")
}

// profileDefault says what a profile-supplied flag defaults to, per task
// kind where the kinds differ.
func profileDefault(field func(train.RunDefaults) any) string {
	p, _ := train.LookupProfile(train.DefaultProfile)
	c, s := field(p.Classification), field(p.Span)
	if c == s {
		return fmt.Sprintf("(default BeLUGA's, %v)", c)
	}
	return fmt.Sprintf("(default BeLUGA's: %v; squad %v)", c, s)
}

// copyFlag gives dst the value src was set to on the command line.
func copyFlag(dst, src *pflag.Flag) error {
	if sv, ok := src.Value.(pflag.SliceValue); ok {
		return dst.Value.(pflag.SliceValue).Replace(sv.GetSlice())
	}
	if err := dst.Value.Set(src.Value.String()); err != nil {
		return fmt.Errorf("--%s: %w", src.Name, err)
	}
	return nil
}

func cutFold(s string) (splits.FoldKind, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == ':' {
			k := splits.FoldKind(s[:i])
			if k == splits.ByFunctionality || k == splits.ByClass || k == splits.ByType {
				return k, s[i+1:], s[i+1:] != ""
			}
		}
	}
	return "", "", false
}
