package datasets

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/beluga-nlp/beluga/internal/memlimit"
)

// Dialect says how a table file is cut into rows and cells. It is the one
// rule every command that reads rows follows (beluga run's data files,
// suite import, tokenizer stats and train, split):
//
//   - TSV is read verbatim: one row a line, cells split on tabs, no quoting,
//     so a text that begins with a quote is a text that begins with a quote
//     (GLUE's and most shared tasks' files). A TSV whose cells are quoted as
//     RFC 4180 says declares it (Quoted).
//   - CSV is RFC 4180: cells with a comma, a quote or a line break are
//     quoted, a quote inside one doubled. A bare quote in an unquoted cell is
//     an error, not a guess.
//   - JSONL is one JSON object a line.
//
// A byte-order mark is skipped, CRLF line ends are LF, and blank lines are
// skipped (counted). Under any dialect each row is one line of the file
// unless Multiline is declared: a quoted cell that runs over line breaks is
// refused with its line, since it is what an unbalanced quote looks like,
// and silently merging a third of a file's rows is worse than an error.
type Dialect struct {
	// Format is tsv, csv or jsonl; empty means the extension's (.tsv,
	// .csv, .jsonl or .json, before any .gz).
	Format Format `json:"format,omitempty" yaml:"format,omitempty"`
	// Quoted declares RFC 4180 quoting in a TSV (a CSV always has it).
	Quoted bool `json:"quoted,omitempty" yaml:"quoted,omitempty"`
	// Multiline declares that quoted cells may hold line breaks.
	Multiline bool `json:"multiline,omitempty" yaml:"multiline,omitempty"`
	// Columns names the columns of a headerless CSV or TSV by position:
	// [id, text, label] reads the first cell of every line as id, the
	// second as text, the third as label; "-" leaves a column unnamed
	// (and unread). Without Columns the first line is the header.
	Columns []string `json:"columns,omitempty" yaml:"columns,omitempty"`
}

// format returns the declared format or the one of path's extension.
func (d Dialect) format(path string) (Format, error) {
	if d.Format != "" {
		switch d.Format {
		case TSV, CSV, JSONL:
			return d.Format, nil
		}
		return "", fmt.Errorf("%s: format %q (want tsv, csv or jsonl)", path, d.Format)
	}
	switch ext := filepath.Ext(strings.TrimSuffix(path, ".gz")); ext {
	case ".tsv":
		return TSV, nil
	case ".csv":
		return CSV, nil
	case ".jsonl", ".json":
		return JSONL, nil
	default:
		return "", fmt.Errorf("%s: cannot tell the format from %q: set format to tsv, csv or jsonl", path, ext)
	}
}

// Table is a file's rows as the Dialect cuts them, with the line each
// starts on, and the count of what was read.
type Table struct {
	Path   string
	Format Format
	// Header names the columns: the header line, the declared Columns
	// ("-" kept, so that positions hold), or for JSONL every key in the
	// order it first appears.
	Header []string
	Rows   []TableRow
	Count  RowCount
}

// TableRow is one row: its cells by column position and the line it
// starts on (1-based, the header is line 1 of a CSV or TSV that has one).
type TableRow struct {
	Line  int
	Cells []string
	// Kinds, for a JSONL row, names the JSON kind of each cell that is no
	// string ("a number", "null", …; "absent" for a key the row lacks);
	// nil for CSV and TSV rows.
	Kinds []string
}

// RowCount accounts for every line of a file: Lines = Header + Blank +
// the lines of the Rows. Commands print it, so that a user sees that
// nothing was merged or lost.
type RowCount struct {
	Lines, Header, Blank, Rows int
}

func (c RowCount) String() string {
	return fmt.Sprintf("%d lines: %d header, %d blank, %d rows", c.Lines, c.Header, c.Blank, c.Rows)
}

// Cell returns row r's cell in column i and its JSON kind ("" for a
// string, "absent" for a column the row lacks).
func (r TableRow) Cell(i int) (string, string) {
	if i >= len(r.Cells) {
		return "", "absent"
	}
	if r.Kinds != nil && r.Kinds[i] != "" {
		return r.Cells[i], r.Kinds[i]
	}
	return r.Cells[i], ""
}

// Column returns the position of the named column, or an error naming the
// file, line 1 and the column, with the columns there are.
func (t *Table) Column(name string) (int, error) {
	if i := slices.Index(t.Header, name); i >= 0 && name != "-" {
		return i, nil
	}
	switch {
	case t.Format == JSONL:
		return 0, &RowError{File: t.Path, Line: 1, Field: name, Err: fmt.Errorf("missing column (no line has it; the fields are %q)", t.Header)}
	case t.Count.Header == 0:
		return 0, &RowError{File: t.Path, Line: 1, Field: name, Err: fmt.Errorf("missing column (columns: %q)", t.Header)}
	}
	return 0, &RowError{File: t.Path, Line: 1, Field: name, Err: fmt.Errorf("missing column (header %q; a headerless file names its columns by position: columns: [text, label])", t.Header)}
}

// ReadFile returns the bytes of path ("-" is standard input), decompressing
// a ".gz" file, with a truncated gzip stream reported as such (with the
// line it breaks off in) rather than as whatever its last partial line
// fails to be, and a file that is not UTF-8 refused before any of it is
// taken as text.
func ReadFile(path string) ([]byte, error) {
	if path == "-" {
		return readFrom(os.Stdin, path)
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, notFound(path)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readFrom(f, path)
}

// ReadFrom is ReadFile of what r reads, named path in errors (and
// decompressed when path ends in ".gz"): a command reads "-" from its own
// input stream this way.
func readFrom(r io.Reader, path string) ([]byte, error) {
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		// The whole decompressed file is held: refused once it outgrows
		// the memory limit, not when the allocation fails.
		r = memlimit.Reader(zr, "decompressing "+path, 1)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, &RowError{File: path, Line: countLines(b) + 1, Err: fmt.Errorf("the gzip stream is truncated: it breaks off in this line (an interrupted download or copy?): %w", err)}
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := CheckUTF8(path, b); err != nil {
		return nil, err
	}
	return bytes.TrimPrefix(b, []byte("\ufeff")), nil
}

// notFound says a file is not there in the words every command uses, and
// is fs.ErrNotExist.
type notFound string

func (p notFound) Error() string { return string(p) + ": file not found" }
func (notFound) Unwrap() error   { return fs.ErrNotExist }

// ReadTable reads a CSV, TSV or JSONL file (".gz" decompressed, "-" for
// standard input) as the dialect says. Errors name the file, line and
// column.
func ReadTable(path string, d Dialect) (*Table, error) {
	return readTable(path, d, func() ([]byte, error) { return ReadFile(path) })
}

// ReadTableFrom is ReadTable of what r reads, named path (whose ending
// gives the format unless the dialect does): a command reads "-" from its
// own input stream this way, not from the process's.
func ReadTableFrom(r io.Reader, path string, d Dialect) (*Table, error) {
	return readTable(path, d, func() ([]byte, error) { return readFrom(r, path) })
}

// readTable refuses a dialect that cannot read path before read reads its
// bytes, then parses them.
func readTable(path string, d Dialect, read func() ([]byte, error)) (*Table, error) {
	format, err := d.format(path)
	if err != nil {
		return nil, err
	}
	if len(d.Columns) > 0 && format == JSONL {
		return nil, fmt.Errorf("%s: columns: a JSON-lines file names its fields itself", path)
	}
	b, err := read()
	if err != nil {
		return nil, err
	}
	t := &Table{Path: path, Format: format, Count: RowCount{Lines: countLines(b)}}
	switch {
	case format == JSONL:
		err = t.readJSONL(b)
	case format == TSV && !d.Quoted:
		err = t.readVerbatim(b, d.Columns)
	default:
		sep := ','
		if format == TSV {
			sep = '\t'
		}
		err = t.readQuoted(b, sep, d)
	}
	if err != nil {
		return nil, err
	}
	return t, nil
}

// countLines counts b's lines, a last one without a line end included.
func countLines(b []byte) int {
	n := bytes.Count(b, []byte("\n"))
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}

// setHeader takes the header line (or the declared columns) and refuses a
// column named twice: which of the two a reader took was an accident.
func (t *Table) setHeader(cells []string, declared bool) error {
	t.Header = make([]string, len(cells))
	seen := map[string]int{}
	for i, h := range cells {
		if !declared {
			h = strings.TrimSpace(h)
		}
		t.Header[i] = h
		if h == "-" && declared {
			continue
		}
		if j, dup := seen[h]; dup {
			what := "the header names"
			if declared {
				what = "columns names"
			}
			return &RowError{File: t.Path, Line: 1, Field: h, Err: fmt.Errorf("%s the column twice (positions %d and %d): rename one", what, j+1, i+1)}
		}
		seen[h] = i
	}
	return nil
}

// addRow appends a CSV or TSV row after checking its width.
func (t *Table) addRow(line int, cells []string) error {
	if len(cells) != len(t.Header) {
		what := "header has"
		if t.Count.Header == 0 {
			what = "columns: names"
		}
		return &RowError{File: t.Path, Line: line, Err: fmt.Errorf("%d columns, %s %d", len(cells), what, len(t.Header))}
	}
	t.Rows = append(t.Rows, TableRow{Line: line, Cells: cells})
	t.Count.Rows++
	return nil
}

// readVerbatim reads an unquoted TSV: one row a line.
func (t *Table) readVerbatim(b []byte, columns []string) error {
	if len(columns) > 0 {
		if err := t.setHeader(columns, true); err != nil {
			return err
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<26)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSuffix(sc.Text(), "\r")
		if text == "" {
			t.Count.Blank++
			continue
		}
		cells := strings.Split(text, "\t")
		if t.Header == nil {
			t.Count.Header = 1
			if err := t.setHeader(cells, false); err != nil {
				return err
			}
			continue
		}
		if err := t.addRow(line, cells); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", t.Path, err)
	}
	if t.Header == nil {
		return &RowError{File: t.Path, Line: 1, Err: errors.New("empty file, want a header (or declare the columns: columns: [text, label])")}
	}
	return nil
}

// readQuoted reads an RFC 4180 CSV (or a TSV declared quoted).
func (t *Table) readQuoted(b []byte, sep rune, d Dialect) error {
	if len(d.Columns) > 0 {
		if err := t.setHeader(d.Columns, true); err != nil {
			return err
		}
	}
	cr := csv.NewReader(bytes.NewReader(b))
	cr.Comma = sep
	cr.FieldsPerRecord = -1
	consumed, off := 0, int64(0) // lines and bytes read so far
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			msg := fmt.Errorf("%w (the dialect is RFC 4180: quote a cell that holds a quote, doubling it; a TSV is read verbatim unless declared quoted)", pe.Err)
			if pe.StartLine != pe.Line {
				msg = fmt.Errorf("the row's quoted cell runs on to line %d, where at column %d: %w", pe.Line, pe.Column, msg)
				return &RowError{File: t.Path, Line: pe.StartLine, Err: msg}
			}
			return &RowError{File: t.Path, Line: pe.Line, Column: pe.Column, Err: msg}
		}
		if err != nil {
			return fmt.Errorf("%s: %w", t.Path, err)
		}
		// The bytes since the last row hold the blank lines csv skipped
		// before this one, then its own lines.
		end := cr.InputOffset()
		start, _ := cr.FieldPos(0)
		blank := start - consumed - 1
		lines := countLines(b[off:end]) - blank
		off = end
		t.Count.Blank += blank
		consumed = start + lines - 1
		if lines > 1 && !d.Multiline {
			for i, c := range rec {
				if strings.Contains(c, "\n") {
					l, _ := cr.FieldPos(i)
					return &RowError{File: t.Path, Line: l, Field: t.fieldName(i, rec), Err: fmt.Errorf("a quoted cell runs over %d lines, to line %d: an unbalanced quote would merge them into one row (if cells do hold line breaks, declare multiline: true)", lines, start+lines-1)}
				}
			}
		}
		if t.Header == nil {
			t.Count.Header = lines
			if err := t.setHeader(slices.Clone(rec), false); err != nil {
				return err
			}
			continue
		}
		if err := t.addRow(start, slices.Clone(rec)); err != nil {
			return err
		}
	}
	t.Count.Blank += t.Count.Lines - consumed
	if t.Header == nil {
		return &RowError{File: t.Path, Line: 1, Err: errors.New("empty file, want a header (or declare the columns: columns: [text, label])")}
	}
	return nil
}

// fieldName names cell i of a record by the header, else by position.
func (t *Table) fieldName(i int, rec []string) string {
	if i < len(t.Header) && t.Header[i] != "-" {
		return t.Header[i]
	}
	return strconv.Itoa(i + 1)
}

// readJSONL reads one JSON object a line; its keys are the columns.
func (t *Table) readJSONL(b []byte) error {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<26)
	col := map[string]int{}
	for line := 1; sc.Scan(); line++ {
		l := bytes.TrimSpace(sc.Bytes())
		if len(l) == 0 {
			t.Count.Blank++
			continue
		}
		var obj map[string]any
		dec := json.NewDecoder(bytes.NewReader(l))
		dec.UseNumber()
		err := dec.Decode(&obj)
		if err == nil && dec.More() {
			err = errors.New("more than one value on the line")
		}
		if err == nil && obj == nil {
			err = errors.New("null")
		}
		if err != nil {
			var se *json.SyntaxError
			if errors.As(err, &se) {
				return &RowError{File: t.Path, Line: line, Column: int(se.Offset), Err: fmt.Errorf("not a JSON object: %w", err)}
			}
			return &RowError{File: t.Path, Line: line, Err: fmt.Errorf("not a JSON object: %w", err)}
		}
		for _, k := range slices.Sorted(mapKeys(obj)) {
			if _, ok := col[k]; !ok {
				col[k] = len(t.Header)
				t.Header = append(t.Header, k)
			}
		}
		row := TableRow{Line: line, Cells: make([]string, len(t.Header)), Kinds: make([]string, len(t.Header))}
		for i := range row.Kinds {
			row.Kinds[i] = "absent"
		}
		for k, v := range obj {
			i := col[k]
			row.Cells[i], row.Kinds[i] = jsonCell(v)
		}
		t.Rows = append(t.Rows, row)
		t.Count.Rows++
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", t.Path, err)
	}
	return nil
}

// jsonCell returns a JSON value as a cell, and its kind unless a string.
func jsonCell(v any) (string, string) {
	switch v := v.(type) {
	case string:
		return v, ""
	case json.Number:
		return v.String(), "a number"
	case bool:
		return strconv.FormatBool(v), "true or false"
	case nil:
		return "", "null"
	default:
		raw, _ := json.Marshal(v)
		return string(raw), "a list or an object"
	}
}

// TextProblem says what is likely wrong with a text read as it is: empty
// (or only white space), or holding a control character — a NUL byte, an
// escape, U+FFFD from a decoding that failed — other than tab and
// newline. "" for a text without either. Every reader of texts (i.i.d.
// files and suites alike) warns with it, naming the file, line and field.
func TextProblem(text string) string {
	if strings.TrimSpace(text) == "" {
		return "empty text"
	}
	for i, r := range text {
		if r == '\t' || r == '\n' || r == '\r' {
			continue
		}
		if unicode.IsControl(r) || r == utf8.RuneError {
			return fmt.Sprintf("control character %U at byte %d (%q)", r, i, text)
		}
	}
	return ""
}
