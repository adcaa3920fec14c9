package main

import (
	"github.com/spf13/pflag"

	"github.com/beluga-nlp/beluga/datasets"
)

// dialectHelp is the dialect rule every command that reads table rows
// states in its --help (datasets.Dialect).
const dialectHelp = `Tables are read by one rule (datasets.Dialect): a TSV verbatim, one row a line, split on
tabs, no quoting (a text that begins with " is read as it is) unless --quoted declares RFC 4180
quoting; a CSV as RFC 4180; JSON lines one object a line. A BOM and CRLF line ends are fine. A
quoted cell that runs over lines is refused with its line unless --multiline declares it. A
headerless CSV or TSV names its columns by position: --columns text,label,- ("-" skips one).`

// bindDialect adds the flags of a table's dialect.
func bindDialect(f *pflag.FlagSet, d *datasets.Dialect) {
	f.StringVar((*string)(&d.Format), "format", "", "table format: csv, tsv or jsonl (default: from the extension)")
	f.BoolVar(&d.Quoted, "quoted", false, "the TSV's cells are quoted as RFC 4180 says (default: read verbatim)")
	f.BoolVar(&d.Multiline, "multiline", false, "quoted cells may hold line breaks")
	f.StringSliceVar(&d.Columns, "columns", nil, "a headerless CSV or TSV's columns by position, - for one not read (text,label,-)")
}
