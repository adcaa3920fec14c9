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
func bindDialect(f *pflag.FlagSet, d *datasets.Dialect) { bindDialectOf(f, d, "", "") }

// bindDialectOf adds the flags of the dialect of a table another flag
// names: prefix before each flag's name (data- gives --data-columns),
// of before each usage (--data's).
func bindDialectOf(f *pflag.FlagSet, d *datasets.Dialect, prefix, of string) {
	f.StringVar((*string)(&d.Format), prefix+"format", "", of+"table format: csv, tsv or jsonl (default: from the extension)")
	f.BoolVar(&d.Quoted, prefix+"quoted", false, of+"TSV cells are quoted as RFC 4180 says (default: read verbatim)")
	f.BoolVar(&d.Multiline, prefix+"multiline", false, of+"quoted cells may hold line breaks")
	f.StringSliceVar(&d.Columns, prefix+"columns", nil, of+"headerless CSV or TSV columns by position, - for one not read (text,label,-)")
}
