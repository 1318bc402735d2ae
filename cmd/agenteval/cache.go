package main

import (
	"fmt"
	"time"

	"github.com/agenteval/agenteval/cache"
	"github.com/agenteval/agenteval/internal/bytesize"
	"github.com/agenteval/agenteval/project"
	"github.com/spf13/cobra"
)

func newCacheCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cache stats|clear",
		Short: "Show or clear the cache of judge and simulated-user replies",
		Long: `The cache keeps judge and simulated-user replies so that a rerun makes no
calls. It lives in ` + cache.DefaultDir + ` (or $AGENTEVAL_CACHE_DIR), private to
you, with secrets redacted and every entry signed with a key of its own
(hmac.key in the same folder): an entry that was edited, or copied from
another project, is ignored and reported, never trusted.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	stats := &cobra.Command{
		Use:   "stats",
		Short: "Count the cached replies and check each one",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := (&cache.Store{Dir: cache.Dir(project.Here())}).Stats()
			if err != nil {
				return &exitError{code: exitExecution, err: err}
			}
			fmt.Fprintf(e.stdout, "%s: %d %s, %s", st.Dir, st.Entries, plural(st.Entries, "reply", "replies"), bytesize.Format(st.Bytes))
			if st.Entries > 0 {
				fmt.Fprintf(e.stdout, ", written %s to %s", st.Oldest.Format(time.DateOnly), st.Newest.Format(time.DateOnly))
			}
			fmt.Fprintln(e.stdout)
			if st.NoKey && st.Entries > 0 {
				fmt.Fprintf(e.stdout, "the cache has no key (%s), so none of its entries can be trusted; agenteval cache clear starts it afresh\n", "hmac.key")
				return exitCode(exitFailed)
			}
			if st.Bad > 0 {
				fmt.Fprintf(e.stdout, "%d %s failed the integrity check and will be asked again; agenteval cache clear removes them\n", st.Bad, plural(st.Bad, "entry", "entries"))
				return exitCode(exitFailed)
			}
			return nil
		},
	}
	var olderThan time.Duration
	clear := &cobra.Command{
		Use:   "clear",
		Short: "Remove cached replies (all, or those older than --older-than)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var cutoff time.Time
			if olderThan > 0 {
				cutoff = time.Now().Add(-olderThan)
			}
			n, err := (&cache.Store{Dir: cache.Dir(project.Here())}).Clear(cutoff)
			if err != nil {
				return &exitError{code: exitExecution, err: err}
			}
			fmt.Fprintf(e.stdout, "removed %d cached %s from %s\n", n, plural(n, "reply", "replies"), cache.Dir(project.Here()))
			return nil
		},
	}
	clear.Flags().DurationVar(&olderThan, "older-than", 0, "remove only replies written longer ago than this, such as 336h")
	cmd.AddCommand(stats, clear)
	return cmd
}
