package experiments

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/beluga-nlp/beluga/models/hub"
)

// A beluga older than hub.Identity recorded a checkpoint named by hub id
// as any directory: the path of its hub-cache snapshot and the SHA-256 of
// its files (Digests.Path), with no commit. Today a hub checkpoint is its
// commit (hub.Identity.Digest), so such a store's runs read as stale.
// Migrate gives them today's identity only when the hub cache holds a
// snapshot of that repository whose files have exactly the recorded
// digest: the commit is read off the snapshot that matches, offline, and
// never guessed from a branch or from the recorded path.

// olderHubInput says whether x is a hub checkpoint as an older beluga
// recorded it: named by hub id, identified by its files' digest, no commit.
func olderHubInput(x Input) bool {
	return x.Name != "" && x.File == "" && x.Commit == "" && x.Pending == "" && !strings.HasPrefix(x.SHA256, "pending-")
}

// hubIdentityOf is today's input for an older record's hub checkpoint x:
// the snapshot in the hub cache whose files' digest is x's, preferring,
// of several with the same files, the one x's revision names in the cache;
// an error says why there is none (not cached, or several commits and no
// way to tell which the runs read).
func (in *Inputs) hubIdentityOf(ctx context.Context, x Input) (Input, error) {
	ref, err := hub.ParseRef(x.Name)
	if err != nil {
		return Input{}, fmt.Errorf("checkpoint %s: %w", x.Name, err)
	}
	snaps, err := in.hub().Cached()
	if err != nil {
		return Input{}, err
	}
	var match []hub.CachedModel
	for _, s := range snaps {
		if s.Repo != ref.Repo {
			continue
		}
		if sum, _, err := in.digests().Path(s.Dir); err == nil && sum == x.SHA256 {
			match = append(match, s)
		}
	}
	pick := -1
	for i, s := range match {
		if s.Commit == ref.Revision || slices.Contains(s.Refs, ref.Revision) {
			pick = i
		}
	}
	switch {
	case len(match) == 0:
		return Input{}, fmt.Errorf("checkpoint %s (sha256 %.12s… of its files, no commit recorded): no snapshot of it in the hub cache %s holds those files, so its commit is not known; fetch the commit the runs read (huggingface-cli download %s --revision COMMIT) and migrate again", x.Name, x.SHA256, in.hub().RepoDir(ref.Repo), ref.Repo)
	case pick < 0 && len(match) > 1:
		var commits []string
		for _, s := range match {
			commits = append(commits, s.Commit)
		}
		return Input{}, fmt.Errorf("checkpoint %s: commits %s of the hub cache hold the same files and %s names none of them: pin the commit in the spec (%s@COMMIT) of the runs", x.Name, strings.Join(commits, ", "), ref.Revision, ref.Repo)
	case pick < 0:
		pick = 0
	}
	id, err := in.hub().Identify(ctx, ref.Repo+"@"+match[pick].Commit)
	if err != nil {
		return Input{}, err
	}
	return hubInput(x.Field, x.Name, id), nil
}

// rehubRecords gives every record's older hub checkpoints (olderHubInput)
// today's identity (hubIdentityOf), each checkpoint looked up once; a
// record whose checkpoint has none is said in m.Failed and left as it is.
func (in *Inputs) rehubRecords(ctx context.Context, records map[string]*currentRecord, m *Migration) error {
	type found struct {
		x   Input
		err error
	}
	seen := map[string]found{} // by name and digest
	for _, old := range slices.Sorted(maps.Keys(records)) {
		r := &records[old].run
		for i, x := range r.Inputs {
			if !olderHubInput(x) {
				continue
			}
			k := x.Name + "\x00" + x.SHA256
			f, ok := seen[k]
			if !ok {
				f.x, f.err = in.hubIdentityOf(ctx, x)
				if ctx.Err() != nil {
					return ctx.Err()
				}
				seen[k] = f
			}
			if f.err != nil {
				m.Failed[old] = f.err.Error()
				break
			}
			now := f.x
			now.Field = x.Field
			r.Inputs[i] = now
			for _, tf := range r.Train.InputFields() {
				if tf.Field == x.Field {
					*tf.Path = now.Path
				}
			}
		}
	}
	return nil
}

// olderHubInputs says whether any run record of the store (sweep.json's or
// a run directory's) holds an older hub checkpoint input (olderHubInput).
func (s *Store) olderHubInputs() bool {
	records, _, err := s.currentRecords(&Migration{Failed: map[string]string{}})
	if err != nil {
		return false
	}
	for _, rec := range records {
		if slices.ContainsFunc(rec.run.Inputs, olderHubInput) {
			return true
		}
	}
	return false
}

// NeedsMigrate says whether beluga migrate has something to do in the
// store: it is Legacy, or its records identify a hub checkpoint as an
// older beluga did (by its files' digest, without a commit), which makes
// its runs stale until they are re-keyed to the commit.
func (s *Store) NeedsMigrate() bool {
	return s.Legacy() || s.olderHubInputs()
}
