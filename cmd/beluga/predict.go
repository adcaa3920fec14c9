package main

import (
	"context"
	"io"
	"log/slog"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/hub"
	"github.com/beluga-nlp/beluga/models/predict"
	"github.com/beluga-nlp/beluga/models/pretrained"
)

// modelFlags are the flags of the model a command predicts with, shared by
// beluga predict and beluga test.
type modelFlags struct {
	path                 string
	batchSize, maxLength int
}

func (f *modelFlags) bind(fl *pflag.FlagSet) {
	fl.StringVar(&f.path, "model", "", "model directory, .tar.gz, or hub id org/name[@revision]")
	fl.IntVar(&f.batchSize, "batch-size", 64, "inputs per batch")
	fl.IntVar(&f.maxLength, "max-length", 128, "truncate encodings to this many tokens")
}

// hubResolver looks hub ids up as transformers does ($HF_HUB_CACHE,
// HF_HUB_OFFLINE, HF_TOKEN), printing a download's progress to progress.
func hubResolver(progress io.Writer) *hub.Resolver {
	r := hub.FromEnv()
	r.Progress = progress
	return r
}

// predictOptions are beluga predict's flags and streams.
type predictOptions struct {
	commandOptions
	model        modelFlags
	input, out   string
	allowMissing bool
}

// NewCmdPredict builds beluga predict.
func NewCmdPredict() *cobra.Command {
	o := &predictOptions{}
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
		RunE: runE(o),
	}
	fl := cmd.Flags()
	o.model.bind(fl)
	fl.StringVar(&o.input, "input", "", "JSON-lines inputs (or .csv, .tsv; - for standard input)")
	fl.StringVarP(&o.out, "out", "o", "", "JSON-lines predictions to write")
	fl.SetNormalizeFunc(renamedFlags(map[string]string{"output": "out"}))
	fl.BoolVar(&o.allowMissing, "allow-missing", false, "initialise embedding and encoder tensors the checkpoint lacks instead of failing")
	for _, f := range []string{"model", "input", "out"} {
		cmd.MarkFlagRequired(f)
	}
	return cmd
}

// run loads the model, predicts every input and writes the outputs.
func (o *predictOptions) run(ctx context.Context) error {
	m, err := pretrained.Load(ctx, o.model.path, pretrained.Options{
		MaxLength: o.model.maxLength, AllowMissing: o.allowMissing, Resolver: hubResolver(o.ErrOut)})
	if err != nil {
		return err
	}
	logLoadReport(m.Report)
	inputs, err := predict.ReadInputs(o.input)
	if err != nil {
		return err
	}
	outs, err := predict.RunContext(ctx, m.Classifier, m.Tokenizer, inputs, o.model.batchSize)
	if err != nil {
		return err
	}
	if err := predict.WriteOutputs(o.out, outs); err != nil {
		return err
	}
	slog.Info("predicted", "inputs", len(outs), "output", o.out)
	return nil
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
