package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/report"
	"github.com/agenteval/agenteval/store"
	"github.com/spf13/cobra"
)

func newRunsCmd(e *env) *cobra.Command {
	var limit int
	var format string
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List the runs recorded in the project's store, newest first",
		Long: `List the runs recorded in the project's store: id, when, suites, target,
passed/failed/errors, tokens, cost, duration and status (a sharded run
says how many of its shards are done).

` + storeHelp + `

` + runRefHelp,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "table" && format != "json" {
				return usageErr("unknown --format %q; use table or json", format)
			}
			h := newHistory(e, true)
			defer h.close()
			db, err := h.open()
			if err != nil {
				return usageErr("%v", err)
			}
			runs, err := db.Runs(cmd.Context(), store.ListOptions{Limit: limit})
			if err != nil {
				return err
			}
			if format == "json" {
				enc := json.NewEncoder(e.stdout)
				enc.SetIndent("", "  ")
				out := make([]store.RunRow, 0, len(runs))
				for i := range runs {
					out = append(out, runs[i].Row(time.Now()))
				}
				return enc.Encode(out)
			}
			return writeRuns(e, runs)
		},
	}
	cmd.Flags().IntVarP(&limit, "limit", "n", 20, "show this many runs (0: all)")
	cmd.Flags().StringVar(&format, "format", "table", "table or json")
	return cmd
}

func writeRuns(e *env, runs []store.Run) error {
	if len(runs) == 0 {
		fmt.Fprintln(e.stdout, "no runs yet: agenteval run records every run here")
		return nil
	}
	bw := bufio.NewWriter(e.stdout)
	rows := [][]string{{"RUN", "STARTED", "SUITES", "TARGET", "PASSED", "FAILED", "ERRORS", "TOKENS", "COST", "DURATION", "STATUS", "TAGS"}}
	for i := range runs {
		j := runs[i].Row(time.Now())
		cost := "–"
		if j.Used {
			cost = "unknown"
			if j.Cost != nil {
				cost = fmt.Sprintf("$%.4f", *j.Cost)
			}
		}
		status := j.Status
		if j.Shards > 1 && status == string(store.Running) {
			// A sharded run waits for its last shard: say how far it is.
			status = fmt.Sprintf("running (%d/%d shards done)", j.ShardsDone, j.Shards)
		}
		rows = append(rows, []string{j.ID, j.Started.Local().Format("2006-01-02 15:04"), clipText(j.Suites, 28), clipText(j.Target, 24),
			fmt.Sprint(j.Passed), fmt.Sprint(j.Failed), fmt.Sprint(j.Errored), humanCount(j.Tokens), cost,
			time.Duration(j.DurationMS * float64(time.Millisecond)).Round(time.Millisecond).String(), status, strings.Join(j.Tags, ",")})
	}
	writeColumns(bw, rows, map[int]bool{4: true, 5: true, 6: true, 7: true, 8: true, 9: true})
	return bw.Flush()
}

// writeColumns lines up rows; right names the right-aligned columns.
func writeColumns(bw *bufio.Writer, rows [][]string, right map[int]bool) {
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		for i, c := range r {
			if i > 0 {
				b.WriteString("  ")
			}
			gap := strings.Repeat(" ", widths[i]-len([]rune(c)))
			if right[i] {
				b.WriteString(gap + c)
			} else if i < len(r)-1 {
				b.WriteString(c + gap)
			} else {
				b.WriteString(c)
			}
		}
		fmt.Fprintln(bw, strings.TrimRight(b.String(), " "))
	}
}

func clipText(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func newShowCmd(e *env) *cobra.Command {
	var trial int
	var full bool
	var format, target string
	cmd := &cobra.Command{
		Use:   "show RUN [TEST] [--target NAME]",
		Short: "Print a run's tests, or one test's conversation turn by turn",
		Long: `Print a run: its header and every test with its verdict and why it failed.
With a TEST (its id, suite/id, or a prefix naming one test), print that
test's conversation: each turn's messages and tool calls, then the turn's
verdict and the graders' reasons and evidence. A run of several targets
holds a test once per target: --target NAME picks one.

` + runRefHelp + "\n\n" + agentvRunHelp,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return usageErr("show needs a RUN and at most one TEST\nUsage: agenteval show RUN [TEST]")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "text" && format != "json" {
				return usageErr("unknown --format %q; use text or json", format)
			}
			h := newHistory(e, true)
			defer h.close()
			src, err := resolveRun(cmd.Context(), e, h, args[0])
			if err != nil {
				return usageErr("%v", err)
			}
			if len(args) == 1 {
				if target != "" {
					return usageErr("--target picks a TEST's conversation: agenteval show RUN TEST --target %s", target)
				}
				return showRun(cmd, e, src, format)
			}
			r, err := findTest(cmd.Context(), src, args[1], target)
			if err != nil {
				return usageErr("%v", err)
			}
			if format == "json" {
				enc := json.NewEncoder(e.stdout)
				enc.SetIndent("", "  ")
				enc.SetEscapeHTML(false)
				return enc.Encode(r)
			}
			if err := report.WriteTranscript(e.stdout, r, report.TranscriptOptions{Color: e.color, Trial: trial, Full: full, Width: termWidth(e)}); err != nil {
				return usageErr("%v", err)
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&trial, "trial", 0, "show this trial's conversation (1-based)")
	cmd.Flags().StringVar(&target, "target", "", "the target whose conversation to show, when the test ran on several")
	cmd.Flags().BoolVar(&full, "full", false, "show system prompts whole")
	cmd.Flags().StringVar(&format, "format", "text", "text, or json (the stored result)")
	return cmd
}

func showRun(cmd *cobra.Command, e *env, src *source, format string) error {
	if format == "json" {
		w := report.NewJSON(e.stdout)
		sum, err := summarize(cmd.Context(), src, w)
		if err != nil {
			return err
		}
		return w.Close(sum)
	}
	if h := src.header; h != nil {
		line := fmt.Sprintf("run %s · %s · %s", h.RunID, h.Started.Local().Format("2006-01-02 15:04"), strings.Join(h.SuiteNames(), ", "))
		if h.Target != "" {
			line += " · target " + h.Target
		}
		if h.Judge != "" {
			line += " · judge " + h.Judge
		}
		if h.RegradedFrom != "" {
			line += " · regraded from " + h.RegradedFrom
		}
		if h.Git != nil {
			c := h.Git.Commit
			if len(c) > 10 {
				c = c[:10]
			}
			if h.Git.Dirty {
				c += "+dirty"
			}
			line += " · commit " + c
		}
		if src.run != nil {
			line += " · " + string(src.run.Status)
			if len(src.run.Tags) > 0 {
				line += " · tags " + strings.Join(src.run.Tags, ", ")
			}
		}
		fmt.Fprintln(e.stdout, line)
	}
	var metrics []string
	if src.header != nil && src.header.Command == "score" {
		// Datasets are scored by metrics: one column each.
		src.results(cmd.Context())(func(r *agenteval.Result) error {
			for _, s := range r.Scores {
				metrics = append(metrics, s.Name)
			}
			return errStop
		})
	}
	w := report.NewTable(e.stdout, report.TableOptions{Color: e.color, Metrics: metrics, NoMetricSummary: len(metrics) == 0,
		Targets: headerlessTargets(cmd.Context(), src)})
	sum, err := summarize(cmd.Context(), src, w)
	if err != nil {
		return err
	}
	return w.Close(sum)
}

var errStop = fmt.Errorf("stop")

func newTagCmd(e *env) *cobra.Command {
	var del bool
	cmd := &cobra.Command{
		Use:   "tag RUN NAME | tag --delete NAME",
		Short: "Name a run (e.g. baseline), so that compare and show can refer to it",
		Long: `Give a stored run a name: agenteval compare baseline last then compares
the newest run with it. A name names one run; tagging another run moves it.

` + runRefHelp,
		Args: func(cmd *cobra.Command, args []string) error {
			if del && len(args) != 1 {
				return usageErr("tag --delete needs the NAME only\nUsage: agenteval tag --delete NAME")
			}
			if !del && len(args) != 2 {
				return usageErr("tag needs a RUN and a NAME\nUsage: agenteval tag RUN NAME")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			h := newHistory(e, false)
			defer h.close()
			db, err := h.open()
			if err != nil {
				return usageErr("%v", err)
			}
			ctx := cmd.Context()
			if del {
				if err := db.Untag(ctx, args[0]); err != nil {
					return usageErr("%v", err)
				}
				fmt.Fprintf(e.stdout, "removed tag %s\n", args[0])
				return nil
			}
			if err := store.CheckTag(args[1]); err != nil {
				return usageErr("%v", err)
			}
			if looksLikePath(args[0]) {
				return usageErr("%s: only runs in the store can be tagged; a results file is named by its path already", args[0])
			}
			id, err := store.Resolve(ctx, db, args[0])
			if err != nil {
				return usageErr("%v", err)
			}
			if err := db.Tag(ctx, id, args[1]); err != nil {
				return usageErr("%v", err)
			}
			fmt.Fprintf(e.stdout, "tagged run %s as %s\n", id, args[1])
			return nil
		},
	}
	cmd.Flags().BoolVarP(&del, "delete", "d", false, "remove the tag NAME")
	return cmd
}
