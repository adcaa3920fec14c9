package report

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/beluga-nlp/beluga/internal/atomicfile"
	"github.com/beluga-nlp/beluga/metrics"
)

// TestCalibration is the test report's calibration section for one
// model: how well its confidence matches its accuracy on the suite's
// labelled inputs, per test, and on the user's own labelled data when
// beluga test was given some (--data), with the reliability diagram and
// the confidence histogram of passing and failing cases.
type TestCalibration struct {
	Model string `json:"model"`
	// Data is the user's labelled data's view (nil without --data).
	Data *metrics.Labelled `json:"data,omitempty"`
	// Tests are the calibration per test on its labelled inputs (MFT), the
	// first over all of them (metrics.AllLabelledInputs); equal-width bins.
	Tests []metrics.FunctionalityCalibration `json:"tests,omitempty"`
	// Passing and Failing count the scored cases whose confidences the
	// histogram shows.
	Passing int `json:"passing"`
	Failing int `json:"failing"`
	// Worst is the test with the lowest pass rate, with its 95 % Wilson
	// interval: the worst group, as WILDS-style reports give it.
	Worst WorstGroup `json:"worst"`
	// SVG is the figure, drawn at paper width, for the page.
	SVG string `json:"svg,omitempty"`
}

// NewTestCalibration measures one model's calibration from its case
// verdicts (with their inputs' probabilities) and, when given, its
// labelled data's view. It returns nil when there is nothing to measure:
// no labelled input, no case with probabilities and no data.
func NewTestCalibration(model string, cases []metrics.CaseVerdict, data *metrics.Labelled) (*TestCalibration, error) {
	res := &metrics.Result{Cases: cases}
	tests, err := res.Calibrations(metrics.DefaultBins, metrics.EqualWidth)
	if err != nil {
		return nil, fmt.Errorf("calibration of %s: %w", model, err)
	}
	pass, fail := res.CaseConfidences()
	if len(tests) == 0 && len(pass)+len(fail) == 0 && data == nil {
		return nil, nil
	}
	c := &TestCalibration{Model: model, Data: data, Tests: tests, Passing: len(pass), Failing: len(fail), Worst: worstTest(cases)}
	var b bytes.Buffer
	if err := WriteCalibrationPlot(&b, "svg", c.figure(pass, fail), HeatmapOptions{}); err != nil {
		return nil, fmt.Errorf("calibration of %s: %w", model, err)
	}
	c.SVG = b.String()
	return c, nil
}

// worstTest is the test whose scored cases pass least often.
func worstTest(cases []metrics.CaseVerdict) WorstGroup {
	var names []string
	counts := map[string][2]int{}
	for _, c := range cases {
		n, ok := counts[c.Functionality]
		if !ok {
			names = append(names, c.Functionality)
		}
		switch c.Verdict {
		case metrics.Pass:
			n[0]++
			n[1]++
		case metrics.Fail:
			n[1]++
		}
		counts[c.Functionality] = n
	}
	return worstGroup(names, counts)
}

// WriteCalibrationFigure writes the section's figure to path (.png, .svg
// or .pdf): the SVG kept for the page is drawn again in the format asked.
func (c *TestCalibration) WriteCalibrationFigure(path string, cases []metrics.CaseVerdict) error {
	pass, fail := (&metrics.Result{Cases: cases}).CaseConfidences()
	return WriteCalibrationPlotFile(path, c.figure(pass, fail), HeatmapOptions{})
}

// figure is the section's figure: the user's data's and the suite's
// reliability curves, the passing and failing cases' confidences.
func (c *TestCalibration) figure(pass, fail []float64) CalibrationFigure {
	fig := CalibrationFigure{Passing: pass, Failing: fail}
	if c.Data != nil {
		fig.Curves = append(fig.Curves, CalibrationCurve{Label: "your data (" + c.Data.Name + ")", Calibration: c.Data.Width})
	}
	if len(c.Tests) > 0 {
		fig.Curves = append(fig.Curves, CalibrationCurve{Label: "suite, labelled inputs", Calibration: c.Tests[0].Calibration})
	}
	return fig
}

// WriteMarkdown writes the section: the user's data (headline, per class,
// confusion matrix), then the calibration per test, worst ECE first; its
// headings start with heading ("## " in calibration.md, "### " in the
// test report).
func (c *TestCalibration) WriteMarkdown(w io.Writer, heading string) error {
	var b strings.Builder
	head := func(s string) { b.WriteString(heading + s + "\n\n") }
	if c.Data != nil {
		head("Your data: " + c.Data.Name)
		if err := c.Data.WriteMarkdown(&b); err != nil {
			return err
		}
		b.WriteString("\n")
	}
	if len(c.Tests) > 0 {
		head("Calibration per test (labelled inputs)")
		b.WriteString("| test | capability | n | accuracy | confidence | ECE | Brier |\n|---|---|---:|---:|---:|---:|---:|\n")
		rows := slices.Clone(c.Tests[1:])
		// Worst calibrated first: where confidence misleads most.
		slices.SortStableFunc(rows, func(x, y metrics.FunctionalityCalibration) int {
			return cmp.Compare(y.Calibration.ECE, x.Calibration.ECE)
		})
		for _, f := range append(c.Tests[:1:1], rows...) {
			k := f.Calibration
			brier := "–"
			if !math.IsNaN(k.Brier) {
				brier = fmt.Sprintf("%.3f", k.Brier)
			}
			fmt.Fprintf(&b, "| %s | %s | %d | %.1f%% | %.1f%% | %.3f | %s |\n", mdEscape(f.Functionality), mdEscape(f.Class), k.N, 100*k.Accuracy, 100*k.Confidence, k.ECE, brier)
		}
		fmt.Fprintf(&b, "\nECE over %d equal-width bins of the predicted class's probability; Brier: the multi-class Brier score (0 best, 2 worst). INV and DIR tests have no labels and are measured by their fail rates only.\n\n", metrics.DefaultBins)
	}
	if w := c.Worst; w.Scored > 0 {
		fmt.Fprintf(&b, "Worst test: %s, pass rate %.1f%% (%d of %d cases; 95%% Wilson interval [%.1f, %.1f]).\n\n", w.Name, w.Rate, w.Passed, w.Scored, w.Lo, w.Hi)
	}
	if c.Passing+c.Failing > 0 {
		fmt.Fprintf(&b, "The confidence histogram shows the %d passing and %d failing cases (each case's first input: the original of an INV or DIR case); failures made with high confidence are the over-confident ones.\n\n", c.Passing, c.Failing)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// TestCalibrationFile is where a folder beluga test wrote keeps its
// calibration section, read back by ReadTestDir.
const TestCalibrationFile = "calibration.json"

// testCalibrationFormat is the version of calibration.json.
const testCalibrationFormat = 1

// WriteTestCalibration writes the section to path (calibration.json).
func WriteTestCalibration(path string, c *TestCalibration) error {
	b, err := json.MarshalIndent(struct {
		Format int `json:"format"`
		*TestCalibration
	}{testCalibrationFormat, c}, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, append(b, '\n'))
}

// ReadTestCalibration reads the calibration section of a folder beluga
// test wrote; nil when it has none (written before calibration, or with
// nothing to measure).
func ReadTestCalibration(dir string) (*TestCalibration, error) {
	path := filepath.Join(dir, TestCalibrationFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var doc struct {
		Format int `json:"format"`
		TestCalibration
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if doc.Format != testCalibrationFormat {
		return nil, fmt.Errorf("%s: format %d, this beluga reads %d", path, doc.Format, testCalibrationFormat)
	}
	return &doc.TestCalibration, nil
}
