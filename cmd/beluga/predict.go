package main

import (
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/hub"
	"github.com/beluga-nlp/beluga/models/predict"
	"github.com/beluga-nlp/beluga/models/pretrained"
)

// NewCmdPredict builds beluga predict.
func NewCmdPredict() *cobra.Command {
	var modelPath, input, output string
	var batchSize, maxLength int
	var allowMissing bool
	cmd := &cobra.Command{
		Use:   "predict",
		Short: "Predict JSON-lines inputs with a model: a directory, a .tar.gz, or a HuggingFace hub id",
		Long: `predict reads one {"text": …} or {"text": …, "text_pair": …} object a line (or a CSV or
TSV with text and text_pair columns, by the dialect rule of beluga run's data files) and writes,
in the same order, {"input_ids": […], "logits": […], "probs": […]}. Inputs are batched by
length.

--model is a model directory (config.json, model.safetensors or pytorch_model.bin, and
tokenizer.json or vocab.txt), a .tar.gz of one, or a HuggingFace hub id org/name[@revision],
looked up as transformers does: a local directory of that name, then the hub cache
($HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub), then a download into that
cache. HF_HUB_OFFLINE=1 forbids the download; HF_TOKEN is sent for gated models.`,
		Example: `  beluga predict --model runs/abc123/model --input texts.jsonl -o preds.jsonl
  beluga predict --model google/bert_uncased_L-2_H-128_A-2 --input texts.jsonl -o preds.jsonl
  HF_HUB_OFFLINE=1 beluga predict --model textattack/bert-base-uncased-SST-2@main --input texts.jsonl -o out.jsonl
  beluga predict --model bert-fixture-a.tar.gz --input pairs.jsonl -o out.jsonl --max-length 64`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			r := hub.FromEnv()
			r.Progress = cmd.ErrOrStderr()
			m, err := pretrained.Load(cmd.Context(), modelPath, pretrained.Options{
				MaxLength: maxLength, AllowMissing: allowMissing, Resolver: r})
			if err != nil {
				return err
			}
			logLoadReport(m.Report)
			inputs, err := predict.ReadInputs(input)
			if err != nil {
				return err
			}
			outs, err := predict.RunContext(cmd.Context(), m.Classifier, m.Tokenizer, inputs, batchSize)
			if err != nil {
				return err
			}
			if err := predict.WriteOutputs(output, outs); err != nil {
				return err
			}
			slog.Info("predicted", "inputs", len(outs), "output", output)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&modelPath, "model", "", "model directory, .tar.gz, or hub id org/name[@revision]")
	fl.StringVar(&input, "input", "", "JSON-lines inputs (or .csv, .tsv; - for standard input)")
	fl.StringVarP(&output, "out", "o", "", "JSON-lines predictions to write")
	fl.SetNormalizeFunc(renamedFlags(map[string]string{"output": "out"}))
	fl.IntVar(&batchSize, "batch-size", 64, "inputs per batch")
	fl.IntVar(&maxLength, "max-length", 128, "truncate encodings to this many tokens")
	fl.BoolVar(&allowMissing, "allow-missing", false, "initialise embedding and encoder tensors the checkpoint lacks instead of failing")
	for _, f := range []string{"model", "input", "out"} {
		cmd.MarkFlagRequired(f)
	}
	return cmd
}

// logLoadReport says which checkpoint tensors were ignored and which
// parameters were initialised, as HuggingFace does on loading, and which
// buffers were checked.
func logLoadReport(rep models.LoadReport) {
	if len(rep.Ignored) > 0 {
		slog.Warn("checkpoint tensors not used by the model (ignored)", "keys", rep.Ignored)
	}
	if len(rep.Initialised) > 0 {
		slog.Warn("model parameters not in the checkpoint (newly initialised)", "keys", rep.Initialised)
	}
	if len(rep.Checked) > 0 {
		slog.Info("checkpoint buffers beluga computes itself (checked equal)", "keys", rep.Checked)
	}
}
