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
you, with secrets redacted and every entry signed with your own key, kept
outside every project (in agenteval under your config folder, or
$` + cache.KeyDirEnv + ` as agenteval starts): an entry that was edited, or
that you did not write (a cache committed to a repository, even with the
key that signed it), is ignored, asked again and reported, never trusted.`,
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
			if st.ProjectKey {
				fmt.Fprintf(e.stdout, "the cache folder holds a key of its own (hmac.key), which is not used: only entries signed with your key (%s) are; agenteval cache clear removes it\n", st.Key)
			}
			if st.NoKey && st.Entries > 0 {
				fmt.Fprintf(e.stdout, "you have no cache key yet (%s), so you wrote none of these entries and none will be used; agenteval cache clear removes them\n", st.Key)
				return exitCode(exitFailed)
			}
			if st.Bad > 0 {
				fmt.Fprintf(e.stdout, "%d %s failed the integrity check (edited, or not written by you) and will be asked again; agenteval cache clear removes them\n", st.Bad, plural(st.Bad, "entry", "entries"))
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
