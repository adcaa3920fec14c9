package main

import (
	"encoding/json"
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
// addSuiteAuthoring adds beluga suite's authoring commands (template, suggest,
// perturb, generate) to suite.
func addSuiteAuthoring(suiteCmd *cobra.Command) {
	suiteCmd.AddCommand(templateCmd(), suggestCmd(), perturbCmd())
	generate := &cobra.Command{
		Use:   "generate",
		Short: "Generate a suite of another system's automatic tests from a dataset",
	}
	generate.AddCommand(azimuthCmd())
	suiteCmd.AddCommand(generate)
}

func saveSuite(w io.Writer, out string, s *suites.Suite) error {
	if err := suites.Save(out, s); err != nil {
		return err
	}
	fmt.Fprintf(w, "wrote %s: %s, %s\n", out, plural(len(s.Functionalities), "functionality"), plural(s.NumCases(), "test case"))
	return nil
}

func templateCmd() *cobra.Command {
	var out string
	var maxCases int
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
		RunE: func(cmd *cobra.Command, args []string) error {
			res, err := template.Load(args[0], template.Options{MaxCases: maxCases})
			if err != nil {
				return err
			}
			for _, w := range res.Warnings {
				slog.Warn(w)
			}
			return saveSuite(cmd.OutOrStdout(), out, res.Suite)
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "output suite (.jsonl or .jsonl.gz)")
	cmd.Flags().IntVar(&maxCases, "max-cases", 0, "cap on the cases one test may expand to (default: the file's max_cases, else 100000)")
	cmd.MarkFlagRequired("out")
	return cmd
}

func suggestCmd() *cobra.Command {
	var modelPath, format string
	var topK int
	cmd := &cobra.Command{
		Use:   "suggest TEXT",
		Short: "Suggest fill-ins for the {mask} of a text with a BERT masked language model",
		Long: `suggest prints the most probable whole words for the single {mask} of TEXT, from any
BERT checkpoint that has its masked-LM head (BertForMaskedLM / BertForPreTraining), as
CheckList's editor.suggest does with RoBERTa. Put the words you keep in a lexicon.`,
		Example: `  beluga suite suggest "I {mask} the food." --model ./bert-base-uncased
  beluga suite suggest "The flight was {mask}." --model bert-tiny-mlm.tar.gz --top-k 30 --format json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := hub.FromEnv().Resolve(cmd.Context(), modelPath)
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
			sug, err := models.Suggest(m, tk, vocab, args[0], topK)
			if err != nil {
				return err
			}
			return writeSuggestions(cmd.OutOrStdout(), sug, format)
		},
	}
	cmd.Flags().StringVar(&modelPath, "model", "", "BERT checkpoint with an MLM head and vocab.txt: a directory, .tar.gz or hub id (org/name)")
	cmd.Flags().IntVar(&topK, "top-k", 20, "number of suggestions")
	cmd.Flags().StringVar(&format, "format", "table", "output format: table or json")
	cmd.MarkFlagRequired("model")
	return cmd
}

func writeSuggestions(w io.Writer, sug []models.Suggestion, format string) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(sug)
	case "table":
		for _, s := range sug {
			fmt.Fprintf(w, "%.4f  %s\n", s.Prob, s.Word)
		}
		return nil
	}
	return fmt.Errorf("unknown --format %q (want table or json)", format)
}

func perturbCmd() *cobra.Command {
	var spec perturb.SuiteSpec
	var out, typ, column string
	var seed uint32
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
		RunE: func(cmd *cobra.Command, args []string) error {
			texts, err := perturb.ReadTexts(args[0], column)
			if err != nil {
				return err
			}
			if spec.Type, err = suites.ParseTestType(typ); err != nil {
				return err
			}
			spec.Seed = seed
			s, stats, err := perturb.Suite(texts, spec)
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			for i, st := range stats {
				if st.Applied == 0 {
					slog.Warn("perturbation skipped: it applies to none of the texts", "perturbation", spec.Perturbations[i], "looked_at", st.Examples)
				} else if st.Applied < st.Examples {
					slog.Warn("perturbation skipped texts it does not apply to", "perturbation", spec.Perturbations[i], "applied", st.Applied, "looked_at", st.Examples, "skipped", st.Examples-st.Applied)
				}
			}
			return saveSuite(cmd.OutOrStdout(), out, s)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&out, "out", "o", "", "output suite (.jsonl or .jsonl.gz)")
	fl.StringSliceVar(&spec.Perturbations, "perturbation", nil, "perturbation to apply (repeatable)")
	fl.StringVar(&typ, "type", "INV", "test type: INV or DIR")
	fl.StringVar(&spec.Direction, "direction", "", "DIR expectation preset")
	fl.StringVar(&spec.Class, "class", "Robustness", "functionality class")
	fl.StringVar(&spec.Functionality, "functionality", "", "functionality name (default: the perturbation's; a prefix with several)")
	fl.StringVar(&spec.Name, "name", "perturbed", "suite name")
	fl.StringVar(&spec.Task, "task", "sentiment", "task of the suite")
	fl.StringSliceVar(&spec.Labels, "labels", []string{"negative", "neutral", "positive"}, "class names of the suite")
	fl.IntVar(&spec.NSamples, "nsamples", 0, "perturb texts in a seeded random order until this many cases are made (0: all, in order)")
	fl.Uint32Var(&seed, "seed", 0, "random seed")
	fl.IntVar(&spec.Options.Typos, "typos", 1, "swaps per text for typos")
	fl.IntVar(&spec.Options.N, "n", 10, "replacements per text for change_names, change_location, change_number")
	fl.StringVar(&column, "column", "sentence", "text column of a .tsv file")
	cmd.MarkFlagRequired("out")
	cmd.MarkFlagRequired("perturbation")
	return cmd
}

func azimuthCmd() *cobra.Command {
	opt := azimuth.DefaultOptions()
	var out, column string
	var maxRows int
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
		RunE: func(cmd *cobra.Command, args []string) error {
			texts, err := perturb.ReadTexts(args[0], column)
			if err != nil {
				return err
			}
			if maxRows > 0 && len(texts) > maxRows {
				texts = texts[:maxRows]
			}
			s, rep, err := azimuth.Generate(texts, opt)
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			if rep.Empty > 0 || rep.Unchanged > 0 || len(rep.Missing) > 0 {
				slog.Warn("left out", "empty_utterances", rep.Empty, "typos_equal_to_original", rep.Unchanged, "modification_types_without_cases", rep.Missing)
			}
			return saveSuite(cmd.OutOrStdout(), out, s)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&out, "out", "o", "", "output suite (.jsonl or .jsonl.gz)")
	fl.StringVar(&column, "column", "sentence", "text column of a .tsv file")
	fl.IntVar(&maxRows, "max-rows", 0, "use only the first N texts (0: all)")
	fl.Uint32Var(&opt.Seed, "seed", opt.Seed, "seed of the typo test (Azimuth's default 300)")
	fl.IntVar(&opt.TypoLevels, "typo-levels", opt.TypoLevels, "nb_typos_per_utterance: typo levels 1..N")
	fl.StringVar(&opt.Language, "language", opt.Language, "default neutral tokens: en or fr")
	fl.StringSliceVar(&opt.Prefixes, "prefixes", nil, "neutral prefixes (default: the language's)")
	fl.StringSliceVar(&opt.Suffixes, "suffixes", nil, "neutral suffixes (default: the language's)")
	fl.Float64Var(&opt.NeutralToken, "threshold-neutral-token", opt.NeutralToken, "confidence-delta threshold of Neutral Token")
	fl.Float64Var(&opt.Punctuation, "threshold-punctuation", opt.Punctuation, "confidence-delta threshold of the punctuation tests")
	fl.Float64Var(&opt.FuzzyMatching, "threshold-fuzzy-matching", opt.FuzzyMatching, "confidence-delta threshold of Contractions")
	fl.Float64Var(&opt.Typo, "threshold-typo", opt.Typo, "confidence-delta threshold of Typos")
	fl.StringVar(&opt.Name, "name", "azimuth", "suite name")
	fl.StringVar(&opt.Task, "task", opt.Task, "task of the suite (sentiment trains with beluga train)")
	fl.StringSliceVar(&opt.Labels, "labels", opt.Labels, "class names of the suite (of the model scored on it)")
	cmd.MarkFlagRequired("out")
	return cmd
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
