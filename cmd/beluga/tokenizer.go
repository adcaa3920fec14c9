package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/internal/atomicfile"
	"github.com/beluga-nlp/beluga/models/tokenize"
	"github.com/beluga-nlp/beluga/models/tokenize/corpus"
	"github.com/beluga-nlp/beluga/suites"
)

// NewCmdTokenizer builds beluga tokenizer and its subcommands.
func NewCmdTokenizer() *cobra.Command {
	var inputs, suiteFiles []string
	var trainDialect, statDialect datasets.Dialect
	var split, out, kind, specPath, task, from string
	var vocabSize, minFreq int
	var lowercase bool
	train := &cobra.Command{
		Use:   "train",
		Short: "Learn a WordPiece, byte-level BPE or Unigram tokenizer and write it as a HuggingFace tokenizer.json",
		Long: `train learns a tokenizer from a task's own texts, for languages no checkpoint's vocabulary
covers: columns of CSV, TSV or JSON-lines files (--input FILE:COLUMN, the i.i.d. training data)
and the training split of suites (--suite FILE; BeLUGA's split is assigned where a suite has none;
the test split is never read). --spec SPEC [--task NAME] reads a declared task's own training data
as its runs will split it: the i.i.d. training part (never the dev or test part of a split file)
and its suite's training split (stratified where the task says split: {stratify: COLUMN}). The result is a tokenizer.json that beluga and HuggingFace's
tokenizers read; a model spec names it with tokenizer: (beluga train --tokenizer). The same
inputs and options give the same file. WordPiece cuts CJK ideographs one by one (BERT's
pre-tokenizer), so on Chinese it learns characters only and says so: train bpe or unigram there.

` + dialectHelp,
		Example: `  beluga tokenizer train --kind wordpiece --vocab-size 8000 --spec specs/mhc-arabic.yaml -o ar-wordpiece.json
  beluga tokenizer train --kind bpe --vocab-size 8000 --input train.csv:text --suite suite.jsonl -o tokenizer.json
  beluga tokenizer train --kind unigram --vocab-size 4000 --input train.tsv:sentence -o sst2-unigram.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if specPath == "" && task != "" {
				return fmt.Errorf("--task %s: name the spec that declares it with --spec", task)
			}
			if specPath == "" && len(inputs) == 0 && len(suiteFiles) == 0 {
				return fmt.Errorf("no texts: give --spec, --input or --suite")
			}
			var texts []string
			var specSuite, stratify string
			if specPath != "" {
				spec, err := experiments.LoadSpec(specPath)
				if err != nil {
					return err
				}
				cache, err := dataCache("", from)
				if err != nil {
					return err
				}
				var iid []string
				iid, specSuite, stratify, err = spec.TokenizerCorpus(cmd.Context(), cache, task)
				if err != nil {
					return fmt.Errorf("experiment spec %s: %w", specPath, err)
				}
				texts = iid
			}
			// In order: the spec's i.i.d. texts, --input files, the spec's
			// suite (split as its runs split it), --suite files.
			more, accs, err := corpus.Sources(inputs, trainDialect, nil, suites.Split(split))
			if err != nil {
				return err
			}
			printAccounts(cmd.ErrOrStderr(), accs)
			texts = append(texts, more...)
			if specSuite != "" {
				st, err := corpus.Suite(specSuite, suites.Split(split), stratify)
				if err != nil {
					return err
				}
				texts = append(texts, st...)
			}
			more, _, err = corpus.Sources(nil, trainDialect, suiteFiles, suites.Split(split))
			if err != nil {
				return err
			}
			texts = append(texts, more...)
			trained, err := tokenize.Train(texts, tokenize.TrainOptions{Kind: kind, VocabSize: vocabSize,
				Lowercase: lowercase, MinFrequency: minFreq})
			if err != nil {
				return err
			}
			for _, w := range trained.Warnings {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s\n", w)
			}
			if err := atomicfile.WriteFile(out, trained.JSON); err != nil {
				return err
			}
			tk, err := tokenize.NewHF(out, 0)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %s tokenizer, %d ids, from %d texts\n", out, kind, tk.VocabSize(), len(texts))
			return nil
		},
	}
	bindDialect(train.Flags(), &trainDialect)
	train.Flags().StringVar(&specPath, "spec", "", "experiment spec whose declared task's training data to read")
	train.Flags().StringVar(&task, "task", "", "the task of --spec (needed when it declares several)")
	train.Flags().StringVar(&from, "from", "", "with --spec: take data files from this local directory (laid out like ../shared/data)")
	train.Flags().StringArrayVar(&inputs, "input", nil, "FILE:COLUMN of a .csv, .tsv, .jsonl or .jsonl.gz file (repeatable)")
	train.Flags().StringArrayVar(&suiteFiles, "suite", nil, "suite file whose --split cases' inputs to add (repeatable)")
	train.Flags().StringVar(&split, "split", string(suites.SplitTrain), "suite split to read (train or validation; never test)")
	train.Flags().StringVar(&kind, "kind", "wordpiece", "wordpiece, bpe or unigram")
	train.Flags().IntVar(&vocabSize, "vocab-size", 8000, "number of ids, special tokens included")
	train.Flags().IntVar(&minFreq, "min-frequency", 2, "fewest occurrences of a merge or piece")
	train.Flags().BoolVar(&lowercase, "lowercase", false, "lower-case texts first")
	train.Flags().StringVarP(&out, "out", "o", "", "tokenizer.json to write")
	train.MarkFlagRequired("out")

	var statInputs, statSuites []string
	var statSplit, tkPath string
	var maxLengths []int
	stats := &cobra.Command{
		Use:   "stats",
		Short: "Tokens per text, character and word, [UNK] rate and truncation rate of a tokenizer on texts",
		Long: `stats tokenizes texts (--input FILE:COLUMN, --suite FILE with --split) with a tokenizer (a model
directory, a tokenizer.json, a vocab.txt or a SentencePiece .model) and prints the scripts of the
texts, tokens per text (special tokens excluded), per character (grapheme cluster) and per word
(Unicode word segmentation, UAX #29, and white-space words beside it), the share of unknown
tokens, and the share of texts longer than each --max-length (special tokens included), which
truncation would cut. For a script written without spaces (Chinese, Japanese, Thai) a
white-space word is a sentence and UAX #29 cuts at every character: read tokens per character.

` + dialectHelp,
		Example: `  beluga tokenizer stats --tokenizer bert-base-multilingual-cased/ --input iid_ar_binary.csv:text --max-length 48,128`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			texts, accs, err := corpus.Sources(statInputs, statDialect, statSuites, suites.Split(statSplit))
			if err != nil {
				return err
			}
			printAccounts(cmd.ErrOrStderr(), accs)
			tk, err := tokenize.Open(tkPath, 0)
			if err != nil {
				return err
			}
			s, err := tokenize.ComputeStats(cmd.Context(), tk, texts, maxLengths)
			if err != nil {
				return err
			}
			s.Print(cmd.OutOrStdout())
			return nil
		},
	}
	bindDialect(stats.Flags(), &statDialect)
	stats.Flags().StringArrayVar(&statInputs, "input", nil, "FILE:COLUMN of a .csv, .tsv, .jsonl or .jsonl.gz file (repeatable)")
	stats.Flags().StringArrayVar(&statSuites, "suite", nil, "suite file whose --split cases' inputs to add (repeatable)")
	stats.Flags().StringVar(&statSplit, "split", string(suites.SplitTrain), "suite split to read (train or validation)")
	stats.Flags().StringVar(&tkPath, "tokenizer", "", "model directory, tokenizer.json, vocab.txt or SentencePiece .model")
	stats.Flags().IntSliceVar(&maxLengths, "max-length", []int{128}, "lengths to report truncation at")
	stats.MarkFlagRequired("tokenizer")
	tokenizerCmd := &cobra.Command{
		Use:   "tokenizer",
		Short: "Train a tokenizer on a task's own texts, or measure how one cuts texts",
	}
	tokenizerCmd.AddCommand(train, stats)
	return tokenizerCmd
}

// printAccounts says what was read of each input file, so that a user sees
// every line accounted for.
func printAccounts(w io.Writer, accs []corpus.Account) {
	for _, a := range accs {
		fmt.Fprintf(w, "read %s\n", a)
	}
}
