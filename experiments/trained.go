package experiments

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

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
// nil without error for a run that wrote none (a span run, or a store
// written before runs recorded it).
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
// which reads the suite and i.i.d. files but loads no model). A span
// run's sizes are unknown (ok false).
func SizesOf(store *Store, r Run) (z Sizes, ok bool, err error) {
	t, err := store.Trained(r.ID())
	if err != nil {
		return z, false, err
	}
	z.Recorded = t != nil
	if t == nil {
		if t, err = train.DataOf(r.Train); err != nil || t == nil {
			return z, false, err
		}
	}
	z.Record = t
	z.IIDRows, z.SuiteCases = t.TrainedCounts()
	return z, true, nil
}
