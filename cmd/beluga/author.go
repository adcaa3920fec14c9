package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/beluga-nlp/beluga/internal/atomicfile"
	"github.com/beluga-nlp/beluga/metrics"
	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/checkpoint"
	"github.com/beluga-nlp/beluga/models/hub"
	"github.com/beluga-nlp/beluga/models/tokenize"
	"github.com/beluga-nlp/beluga/suites"
	"github.com/beluga-nlp/beluga/suites/azimuth"
	"github.com/beluga-nlp/beluga/suites/lexicon"
	"github.com/beluga-nlp/beluga/suites/perturb"
	"github.com/beluga-nlp/beluga/suites/template"
)

// The suite-authoring commands: templates, masked-LM suggestions,
// perturbations and Azimuth's tests, each writing the native suite format.

// NewCmdSuiteGenerate builds beluga suite generate: suites of other
// systems' automatic tests.
func NewCmdSuiteGenerate() *cobra.Command {
	return newGroup("generate", "Generate a suite of another system's automatic tests from a dataset",
		NewCmdSuiteGenerateAzimuth())
}

// suiteTemplateOptions are beluga suite template's flags and streams.
type suiteTemplateOptions struct {
	suiteFileOptions
	maxCases int
}

// NewCmdSuiteTemplate builds beluga suite template.
func NewCmdSuiteTemplate() *cobra.Command {
	o := &suiteTemplateOptions{}
	cmd := &cobra.Command{
		Use:   "template FILE.yaml",
		Short: "Fill CheckList-style templates with lexicons into a suite",
		Long: `template expands the tests of a YAML file into test cases: every combination of
the lexicons of a template ({name}, {name1}, {a:name}, {name.field}), or nsamples seeded
draws. Lexicons are the test's own, the file's, or the built-in ones (` + strings.Join(lexicon.Names(), ", ") + `).
MFT tests carry a label; INV and DIR tests give several inputs per template or a
perturbation. See docs/suite-authoring.md.`,
		Example: `  beluga suite template negation.yaml -o negation.jsonl
  beluga suite template tests.yaml -o suite.jsonl.gz --max-cases 500000`,
		Args: cobra.ExactArgs(1),
		RunE: runE(o),
	}
	o.suiteFileOptions.bind(cmd)
	cmd.Flags().IntVar(&o.maxCases, "max-cases", 0, "cap on the cases one test may expand to (default: the file's max_cases, else 100000)")
	return cmd
}

// run expands the templates and writes the suite.
func (o *suiteTemplateOptions) run(context.Context) error {
	res, err := template.Load(o.in(), template.Options{MaxCases: o.maxCases})
	if err != nil {
		return err
	}
	for _, w := range res.Warnings {
		slog.Warn(w)
	}
	return o.save(res.Suite)
}

// suiteSuggestOptions are beluga suite suggest's flags and streams.
type suiteSuggestOptions struct {
	commandOptions
	modelPath, format string
	topK              int
}

// NewCmdSuiteSuggest builds beluga suite suggest.
func NewCmdSuiteSuggest() *cobra.Command {
	o := &suiteSuggestOptions{}
	cmd := &cobra.Command{
		Use:   "suggest TEXT",
		Short: "Suggest fill-ins for the {mask} of a text with a BERT masked language model",
		Long: `suggest prints the most probable whole words for the single {mask} of TEXT, from any
BERT checkpoint that has its masked-LM head (BertForMaskedLM / BertForPreTraining), as
CheckList's editor.suggest does with RoBERTa. Put the words you keep in a lexicon.`,
		Example: `  beluga suite suggest "I {mask} the food." --model ./bert-base-uncased
  beluga suite suggest "The flight was {mask}." --model bert-tiny-mlm.tar.gz --top-k 30 --format json`,
		Args: cobra.ExactArgs(1),
		RunE: runE(o),
	}
	cmd.Flags().StringVar(&o.modelPath, "model", "", "BERT checkpoint with an MLM head and vocab.txt: a directory, .tar.gz or hub id (org/name)")
	cmd.Flags().IntVar(&o.topK, "top-k", 20, "number of suggestions")
	cmd.Flags().StringVar(&o.format, "format", "table", "output format: table or json")
	cmd.MarkFlagRequired("model")
	return cmd
}

// validate refuses an unknown --format before the model is loaded.
func (o *suiteSuggestOptions) validate() error {
	return checkFlag("format", o.format, suggestFormats...)
}

// suggestFormats are the formats of beluga suite suggest.
var suggestFormats = []string{"table", "json"}

// run loads the masked LM and prints its suggestions.
func (o *suiteSuggestOptions) run(ctx context.Context) error {
	path, err := hub.FromEnv().Resolve(ctx, o.modelPath)
	if err != nil {
		return err
	}
	dir, cleanup, err := checkpoint.Open(path)
	if err != nil {
		return err
	}
	defer cleanup()
	m, _, err := models.LoadMaskedLM(dir)
	if err != nil {
		return err
	}
	vocabPath := filepath.Join(dir, "vocab.txt")
	tk, err := tokenize.NewWordPieceFromVocab(vocabPath, 0)
	if err != nil {
		return err
	}
	vocab, err := tokenize.ReadVocab(vocabPath)
	if err != nil {
		return err
	}
	sug, err := models.Suggest(m, tk, vocab, o.args[0], o.topK)
	if err != nil {
		return err
	}
	return writeSuggestions(o.Out, sug, o.format)
}

func writeSuggestions(w io.Writer, sug []models.Suggestion, format string) error {
	switch format {
	case "json":
		return printJSON(w, sug)
	case "table":
		for _, s := range sug {
			fmt.Fprintf(w, "%.4f  %s\n", s.Prob, s.Word)
		}
		return nil
	}
	return checkFlag("format", format, suggestFormats...)
}

// suitePerturbOptions are beluga suite perturb's flags and streams.
type suitePerturbOptions struct {
	suiteFileOptions
	spec        perturb.SuiteSpec
	typ, column string
	seed        uint32
}

// NewCmdSuitePerturb builds beluga suite perturb.
func NewCmdSuitePerturb() *cobra.Command {
	o := &suitePerturbOptions{}
	cmd := &cobra.Command{
		Use:   "perturb DATA",
		Short: "Perturb the texts of a dataset into INV or DIR test cases (CheckList's Perturb)",
		Long: `perturb applies each --perturbation to the texts of DATA (the sentence column of a .tsv
such as SST-2, or one text a line) and writes one functionality per perturbation; each case
is the original text followed by its perturbations. Perturbations: ` + fmt.Sprint(perturb.Names()) + `.
Texts a perturbation does not apply to are skipped and counted; a perturbation that applies
to none is skipped with a warning, and only when none applies to any text is it an error. DIR tests need --direction (` + fmt.Sprint(perturb.Directions()) + `).`,
		Example: `  beluga suite perturb sst2/dev.tsv --perturbation typos --perturbation contractions --class Robustness -o robustness.jsonl
  beluga suite perturb tweets.txt --perturbation add_negation --type DIR --direction not_more_positive --class Negation --nsamples 500 -o neg.jsonl`,
		Args: cobra.ExactArgs(1),
		RunE: runE(o),
	}
	o.suiteFileOptions.bind(cmd)
	fl := cmd.Flags()
	fl.StringSliceVar(&o.spec.Perturbations, "perturbation", nil, "perturbation to apply (repeatable)")
	fl.StringVar(&o.typ, "type", "INV", "test type: INV or DIR")
	fl.StringVar(&o.spec.Direction, "direction", "", "DIR expectation preset")
	fl.StringVar(&o.spec.Class, "class", "Robustness", "functionality class")
	fl.StringVar(&o.spec.Functionality, "functionality", "", "functionality name (default: the perturbation's; a prefix with several)")
	fl.StringVar(&o.spec.Name, "name", "perturbed", "suite name")
	fl.StringVar(&o.spec.Task, "task", "sentiment", "task of the suite")
	fl.StringSliceVar(&o.spec.Labels, "labels", []string{"negative", "neutral", "positive"}, "class names of the suite")
	fl.IntVar(&o.spec.NSamples, "nsamples", 0, "perturb texts in a seeded random order until this many cases are made (0: all, in order)")
	fl.Uint32Var(&o.seed, "seed", 0, "random seed")
	fl.IntVar(&o.spec.Options.Typos, "typos", 1, "swaps per text for typos")
	fl.IntVar(&o.spec.Options.N, "n", 10, "replacements per text for change_names, change_location, change_number")
	fl.StringVar(&o.column, "column", "sentence", "text column of a .tsv file")
	cmd.MarkFlagRequired("perturbation")
	return cmd
}

func (o *suitePerturbOptions) validate() (err error) {
	o.spec.Seed = o.seed
	o.spec.Type, err = suites.ParseTestType(o.typ)
	return err
}

// run perturbs the texts, says which perturbations skipped texts, and
// writes the suite.
func (o *suitePerturbOptions) run(context.Context) error {
	texts, err := perturb.ReadTexts(o.in(), o.column)
	if err != nil {
		return err
	}
	s, stats, err := perturb.Suite(texts, o.spec)
	if err != nil {
		return fmt.Errorf("%s: %w", o.in(), err)
	}
	for i, st := range stats {
		if st.Applied == 0 {
			slog.Warn("perturbation skipped: it applies to none of the texts", "perturbation", o.spec.Perturbations[i], "looked_at", st.Examples)
		} else if st.Applied < st.Examples {
			slog.Warn("perturbation skipped texts it does not apply to", "perturbation", o.spec.Perturbations[i], "applied", st.Applied, "looked_at", st.Examples, "skipped", st.Examples-st.Applied)
		}
	}
	return o.save(s)
}

// suiteGenerateAzimuthOptions are beluga suite generate azimuth's flags
// and streams.
type suiteGenerateAzimuthOptions struct {
	suiteFileOptions
	opt     azimuth.Options
	column  string
	maxRows int
}

// NewCmdSuiteGenerateAzimuth builds beluga suite generate azimuth.
func NewCmdSuiteGenerateAzimuth() *cobra.Command {
	o := &suiteGenerateAzimuthOptions{opt: azimuth.DefaultOptions()}
	cmd := &cobra.Command{
		Use:   "azimuth DATA",
		Short: "Azimuth's behavioural tests of every utterance of a dataset, as an INV suite",
		Long: `azimuth runs Azimuth's seven tests (Neutral Token, Question Mark, Ending Period, Inner
Comma, Inner Period, Typos, Contractions) on the texts of DATA and writes one functionality
per test and modification type (class: its family, Fuzzy Matching or Punctuation), one case
per perturbed utterance. Cases are scored with Azimuth's rule (class flip, or a confidence
change above the threshold; default 1 = never); beluga eval --smart-tags prints the
failed_fuzzy_matching / failed_punctuation tags of each utterance.`,
		Example: `  beluga suite generate azimuth sst2/dev.tsv -o azimuth-sst2.jsonl
  beluga suite generate azimuth utterances.txt --typo-levels 2 --threshold-typo 0.1 -o az.jsonl.gz`,
		Args: cobra.ExactArgs(1),
		RunE: runE(o),
	}
	o.suiteFileOptions.bind(cmd)
	fl := cmd.Flags()
	fl.StringVar(&o.column, "column", "sentence", "text column of a .tsv file")
	fl.IntVar(&o.maxRows, "max-rows", 0, "use only the first N texts (0: all)")
	fl.Uint32Var(&o.opt.Seed, "seed", o.opt.Seed, "seed of the typo test (Azimuth's default 300)")
	fl.IntVar(&o.opt.TypoLevels, "typo-levels", o.opt.TypoLevels, "nb_typos_per_utterance: typo levels 1..N")
	fl.StringVar(&o.opt.Language, "language", o.opt.Language, "default neutral tokens: en or fr")
	fl.StringSliceVar(&o.opt.Prefixes, "prefixes", nil, "neutral prefixes (default: the language's)")
	fl.StringSliceVar(&o.opt.Suffixes, "suffixes", nil, "neutral suffixes (default: the language's)")
	fl.Float64Var(&o.opt.NeutralToken, "threshold-neutral-token", o.opt.NeutralToken, "confidence-delta threshold of Neutral Token")
	fl.Float64Var(&o.opt.Punctuation, "threshold-punctuation", o.opt.Punctuation, "confidence-delta threshold of the punctuation tests")
	fl.Float64Var(&o.opt.FuzzyMatching, "threshold-fuzzy-matching", o.opt.FuzzyMatching, "confidence-delta threshold of Contractions")
	fl.Float64Var(&o.opt.Typo, "threshold-typo", o.opt.Typo, "confidence-delta threshold of Typos")
	fl.StringVar(&o.opt.Name, "name", "azimuth", "suite name")
	fl.StringVar(&o.opt.Task, "task", o.opt.Task, "task of the suite (sentiment trains with beluga train)")
	fl.StringSliceVar(&o.opt.Labels, "labels", o.opt.Labels, "class names of the suite (of the model scored on it)")
	return cmd
}

// run generates Azimuth's tests of the texts, says what it left out, and
// writes the suite.
func (o *suiteGenerateAzimuthOptions) run(context.Context) error {
	texts, err := perturb.ReadTexts(o.in(), o.column)
	if err != nil {
		return err
	}
	if o.maxRows > 0 && len(texts) > o.maxRows {
		texts = texts[:o.maxRows]
	}
	s, rep, err := azimuth.Generate(texts, o.opt)
	if err != nil {
		return fmt.Errorf("%s: %w", o.in(), err)
	}
	if rep.Empty > 0 || rep.Unchanged > 0 || len(rep.Missing) > 0 {
		slog.Warn("left out", "empty_utterances", rep.Empty, "typos_equal_to_original", rep.Unchanged, "modification_types_without_cases", rep.Missing)
	}
	return o.save(s)
}

// writeSmartTags writes Azimuth's smart tags of a scored suite to path, or
// prints them when path is "-".
func writeSmartTags(stdout io.Writer, s *suites.Suite, res *metrics.Result, path string) error {
	tags, err := metrics.SmartTags(s, res)
	if err != nil {
		return err
	}
	if path == "-" {
		fmt.Fprintln(stdout)
		return metrics.WriteSmartTags(stdout, tags)
	}
	return atomicfile.Write(path, func(w io.Writer) error { return metrics.WriteSmartTags(w, tags) })
}
