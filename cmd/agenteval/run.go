package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/project"
	"github.com/agenteval/agenteval/provider"
	"github.com/agenteval/agenteval/report"
	"github.com/agenteval/agenteval/results"
	"github.com/agenteval/agenteval/session"
	"github.com/spf13/cobra"
)

// exitInterrupted is the conventional status of a run stopped by Ctrl-C.
const exitInterrupted = 130

type runFlags struct {
	opt   session.Options
	judge judgeFlags
	// threshold is --threshold; -1 means unset.
	threshold float64
	// dryRun plays the agent, judge and simulated users with the fake
	// model; dryScript scripts its agent.
	dryRun    bool
	dryScript string
	// fakeJudge makes the fake model the judge and simulated users only.
	fakeJudge bool
	format    string
	otel      otelFlags
	otlp      otlpFlags
	// testIDs and workers are AgentV's spellings of --filter and -j.
	testIDs []string
	workers int
}

func newRunCmd(e *env) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run SUITE...",
		Short: "Run eval files against an agent, grading every turn and each conversation",
		Long: `Run the tests of one or more eval files (YAML in AgentV's format, or
agent_inspect JSON) against a target: a model (provider:model) driving the
suite's mock tools, an http endpoint, a command speaking JSON lines, or a
replay of recorded conversations. Conversation tests send the whole history
on every turn, grade each turn (while the agent answers the next one), then
grade the whole conversation.

Results are JSONL, one line per test, appended and flushed as each test
finishes: to -o FILE, or to stdout when it is redirected. On a terminal you
see live progress and a summary table. Ctrl-C keeps the finished results,
prints the summary and exits 130; --resume FILE continues a run, skipping
the tests already in FILE (and refuses a file written for other suites or
another target, unless --force). --rerun-failed FILE runs again only the
tests that failed or errored in FILE, and --retry-errors FILE those that
ended in an execution error (or are missing from it); either writes a whole
new run, the other results of FILE carried over, so its summary, exit code
and JUnit cover every test.

Results files open with a run header (run id, suites and their hashes,
target, judge, commit). Every run is also recorded in the project's store:
see agenteval runs, show, compare and view.

--shard i/n runs the i-th of n parts of the tests (a stable hash of each
suite's path and test id; tests linked by depends_on stay together), so n
CI jobs or machines run a suite together under one --run-id (by default the
CI pipeline's); agenteval merge puts their results files together.

` + storeHelp,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				// Inside a project, its evals folder is what to run.
				dir, ok := projectEvals()
				if !ok {
					return usageErr("run needs at least one eval file (or, inside a project, an evals folder beside agenteval.yaml)\nUsage: agenteval run SUITE... [--target NAME|provider:model]")
				}
				args = []string{dir}
			}
			return runSuites(cmd.Context(), e, args, &f)
		},
	}
	cmd.Long += `

A SUITE may be a folder: its eval files (*.yaml and *.yml with tests:, and
agent_inspect JSON) are run, in name order, folders below it included; a
quoted glob such as 'evals/*.eval.yaml' is expanded the same way.`
	fl := cmd.Flags()
	fl.StringArrayVar(&f.opt.Targets, "target", nil, "target to test: a name from the suite's targets (or AgentV's targets.yaml), or provider:model; repeat it to run the suite once per target")
	fl.StringArrayVar(&f.opt.Tags, "tag", nil, "run only the eval files with this tag (repeatable: any of them); a v5 tags map matches as key=value")
	fl.BoolVar(&f.opt.Strict, "strict", false, "make every warning about an eval file an error")
	fl.StringVar(&f.opt.Config, "config", "", "project file with shared targets, tools, judge, simulator and defaults (default: the nearest agenteval.yaml at or above each eval file)")
	fl.StringVar(&f.judge.models.Simulator, "simulator", "", "model that plays simulated users (user: in a test), as provider:model (default: the judge)")
	fl.IntVarP(&f.opt.Jobs, "jobs", "j", 0, "agent conversations in flight (default 4 per CPU): a conversation frees its slot when its last agent call returns, and its grading finishes beside the next one")
	fl.IntVar(&f.opt.Trials, "trials", 0, "run every test this many times (overrides the suite)")
	fl.StringVar(&f.opt.Filter, "filter", "", "run only tests whose id matches this glob")
	fl.StringArrayVar(&f.testIDs, "test-id", nil, "run only tests whose id matches this glob (repeatable: any of them), as AgentV's --test-id")
	fl.IntVar(&f.workers, "workers", 0, "AgentV's spelling of -j: agent conversations in flight (AgentV runs eval files one after another; agenteval runs them side by side)")
	fl.Float64Var(&f.threshold, "threshold", -1, "pass mark for every test, from 0 to 1 (overrides the suite's, whose default is 0.8)")
	fl.Lookup("threshold").DefValue = "0" // -1 means unset; "0" is shown as no default
	fl.StringVarP(&f.opt.Output, "output", "o", "", "write results (JSONL) to this file, replacing it (--resume appends to the file it continues); a folder (one that exists, or a path ending in /) gets index.jsonl, as AgentV's -o DIR")
	fl.StringVar(&f.opt.JUnit, "junit", "", "also write JUnit XML to this file")
	fl.StringVar(&f.opt.Resume, "resume", "", "continue the run recorded in this results file: skip its tests, append the rest")
	fl.BoolVar(&f.opt.Force, "force", false, "with --resume: continue even though the file was written for other suites or another target")
	fl.StringVar(&f.opt.RerunFailed, "rerun-failed", "", "run again the tests that failed or errored in this results file; its other results are carried into this run's")
	fl.StringVar(&f.opt.RetryErrors, "retry-errors", "", "run again the tests that ended in an execution error in this results file, or are missing from it; the rest are carried over")
	fl.BoolVar(&f.dryRun, "dry-run", false, "check the suite's plumbing offline: a fake model in this process plays the agent, the judge and the simulated users (quality failures do not fail a dry run)")
	fl.BoolVar(&f.fakeJudge, "fake-judge", false, "offline judging: a fake model in this process judges (every criterion passes) and plays the simulated users; the targets run as usual")
	fl.StringVar(&f.dryScript, "dry-run-script", "", "with --dry-run (implied): the fake agent follows this script (see agenteval fakellm --help)")
	fl.StringVar(&f.opt.HTML, "html", "", "also write a self-contained HTML report to this file")
	fl.BoolVar(&f.opt.NoStore, "no-store", false, "do not record the run in the project's store (.agenteval/agenteval.db)")
	fl.StringVar(&f.opt.RunID, "run-id", "", "id of the run (default: 12 random hex digits; with --shard, the CI pipeline's run, e.g. gh-RUN_ID-ATTEMPT on GitHub Actions)")
	fl.StringVar(&f.opt.Shard, "shard", "", "run only shard i of n (e.g. 2/4): each test goes to one shard by a stable hash, tests linked by depends_on together; agenteval merge puts the shards' results files together")
	fl.StringVar(&f.format, "format", "", "stdout format: table, jsonl or json (default: table on a terminal, else jsonl)")
	fl.BoolVarP(&f.opt.Quiet, "quiet", "q", false, "no progress on stderr")
	f.judge.add(fl)
	f.judge.models.NoKeyHint = "\nTo try the suite without a key, add --fake-judge (a fake judge passes every criterion) or --dry-run (a fake plays the agent too)"
	f.otlp.add(fl)
	f.otel.add(fl)
	return cmd
}

// counters feed the live progress line.
type counters struct {
	total                        int
	done, pass, fail, errs, skip atomic.Int64
	tokens, retries              atomic.Int64
}

// tally keeps a run's counts for the terminal: the live counters, and the
// usage it spent. A rerun's carried-over results were paid for by the
// earlier run, so its totals count only this run's calls and say how many
// the carried ones made.
type tally struct {
	counters
	rerun    bool
	mu       sync.Mutex
	own, old agenteval.Usage
	oldN     int
}

// note counts a result as it joins the run; carried results come from an
// earlier file.
func (t *tally) note(r *agenteval.Result, carried bool) {
	paid := carried && t.rerun
	t.mu.Lock()
	if paid {
		t.old.Add(r.Usage)
		t.oldN++
	} else {
		t.own.Add(r.Usage)
	}
	t.mu.Unlock()
	t.add(r, !paid)
}

// usageLine is the run's usage: all of it, or a rerun's own with what the
// carried results made.
func (t *tally) usageLine(all agenteval.Usage) string {
	if !t.rerun {
		return report.UsageLine(all)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	u := report.UsageLine(t.own)
	if t.old.Calls > 0 {
		u = strings.TrimPrefix(u+"; ", "; ") + fmt.Sprintf("the %s carried over made %s earlier", counted(t.oldN, "result"), counted(t.old.Calls, "model call"))
	}
	return u
}

// add counts a result, and its tokens when this run spent them.
func (c *counters) add(r *agenteval.Result, spent bool) {
	c.done.Add(1)
	switch r.Verdict {
	case agenteval.VerdictPass:
		c.pass.Add(1)
	case agenteval.VerdictFail:
		c.fail.Add(1)
	case agenteval.VerdictError:
		c.errs.Add(1)
	default:
		c.skip.Add(1)
	}
	if r.Usage != nil && spent {
		c.tokens.Add(r.Usage.InputTokens + r.Usage.OutputTokens)
		c.retries.Add(int64(r.Usage.Retries))
	}
}

func (c *counters) line(start time.Time) string {
	s := fmt.Sprintf("%d/%s · %d passed · %d failed · %s · %s tokens",
		c.done.Load(), counted(c.total, "test"), c.pass.Load(), c.fail.Load(), counted(int(c.errs.Load()), "error"), humanCount(c.tokens.Load()))
	if n := c.retries.Load(); n > 0 {
		s += fmt.Sprintf(" · %d retries", n)
	}
	return s + " · " + time.Since(start).Round(time.Second).String()
}

func humanCount(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 10_000:
		return fmt.Sprintf("%.0fk", float64(n)/1e3)
	case n >= 1000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

// runSuites is agenteval run: the flags become a session's options, the
// terminal gets progress and the summary, and the outcome an exit code.
func runSuites(ctx context.Context, e *env, paths []string, f *runFlags) error {
	mp := startMemProfile(e.stderr)
	s, plan, stop, err := f.plan(e, paths)
	mp.loaded(e.stderr)
	if err != nil {
		return err
	}
	defer stop()
	opt := s.Options()
	c := &tally{rerun: opt.RerunFailed != "" || opt.RetryErrors != ""}
	c.total = plan.Total
	start := time.Now()
	var prog *progressLine
	if e.stderrTTY && !opt.Quiet {
		prog = startProgress(e.stderr, func() string { return c.line(start) })
	}
	format, err := formatFor(f.format, "", e.stdoutTTY && plan.Output == "")
	if err != nil {
		prog.stop()
		return err
	}
	f.display(e, &s.Options().Writers, format, plan.Output, prog)
	s.Options().OnResult = func(r *agenteval.Result, carried bool) {
		c.note(r, carried)
		if !carried && prog == nil && !opt.Quiet && !e.stdoutTTY {
			fmt.Fprintf(e.stderr, "%-5s %s/%s %.3f (%s)\n", strings.ToUpper(string(r.Verdict)), r.Suite, r.TestID, r.Score, time.Duration(r.DurationMS*float64(time.Millisecond)).Round(time.Millisecond))
		}
	}
	if ow, err := f.otel.writer(e.stderr); err != nil {
		prog.stop()
		return err
	} else if ow != nil {
		s.Options().Writers = append(s.Options().Writers, ow)
	}
	// The receiver first: the agents opened with the sink report to it.
	if err := f.otlp.start(e.stderr); err != nil {
		prog.stop()
		return err
	}
	s.Options().WrapAgent = f.otlp.wrap
	sink, err := plan.OpenSink()
	if err != nil {
		prog.stop()
		f.otlp.stop(e, true)
		return cliErr(err)
	}
	out, runErr := plan.Run(ctx, sink)
	mp.finish(e.stderr)
	prog.stop()
	f.otlp.stop(e, opt.Quiet)
	if out == nil {
		return cliErr(runErr)
	}
	// The totals end every run whose results are not already a table on
	// the terminal: CI logs need them, after Ctrl-C too.
	if !opt.Quiet && !e.stdoutTTY {
		fmt.Fprintln(e.stderr, c.line(start))
		if u := c.usageLine(out.Summary.Usage); u != "" {
			fmt.Fprintln(e.stderr, u)
		}
	}
	if !opt.Quiet {
		// A provider's rate limit slowed the run: its 429s and waits.
		provider.ReportRateLimits(e.stderr)
	}
	s.Options().Models.ReportCache(e.stderr)
	if !opt.Quiet && runErr == nil {
		fmt.Fprintln(e.stderr, nextSteps(out, f.opt.HTML))
	}
	return f.exit(ctx, e, out, runErr)
}

// nextSteps says where a run's results went and how to look at them.
func nextSteps(out *session.Outcome, html string) string {
	var where []string
	if out.Output != "" {
		where = append(where, "results in "+out.Output)
	}
	if html != "" {
		where = append(where, "report in "+html)
	}
	see := ""
	switch {
	case out.Recorded:
		see = "agenteval show " + out.Header.RunID + " (or agenteval view)"
	case out.Output != "":
		see = "agenteval show " + out.Output
	}
	if see != "" {
		where = append(where, "see them with "+see)
	}
	if len(where) == 0 {
		return "the run was not recorded (--no-store) and its results went to stdout"
	}
	return strings.Join(where, "; ")
}

// plan loads the eval files and plans the run, with the fake model
// started first for a dry run or a fake judge (stop ends it).
func (f *runFlags) plan(e *env, paths []string) (*session.Session, *session.Plan, func(), error) {
	stop := func() {}
	opt, err := f.options(e)
	if err != nil {
		return nil, nil, stop, err
	}
	if f.dryRun || f.dryScript != "" || f.fakeJudge {
		if stop, err = f.startFake(e, &opt, f.dryRun || f.dryScript != ""); err != nil {
			return nil, nil, func() {}, err
		}
	}
	s, err := session.Load(opt, paths...)
	if err != nil {
		stop()
		return nil, nil, func() {}, cliErr(err)
	}
	plan, err := s.Plan()
	if err != nil {
		stop()
		return nil, nil, func() {}, cliErr(err)
	}
	if plan.Resumed > 0 && !opt.Quiet && e.stderrTTY {
		fmt.Fprintf(e.stderr, "resuming run %s: %s already in %s %s skipped\n", plan.Header.RunID, counted(plan.Resumed, "test"), plan.Output, plural(plan.Resumed, "is", "are"))
	}
	return s, plan, stop, nil
}

// options are the session's options as the flags give them.
func (f *runFlags) options(e *env) (session.Options, error) {
	opt := f.opt
	if err := f.agentvFlags(e, &opt); err != nil {
		return opt, err
	}
	if f.threshold != -1 {
		th := f.threshold
		opt.Threshold = &th
	}
	opt.Models = *f.judge.settings()
	opt.NoExec, opt.MaxFileBytes, opt.Store, opt.Root = e.noExec, e.maxFile, e.storeFlag, e.root
	opt.Command, opt.Version = "run", shortVersion()
	// The tests stay in their files until the run starts them: a large
	// suite's memory is the tests in flight, not the whole file's.
	opt.Stream = true
	opt.Log = e.stderr
	return opt, nil
}

// display adds the writers that show results: the table on a terminal,
// else the chosen format on stdout unless the results go to a file.
func (f *runFlags) display(e *env, ws *[]report.Writer, format, output string, prog *progressLine) {
	var w report.Writer
	switch {
	case e.stdoutTTY && f.format == "":
		w = report.NewTable(e.stdout, report.TableOptions{Color: e.color, NoMetricSummary: true})
	case output == "" || f.format != "":
		w = newWriter(format, e.stdout, nil, e.color && format == "table")
	default:
		return
	}
	if prog != nil {
		// The progress line and the table share the terminal.
		w = aroundWriter{w: w, p: prog}
	}
	*ws = append(*ws, w)
}

// aroundWriter writes between redraws of the progress line.
type aroundWriter struct {
	w report.Writer
	p *progressLine
}

func (a aroundWriter) Start(h *results.Header) error {
	if st, ok := a.w.(report.Starter); ok {
		return st.Start(h)
	}
	return nil
}

func (a aroundWriter) Write(r *agenteval.Result) error {
	return a.p.around(func() error { return a.w.Write(r) })
}

func (a aroundWriter) Close(sum *results.Summary) error { return a.w.Close(sum) }

// exit is the exit code of a finished run, with what to say about it.
func (f *runFlags) exit(ctx context.Context, e *env, out *session.Outcome, runErr error) error {
	sum := out.Summary
	if runErr != nil {
		var fe *agenteval.FatalError
		switch {
		case errors.As(runErr, &fe):
			return &exitError{code: exitUsage, err: fmt.Errorf("%s\nStopped after %s; fix the configuration and run again", provider.Redact(fe.Error()), counted(sum.Total, "test"))}
		case errors.As(runErr, new(*agenteval.PosError)):
			// Only reading an eval file again fails at a position once
			// the run has started: the file changed or went away under a
			// streamed run. That is the input's fault, not a test's.
			return &exitError{code: exitUsage, err: fmt.Errorf("%s\nStopped after %s", provider.Redact(runErr.Error()), counted(sum.Total, "test"))}
		case errors.Is(runErr, context.Canceled) || ctx.Err() != nil:
			fmt.Fprintf(e.stderr, "interrupted: %s kept", counted(sum.Total, "finished test"))
			if out.Output != "" {
				fmt.Fprintf(e.stderr, " in %s; continue with --resume %s", out.Output, out.Output)
			}
			fmt.Fprintln(e.stderr)
			return exitCode(exitInterrupted)
		}
		if ce := cliErr(runErr); ce != runErr {
			return ce
		}
		return &exitError{code: exitExecution, err: runErr}
	}
	code := runExit(sum)
	if (f.dryRun || f.dryScript != "") && code == exitFailed {
		// The fake's replies are canned: failed checks are expected, and
		// only errors say the plumbing is broken.
		if !f.opt.Quiet {
			fmt.Fprintln(e.stderr, "dry run: the plumbing works (no execution errors); failed checks are expected from the fake's canned replies")
		}
		code = exitOK
	}
	return exitCode(code)
}

// projectEvals is the evals folder of the working directory's project,
// when it has agenteval.yaml and that folder.
func projectEvals() (string, bool) {
	p, err := project.Find(".")
	if err != nil || p == "" {
		return "", false
	}
	dir := filepath.Join(filepath.Dir(p), "evals")
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return "", false
	}
	if rel, err := filepath.Rel(".", dir); err == nil {
		dir = rel
	}
	return dir, true
}
