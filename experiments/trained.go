package experiments

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/beluga-nlp/beluga/internal/csvcell"
	"github.com/beluga-nlp/beluga/train"
)

// Sizes is what one run trains on: its i.i.d. training rows and suite
// cases, as its trained.json records them (Recorded) or as its spec draws
// them from the data now (a run not done, or one written before runs
// recorded them).
type Sizes struct {
	IIDRows, SuiteCases int
	Recorded            bool
	// Record is the whole listing (train.Trained): roles, ids, digests.
	Record *train.Trained
}

// String is the sizes in a status column: "853 i.i.d. + 1,080 cases".
func (z Sizes) String() string {
	s := fmt.Sprintf("%s i.i.d. + %s cases", thousands(z.IIDRows), thousands(z.SuiteCases))
	if !z.Recorded {
		s += " (planned)"
	}
	return s
}

// Trained reads a run's record of what it trained on (train.TrainedFile):
// nil without error for a run that wrote none (a store written before
// runs recorded it).
func (s *Store) Trained(id string) (*train.Trained, error) {
	b, err := os.ReadFile(filepath.Join(s.RunDir(id), "train", train.TrainedFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var t train.Trained
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("run %s: %s: %w", id, train.TrainedFile, err)
	}
	return &t, nil
}

// SizesOf is what run r trains on: its record when the store holds one
// for it, else drawn from its data as the run will draw it (train.DataOf,
// which reads the suite and i.i.d. files but loads no model).
//
// memo, when not nil, keeps what was drawn by what draws it (the data
// fields of the run spec: not its method, hyper-parameters or model), so
// that the runs of a grid that differ in nothing else read the data once.
func SizesOf(store *Store, r Run, memo map[string]*train.Trained) (z Sizes, ok bool, err error) {
	t, err := store.Trained(r.ID())
	if err != nil {
		return z, false, err
	}
	z.Recorded = t != nil
	if t == nil {
		key := dataKey(r.Train)
		if t, ok = memo[key]; !ok {
			if t, err = train.DataOf(r.Train); err != nil {
				return z, false, err
			}
			if memo != nil {
				memo[key] = t
			}
		}
		if t == nil {
			return z, false, nil
		}
	}
	z.Record = t
	z.IIDRows, z.SuiteCases = t.TrainedCounts()
	return z, true, nil
}

// SizeRow is one run's line of a sizes table (WriteSizes).
type SizeRow struct {
	Run   Run
	Sizes Sizes
	// SeenCases are the suite cases the seen run of the same cell trains
	// on, for a held-out run (-1: none in the sweep).
	SeenCases int
}

// SizeRows lists what every run of a sweep trains on (SizesOf), each
// held-out run beside its seen run's suite cases: the seen-versus-held-out
// gap is also a gap in suite data of this size (docs/experiment-spec.md,
// budget.fold_cap). Searches, which record none, are left out.
func SizeRows(store *Store, runs []Run) ([]SizeRow, error) {
	cellOf := func(r Run) string {
		t := r.Train
		t.HeldOut, t.SuiteLimitAfterHoldOut = nil, false
		b, _ := json.Marshal(t)
		return string(b)
	}
	var rows []SizeRow
	seen := map[string]int{}
	memo := map[string]*train.Trained{}
	for _, r := range runs {
		if IsSearchScore(r.Score) {
			continue
		}
		z, ok, err := SizesOf(store, r, memo)
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", r.ID(), err)
		}
		if !ok {
			continue
		}
		if r.Score == ScoreSeen {
			seen[cellOf(r)] = z.SuiteCases
		}
		rows = append(rows, SizeRow{Run: r, Sizes: z, SeenCases: -1})
	}
	for i, row := range rows {
		if _, held := FoldKindOf(row.Run.Score); held {
			if n, ok := seen[cellOf(row.Run)]; ok {
				rows[i].SeenCases = n
			}
		}
	}
	return rows, nil
}

// WriteSizes writes a sizes table, Markdown or CSV: per run its i.i.d.
// training rows and suite training cases, and a held-out run's suite cases
// as a share of its seen run's.
func WriteSizes(w io.Writer, rows []SizeRow, csvFormat bool) error {
	head := []string{"id", "task", "configuration", "method", "score", "fold", "seed", "iid_rows", "suite_cases", "seen_suite_cases", "share_of_seen", "source"}
	var lines [][]string
	for _, r := range rows {
		seen, share := "", ""
		if r.SeenCases >= 0 {
			seen = fmt.Sprint(r.SeenCases)
			if r.SeenCases > 0 {
				share = fmt.Sprintf("%.1f%%", 100*float64(r.Sizes.SuiteCases)/float64(r.SeenCases))
			}
		}
		source := "recorded"
		if !r.Sizes.Recorded {
			source = "planned"
		}
		lines = append(lines, []string{r.Run.ID(), r.Run.Task, r.Run.Configuration, r.Run.Method, r.Run.Score, r.Run.Fold, fmt.Sprint(r.Run.Seed),
			fmt.Sprint(r.Sizes.IIDRows), fmt.Sprint(r.Sizes.SuiteCases), seen, share, source})
	}
	if csvFormat {
		cw := csvcell.NewWriter(w)
		cw.Write(head)
		cw.WriteAll(lines)
		return cw.Error()
	}
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
	for _, l := range lines {
		if _, err := fmt.Fprintf(w, "| %s |\n", strings.Join(l, " | ")); err != nil {
			return err
		}
	}
	return nil
}

// dataKey is what of a run spec draws its data (train.DataOf): its spec
// without the fields that only train — method, hyper-parameters, model,
// settings, corrections, the starting run.
func dataKey(t train.RunSpec) string {
	t.Method, t.FromIID, t.Model, t.Settings, t.Corrections = "", "", train.ModelSpec{}, train.MethodSettings{}, nil
	t.Hyper, t.IIDHyper, t.ProbeHyper, t.MaxLength, t.MaxSteps = train.Hyper{}, train.Hyper{}, train.Hyper{}, 0, 0
	b, _ := json.Marshal(t)
	return string(b)
}
