package train

import (
	"cmp"
	"fmt"
	"log/slog"
	"slices"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/inputcheck"
)

// iidData is a run's i.i.d. data: the training rows, the dev file whole
// (BeLUGA halves it) or the split file's dev part, and the scored test
// rows; parts are all of them with their file lines, for the input checks,
// with the rows a split declared for each (declared) and what the files'
// label maps did (labels).
type iidData struct {
	train, dev, test []datasets.Example
	parts            []inputcheck.Part
	declared         []int
	// lines and files are each part's file lines (negative: a built-in
	// reader's row positions) and file, for the run's trained.json.
	lines  [][]int
	files  []string
	labels []inputcheck.FileLabels
	// labelNames are the task's labels, naming the parts' rows.
	labelNames []string
	// eval are the extra evaluation sets (RunSpec.IIDEval).
	eval []evalSetData
}

// readIID reads the run's i.i.d. data, as far as its configuration needs
// it: a declared file's columns (split into train, dev and test when it
// declares a split), else the built-in task's reader. The test rows are
// the dev file's test half when it is halved (always for a built-in task),
// the dev file whole otherwise.
func (s *RunSpec) readIID(task *Task) (iidData, error) {
	d := iidData{labelNames: task.Labels}
	// read reads a declared file, or a built-in task's file by its path
	// alone (its FileSpec has only the path then).
	read := func(path string, file *datasets.FileSpec) ([]datasets.Example, []int, *datasets.FileSpec, error) {
		if file != nil {
			f, err := withTaskLabels(*file, task)
			if err != nil {
				return nil, nil, nil, err
			}
			rows, err := f.ReadRows()
			d.addLabels(f, rows)
			if err == nil && once(f.Path+rows.Count.String()) {
				slog.Info("read", "file", f.Path, "lines", rows.Count.String(), "examples", len(rows.Examples), "dropped", rows.Dropped)
			}
			warnTexts(rows.Warnings)
			return rows.Examples, rows.Lines, &f, err
		}
		if path == "" {
			return nil, nil, nil, nil
		}
		if task.read == nil {
			return nil, nil, nil, fmt.Errorf("task %s: %s: a declared task's data needs its columns (iid_train_file, iid_dev_file)", task.Name, path)
		}
		// A built-in reader gives no lines: its rows are placed by their
		// position (row 1 is the first after the header).
		xs, err := task.read(path)
		rows := make([]int, len(xs))
		for i := range rows {
			rows[i] = -(i + 1)
		}
		return xs, rows, &datasets.FileSpec{Path: path}, err
	}
	if s.splitsTrainFile() {
		f, err := withTaskLabels(*s.IIDTrainFile, task)
		if err != nil {
			return d, err
		}
		parts, err := f.SplitRows()
		if err != nil {
			return d, err
		}
		d.addLabels(f, parts[0])
		d.train, d.dev, d.test = parts[0].Examples, parts[1].Examples, parts[2].Examples
		if !s.config().readsIIDTrain() {
			d.train = nil
		}
		n := len(parts[0].Examples) + len(parts[1].Examples) + len(parts[2].Examples)
		dev, test := f.Split.Sizes(n)
		for k, name := range []string{"i.i.d. train", "i.i.d. dev", "i.i.d. test"} {
			d.addPart(name, &f, parts[k].Examples, parts[k].Lines, []int{n - dev - test, dev, test}[k])
		}
	} else {
		if s.config().readsIIDTrain() {
			xs, lines, f, err := read(s.IIDTrain, s.IIDTrainFile)
			if err != nil {
				return d, err
			}
			d.train = xs
			if f != nil {
				d.addPart("i.i.d. train", f, xs, lines, 0)
			}
		}
		xs, lines, f, err := read(s.IIDDev, s.IIDDevFile)
		if err != nil {
			return d, err
		}
		if xs != nil {
			d.dev, d.test = xs, xs
			if s.IIDDevFile == nil || s.IIDDevFile.Halve {
				valIdx, testIdx := datasets.Halve(len(xs), datasets.BeLUGAHalvingSeed)
				d.test = datasets.Pick(xs, testIdx)
				d.addPart("i.i.d. validation half", f, datasets.Pick(xs, valIdx), datasets.Pick(lines, valIdx), 0)
				d.addPart("i.i.d. test half", f, d.test, datasets.Pick(lines, testIdx), 0)
			} else {
				d.addPart("i.i.d. test", f, xs, lines, 0)
			}
		}
	}
	if err := task.checkInputForm(slices.Concat(d.train, d.dev), "its i.i.d. data"); err != nil {
		return d, err
	}
	var err error
	d.eval, err = s.readEvalSets(task, &d)
	return d, err
}

// readTaskIID reads the i.i.d. data of a classification run's task
// (readIID), for what looks at the data without training on it.
func (s *RunSpec) readTaskIID() (iidData, error) {
	task, err := s.task()
	if err != nil {
		return iidData{}, err
	}
	return s.readIID(task)
}

// withTaskLabels gives a declared file the task's label names, keeping its
// label map; names of its own must be the task's.
func withTaskLabels(f datasets.FileSpec, task *Task) (datasets.FileSpec, error) {
	if len(f.Labels.Names) > 0 && !slices.Equal(f.Labels.Names, task.Labels) {
		return f, fmt.Errorf("data file %s: labels %q differ from the task's labels %q (leave them out, or map the file's labels: labels: {FILE_LABEL: TASK_LABEL})", f.Path, f.Labels.Names, task.Labels)
	}
	f.Labels.Names = task.Labels
	return f, nil
}

// addLabels records, for a file with a label map or drop list, what they
// did to its rows.
func (d *iidData) addLabels(f datasets.FileSpec, rows datasets.Rows) {
	if len(f.Labels.Map) == 0 && len(f.DropLabels) == 0 {
		return
	}
	read := map[string]string{}
	for k, t := range f.Labels.Map {
		read[k] = t.Name // a file's labels map onto names (Labels.validate)
	}
	if len(read) == 0 {
		read = nil
	}
	d.labels = append(d.labels, inputcheck.FileLabels{File: f.Path, Written: rows.FileLabels, Map: read,
		DropLabels: f.DropLabels, Dropped: rows.Dropped})
}

// addPart adds a part of the i.i.d. data, its rows placed by their file
// lines (or, negative, by their position), to the input checks' parts;
// declared is the rows its split declared (0: not a split part).
func (d *iidData) addPart(name string, f *datasets.FileSpec, xs []datasets.Example, lines []int, declared int) {
	rows := make([]inputcheck.Row, len(xs))
	for i, x := range xs {
		where := fmt.Sprintf("%s line %d", f.Path, lines[i])
		if lines[i] < 0 {
			where = fmt.Sprintf("%s row %d", f.Path, -lines[i])
		}
		rows[i] = inputcheck.Row{Text: x.Text, Pair: x.Pair, Where: where, Group: x.Group}
		if x.Label >= 0 && x.Label < len(d.labelNames) {
			rows[i].Label = d.labelNames[x.Label]
		}
	}
	p := inputcheck.Part{Name: name, Rows: rows}
	if len(xs) > 0 && xs[0].IsPair {
		p.Sides = [2]string{"first text", "second text"}
		if f.PairColumn != "" {
			p.Sides = [2]string{cmp.Or(f.TextColumn, "text"), f.PairColumn}
		}
	}
	if f.Split != nil {
		p.GroupColumn = f.Split.Group
	}
	d.parts = append(d.parts, p)
	d.declared = append(d.declared, declared)
	d.lines = append(d.lines, lines)
	d.files = append(d.files, f.Path)
}

// report is the input checks of the i.i.d. data: the texts its parts
// share, their sizes and labels, what label maps did.
func (d *iidData) report(r *inputcheck.Report) {
	r.AddOverlaps(d.parts)
	r.AddSizes(d.labelNames, d.parts, d.declared)
	for _, l := range d.labels {
		r.AddLabels(l)
	}
}

// warnTexts logs the texts of an i.i.d. file that are likely wrong (empty,
// or with a control character), as suite import does: the first ten,
// then how many more.
func warnTexts(ws []*datasets.RowError) {
	for i, w := range ws {
		if i == 10 {
			slog.Warn("i.i.d. data: more texts likely wrong", "count", len(ws)-i)
			break
		}
		if once(w.Error()) {
			slog.Warn("i.i.d. data: text kept as it is", "problem", w.Error())
		}
	}
}
