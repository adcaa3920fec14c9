package metrics

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
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
func ReadCases(path string) ([]CaseVerdict, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []CaseVerdict
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<26)
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var c CaseVerdict
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// WriteFailures lists the failing cases of a case file per functionality,
// in suite order: a heading with the functionality's class, type, failure
// count and expectation, then per failing case its inputs with the
// expected label and the prediction. functionality, when not empty, keeps
// that functionality only (an error names the known ones when it has no
// case).
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
		var fails []CaseVerdict
		scored := 0
		for _, c := range cs {
			if c.Verdict != Filtered {
				scored++
			}
			if c.Verdict == Fail {
				fails = append(fails, c)
			}
		}
		total += scored
		failed += len(fails)
		first := cs[0]
		var about []string
		for _, s := range []string{first.Class, string(first.Type)} {
			if s != "" {
				about = append(about, s)
			}
		}
		fmt.Fprintf(bw, "%s", name)
		if len(about) > 0 {
			fmt.Fprintf(bw, " (%s)", strings.Join(about, ", "))
		}
		fmt.Fprintf(bw, ": %d of %d scored cases failed", len(fails), scored)
		if first.Expect != "" {
			fmt.Fprintf(bw, "; expects: %s", first.Expect)
		}
		bw.WriteString("\n")
		for _, c := range fails {
			if len(c.Inputs) == 0 {
				fmt.Fprintf(bw, "  case %d (this case file predates inputs with texts: rerun the run for them)\n", c.Case)
				continue
			}
			fmt.Fprintf(bw, "  case %d:\n", c.Case)
			for i, in := range c.Inputs {
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
				fmt.Fprintf(bw, "    %s%s → %s", role, text, in.Pred)
				if in.PredClass != nil && *in.PredClass >= 0 && *in.PredClass < len(in.Probs) {
					fmt.Fprintf(bw, " (p=%.3f)", in.Probs[*in.PredClass])
				}
				if in.Label != "" {
					fmt.Fprintf(bw, ", expected %s", in.Label)
				}
				bw.WriteString("\n")
			}
		}
	}
	if functionality == "" {
		fmt.Fprintf(bw, "%d of %d scored cases failed in %d functionalities\n", failed, total, len(order))
	}
	return bw.Flush()
}

func quoteAll(xs []string) []string {
	out := slices.Clone(xs)
	for i, x := range out {
		out[i] = strconv.Quote(x)
	}
	return out
}
