package explore

import (
	"fmt"
	"math"
	"path/filepath"

	"github.com/beluga-nlp/beluga/report"
	"github.com/beluga-nlp/beluga/suites"
)

// TestRun is one model's case file for FromTest.
type TestRun struct {
	// CasesFile is the model's case file (metrics.Result.WriteCases).
	CasesFile string
	// Labels are the suite's classes, the order of its probabilities.
	Labels []string
}

// FromTest is the page of a test report (report.TestReport: one model, or
// two compared, tested on a suite outside a run store): the page draws the
// report's sections instead of Table 3 and the heatmap, and each test's
// cases are read from the models' case files by the same code that reads
// a store's (Source.Cases), one column per model. runs follow r.Models.
func FromTest(r *report.TestReport, runs []TestRun) (*Source, error) {
	if r == nil {
		return nil, fmt.Errorf("explore: no test report")
	}
	if len(runs) != len(r.Models) {
		return nil, fmt.Errorf("explore: a test report of %d models with %d case files", len(r.Models), len(runs))
	}
	task := r.Task
	v := &View{Title: r.Title, Significance: report.Significance, Replicates: []string{""}, Warnings: r.Flags,
		Baseline: -1, Groups: []GroupTableView{}, Tasks: []TaskView{}, Test: r}
	// Only the labels: the case files carry every input's text.
	src := &Source{View: v, funcIDs: map[string]map[string]int{task: {}},
		suites: map[string]*suites.Suite{task: {Labels: runs[0].Labels}}, caseFiles: map[string]string{}}
	for _, t := range r.Tests {
		fid := len(v.Funcs)
		src.funcIDs[task][t.Name] = fid
		v.Funcs = append(v.Funcs, FuncView{ID: fid, Task: task, Name: t.Name, Class: t.Capability, Type: t.Type, Description: t.Description})
	}
	for i, m := range r.Models {
		id := TestRunID(len(r.Models), i)
		v.Rows = append(v.Rows, RowSummary{Label: m, Configuration: "test"})
		rv := RunView{ID: id, Task: task, Configuration: "test", Row: i, Seconds: Num(math.NaN()), Warnings: r.Flags}
		for fid := range v.Funcs {
			rv.Funcs = append(rv.Funcs, fid)
		}
		v.Runs = append(v.Runs, rv)
		src.caseFiles[id] = runs[i].CasesFile
	}
	return src, nil
}

// TestRunID names model i of n in a test report's case sets: "model" for
// one, "A" and "B" for two.
func TestRunID(n, i int) string {
	if n == 1 {
		return "model"
	}
	return string(rune('A' + i))
}

// FromTestDirs is the page of one folder beluga test wrote, or of two
// compared (report.Compare): the same page beluga test writes, read back.
func FromTestDirs(dirs ...string) (*Source, error) {
	r, ms, err := report.ReadTestReport(dirs...)
	if err != nil {
		return nil, err
	}
	runs := make([]TestRun, len(dirs))
	for i, d := range dirs {
		runs[i] = TestRun{CasesFile: filepath.Join(d, report.TestCasesFile), Labels: ms[i].Info.Classes}
	}
	return FromTest(r, runs)
}
