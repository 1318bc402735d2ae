package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/agenteval/agenteval/dataset"
	"github.com/agenteval/agenteval/trace"
	"github.com/spf13/cobra"
)

func newImportCmd(e *env) *cobra.Command {
	var since, dir, output string
	cmd := &cobra.Command{
		Use:   "import claude|codex|copilot",
		Short: "Collect a coding agent's session logs into Ragas JSONL",
		Long: `Find the session logs a coding agent keeps on this machine and write each
session as one Ragas MultiTurnSample row (JSONL), ready for agenteval score:

  claude   ~/.claude/projects/<project>/<session>.jsonl ($CLAUDE_CONFIG_DIR)
  codex    ~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl  ($CODEX_HOME)
  copilot  ~/.copilot/session-state/<session>/events.jsonl ($COPILOT_HOME)

--dir reads another folder instead; --since keeps the logs changed on or
after a date (2025-11-23) or time (RFC 3339). Sessions that cannot be read
are reported on stderr and left out (exit 1); what a log holds that is not
part of the conversation is reported as a warning.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErr("import needs one coding agent: claude, codex or copilot\nUsage: agenteval import claude|codex|copilot [--since DATE] [-o FILE]")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			logs, err := trace.Sessions(strings.ToLower(args[0]))
			if err != nil {
				return usageErr("%v", err)
			}
			if dir != "" {
				logs.Dir = dir
			}
			var from time.Time
			if since != "" {
				if from, err = parseSince(since); err != nil {
					return usageErr("--since %q: %v", since, err)
				}
			}
			paths, err := logs.Find(from)
			if err != nil {
				if os.IsNotExist(err) || strings.Contains(err.Error(), "no such file") {
					return usageErr("no %s session logs: %s does not exist; point --dir at the folder that holds them", args[0], logs.Dir)
				}
				return usageErr("%v", err)
			}
			// A named pipe among the logs would block the import for good,
			// deaf to Ctrl-C; it is refused before anything is written.
			for _, p := range paths {
				if err := dataset.RegularFile(p); err != nil {
					return usageErr("%v", err)
				}
			}
			out := e.stdout
			if output != "" {
				f, err := os.Create(output)
				if err != nil {
					return usageErr("create %s: %v", output, err)
				}
				defer f.Close()
				out = f
			}
			w := dataset.NewWriter(out)
			n, bad, err := importLogs(e, w, paths, logs.Format)
			if err != nil {
				return err
			}
			if err := w.Flush(); err != nil {
				return &exitError{code: exitExecution, err: fmt.Errorf("write: %w", err)}
			}
			fmt.Fprintf(e.stderr, "imported %d sessions from %d logs in %s", n, len(paths), logs.Dir)
			if bad > 0 {
				fmt.Fprintf(e.stderr, "; %d could not be read\n", bad)
				return exitCode(exitFailed)
			}
			fmt.Fprintln(e.stderr)
			return nil
		},
	}
	cmd.Flags().StringVar(&since, "since", "", "only logs changed on or after this date (YYYY-MM-DD) or time (RFC 3339)")
	cmd.Flags().StringVar(&dir, "dir", "", "read the session logs from this folder instead of the agent's usual place")
	cmd.Flags().StringVarP(&output, "output", "o", "", "write to this file instead of stdout")
	return cmd
}

// importLogs writes each session of the logs as a row, reporting those
// that cannot be read; it returns how many were written and how many not.
func importLogs(e *env, w *dataset.Writer, paths []string, format string) (n, bad int, err error) {
	for _, p := range paths {
		src, err := trace.Open(p, trace.Options{Format: format})
		if err != nil {
			fmt.Fprintln(e.stderr, err)
			bad++
			continue
		}
		for {
			row, err := src.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				fmt.Fprintln(e.stderr, err)
				bad++
				break
			}
			for _, pe := range row.Warnings {
				fmt.Fprintln(e.stderr, warning(pe))
			}
			if len(row.Errors) > 0 || row.Sample == nil {
				for _, pe := range row.Errors {
					fmt.Fprintln(e.stderr, pe.Error())
				}
				bad++
				continue
			}
			if row.Sample.Metadata == nil {
				row.Sample.Metadata = map[string]any{}
			}
			row.Sample.Metadata["source_file"] = p
			if err := w.Write(row.Sample); err != nil {
				src.Close()
				return n, bad, &exitError{code: exitExecution, err: err}
			}
			n++
		}
		src.Close()
	}
	return n, bad, nil
}

func parseSince(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("not a date (YYYY-MM-DD) or an RFC 3339 time")
}
