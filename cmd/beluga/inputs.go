package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/beluga-nlp/beluga/internal/atomicfile"
	"github.com/beluga-nlp/beluga/splits"
	"github.com/beluga-nlp/beluga/suites"
	"github.com/beluga-nlp/beluga/suitescore"
)

// suiteInputsOptions are beluga suite inputs' flags and streams.
type suiteInputsOptions struct {
	commandOptions
	split, out string

	sp suites.Split
}

// NewCmdSuiteInputs builds beluga suite inputs.
func NewCmdSuiteInputs() *cobra.Command {
	o := &suiteInputsOptions{}
	cmd := &cobra.Command{
		Use:   "inputs SUITE",
		Short: "Write a suite's inputs in scoring order, as beluga predict reads them",
		Long: `inputs writes one {"text": …[, "text_pair": …]} object a line for every input of the
suite's cases (or of --split's), in the order beluga eval scores them: run any model on them
(beluga predict, or your own code) and score the result with beluga eval.`,
		Example: `  beluga suite inputs sentiment.jsonl.gz --split test -o inputs.jsonl
  beluga predict --model runs/abc123/train/model --input inputs.jsonl -o preds.jsonl
  beluga eval --suite sentiment.jsonl.gz --split test --predictions preds.jsonl --predictions-format predict_jsonl -o results.json`,
		Args: cobra.ExactArgs(1),
		RunE: runE(o),
	}
	cmd.Flags().StringVar(&o.split, "split", "", "only the cases of this split (train, validation, test)")
	cmd.Flags().StringVarP(&o.out, "out", "o", "", "JSON-lines file to write")
	cmd.MarkFlagRequired("out")
	return cmd
}

func (o *suiteInputsOptions) validate() (err error) {
	o.sp, err = parseSplit(o.split)
	return err
}

// run writes the inputs of the scored cases in suite order
// (suitescore.Inputs, the inputs beluga test and a run predict).
func (o *suiteInputsOptions) run(context.Context) error {
	s, err := suites.Open(o.args[0])
	if err != nil {
		return err
	}
	if splits.Ensure(s, o.sp) {
		slog.Info("suite carries no split; assigning BeLUGA's", "seed", splits.BeLUGASeed)
	}
	return atomicfile.Write(o.out, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		for _, in := range suitescore.Inputs(s, o.sp) {
			if err := enc.Encode(in); err != nil {
				return err
			}
		}
		return nil
	})
}
