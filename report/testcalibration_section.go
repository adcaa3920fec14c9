package report

import (
	"fmt"
	"io"
)

// writeTestCalibration is the test report's calibration section: per model
// with one, its data, calibration per test and worst test (Markdown);
// nothing in the printed text, which names calibration.md instead.
func writeTestCalibration(w io.Writer, r *TestReport, md bool) error {
	if !md || len(r.Calibration) == 0 {
		return nil
	}
	for _, c := range r.Calibration {
		title := "Calibration"
		if len(r.Models) > 1 {
			title += ": " + c.Model
		}
		if _, err := fmt.Fprintf(w, "## %s\n\n", mdEscape(title)); err != nil {
			return err
		}
		if err := c.WriteMarkdown(w, "### "); err != nil {
			return err
		}
	}
	return nil
}
