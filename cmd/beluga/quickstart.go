package main

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

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
	var from, out, checkpoint, task, precision string
	var jobs int
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
		RunE: func(cmd *cobra.Command, args []string) error {
			if jobs < 1 {
				return fmt.Errorf("--jobs %d: want at least 1", jobs)
			}
			if err := checkKernels(); err != nil {
				return err
			}
			qs, ok := quickstartSpecs[strings.ToUpper(task)]
			if !ok {
				return fmt.Errorf("--task %q: want SENT or READ", task)
			}
			raw, err := specs.FS.ReadFile(qs.file)
			if err != nil {
				return err
			}
			spec, err := experiments.ParseSpec(raw)
			if err != nil {
				return err
			}
			spec.Out = out
			if !cmd.Flags().Changed("out") {
				spec.Out = qs.out
			}
			if checkpoint != "" {
				// A path on the command line is the working directory's.
				if _, err := os.Stat(checkpoint); err == nil {
					if checkpoint, err = filepath.Abs(checkpoint); err != nil {
						return err
					}
				}
				spec.Model.Name, spec.Model.Checkpoint = pretrained.CheckpointKind, checkpoint
			}
			if precision != "" {
				if spec.Model.Options == nil {
					spec.Model.Options = map[string]any{}
				}
				spec.Model.Options["precision"] = precision
			}
			in, err := newInputs(from, false)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			// The runs are those of specs/quickstart.yaml: beluga
			// status/report on the spec with --store quickstart-out see
			// them. The folds come from the suite, fetched through the
			// cache.
			runs, err := experiments.Expand(ctx, spec, in)
			if err != nil {
				return err
			}
			if err := in.Digests.Save(); err != nil {
				return err
			}
			store := &experiments.Store{Dir: spec.OutDir()}
			if store.Legacy() {
				return fmt.Errorf("run store %s: %w", store.Dir, experiments.ErrLegacy)
			}
			if err := store.RecordSweep(runs, "beluga quickstart --task "+strings.ToUpper(task)); err != nil {
				return err
			}
			runner := &experiments.TrainRunner{Cache: in.Data, Store: store, Inputs: in}
			if _, err := executeSweep(ctx, cmd.ErrOrStderr(), store, runs, runner, experiments.Options{Jobs: jobs, Sweep: runs}); err != nil {
				return err
			}
			tab, err := report.FromStore(store, runs, report.Options{Inputs: in})
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
			if strings.EqualFold(task, "READ") {
				fmt.Fprintf(cmd.OutOrStdout(), "READ trained on the first %d questions of SQuAD dev's validation half (SQuAD train is not used) and scores exact match on dev's other, i.i.d. test half: a demonstration, not BeLUGA's READ\n", spec.Budget.MaxIID)
			}
			fmt.Fprintln(cmd.OutOrStdout(), tablePath)
			fmt.Fprintln(cmd.OutOrStdout(), figPath)
			return nil
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "take data files from this local directory (laid out like ../shared/data) instead of the network")
	cmd.Flags().StringVarP(&out, "out", "o", "quickstart-out", "run store and outputs (READ: quickstart-read-out)")
	cmd.Flags().StringVar(&task, "task", "SENT", "the experiment: SENT (SST-2 + CheckList sentiment) or READ (SQuAD dev + CheckList SQuAD)")
	cmd.Flags().StringVar(&checkpoint, "checkpoint", "", "start from this pretrained HuggingFace BERT (a directory, .tar.gz or hub id org/name) instead of a from-scratch BERT-tiny")
	cmd.Flags().StringVar(&precision, "precision", "", "arithmetic of the model's matrix products: fp32 (the default) or bf16 (model.precision: other runs, in the same store)")
	cmd.Flags().IntVarP(&jobs, "jobs", "j", 1, "runs executed at once")
	return cmd
}
