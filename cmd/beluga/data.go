package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/beluga-nlp/beluga/datasets"
	"github.com/beluga-nlp/beluga/models/hub"
)

// dataCache builds the cache the data flags describe.
func dataCache(dir, from string) (*datasets.Cache, error) {
	if dir == "" {
		d, err := datasets.DefaultCacheDir()
		if err != nil {
			return nil, err
		}
		dir = d
	}
	return &datasets.Cache{Dir: dir, From: from}, nil
}

// NewCmdData builds beluga data and its subcommands.
func NewCmdData() *cobra.Command {
	return newGroup("data", "Fetch datasets, suites, vocabularies and checkpoints into the local cache",
		NewCmdDataFetch(), NewCmdDataList())
}

// dataCacheOptions are the data cache a data command works on (--cache,
// and for data fetch --from); each data command's options embed them.
type dataCacheOptions struct {
	commandOptions
	cacheDir, from string

	cache *datasets.Cache
}

func (o *dataCacheOptions) bind(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.cacheDir, "cache", "", "cache directory (default $BELUGA_DATA, else the user cache directory)")
}

func (o *dataCacheOptions) complete(*cobra.Command, []string) (err error) {
	o.cache, err = dataCache(o.cacheDir, o.from)
	return err
}

// dataFetchOptions are beluga data fetch's flags and streams.
type dataFetchOptions struct{ dataCacheOptions }

// NewCmdDataFetch builds beluga data fetch.
func NewCmdDataFetch() *cobra.Command {
	o := &dataFetchOptions{}
	cmd := &cobra.Command{
		Use:   "fetch NAME...",
		Short: "Download datasets into the cache, verifying their sha256 (or take them from --from DIR), and models into the hub cache",
		Long: `fetch downloads registered datasets (see beluga data list) into the data cache, and
models named by a hub id (org/name[@revision]) into the HuggingFace hub cache, where later
runs find them offline (HF_HUB_OFFLINE=1), e.g. on a cluster's compute nodes.`,
		Example: `  beluga data fetch sst2 checklist-sentiment bert-vocab
  beluga data fetch sst2 checklist-sentiment --from ../shared/data
  BELUGA_DATA=/scratch/beluga beluga data fetch squad-dev
  beluga data fetch qqp checklist-qqp google/bert_uncased_L-2_H-128_A-2`,
		Args: cobra.MinimumNArgs(1),
		RunE: runE(o),
	}
	o.bind(cmd)
	cmd.Flags().StringVar(&o.from, "from", "", "take files from this local directory (laid out like ../shared/data) instead of the network")
	return cmd
}

// run fetches each name in turn: a hub id (org/name) into the hub cache,
// a registered dataset into the data cache.
func (o *dataFetchOptions) run(ctx context.Context) error {
	for _, name := range o.args {
		if strings.Contains(name, "/") {
			dir, err := hubResolver(o.ErrOut).Resolve(ctx, name)
			if err != nil {
				return err
			}
			fmt.Fprintf(o.Out, "%s\t%s\n", name, dir)
			continue
		}
		d, err := datasets.Lookup(name)
		if err != nil {
			return err
		}
		paths, err := o.cache.Ensure(ctx, d)
		if err != nil {
			return err
		}
		for _, p := range paths {
			fmt.Fprintf(o.Out, "%s\t%s\n", name, p)
		}
	}
	return nil
}

// dataListOptions are beluga data list's flags and streams.
type dataListOptions struct{ dataCacheOptions }

// NewCmdDataList builds beluga data list.
func NewCmdDataList() *cobra.Command {
	o := &dataListOptions{}
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List the datasets beluga knows and which files are cached, and the models in the HuggingFace hub cache",
		Example: `  beluga data list`,
		Args:    cobra.NoArgs,
		RunE:    runE(o),
	}
	o.bind(cmd)
	return cmd
}

// run prints the registered datasets' files and the hub cache's models.
func (o *dataListOptions) run(context.Context) error {
	fmt.Fprintf(o.Out, "cache: %s\n\n", o.cache.Dir)
	tw := tabwriter.NewWriter(o.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "dataset\tfile\tsize\tcached\tsource")
	for _, st := range o.cache.Status() {
		src := st.File.URL
		if src == "" {
			src = "(local copy only: --from DIR)"
		}
		size := fmt.Sprint(st.File.Size)
		if st.File.SHA256 == "" {
			size = "-" // verified through its archive, no size of its own
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%v\t%s\n", st.Dataset, st.File.Path, size, st.Cached, src)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return listModels(o.Out, hub.FromEnv())
}

// listModels prints the model snapshots of the hub cache beluga shares
// with transformers.
func listModels(w io.Writer, r *hub.Resolver) error {
	models, err := r.Cached()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nhub cache: %s\n\n", r.CacheDir)
	if len(models) == 0 {
		fmt.Fprintln(w, "(no models; beluga predict --model org/name downloads one, or HF_HUB_CACHE / HF_HOME point elsewhere)")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "model\trevisions\tcommit\tfiles\tsize\tloadable")
	for _, m := range models {
		refs := strings.Join(m.Refs, ",")
		if refs == "" {
			refs = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.1f MB\t%v\n", m.Repo, refs, m.Commit[:min(12, len(m.Commit))], len(m.Files), float64(m.Size)/1e6, m.Complete)
	}
	return tw.Flush()
}
