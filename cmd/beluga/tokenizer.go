package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/internal/atomicfile"
	"github.com/beluga-nlp/beluga/models/tokenize"
	"github.com/beluga-nlp/beluga/models/tokenize/corpus"
	"github.com/beluga-nlp/beluga/suites"
)

// NewCmdTokenizer builds beluga tokenizer and its subcommands.
func NewCmdTokenizer() *cobra.Command {
	return newGroup("tokenizer", "Train a tokenizer on a task's own texts, or measure how one cuts texts",
		NewCmdTokenizerTrain(), NewCmdTokenizerStats())
}

// corpusFlags name the texts a tokenizer command reads: columns of tables
// and the inputs of a split of suites (corpus.Sources), shared by
// beluga tokenizer train and stats.
type corpusFlags struct {
	inputs, suites []string
	split          string
	dialect        datasets.Dialect
}

func (f *corpusFlags) bind(fl *pflag.FlagSet, splits string) {
	bindDialect(fl, &f.dialect)
	fl.StringArrayVar(&f.inputs, "input", nil, "FILE:COLUMN of a .csv, .tsv, .jsonl or .jsonl.gz file (repeatable)")
	fl.StringArrayVar(&f.suites, "suite", nil, "suite file whose --split cases' inputs to add (repeatable)")
	fl.StringVar(&f.split, "split", string(suites.SplitTrain), "suite split to read ("+splits+")")
}

// tokenizerTrainOptions are beluga tokenizer train's flags and streams.
type tokenizerTrainOptions struct {
	commandOptions
	corpus                          corpusFlags
	out, kind, specPath, task, from string
	vocabSize, minFreq              int
	lowercase                       bool
}

// NewCmdTokenizerTrain builds beluga tokenizer train.
func NewCmdTokenizerTrain() *cobra.Command {
	o := &tokenizerTrainOptions{}
	cmd := &cobra.Command{
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
		RunE: runE(o),
	}
	fl := cmd.Flags()
	o.corpus.bind(fl, "train or validation; never test")
	fl.StringVar(&o.specPath, "spec", "", "experiment spec whose declared task's training data to read")
	fl.StringVar(&o.task, "task", "", "the task of --spec (needed when it declares several)")
	fl.StringVar(&o.from, "from", "", "with --spec: take data files from this local directory (laid out like ../shared/data)")
	fl.StringVar(&o.kind, "kind", "wordpiece", "wordpiece, bpe or unigram")
	fl.IntVar(&o.vocabSize, "vocab-size", 8000, "number of ids, special tokens included")
	fl.IntVar(&o.minFreq, "min-frequency", 2, "fewest occurrences of a merge or piece")
	fl.BoolVar(&o.lowercase, "lowercase", false, "lower-case texts first")
	fl.StringVarP(&o.out, "out", "o", "", "tokenizer.json to write")
	cmd.MarkFlagRequired("out")
	return cmd
}

func (o *tokenizerTrainOptions) validate() error {
	if o.specPath == "" && o.task != "" {
		return fmt.Errorf("--task %s: name the spec that declares it with --spec", o.task)
	}
	if o.specPath == "" && len(o.corpus.inputs) == 0 && len(o.corpus.suites) == 0 {
		return fmt.Errorf("no texts: give --spec, --input or --suite")
	}
	return nil
}

// run reads the texts, trains the tokenizer and writes it.
func (o *tokenizerTrainOptions) run(ctx context.Context) error {
	texts, err := o.texts(ctx)
	if err != nil {
		return err
	}
	trained, err := tokenize.Train(texts, tokenize.TrainOptions{Kind: o.kind, VocabSize: o.vocabSize,
		Lowercase: o.lowercase, MinFrequency: o.minFreq})
	if err != nil {
		return err
	}
	for _, w := range trained.Warnings {
		fmt.Fprintf(o.ErrOut, "warning: %s\n", w)
	}
	if err := atomicfile.WriteFile(o.out, trained.JSON); err != nil {
		return err
	}
	tk, err := tokenize.NewHF(o.out, 0)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "wrote %s: %s tokenizer, %d ids, from %d texts\n", o.out, o.kind, tk.VocabSize(), len(texts))
	return nil
}

// texts are the training texts, in order: the spec's i.i.d. texts,
// --input files, the spec's suite (split as its runs split it), --suite
// files.
func (o *tokenizerTrainOptions) texts(ctx context.Context) ([]string, error) {
	var texts []string
	var specSuite, stratify string
	split := suites.Split(o.corpus.split)
	if o.specPath != "" {
		spec, err := experiments.LoadSpec(o.specPath)
		if err != nil {
			return nil, err
		}
		cache, err := dataCache("", o.from)
		if err != nil {
			return nil, err
		}
		texts, specSuite, stratify, err = spec.TokenizerCorpus(ctx, cache, o.task)
		if err != nil {
			return nil, fmt.Errorf("experiment spec %s: %w", o.specPath, err)
		}
	}
	more, accs, err := corpus.Sources(o.corpus.inputs, o.corpus.dialect, nil, split)
	if err != nil {
		return nil, err
	}
	printAccounts(o.ErrOut, accs)
	texts = append(texts, more...)
	if specSuite != "" {
		st, err := corpus.Suite(specSuite, split, stratify)
		if err != nil {
			return nil, err
		}
		texts = append(texts, st...)
	}
	more, _, err = corpus.Sources(nil, o.corpus.dialect, o.corpus.suites, split)
	if err != nil {
		return nil, err
	}
	return append(texts, more...), nil
}

// tokenizerStatsOptions are beluga tokenizer stats' flags and streams.
type tokenizerStatsOptions struct {
	commandOptions
	corpus     corpusFlags
	tkPath     string
	maxLengths []int
}

// NewCmdTokenizerStats builds beluga tokenizer stats.
func NewCmdTokenizerStats() *cobra.Command {
	o := &tokenizerStatsOptions{}
	cmd := &cobra.Command{
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
		RunE:    runE(o),
	}
	fl := cmd.Flags()
	o.corpus.bind(fl, "train or validation")
	fl.StringVar(&o.tkPath, "tokenizer", "", "model directory, tokenizer.json, vocab.txt or SentencePiece .model")
	fl.IntSliceVar(&o.maxLengths, "max-length", []int{128}, "lengths to report truncation at")
	cmd.MarkFlagRequired("tokenizer")
	return cmd
}

// run tokenizes the texts and prints the statistics.
func (o *tokenizerStatsOptions) run(ctx context.Context) error {
	texts, accs, err := corpus.Sources(o.corpus.inputs, o.corpus.dialect, o.corpus.suites, suites.Split(o.corpus.split))
	if err != nil {
		return err
	}
	printAccounts(o.ErrOut, accs)
	tk, err := tokenize.Open(o.tkPath, 0)
	if err != nil {
		return err
	}
	s, err := tokenize.ComputeStats(ctx, tk, texts, o.maxLengths)
	if err != nil {
		return err
	}
	s.Print(o.Out)
	return nil
}

// printAccounts says what was read of each input file, so that a user sees
// every line accounted for.
func printAccounts(w io.Writer, accs []corpus.Account) {
	for _, a := range accs {
		fmt.Fprintf(w, "read %s\n", a)
	}
}
