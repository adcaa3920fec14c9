package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/internal/atomicfile"
	"github.com/beluga-nlp/beluga/models/pretrained"
	"github.com/beluga-nlp/beluga/report"
	"github.com/beluga-nlp/beluga/specs"
)

// quickstartSpecs are the quickstart's experiments by --task: the spec
// file and its default output directory.
var quickstartSpecs = map[string]struct{ file, out string }{
	"SENT": {"quickstart.yaml", "quickstart-out"},
	"READ": {"quickstart-read.yaml", "quickstart-read-out"},
}

// NewCmdQuickstart builds beluga quickstart.
func NewCmdQuickstart() *cobra.Command {
	o := &quickstartOptions{}
	cmd := &cobra.Command{
		Use:   "quickstart",
		Short: "Run an end-to-end SENT (or READ) experiment and write its table and heatmap",
		Long: `quickstart runs specs/quickstart.yaml: it fetches SST-2, the CheckList sentiment
suite and the BERT vocabulary into the data cache ($BELUGA_DATA, default the user cache
directory; --from DIR takes them from a local copy instead), trains the IID baseline and
IID→(IID+T) with a BERT-tiny-shaped encoder from scratch, with the class and type
folds held out, and writes Table 3 (Markdown) and the Figure 1 heatmap (PNG). Finished
runs are kept in the store: running it again only does what is missing.

--task READ runs specs/quickstart-read.yaml instead: reading comprehension with a span
model on SQuAD dev and the CheckList SQuAD suite, the type folds held out. It trains on
part of SQuAD dev's validation half (SQuAD train is not used) and scores exact match on
dev's other, i.i.d. test half.`,
		Example: `  go run ./cmd/beluga quickstart
  go run ./cmd/beluga quickstart --from ../shared/data
  go run ./cmd/beluga quickstart --task READ --from ../shared/data
  go run ./cmd/beluga quickstart --checkpoint ./bert_uncased_L-2_H-128_A-2`,
		Args: cobra.NoArgs,
		RunE: runE(o),
	}
	cmd.Flags().StringVar(&o.from, "from", "", "take data files from this local directory (laid out like ../shared/data) instead of the network")
	cmd.Flags().StringVarP(&o.out, "out", "o", "quickstart-out", "run store and outputs (READ: quickstart-read-out)")
	cmd.Flags().StringVar(&o.task, "task", "SENT", "the experiment: SENT (SST-2 + CheckList sentiment) or READ (SQuAD dev + CheckList SQuAD)")
	cmd.Flags().StringVar(&o.checkpoint, "checkpoint", "", "start from this pretrained HuggingFace BERT (a directory, .tar.gz or hub id org/name) instead of a from-scratch BERT-tiny")
	cmd.Flags().StringVar(&o.precision, "precision", "", "arithmetic of the model's matrix products: fp32 (the default) or bf16 (model.precision: other runs, in the same store)")
	cmd.Flags().IntVarP(&o.jobs, "jobs", "j", 1, "runs executed at once")
	return cmd
}

// quickstartOptions are beluga quickstart's flags.
type quickstartOptions struct {
	commandOptions
	from, out, checkpoint, task, precision string
	jobs                                   int
	outSet                                 bool // -o given: the store of either task
}

func (o *quickstartOptions) complete(cmd *cobra.Command, _ []string) error {
	o.outSet = cmd.Flags().Changed("out")
	o.task = strings.ToUpper(o.task)
	return nil
}

func (o *quickstartOptions) validate() error {
	if o.jobs < 1 {
		return fmt.Errorf("--jobs %d: want at least 1", o.jobs)
	}
	if _, ok := quickstartSpecs[o.task]; !ok {
		return fmt.Errorf("--task %q: want SENT or READ", o.task)
	}
	return checkKernels()
}

// run executes the quickstart's sweep as beluga run executes a spec's
// (executeSweep), then writes its table and heatmap into the store.
func (o *quickstartOptions) run(ctx context.Context) error {
	spec, err := o.spec()
	if err != nil {
		return err
	}
	in, err := newInputs(o.from, false)
	if err != nil {
		return err
	}
	// The runs are those of specs/quickstart.yaml: beluga status/report
	// on the spec with --store quickstart-out see them. The folds come
	// from the suite, fetched through the cache.
	sw, err := experiments.SweepOf(ctx, spec, in)
	if err != nil {
		return err
	}
	record := "beluga quickstart --task " + o.task
	if _, err := executeSweep(ctx, o.ErrOut, sw, experiments.SweepOptions{Options: experiments.Options{Jobs: o.jobs}, Record: record}); err != nil {
		return err
	}
	tab, err := report.FromStore(sw.Store, sw.Runs, report.Options{Inputs: in})
	if err != nil {
		return err
	}
	tablePath, figPath := filepath.Join(spec.Out, "table.md"), filepath.Join(spec.Out, "heatmap.png")
	if err := atomicfile.Write(tablePath, tab.WriteMarkdown); err != nil {
		return err
	}
	if err := tab.WriteHeatmapFile(figPath, report.HeatmapOptions{}); err != nil {
		return err
	}
	if o.task == "READ" {
		fmt.Fprintf(o.Out, "READ trained on the first %d questions of SQuAD dev's validation half (SQuAD train is not used) and scores exact match on dev's other, i.i.d. test half: a demonstration, not BeLUGA's READ\n", spec.Budget.MaxIID)
	}
	fmt.Fprintln(o.Out, tablePath)
	fmt.Fprintln(o.Out, figPath)
	return nil
}

// spec is the --task's embedded spec with the flags' changes: its store,
// its checkpoint, its precision.
func (o *quickstartOptions) spec() (*experiments.Spec, error) {
	qs := quickstartSpecs[o.task]
	raw, err := specs.FS.ReadFile(qs.file)
	if err != nil {
		return nil, err
	}
	spec, err := experiments.ParseSpec(raw)
	if err != nil {
		return nil, err
	}
	spec.Out = qs.out
	if o.outSet {
		spec.Out = o.out
	}
	if o.checkpoint != "" {
		checkpoint := o.checkpoint
		// A path on the command line is the working directory's.
		if _, err := os.Stat(checkpoint); err == nil {
			if checkpoint, err = filepath.Abs(checkpoint); err != nil {
				return nil, err
			}
		}
		spec.Model.Name, spec.Model.Checkpoint = pretrained.CheckpointKind, checkpoint
	}
	if o.precision != "" {
		if spec.Model.Options == nil {
			spec.Model.Options = map[string]any{}
		}
		spec.Model.Options["precision"] = o.precision
	}
	return spec, nil
}
