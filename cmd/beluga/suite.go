package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/internal/csvcell"
	"github.com/beluga-nlp/beluga/internal/termtext"
	"github.com/beluga-nlp/beluga/splits"
	"github.com/beluga-nlp/beluga/suites"
	"github.com/beluga-nlp/beluga/train"
)

// suiteFileOptions are the suite written (--out) of a command that
// writes a suite from the file its argument names; each such command's
// options embed them.
type suiteFileOptions struct {
	commandOptions
	out string
}

// in is the file the command reads.
func (o *suiteFileOptions) in() string { return o.args[0] }

// bind adds the required --out (-o).
func (o *suiteFileOptions) bind(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&o.out, "out", "o", "", "output suite (.jsonl or .jsonl.gz)")
	cmd.MarkFlagRequired("out")
}

// save writes the suite to --out and says what it holds.
func (o *suiteFileOptions) save(s *suites.Suite) error {
	if err := suites.Save(o.out, s); err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "wrote %s: %s, %s\n", o.out, plural(len(s.Functionalities), "functionality"), plural(s.NumCases(), "test case"))
	return nil
}

// NewCmdSuiteImport builds beluga suite import and its formats.
func NewCmdSuiteImport() *cobra.Command {
	return newGroup("import", "Convert a suite from another format into beluga's JSON-lines format",
		NewCmdSuiteImportCheckList(), NewCmdSuiteImportHateCheck(), NewCmdSuiteImportTable())
}

// suiteImportCheckListOptions are beluga suite import checklist's.
type suiteImportCheckListOptions struct{ suiteFileOptions }

// NewCmdSuiteImportCheckList builds beluga suite import checklist.
func NewCmdSuiteImportCheckList() *cobra.Command {
	o := &suiteImportCheckListOptions{}
	cmd := &cobra.Command{
		Use:   "checklist PATH",
		Short: "Import a CheckList suite pickle (.pkl or the published .tar.gz)",
		Example: `  beluga suite import checklist sentiment_suite.tar.gz -o sentiment.jsonl.gz
  beluga suite import checklist qqp_suite.pkl -o qqp.jsonl`,
		Args: cobra.ExactArgs(1),
		RunE: runE(o),
	}
	o.suiteFileOptions.bind(cmd)
	return cmd
}

func (o *suiteImportCheckListOptions) run(context.Context) error {
	s, err := suites.ImportCheckList(o.in())
	if err != nil {
		return err
	}
	return o.save(s)
}

// suiteImportHateCheckOptions are beluga suite import hatecheck's.
type suiteImportHateCheckOptions struct {
	suiteFileOptions
	where []string

	filters []suites.Filter
}

// NewCmdSuiteImportHateCheck builds beluga suite import hatecheck.
func NewCmdSuiteImportHateCheck() *cobra.Command {
	o := &suiteImportHateCheckOptions{}
	cmd := &cobra.Command{
		Use:   "hatecheck PATH",
		Short: "Import HateCheck's test_suite_cases.csv or a Multilingual HateCheck language file (all MFT, classes from name prefixes)",
		Example: `  beluga suite import hatecheck test_suite_cases.csv -o hatecheck.jsonl
  beluga suite import hatecheck hatecheck_cases_final_arabic.csv -o mhc_arabic.jsonl --where disagreement_in_template=False`,
		Args: cobra.ExactArgs(1),
		RunE: runE(o),
	}
	o.suiteFileOptions.bind(cmd)
	cmd.Flags().StringArrayVar(&o.where, "where", nil, "keep only rows with COLUMN=VALUE (or COLUMN!=VALUE); repeatable")
	return cmd
}

func (o *suiteImportHateCheckOptions) validate() (err error) {
	o.filters, err = parseFilters(o.where)
	return err
}

func (o *suiteImportHateCheckOptions) run(context.Context) error {
	res, err := suites.ImportHateCheck(o.in(), o.filters...)
	if err != nil {
		return err
	}
	printWarnings(o.ErrOut, "", res.Warnings)
	return o.save(res.Suite)
}

// suiteImportTableOptions are beluga suite import table's.
type suiteImportTableOptions struct {
	suiteFileOptions
	table tableFlags

	mapping suites.TableMapping
}

// NewCmdSuiteImportTable builds beluga suite import table.
func NewCmdSuiteImportTable() *cobra.Command {
	o := &suiteImportTableOptions{}
	cmd := &cobra.Command{
		Use:   "table PATH",
		Short: "Import test cases from any CSV, TSV or JSON-lines table by naming its columns",
		Long: `table reads one test case a row. --text, --label and --functionality name the required
columns; every column not mapped is kept as case metadata (meta in the suite file) and
can filter rows (--where). A functionality's class comes from --class-column, else from
--class-map (a CSV with columns functionality,class), else from --class-rule
PREFIX=CLASS or /REGEXP/=CLASS (first match wins); with none, each functionality is its
own class. Test types come from --type-column (MFT, INV, DIR), else every functionality
is an MFT. --link COLUMN with --link-rule PREFIX=INV (or DIR) turns a row that names
another case in COLUMN into a case of two inputs (the linked case's text first), so a
case and its perturbation stay in one split. Errors name the file, line and column.

` + dialectHelp,
		Example: `  beluga suite import table ../shared/data/mhc-arabic/mhc_arabic_cases.csv -o mhc_arabic.jsonl \
      --text test_case --label label_gold --functionality functionality --case-id mhc_case_id \
      --labels non-hateful,hateful --class-rule derog_=Derogation --class-rule threat_=Threatening \
      --class-rule '/^(slur|profanity)_/=Slurs and profanity' --class-rule '/./=Other' \
      --where disagreement_in_template=False`,
		Args: cobra.ExactArgs(1),
		RunE: runE(o),
	}
	o.suiteFileOptions.bind(cmd)
	o.table.bind(cmd.Flags())
	return cmd
}

func (o *suiteImportTableOptions) validate() (err error) {
	o.mapping, err = o.table.mapping()
	return err
}

func (o *suiteImportTableOptions) run(context.Context) error {
	res, err := suites.ImportTable(o.in(), o.mapping)
	if err != nil {
		return err
	}
	printWarnings(o.ErrOut, "", res.Warnings)
	if err := suites.Save(o.out, res.Suite); err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "wrote %s: %s, %s, %s (%s; %d left out by --where, %d linked-functionality rows without a link)\n",
		o.out, plural(len(res.Suite.Functionalities), "functionality"), plural(len(res.Suite.Classes()), "class"), plural(res.Suite.NumCases(), "test case"), res.Count, res.Filtered, res.Unlinked)
	return nil
}

// suiteStatsOptions are beluga suite stats' flags and streams.
type suiteStatsOptions struct {
	commandOptions
	format, group, by string
}

// NewCmdSuiteStats builds beluga suite stats.
func NewCmdSuiteStats() *cobra.Command {
	o := &suiteStatsOptions{}
	cmd := &cobra.Command{
		Use:   "stats SUITE",
		Short: "Count classes, functionalities, test cases, inputs, split sizes, labels and the scripts of the texts",
		Example: `  beluga suite stats sentiment.jsonl.gz
  beluga suite stats sentiment.jsonl.gz --format csv > sentiment-stats.csv
  beluga suite stats mhc_arabic.jsonl --group templ_id
  beluga suite stats hatecheck.jsonl --by target_ident`,
		Args: cobra.ExactArgs(1),
		RunE: runE(o),
	}
	cmd.Flags().StringVar(&o.format, "format", "table", "output format: table, csv or json")
	cmd.Flags().StringVar(&o.by, "by", "", "case-metadata column (target_ident) whose values to count per part, with their shares of the suite and of T_test")
	cmd.Flags().StringVar(&o.group, "group", "", "case-metadata column (templ_id, target_ident) whose values the train, validation and test cases should not share: report the values they do")
	return cmd
}

func (o *suiteStatsOptions) validate() error { return checkFlag("format", o.format, statsFormats...) }

// run prints the suite's counts, then the balance of --by's values and the
// values of --group the parts share.
func (o *suiteStatsOptions) run(context.Context) error {
	path := o.args[0]
	s, err := suites.Open(path)
	if err != nil {
		return err
	}
	printWarnings(o.ErrOut, "suite "+path+": ", suites.TextProblems(s))
	st := suites.Summarise(s)
	st.Scripts = suites.Scripts(s)
	if err := writeStats(o.Out, st, o.format); err != nil {
		return err
	}
	if o.by != "" {
		if splits.Ensure(s, suites.SplitTest) {
			fmt.Fprintf(o.ErrOut, "%s has no split: counting BeLUGA's (beluga suite split)\n", path)
		}
		if err := printBalance(o.Out, o.by, splits.Balance(s, o.by)); err != nil {
			return err
		}
	}
	if o.group != "" {
		if splits.Ensure(s, suites.SplitTest) {
			fmt.Fprintf(o.ErrOut, "%s has no split: checking BeLUGA's (beluga suite split)\n", path)
		}
		train.SuiteGroupChecks(s, o.group).Print(o.ErrOut)
	}
	return nil
}

// tableFlags are suite import table's flags that need parsing.
type tableFlags struct {
	m                            suites.TableMapping
	classMap                     string
	classRules, where, linkRules []string
	labelMap                     []string
}

func (t *tableFlags) bind(f *pflag.FlagSet) {
	f.StringVar(&t.m.Name, "name", "", "suite name (default: the file's base name)")
	f.StringVar(&t.m.Task, "task", "", "task the suite tests (default: the suite name)")
	bindDialect(f, &t.m.Dialect)
	f.StringVar(&t.m.Text, "text", "text", "column of the text")
	f.StringVar(&t.m.Pair, "pair", "", "column of the second text of a pair")
	f.StringVar(&t.m.Label, "label", "label", "column of the label")
	f.StringVar(&t.m.Functionality, "functionality", "functionality", "column of the functionality")
	f.StringVar(&t.m.CaseID, "case-id", "", "column of the case id: whole numbers, or names (ex7, arabic-12) kept in the case's meta (default: the row's position)")
	f.StringVar(&t.m.Class, "class-column", "", "column of the functionality's class")
	f.StringVar(&t.classMap, "class-map", "", "CSV or TSV with columns functionality,class")
	f.StringArrayVar(&t.classRules, "class-rule", nil, "PREFIX=CLASS or /REGEXP/=CLASS; repeatable, first match wins")
	f.StringVar(&t.m.Type, "type-column", "", "column of the test type (MFT, INV or DIR)")
	f.StringSliceVar(&t.m.Labels, "labels", nil, "label names in class order (default: the values, sorted)")
	f.StringArrayVar(&t.labelMap, "label-map", nil, "TABLE_LABEL=SUITE_LABEL: read a table's label as one of the suite's; repeatable")
	f.StringArrayVar(&t.where, "where", nil, "keep only rows with COLUMN=VALUE (or COLUMN!=VALUE); repeatable")
	f.StringVar(&t.m.Link, "link", "", "column naming the case a row perturbs or contrasts")
	f.StringArrayVar(&t.linkRules, "link-rule", nil, "PREFIX=INV or /REGEXP/=DIR: the functionalities whose linked rows are INV or DIR pairs")
}

func (t *tableFlags) mapping() (suites.TableMapping, error) {
	m := t.m
	var err error
	if m.LabelMap, err = datasets.ParseLabelMap("--label-map", t.labelMap); err != nil {
		return m, err
	}
	if t.classMap != "" {
		if m.ClassMap, err = suites.ReadClassMap(t.classMap); err != nil {
			return m, err
		}
	}
	for _, flag := range []struct {
		name string
		in   []string
		out  *[]suites.Rule
	}{{"--class-rule", t.classRules, &m.ClassRules}, {"--link-rule", t.linkRules, &m.LinkRules}} {
		for _, s := range flag.in {
			r, err := suites.ParseRule(s)
			if err != nil {
				return m, fmt.Errorf("%s: %w", flag.name, err)
			}
			*flag.out = append(*flag.out, r)
		}
	}
	m.Where, err = parseFilters(t.where)
	return m, err
}

func parseFilters(in []string) ([]suites.Filter, error) {
	var out []suites.Filter
	for _, s := range in {
		f, err := suites.ParseFilter(s)
		if err != nil {
			return nil, fmt.Errorf("--where: %w", err)
		}
		out = append(out, f)
	}
	return out, nil
}

// maxWarnings caps the warnings a command prints one by one.
const maxWarnings = 10

// printWarnings prints warnings about a suite's texts (an import's lines
// kept as they are that are likely wrong, a suite's odd texts), each after
// prefix: the first maxWarnings, then how many more.
func printWarnings[W any](w io.Writer, prefix string, warnings []W) {
	for i, x := range warnings {
		if i == maxWarnings {
			fmt.Fprintf(w, "warning: … and %d more\n", len(warnings)-maxWarnings)
			break
		}
		fmt.Fprintf(w, "warning: %s%v\n", prefix, x)
	}
}

var splitOrder = []suites.Split{suites.SplitTrain, suites.SplitValidation, suites.SplitTest}

// printJSON prints v as indented JSON, as --format json does.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// statsFormats are the formats of beluga suite stats.
var statsFormats = []string{"table", "csv", "json"}

// writeStats writes a suite's counts in format: table, csv or json.
func writeStats(w io.Writer, st suites.Stats, format string) error {
	switch format {
	case "json":
		return printJSON(w, st)
	case "csv":
		return writeStatsCSV(w, st)
	case "table":
		writeStatsTable(w, st)
		return nil
	}
	return checkFlag("format", format, statsFormats...)
}

// writeStatsCSV writes one row per functionality: its counts, per split
// when the suite has splits, and per label.
func writeStatsCSV(w io.Writer, st suites.Stats) error {
	hasSplits := len(st.Splits) > 0
	cw := csvcell.NewWriter(w)
	head := []string{"class", "functionality", "type", "cases", "inputs"}
	if hasSplits {
		for _, sp := range splitOrder {
			head = append(head, string(sp)+"_cases", string(sp)+"_inputs")
		}
	}
	for _, l := range st.Labels {
		head = append(head, "label:"+l)
	}
	cw.Write(head)
	for _, f := range st.Functionalities {
		row := []string{f.Class, f.Name, string(f.Type), strconv.Itoa(f.Cases), strconv.Itoa(f.Inputs)}
		if hasSplits {
			for _, sp := range splitOrder {
				row = append(row, strconv.Itoa(f.Splits[sp].Cases), strconv.Itoa(f.Splits[sp].Inputs))
			}
		}
		for _, n := range f.LabelCounts {
			row = append(row, strconv.Itoa(n))
		}
		cw.Write(row)
	}
	cw.Flush()
	return cw.Error()
}

// writeStatsTable prints the functionalities' counts as a table, then the
// suite's totals, split sizes, labels and scripts.
func writeStatsTable(w io.Writer, st suites.Stats) {
	hasSplits := len(st.Splits) > 0
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "class\tfunctionality\ttype\tcases\tinputs\t"
	if hasSplits {
		head += "train\tvalidation\ttest\t"
	}
	for _, l := range st.Labels {
		head += termtext.Name(l) + "\t"
	}
	fmt.Fprintln(tw, head)
	for _, f := range st.Functionalities {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t", termtext.Name(f.Class), termtext.Name(f.Name), termtext.Name(string(f.Type)), f.Cases, f.Inputs)
		if hasSplits {
			for _, sp := range splitOrder {
				fmt.Fprintf(tw, "%d\t", f.Splits[sp].Cases)
			}
		}
		for _, n := range f.LabelCounts {
			fmt.Fprintf(tw, "%d\t", n)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	fmt.Fprintf(w, "\n%s: %s, %s, %s, %s, %s\n",
		termtext.Name(st.Suite), plural(len(st.Functionalities), "functionality"), plural(st.Classes, "class"), typeCounts(st.Types), plural(st.Cases, "test case"), plural(st.Inputs, "input"))
	if hasSplits {
		for _, sp := range splitOrder {
			fmt.Fprintf(w, "  %s: %d test cases, %d inputs\n", sp, st.Splits[sp].Cases, st.Splits[sp].Inputs)
		}
	}
	labelled := 0
	for _, n := range st.LabelCounts {
		labelled += n
	}
	if labelled > 0 {
		fmt.Fprintf(w, "  labels (inputs):")
		for i, l := range st.Labels {
			fmt.Fprintf(w, " %s %d (%.1f%%)", l, st.LabelCounts[i], 100*float64(st.LabelCounts[i])/float64(labelled))
		}
		fmt.Fprintln(w)
	}
	if len(st.Scripts) > 0 {
		fmt.Fprintf(w, "  scripts (inputs):")
		for _, sc := range st.Scripts {
			fmt.Fprintf(w, " %s %d (%.1f%%)", sc.Script, sc.Inputs, 100*float64(sc.Inputs)/float64(max(st.Inputs, 1)))
		}
		fmt.Fprintln(w)
	}
}

// printBalance prints each value of a metadata column's cases per part of
// the split, its share of the suite and of T_test, and its marks (see
// splits.Balance): the counts a held-out group column rests on.
func printBalance(w io.Writer, col string, bal []splits.GroupBalance) error {
	if len(bal) == 0 {
		return fmt.Errorf("--by %s: no case has a value in this metadata column", col)
	}
	var buf strings.Builder
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\tsuite\ttrain\tvalidation\ttest\tsuite share\ttest share\t\n", col)
	var sum splits.GroupBalance
	for _, g := range bal {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%.1f%%\t%.1f%%%s\t\n", g.Value, g.Suite, g.Train, g.Validation, g.Test, 100*g.SuiteShare, 100*g.TestShare, g.Marks())
		sum.Suite, sum.Train, sum.Validation, sum.Test = sum.Suite+g.Suite, sum.Train+g.Train, sum.Validation+g.Validation, sum.Test+g.Test
	}
	fmt.Fprintf(tw, "(all)\t%d\t%d\t%d\t%d\t\t\t\n", sum.Suite, sum.Train, sum.Validation, sum.Test)
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, line := range strings.SplitAfter(buf.String(), "\n") {
		if _, err := io.WriteString(w, strings.TrimRight(line, " \n")+strings.Repeat("\n", strings.Count(line, "\n"))); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "%s the test share differs from the suite share by more than %.0f points; %s fewer than %d test cases. beluga suite split --stratify %s gives each value its suite share of every part.\n",
		splits.SkewMark, 100*splits.SkewTolerance, splits.SmallMark, splits.MinTestCases, col)
	return err
}

// typeCounts spells a suite's functionalities per test type, "3 MFT / 1 INV
// / 0 DIR": every registered type, then any the suite names that this
// binary does not know.
func typeCounts(n map[suites.TestType]int) string {
	var parts []string
	types := suites.TestTypes()
	var unknown []suites.TestType
	for t := range n {
		if !slices.Contains(types, t) {
			unknown = append(unknown, t)
		}
	}
	slices.Sort(unknown)
	types = append(types, unknown...)
	for _, t := range types {
		parts = append(parts, fmt.Sprintf("%d %s", n[t], termtext.Name(string(t))))
	}
	return strings.Join(parts, " / ")
}
