package metrics

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/beluga-nlp/beluga/internal/termtext"
	"github.com/beluga-nlp/beluga/suites"
)

// UnmarshalText reads pass, fail or filtered.
func (v *Verdict) UnmarshalText(b []byte) error {
	for _, c := range []Verdict{Pass, Fail, Filtered} {
		if string(b) == c.String() {
			*v = c
			return nil
		}
	}
	return fmt.Errorf("unknown verdict %q (want pass, fail or filtered)", b)
}

// ReadCases reads a case file (WriteCases): one verdict per line, in suite
// order. Files written before the cases carried their inputs read with
// Inputs empty.
func ReadCases(path string) ([]CaseVerdict, error) { return readJSONLines[CaseVerdict](path) }

// WriteFailures lists the failing cases of a case file per functionality,
// in suite order: a heading with the functionality's class, type, failure
// count and expectation, then its failing cases worst first (largest
// violation, as CheckList's summary orders examples; ties in case order),
// each with its inputs, the expected label and the prediction. The
// inputs that break the expectation are marked ✗ with the size of their
// violation (ViolationText); in a case of more than FoldAbove inputs the
// ones that keep it are counted, not listed. functionality, when not
// empty, keeps that functionality only (an error names the known ones
// when it has no case).
func WriteFailures(w io.Writer, cases []CaseVerdict, functionality string) error {
	var order []string
	by := map[string][]CaseVerdict{}
	for _, c := range cases {
		if _, ok := by[c.Functionality]; !ok {
			order = append(order, c.Functionality)
		}
		by[c.Functionality] = append(by[c.Functionality], c)
	}
	if functionality != "" {
		if _, ok := by[functionality]; !ok {
			return fmt.Errorf("no functionality %q among the run's cases (it has %s)", functionality, strings.Join(quoteAll(order), ", "))
		}
		order = []string{functionality}
	}
	bw := bufio.NewWriter(w)
	total, failed := 0, 0
	for _, name := range order {
		cs := by[name]
		fails := WorstFirst(cs)
		scored := 0
		for _, c := range cs {
			if c.Verdict != Filtered {
				scored++
			}
		}
		total += scored
		failed += len(fails)
		writeFailureHeading(bw, name, cs[0], len(fails), scored)
		for _, c := range fails {
			writeFailingCase(bw, c)
		}
	}
	if functionality == "" {
		fmt.Fprintf(bw, "%d of %d scored cases failed in %d functionalities\n", failed, total, len(order))
	}
	return bw.Flush()
}

// WorstFirst returns the failing cases of cs, largest violation first and
// in case order among equals.
func WorstFirst(cs []CaseVerdict) []CaseVerdict {
	var fails []CaseVerdict
	for _, c := range cs {
		if c.Verdict == Fail {
			fails = append(fails, c)
		}
	}
	slices.SortStableFunc(fails, func(a, b CaseVerdict) int { return cmp.Compare(b.Violation, a.Violation) })
	return fails
}

// FoldAbove is the number of inputs above which a failing case lists only
// its original and the inputs that break it.
const FoldAbove = 6

// ViolationText says how far an input breaks its functionality's
// expectation (InputVerdict.Violation), in the terms of its test type.
func ViolationText(t suites.TestType, v float64) string {
	return t.Spec().Violation(v)
}

func writeFailureHeading(bw *bufio.Writer, name string, first CaseVerdict, fails, scored int) {
	var about []string
	for _, s := range []string{first.Class, string(first.Type)} {
		if s != "" {
			about = append(about, termtext.Name(s))
		}
	}
	fmt.Fprintf(bw, "%s", termtext.Name(name))
	if len(about) > 0 {
		fmt.Fprintf(bw, " (%s)", strings.Join(about, ", "))
	}
	fmt.Fprintf(bw, ": %d of %d scored cases failed", fails, scored)
	if first.Expect != "" {
		fmt.Fprintf(bw, "; expects: %s", first.Expect)
	}
	bw.WriteString("\n")
}

func writeFailingCase(bw *bufio.Writer, c CaseVerdict) {
	if len(c.Inputs) == 0 {
		fmt.Fprintf(bw, "  case %d (this case file predates inputs with texts: rerun the run for them)\n", c.Case)
		return
	}
	fmt.Fprintf(bw, "  case %d:\n", c.Case)
	fold := len(c.Inputs) > FoldAbove
	kept := 0
	for i, in := range c.Inputs {
		if fold && i > 0 && !in.Breaks() {
			kept++
			continue
		}
		text := strconv.Quote(in.Text)
		if in.Pair != "" {
			text += " / " + strconv.Quote(in.Pair)
		}
		role := ""
		if len(c.Inputs) > 1 {
			role = "perturbed "
			if i == 0 {
				role = "original  "
			}
		}
		mark := "  "
		if in.Breaks() {
			mark = "✗ "
		}
		fmt.Fprintf(bw, "  %s%s%s → %s", mark, role, text, in.Pred)
		if in.PredClass != nil && *in.PredClass >= 0 && *in.PredClass < len(in.Probs) {
			fmt.Fprintf(bw, " (p=%.3f)", in.Probs[*in.PredClass])
		}
		if in.Label != "" {
			fmt.Fprintf(bw, ", expected %s", in.Label)
		}
		if in.Breaks() && in.Violation > 0 {
			fmt.Fprintf(bw, "; %s", ViolationText(c.Type, in.Violation))
		}
		bw.WriteString("\n")
	}
	if kept > 0 {
		fmt.Fprintf(bw, "    … and %d more perturbations that keep the expectation\n", kept)
	}
}

func quoteAll(xs []string) []string {
	out := slices.Clone(xs)
	for i, x := range out {
		out[i] = strconv.Quote(x)
	}
	return out
}
