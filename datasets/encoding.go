package datasets

import (
	"bytes"
	"errors"
	"fmt"
	"unicode/utf8"
)

// ErrNotUTF8 is the cause of a RowError for a file that is not UTF-8.
var ErrNotUTF8 = errors.New("not UTF-8")

// CheckUTF8 refuses data that is not UTF-8, naming the first line and
// column (in bytes, 1-based) that is not: a file in cp1256 or Latin-1
// would otherwise be read as mojibake and trained on without a word. A
// byte-order mark is UTF-8 and passes.
func CheckUTF8(path string, b []byte) error {
	if utf8.Valid(b) {
		return nil
	}
	line := 1
	for len(b) > 0 {
		end := bytes.IndexByte(b, '\n')
		l := b
		if end >= 0 {
			l = b[:end]
		}
		if !utf8.Valid(l) {
			col := 1
			for i := 0; i < len(l); {
				r, n := utf8.DecodeRune(l[i:])
				if r == utf8.RuneError && n <= 1 {
					return &RowError{File: path, Line: line, Column: col, Err: fmt.Errorf("%w: byte 0x%02x is no UTF-8 character (a file in another encoding, such as cp1256 or Latin-1? convert it: iconv -f CP1256 -t UTF-8)", ErrNotUTF8, l[i])}
				}
				i += n
				col++
			}
		}
		if end < 0 {
			break
		}
		b = b[end+1:]
		line++
	}
	return &RowError{File: path, Line: line, Err: ErrNotUTF8}
}
