package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/beluga-nlp/beluga/experiments"
)

// migrateOptions are beluga migrate's flags and argument.
type migrateOptions struct {
	storeArg // arg: the store
	from     string
}

// NewCmdMigrate builds beluga migrate.
func NewCmdMigrate() *cobra.Command {
	o := &migrateOptions{}
	cmd := &cobra.Command{
		Use:   "migrate STORE",
		Short: "Re-key a run store an older beluga wrote, without retraining",
		Long: `migrate moves every finished run of a store an older beluga wrote — whose run
IDs hashed the spec as written (grid keys as spelt, paths as given) — to the
directory of its ID today: the hash of what it computes, its resolved training
spec and the SHA-256 of every file it reads. Nothing is retrained. Each run
gets a new spec.json and a "done" that records its files; sweep.json is
rewritten; unfinished runs are removed (beluga run redoes them); two runs that
are one computation under two spellings (lr and hyper.lr) become one.

The older runs did not record their inputs' content: migrate assumes the
files they name are today's (paths relative to the working directory, as the
older beluga read them; datasets by name through the data cache, --from as
beluga run) and says which it digested. If one changed since the runs ran,
remove those runs: they are not what their new IDs say. migrate prints the
old -> new ID of every run it moved, and may be run again after an
interruption.

A store whose records are of today's form but whose IDs were computed before
they hashed only what a run reads (its effective spec) is re-keyed from its
records alone (their inputs' digests are recorded): each finished run is
checked against its done first, and a damaged one (a truncated result or
model) is moved without done and said, never vouched for; a run whose
spec.json cannot be read is said; two old runs that are one computation now
(they differed in a setting neither reads) become one.

A checkpoint named by hub id (model: {checkpoint: org/name}) that an older
beluga recorded by the digest of its files, without its commit, is given its
commit from the hub cache: the snapshot of that repository whose files have
that digest (offline; a commit is never guessed). A run whose checkpoint no
cached snapshot matches is said and left as it is: fetch the commit it read
and migrate again.

A search that trained its trials one after another inside itself (before
each trial was a run of its own) gets its trial runs from its record
(hp_search.json holds every trial's point and scores), so that the store
holds every run of today's sweep; nothing is retrained.`,
		Example: `  beluga migrate quickstart-out
  beluga migrate runs/sent-full --from ../shared/data`,
		Args: cobra.ExactArgs(1),
		RunE: runE(o),
	}
	cmd.Flags().StringVar(&o.from, "from", "", "take data files from this local directory (laid out like ../shared/data) instead of the network")
	return cmd
}

func (o *migrateOptions) validate() error {
	st, err := os.Stat(o.arg)
	if err != nil {
		return fmt.Errorf("run store: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a run store directory (beluga migrate takes the store, not the spec)", o.arg)
	}
	return nil
}

func (o *migrateOptions) run(ctx context.Context) error {
	stdout, stderr := o.Out, o.ErrOut
	s := &experiments.Store{Dir: o.arg}
	if !s.NeedsMigrate() {
		return splitSearches(s, stdout)
	}
	in, err := newInputs(o.from, false)
	if err != nil {
		return err
	}
	m, err := experiments.Migrate(ctx, s, in)
	if m != nil {
		for _, line := range m.Summary() {
			fmt.Fprintln(stdout, line)
		}
		if lines := m.AssumedLines(); len(lines) > 0 {
			fmt.Fprintf(stderr, "warning: the older runs did not record what their inputs held; their new IDs assume these files are what they read (remove the runs of any that changed since):\n  %s\n", strings.Join(lines, "\n  "))
		}
		fmt.Fprintf(stdout, "%s: %d runs moved (%d of them damaged, without done), %d merged into another, %d unfinished removed, %d not migrated; nothing retrained\n",
			o.arg, len(m.Moved), len(m.Damaged), len(m.Merged), len(m.Removed), len(m.Failed))
		if len(m.Failed) > 0 && err == nil {
			err = fmt.Errorf("%d runs could not be migrated (above): the store keeps its older sweep.json until they are", len(m.Failed))
		}
		if len(m.Damaged) > 0 && err == nil {
			err = fmt.Errorf("%d runs were damaged (above): not vouched for, beluga run redoes them", len(m.Damaged))
		}
	}
	if serr := in.Digests.Save(); err == nil {
		err = serr
	}
	if err == nil {
		err = splitSearches(s, stdout)
	}
	return err
}

// splitSearches gives the store's searches that ran their trials inside
// themselves (an older beluga) their trial runs, from their records.
func splitSearches(s *experiments.Store, stdout io.Writer) error {
	searches, trials, err := s.SplitSearches()
	switch {
	case searches > 0:
		fmt.Fprintf(stdout, "%s: %d searches split into %d trial runs from their records; nothing retrained\n", s.Dir, searches, trials)
	case err == nil:
		fmt.Fprintf(stdout, "%s: nothing to migrate (its runs are identified by what they compute, its searches' trials are runs)\n", s.Dir)
	}
	return err
}
