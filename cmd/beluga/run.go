package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/beluga-nlp/beluga/experiments"
	"github.com/beluga-nlp/beluga/internal/termtext"
	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/hub"
)

// runOptions are beluga run's flags and argument.
type runOptions struct {
	storeArg
	from                 string
	dryRun, explain      bool
	quiet                bool
	jobs                 int
	shard                string
	staleAfter, waitDeps time.Duration

	sel *experiments.Shard // --shard, parsed
}

// NewCmdRun builds beluga run.
func NewCmdRun() *cobra.Command {
	o := &runOptions{}
	cmd := &cobra.Command{
		Use:   "run SPEC",
		Short: "Execute the missing runs of an experiment spec into its run store",
		Long: `run expands an experiment spec into runs (the IID baseline, then per
configuration x method the "seen" run and one run per held-out fold) and
executes those not yet done. Each run lives in STORE/<its ID>/, the hash of
what it computes: its resolved training spec and the SHA-256 of every file it
reads (a changed suite or tokenizer is another run; a path or a key's spelling
is not). It writes "done" last, recording the digests of its files:
re-running skips finished runs and redoes interrupted and damaged ones from
scratch. One failing run does not stop the others; the command exits non-zero
when any failed. --dry-run lists the runs with their states, and which
finished runs no longer match their inputs (stale). --explain prints the
spec resolved, each value with its origin — the file, the spec's default, the
profile, the grid, or the budget or model option that sets a run's setting —
and runs nothing.

--shard I/N executes only the I-th (0-based) of N disjoint slices, for Slurm
job arrays and Kubernetes Indexed Jobs writing into one shared store.`,
		Example: `  beluga run specs/quickstart.yaml --dry-run
  beluga run specs/mhc-arabic.yaml --explain
  beluga run specs/sent-full.yaml --jobs 2
  beluga run specs/sent-full.yaml --shard $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT`,
		Args: cobra.ExactArgs(1),
		RunE: runE(o),
	}
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "list the runs and their state without executing anything")
	cmd.Flags().BoolVar(&o.explain, "explain", false, "print the resolved spec, each value with its origin (file, default, profile, grid), and run nothing")
	cmd.Flags().IntVarP(&o.jobs, "jobs", "j", 1, "runs executed at once")
	cmd.Flags().BoolVarP(&o.quiet, "quiet", "q", false, "no progress display (on a terminal: runs done, running, left and each running run's step; in a log: a line per running run every minute)")
	cmd.Flags().StringVar(&o.shard, "shard", "", "execute only slice I of N (0-based), e.g. 0/4")
	// --store, as report, serve, plot and failures name the store; --out
	// was its first name here.
	o.addStoreFlag(cmd.Flags(), "o")
	cmd.Flags().StringVar(&o.from, "from", "", "take data files from this local directory (laid out like ../shared/data) instead of the network")
	cmd.Flags().DurationVar(&o.waitDeps, "wait-deps", experiments.DefaultWaitDeps, "how long to wait for a run this one needs while another process runs it")
	cmd.Flags().DurationVar(&o.staleAfter, "stale-after", experiments.DefaultStaleAfter, "age of a claim's heartbeat after which another host's claim counts as abandoned")
	return cmd
}

func (o *runOptions) complete(cmd *cobra.Command, args []string) error {
	if o.shard != "" {
		sh, err := experiments.ParseShard(o.shard)
		if err != nil {
			return err
		}
		o.sel = &sh
	}
	return o.storeArg.complete(cmd, args)
}

// validate checks the flags before anything is read, fetched or trained.
func (o *runOptions) validate() error {
	if o.jobs < 1 {
		return fmt.Errorf("--jobs %d: want at least 1", o.jobs)
	}
	if o.staleAfter <= 0 || o.waitDeps <= 0 {
		return fmt.Errorf("--stale-after and --wait-deps must be positive durations")
	}
	if st, err := os.Stat(o.arg); err == nil && st.IsDir() {
		return fmt.Errorf("%s is a directory: beluga run takes an experiment spec (a store's runs are run from the spec that lists them)", o.arg)
	}
	return checkKernels()
}

// checkKernels refuses a BELUGA_KERNELS this machine cannot run before a
// sweep starts: each run would refuse it (train.Run never runs another
// path silently), one failed.json after another.
func checkKernels() error {
	_, err := models.KernelPath()
	return err
}

func (o *runOptions) run(ctx context.Context) error {
	if o.explain {
		return o.printExplained()
	}
	in, err := newInputs(o.from, false)
	if err != nil {
		return err
	}
	sw, err := openSweepWith(ctx, o.ErrOut, in, o.arg, o.store)
	if err != nil {
		return err
	}
	sw.Store.StaleAfter = o.staleAfter
	if o.dryRun {
		return o.list(ctx, sw)
	}
	opts := experiments.SweepOptions{Options: experiments.Options{Jobs: o.jobs, WaitDeps: o.waitDeps}, Shard: o.sel}
	if o.quiet {
		opts.Progress = quietProgress{}
	}
	_, err = executeSweep(ctx, o.ErrOut, sw, opts)
	return err
}

// printExplained is --explain: the spec resolved, each value with its
// origin.
func (o *runOptions) printExplained() error {
	values, err := experiments.ExplainFile(o.arg)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(o.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "KEY\tVALUE\tORIGIN\n")
	for _, v := range values {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", termtext.Name(v.Key), termtext.Name(v.Value), termtext.Name(v.Origin))
	}
	return tw.Flush()
}

// list is --dry-run: the runs and their states, then what would stop them
// (the checks beluga run makes before any run starts), then what each
// held-out metadata column's scores will rest on.
func (o *runOptions) list(ctx context.Context, sw *experiments.Sweep) error {
	// What the checks digest is kept for next time, whatever they find.
	defer sw.Inputs.Digests.SaveOrWarn(o.ErrOut)
	runs := sw.Runs
	if o.sel != nil {
		runs = o.sel.Select(runs)
	}
	if err := printRuns(o.Out, sw.Store, runs, sw.Inputs, sw.Spec.Grid); err != nil {
		return err
	}
	if err := sw.Check(ctx, o.ErrOut); err != nil {
		return err
	}
	bals, err := sw.Spec.GroupBalances(ctx, sw.Inputs.Data)
	if err != nil {
		return fmt.Errorf("experiment spec %s: %w", o.arg, err)
	}
	for _, b := range bals {
		fmt.Fprintf(o.Out, "\n%s, held out by %s: cases per part\n", b.Task, b.Column)
		if err := printBalance(o.Out, b.Column, b.Values); err != nil {
			return err
		}
	}
	return nil
}

// newInputs finds and digests what runs read: datasets through the data
// cache (files taken from fromDir when set), digests remembered in the
// cache's digest file, checkpoints through the hub cache (offline: never
// downloaded, for commands that only read a store).
func newInputs(fromDir string, offline bool) (*experiments.Inputs, error) {
	cache, err := dataCache("", fromDir)
	if err != nil {
		return nil, err
	}
	r := hub.FromEnv()
	r.Offline = r.Offline || offline
	return &experiments.Inputs{Data: cache, Hub: r, Digests: &experiments.Digests{File: filepath.Join(cache.Dir, experiments.DigestsFile)}}, nil
}

// storeArg is the argument of a command that reads an experiment's runs —
// its spec, or a run store directory — and its --store, the store when it
// is not the spec's out.
type storeArg struct {
	commandOptions
	arg, store string
}

func (s *storeArg) complete(cmd *cobra.Command, args []string) error {
	s.arg = args[0]
	return nil
}

// addStoreFlag defines --store; with the shorthand -o, --out too, the
// store's first name in the commands where -o is the store.
func (s *storeArg) addStoreFlag(fs *pflag.FlagSet, shorthand string) {
	fs.StringVarP(&s.store, "store", shorthand, "", "run store directory (default: the spec's out)")
	if shorthand == "o" {
		fs.SetNormalizeFunc(renamedFlags(map[string]string{"out": "store"}))
	}
}

// open is openSweep of the argument.
func (s *storeArg) open(ctx context.Context) (*experiments.Sweep, error) {
	return openSweep(ctx, s.ErrOut, s.arg, s.store)
}

// read is readSweep of the argument: its store must be there.
func (s *storeArg) read(ctx context.Context) (*experiments.Sweep, error) {
	return readSweep(ctx, s.ErrOut, s.arg, s.store)
}

// openSweep reads the sweep a command that only reads a store names (a
// spec or a store directory); nothing is downloaded.
func openSweep(ctx context.Context, errOut io.Writer, arg, store string) (*experiments.Sweep, error) {
	in, err := newInputs("", true)
	if err != nil {
		return nil, err
	}
	return openSweepWith(ctx, errOut, in, arg, store)
}

// openSweepWith reads the sweep arg names with its inputs found and
// digested through in, and keeps the digests for next time (a digest
// cache that cannot be written is a warning on errOut).
func openSweepWith(ctx context.Context, errOut io.Writer, in *experiments.Inputs, arg, store string) (*experiments.Sweep, error) {
	sw, err := experiments.OpenSweep(ctx, arg, store, in)
	if err != nil {
		return nil, err
	}
	in.Digests.SaveOrWarn(errOut)
	return sw, nil
}

// readSweep is openSweep for the commands that read a finished store
// (report, serve, plot heatmap, verify): a spec whose store is not there is most
// often one whose runs went elsewhere (beluga quickstart writes
// ./quickstart-out, the spec's out: is relative to the spec's directory),
// so the error says how to name the store.
func readSweep(ctx context.Context, errOut io.Writer, spec, store string) (*experiments.Sweep, error) {
	sw, err := openSweep(ctx, errOut, spec, store)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(sw.Store.Dir); errors.Is(err, os.ErrNotExist) {
		if store != "" {
			return nil, fmt.Errorf("run store %s (--store) does not exist", sw.Store.Dir)
		}
		return nil, fmt.Errorf("run store %s (the out: of %s, relative to its directory) does not exist: name the store instead of the spec, or add --store DIR (beluga quickstart's is quickstart-out)", sw.Store.Dir, spec)
	}
	return sw, nil
}

// executeSweep executes a sweep (experiments.Sweep.Execute) and prints its
// summary, with its progress unless opts has a Progress already
// (quietProgress): on a terminal one line redrawn (experiments.Bar), in a
// log a line per running run every minute (experiments.LogProgress)
// beside the log's lines. What the checks before the runs find goes to w
// too.
func executeSweep(ctx context.Context, w io.Writer, sw *experiments.Sweep, opts experiments.SweepOptions) (experiments.Summary, error) {
	switch f, ok := w.(*os.File); {
	case opts.Progress != nil:
	case ok && experiments.IsTerminal(f):
		opts.Progress = &experiments.Bar{W: w}
		opts.Logger = discardLogger()
	default:
		opts.Progress = &experiments.LogProgress{W: w, Every: time.Minute}
	}
	opts.Warn = w
	sum, err := sw.Execute(ctx, opts)
	if ctx.Err() != nil {
		fmt.Fprintf(w, "interrupted: unfinished runs are left incomplete (no done); run the same command again to finish them\n")
	}
	// A sweep refused before its runs started has no summary to give.
	if sum.Total > 0 || err == nil {
		fmt.Fprintf(w, "%s in %s: %d skipped (already done), %d ran, %d failed, %d busy in other processes (%s)\n",
			plural(sum.Total, "run"), experiments.ShortPath(sw.Store.Dir), sum.Skipped, sum.Ran, len(sum.Failed), sum.Busy, sum.Elapsed.Round(time.Millisecond))
	}
	return sum, err
}

// printRuns lists runs with their states — stale and damaged ones with
// why, under their line — and in GRID each run's values of the grid keys
// that tell the listed runs apart (a learning curve's train_size, a swept
// irm_lambda), so that no two lines look alike.
func printRuns(w io.Writer, store *experiments.Store, runs []experiments.Run, in *experiments.Inputs, grid map[string][]any) error {
	values := map[string]map[string]bool{} // grid key → its values among the runs
	for _, r := range runs {
		for k, v := range r.SweptValues() {
			if values[k] == nil {
				values[k] = map[string]bool{}
			}
			values[k][fmt.Sprint(v)] = true
		}
	}
	st := experiments.StatusOf(store, runs, in)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATE\tTASK\tCONFIG\tMETHOD\tSCORE\tFOLD\tSEED\tGRID")
	for _, rs := range st.Runs {
		r := rs.Spec
		swept := r.SweptValues()
		var grid []string
		if p := r.TrialPoint(); p != "" {
			grid = append(grid, p)
		}
		for _, k := range slices.Sorted(maps.Keys(swept)) {
			if len(values[k]) > 1 {
				grid = append(grid, fmt.Sprintf("%s=%v", k, swept[k]))
			}
		}
		name := termtext.Name // the spec's and the suite's names
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", rs.ID, rs.State, name(r.Task), name(r.Configuration), name(r.Method), name(r.Score), name(r.Fold), r.Seed, name(strings.Join(grid, " ")))
		if rs.State == experiments.Stale || rs.State == experiments.Damaged {
			fmt.Fprintf(tw, "\t  %s\t\t\t\t\t\t\t\n", oneLine(rs.Reason))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, "%s into %s\n", plural(len(runs), "run"), experiments.ShortPath(store.Dir)); err != nil {
		return err
	}
	if n := st.Counts[experiments.NotFetched]; n > 0 {
		for _, rs := range st.Runs {
			if rs.State == experiments.NotFetched {
				fmt.Fprintf(w, "%s: %s\n", plural(n, "run"), oneLine(rs.Reason))
				break
			}
		}
	}
	// A run stands for every value of a setting it does not read.
	for _, line := range experiments.UnreadSettings(runs, grid) {
		if _, err := fmt.Fprintf(w, "grid %s: one run for all its values\n", line); err != nil {
			return err
		}
	}
	return nil
}

// quietProgress is beluga run --quiet's progress: none.
type quietProgress struct{}

func (quietProgress) Start(int)                       {}
func (quietProgress) Finished(experiments.Run, error) {}
func (quietProgress) Stop()                           {}

// oneLine joins a reason of several lines.
// oneLine makes a message one line for a table or a terminal: lines joined,
// and the control characters of the names it quotes escaped.
func oneLine(s string) string {
	return termtext.Name(strings.ReplaceAll(strings.TrimSpace(s), "\n", "; "))
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
