// Package termtext makes names read from files safe to print on a
// terminal. A suite's functionality, a spec's task or a label is text a
// stranger wrote; printed raw, ESC]0;… retitles the window, ESC[2J clears
// the screen, ESC[8m hides what follows, and a right-to-left override
// reverses it — a status table can be made to say anything. Every command
// that prints such a name in its human-readable output (not in a data
// format the user asked for: CSV, JSON) passes it through Name.
package termtext

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Name returns s with every control character (C0, DEL, C1 — tab and
// newline included: a name is one line) and every bidirectional
// formatting character escaped as Go writes it in a string literal
// (\x1b, \u009b, \u202e), and invalid UTF-8 as \xNN bytes. Anything else,
// every script included, is kept; a name without such characters is
// returned as it is.
func Name(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unsafe(r):
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func clean(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unsafe(r) {
			return false
		}
	}
	return true
}

// unsafe reports whether r changes what a terminal shows beyond itself.
func unsafe(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
}
