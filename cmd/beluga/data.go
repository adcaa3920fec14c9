package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/beluga-nlp/beluga/datasets"
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

func init() {
	var cacheDir, from string
	fetch := &cobra.Command{
		Use:   "fetch NAME...",
		Short: "Download datasets into the cache, verifying their sha256 (or take them from --from DIR)",
		Example: `  beluga data fetch sst2 checklist-sentiment bert-vocab
  beluga data fetch sst2 checklist-sentiment --from ../shared/data
  BELUGA_DATA=/scratch/beluga beluga data fetch squad-dev`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := dataCache(cacheDir, from)
			if err != nil {
				return err
			}
			for _, name := range args {
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
		Short:   "List the datasets beluga knows, and which files are cached where",
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
				fmt.Fprintf(tw, "%s\t%s\t%d\t%v\t%s\n", st.Dataset, st.File.Path, st.File.Size, st.Cached, src)
			}
			return tw.Flush()
		},
	}
	for _, c := range []*cobra.Command{fetch, list} {
		c.Flags().StringVar(&cacheDir, "cache", "", "cache directory (default $BELUGA_DATA, else the user cache directory)")
	}
	fetch.Flags().StringVar(&from, "from", "", "take files from this local directory (laid out like ../shared/data) instead of the network")
	dataCmd.AddCommand(fetch, list)
}
