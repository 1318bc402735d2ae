package main

import (
	"context"
	"fmt"
	"os"

	"github.com/agenteval/agenteval/compare"
	"github.com/agenteval/agenteval/results"
	"github.com/spf13/cobra"
)

type compareFlags struct {
	format     string
	output     string
	failOnRegr bool
	minDelta   float64
}

func newCompareCmd(e *env) *cobra.Command {
	var f compareFlags
	cmd := &cobra.Command{
		Use:   "compare BASE NEW",
		Short: "Compare two runs: regressions, fixes, score and turn-level changes, cost and latency",
		Long: `Compare two runs test by test: which tests regressed (pass to fail or
error), were fixed, are new or gone, and how scores moved, down to the turn
and the check that changed, with both reasons; with pass@k and pass^k,
cost, token and latency deltas.

A test run with several trials is judged on its pass rate, and the report
says when the difference is within noise for that many trials (Fisher's
exact test). --min-delta X ignores smaller drops of score or pass rate.
--fail-on-regression exits 1 when a test regressed, for CI.

--format markdown suits a pull-request comment. On GitHub Actions
($GITHUB_STEP_SUMMARY set), the Markdown is also added to the job summary.

` + runRefHelp + "\n\n" + agentvRunHelp,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usageErr("compare needs two runs, BASE and NEW\nUsage: agenteval compare BASE NEW [--fail-on-regression]")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return runCompare(cmd, e, args, &f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.format, "format", "table", "table, markdown or json")
	fl.StringVarP(&f.output, "output", "o", "", "write to this file instead of stdout")
	fl.BoolVar(&f.failOnRegr, "fail-on-regression", false, "exit 1 when a test regressed")
	fl.Float64Var(&f.minDelta, "min-delta", 0, "ignore score or pass-rate drops smaller than this (0..1)")
	return cmd
}

func runCompare(cmd *cobra.Command, e *env, args []string, f *compareFlags) error {
	switch f.format {
	case "table", "markdown", "json":
	default:
		return usageErr("unknown --format %q; use table, markdown or json", f.format)
	}
	if !(f.minDelta >= 0 && f.minDelta <= 1) {
		return usageErr("--min-delta %v is outside [0, 1]", f.minDelta)
	}
	ctx := cmd.Context()
	h := newHistory(e, true)
	defer h.close()
	base, err := resolveRun(ctx, e, h, args[0])
	if err != nil {
		return usageErr("BASE: %v", err)
	}
	cur, err := resolveRun(ctx, e, h, args[1])
	if err != nil {
		return usageErr("NEW: %v", err)
	}
	c, err := compare.Compare(base.input(ctx), cur.input(ctx), compare.Options{MinDelta: f.minDelta})
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	w, closeOut, err := writeTo(e, f.output)
	if err != nil {
		return err
	}
	switch f.format {
	case "markdown":
		err = c.WriteMarkdown(w)
	case "json":
		err = c.WriteJSON(w)
	default:
		err = c.WriteTable(w, e.color && f.output == "")
	}
	if cerr := closeOut(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if p := os.Getenv("GITHUB_STEP_SUMMARY"); p != "" {
		if err := appendStepSummary(p, c); err != nil {
			fmt.Fprintf(e.stderr, "agenteval: warning: could not add the comparison to the job summary: %v\n", err)
		}
	}
	if f.failOnRegr && c.Regressions() > 0 {
		if f.format != "table" || f.output != "" {
			fmt.Fprintf(e.stderr, "%d tests regressed\n", c.Regressions())
		}
		return exitCode(exitFailed)
	}
	return nil
}

// appendStepSummary adds the Markdown to a GitHub Actions job summary.
func appendStepSummary(path string, c *compare.Comparison) error {
	fh, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	if err := c.WriteMarkdown(fh); err != nil {
		fh.Close()
		return err
	}
	fh.WriteString("\n")
	return fh.Close()
}

// agentvRunHelp says that compare, report and show read AgentV's results.
const agentvRunHelp = `AgentV's results are read too: a run folder (the --output of agentv
eval), or its index.jsonl. Each test's verdict is the one AgentV counted
(its execution_status), and a test is keyed by its suite, id and target,
as agenteval's own are. What of such a file cannot be read with AgentV's
meaning is said on stderr first, with its line.`

// resolveRun finds a RUN as history.resolve does, and also takes an AgentV
// run folder for its index.jsonl. For an AgentV results file it says on
// stderr, before anything is written, what of it differs from AgentV's
// meaning. A file that does not read is left for the read that follows
// to report.
func resolveRun(ctx context.Context, e *env, h *history, ref string) (*source, error) {
	s, err := h.resolve(ctx, ref)
	if err != nil {
		return nil, err
	}
	if s.path != "" {
		ds, _ := results.AgentVDifferences(s.path)
		for _, d := range ds {
			fmt.Fprintln(e.stderr, d)
		}
	}
	return s, nil
}
