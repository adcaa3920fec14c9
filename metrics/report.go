package metrics

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/beluga-nlp/beluga/internal/atomicfile"
)

// WriteJSON writes r (without the per-case verdicts) as indented JSON to path.
func (r *Result) WriteJSON(path string) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	})
}

// WriteCases writes one verdict per test case as JSON lines to path.
func (r *Result) WriteCases(path string) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		for _, c := range r.Cases {
			if err := enc.Encode(c); err != nil {
				return err
			}
		}
		return nil
	})
}

// WriteTable prints the per-functionality results for people.
func (r *Result) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "class\tfunctionality\ttype\tcases\tfiltered\tfailed\tpass rate\t")
	for _, f := range r.Functionalities {
		rate := "-"
		if f.PassRate != nil {
			rate = fmt.Sprintf("%.1f%%", *f.PassRate)
		}
		if f.Excluded {
			rate += " (not scored)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%s\t\n", f.Class, f.Name, f.Type, f.Cases, f.Filtered, f.Failed, rate)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if r.Score != nil {
		passed, scored := r.CasesPassed()
		_, err := fmt.Fprintf(w, "\nsuite score (mean pass rate over scored functionalities): %.2f%%\ncases passed, all scored functionalities together: %d of %d (%.1f%%)\n",
			*r.Score, passed, scored, 100*float64(passed)/float64(scored))
		return err
	}
	_, err := fmt.Fprintln(w, "\nsuite score: none (every functionality was filtered)")
	return err
}

// CasesPassed counts the cases that passed and those scored (not
// filtered) over the functionalities in the suite score: HateCheck's
// overall accuracy, where the suite score weighs functionalities equally.
func (r *Result) CasesPassed() (passed, scored int) {
	for _, f := range r.Functionalities {
		if f.Excluded {
			continue
		}
		scored += f.Cases - f.Filtered
		passed += f.Cases - f.Filtered - f.Failed
	}
	return passed, scored
}
