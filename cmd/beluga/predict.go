package main

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/checkpoint"
	"github.com/beluga-nlp/beluga/models/predict"
	"github.com/beluga-nlp/beluga/models/tokenize"
)

func init() {
	var modelPath, input, output string
	var batchSize, maxLength int
	cmd := &cobra.Command{
		Use:   "predict",
		Short: "Predict JSON-lines inputs with a model directory (HuggingFace layout)",
		Long: `predict reads one {"text": …} or {"text": …, "text_pair": …} object a line and writes,
in the same order, {"input_ids": […], "logits": […], "probs": […]}. Inputs are batched by
length. The model directory holds config.json, model.safetensors or pytorch_model.bin, and
tokenizer.json or vocab.txt; a .tar.gz of such a directory works too.`,
		Example: `  beluga predict --model runs/abc123/model --input texts.jsonl --output preds.jsonl
  beluga predict --model bert-fixture-a.tar.gz --input pairs.jsonl --output out.jsonl --max-length 64`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			m, rep, ck, err := models.Load(modelPath)
			if err != nil {
				return err
			}
			logLoadReport(rep)
			tk, err := modelTokenizer(ck, maxLength)
			if err != nil {
				return err
			}
			inputs, err := predict.ReadInputs(input)
			if err != nil {
				return err
			}
			outs, err := predict.Run(m, tk, inputs, batchSize)
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
	fl.StringVar(&modelPath, "model", "", "model directory or .tar.gz")
	fl.StringVar(&input, "input", "", "JSON-lines inputs")
	fl.StringVarP(&output, "output", "o", "", "JSON-lines predictions to write")
	fl.IntVar(&batchSize, "batch-size", 64, "inputs per batch")
	fl.IntVar(&maxLength, "max-length", 128, "truncate encodings to this many tokens")
	for _, f := range []string{"model", "input", "output"} {
		cmd.MarkFlagRequired(f)
	}
	rootCmd.AddCommand(cmd)
}

// modelTokenizer rebuilds a model directory's tokenizer: for BERT
// tokenizer.json if present, else vocab.txt; for word vectors the word list.
func modelTokenizer(ck *checkpoint.Checkpoint, maxLength int) (predict.Tokenizer, error) {
	dir := ck.Dir
	if ck.Config.ModelType == "wordvec" {
		words, err := tokenize.ReadVocab(filepath.Join(dir, "vocab.txt"))
		if err != nil {
			return nil, err
		}
		return tokenize.NewWordLevel(words, maxLength)
	}
	if p := filepath.Join(dir, "tokenizer.json"); fileExists(p) {
		return tokenize.NewWordPieceFromJSON(p, maxLength)
	}
	if p := filepath.Join(dir, "vocab.txt"); fileExists(p) {
		return tokenize.NewWordPieceFromVocab(p, maxLength)
	}
	return nil, fmt.Errorf("model %s: neither tokenizer.json nor vocab.txt", dir)
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// logLoadReport says which checkpoint tensors were ignored and which
// parameters were initialised, as HuggingFace does on loading.
func logLoadReport(rep models.LoadReport) {
	if len(rep.Ignored) > 0 {
		slog.Warn("checkpoint tensors not used by the model (ignored)", "keys", rep.Ignored)
	}
	if len(rep.Initialised) > 0 {
		slog.Warn("model parameters not in the checkpoint (newly initialised)", "keys", rep.Initialised)
	}
}
