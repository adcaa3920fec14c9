package main

import (
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
	var cacheDir, from string
	fetch := &cobra.Command{
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
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := dataCache(cacheDir, from)
			if err != nil {
				return err
			}
			for _, name := range args {
				if strings.Contains(name, "/") {
					r := hub.FromEnv()
					r.Progress = cmd.ErrOrStderr()
					dir, err := r.Resolve(cmd.Context(), name)
					if err != nil {
						return err
					}
					fmt.Fprintf(cmd.OutOrStdout(), "%s\t%s\n", name, dir)
					continue
				}
				d, err := datasets.Lookup(name)
				if err != nil {
					return err
				}
				paths, err := c.Ensure(cmd.Context(), d)
				if err != nil {
					return err
				}
				for _, p := range paths {
					fmt.Fprintf(cmd.OutOrStdout(), "%s\t%s\n", name, p)
				}
			}
			return nil
		},
	}
	list := &cobra.Command{
		Use:     "list",
		Short:   "List the datasets beluga knows and which files are cached, and the models in the HuggingFace hub cache",
		Example: `  beluga data list`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := dataCache(cacheDir, "")
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "cache: %s\n\n", c.Dir)
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "dataset\tfile\tsize\tcached\tsource")
			for _, st := range c.Status() {
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
			return listModels(cmd.OutOrStdout(), hub.FromEnv())
		},
	}
	for _, c := range []*cobra.Command{fetch, list} {
		c.Flags().StringVar(&cacheDir, "cache", "", "cache directory (default $BELUGA_DATA, else the user cache directory)")
	}
	fetch.Flags().StringVar(&from, "from", "", "take files from this local directory (laid out like ../shared/data) instead of the network")
	dataCmd := &cobra.Command{
		Use:   "data",
		Short: "Fetch datasets, suites, vocabularies and checkpoints into the local cache",
	}
	dataCmd.AddCommand(fetch, list)
	return dataCmd
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
