package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/provider"
	"github.com/agenteval/agenteval/report"
	"github.com/agenteval/agenteval/session"
	"github.com/spf13/cobra"
)

type regradeFlags struct {
	judge judgeFlags
	// threshold is --threshold; -1 means unset.
	threshold   float64
	samples     int
	filter      string
	jobs        int
	output      string
	format      string
	junit, html string
	noStore     bool
	quiet       bool
	runID       string
}

func newRegradeCmd(e *env) *cobra.Command {
	var f regradeFlags
	cmd := &cobra.Command{
		Use:   "regrade RUN [EVAL...]",
		Short: "Grade a run's recorded transcripts again, with another judge or grader settings, calling no agent",
		Long: `Grade the recorded transcripts of RUN again, with another judge (--judge)
or other grader settings (--samples, --threshold, or the eval file's
assertions as they are now), into a new run. The agent and the simulated
users are not called: each conversation is graded as it was recorded, turn
by turn and as a whole, as agenteval run grades it. The new run's header
says which run it regrades (regraded_from); then

  agenteval compare RUN NEW      shows where the two judges differ
  agenteval calibrate RUN NEW    compares both with the same human labels

The eval files are the ones RUN ran (the paths in its header), or EVAL...
when given. When a file has changed since the run, it is said, and each
test is checked against its transcript: a test whose input or turns no
longer match is not regraded (execution_error, saying where they differ).
A trial whose agent failed has no whole transcript and is kept as recorded.
The graders that measure the live run (latency, token_usage, cost,
execution_metrics) keep the scores the run gave them: a transcript keeps
no times or token counts.

The judge's replies are cached as in run: regrading with the judge RUN
used answers from the cache (add --no-cache to ask again).

` + runRefHelp + "\n\n" + storeHelp,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErr("regrade needs the run to grade again\nUsage: agenteval regrade RUN [EVAL...] [--judge provider:model]")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return runRegrade(cmd.Context(), e, args, &f) },
	}
	fl := cmd.Flags()
	f.judge.add(fl)
	fl.IntVar(&f.samples, "samples", 0, "ask the judge each decision this many times and take the majority (default: the suite's judge: samples, else once)")
	fl.Float64Var(&f.threshold, "threshold", -1, "pass mark for every test, from 0 to 1 (default: RUN's, else the suite's)")
	fl.Lookup("threshold").DefValue = "0"
	fl.StringVar(&f.filter, "filter", "", "regrade only tests whose id matches this glob")
	fl.IntVarP(&f.jobs, "jobs", "j", 0, "tests graded at once (default 4 per CPU)")
	fl.StringVarP(&f.output, "output", "o", "", "write the new run's results (JSONL) to this file")
	fl.StringVar(&f.format, "format", "", "stdout format: table, jsonl or json (default: table on a terminal, else jsonl)")
	fl.StringVar(&f.junit, "junit", "", "also write JUnit XML to this file")
	fl.StringVar(&f.html, "html", "", "also write a self-contained HTML report to this file")
	fl.BoolVar(&f.noStore, "no-store", false, "do not record the new run in the project's store")
	fl.StringVar(&f.runID, "run-id", "", "id of the new run (default: 12 random hex digits)")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no per-test lines or totals on stderr")
	return cmd
}

func runRegrade(ctx context.Context, e *env, args []string, f *regradeFlags) error {
	if f.threshold != -1 && !(f.threshold >= 0 && f.threshold <= 1) {
		return usageErr("--threshold %v is outside [0, 1]", f.threshold)
	}
	if f.samples < 0 {
		return usageErr("--samples %d: give how many times to ask the judge, 1 or more (an odd number, so the vote has a majority)", f.samples)
	}
	format, err := formatFor(f.format, "", e.stdoutTTY && f.output == "")
	if err != nil {
		return err
	}
	// The recorded run is read whole, and the store closed, before the
	// new run is recorded in it.
	h := newHistory(e, true)
	src, err := resolveRun(ctx, e, h, args[0])
	if err != nil {
		h.close()
		return usageErr("RUN: %v", err)
	}
	var recorded []*agenteval.Result
	err = src.results(ctx)(func(r *agenteval.Result) error {
		recorded = append(recorded, r)
		return nil
	})
	h.close()
	if err != nil {
		return usageErr("RUN: %v", err)
	}
	// A stored run is named by its id: last would name the new run once
	// it is recorded.
	name := src.label
	if src.run != nil {
		name = src.run.ID
	}

	opt := session.Options{Models: *f.judge.settings(), Jobs: f.jobs, Filter: f.filter, Output: f.output, JUnit: f.junit, HTML: f.html,
		NoStore: f.noStore, Store: e.storeFlag, Root: e.root, NoExec: e.noExec, MaxFileBytes: e.maxFile, RunID: f.runID,
		Command: "regrade", Version: shortVersion(), Log: e.stderr, Quiet: f.quiet}
	if f.threshold != -1 {
		th := f.threshold
		opt.Threshold = &th
	}
	(&runFlags{format: f.format}).display(e, &opt.Writers, format, f.output, nil)
	if !f.quiet && !e.stdoutTTY {
		opt.OnResult = func(r *agenteval.Result, _ bool) {
			fmt.Fprintf(e.stderr, "%-5s %s/%s %.3f\n", strings.ToUpper(string(r.Verdict)), r.Suite, r.TestID, r.Score)
		}
	}
	out, runErr := session.Regrade(ctx, session.RegradeOptions{Options: opt, Header: src.header, Label: name, Results: recorded, Samples: f.samples}, args[1:]...)
	if out == nil {
		return cliErr(runErr)
	}
	sum := out.Summary
	if !f.quiet {
		judge := out.Header.Judge
		if judge == "" {
			judge = "no judge"
		}
		fmt.Fprintf(e.stderr, "regraded %s of run %s with %s: %d passed, %d failed, %s; no agent calls\n",
			counted(sum.Total, "test"), name, judge, sum.Passed, sum.Failed, counted(sum.Errored, "error"))
		if u := report.UsageLine(sum.Usage); u != "" {
			fmt.Fprintln(e.stderr, u)
		}
	}
	f.judge.models.ReportCache(e.stderr)
	if runErr != nil {
		var fe *agenteval.FatalError
		switch {
		case errors.As(runErr, &fe):
			return &exitError{code: exitUsage, err: fmt.Errorf("%s\nStopped after %s; fix the configuration and run again", provider.Redact(fe.Error()), counted(sum.Total, "test"))}
		case errors.Is(runErr, context.Canceled) || ctx.Err() != nil:
			fmt.Fprintf(e.stderr, "interrupted: %s kept\n", counted(sum.Total, "regraded test"))
			return exitCode(exitInterrupted)
		}
		if ce := cliErr(runErr); ce != runErr {
			return ce
		}
		return &exitError{code: exitExecution, err: runErr}
	}
	if !f.quiet {
		next := "the new run was not recorded (--no-store)"
		if out.Recorded {
			next = fmt.Sprintf("see where the judges differ with agenteval compare %s %s", name, out.Header.RunID)
		} else if out.Output != "" {
			next = fmt.Sprintf("see where the judges differ with agenteval compare %s %s", name, out.Output)
		}
		fmt.Fprintln(e.stderr, next)
	}
	return exitCode(runExit(sum))
}
