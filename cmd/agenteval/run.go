package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/bytesize"
	"github.com/agenteval/agenteval/project"
	"github.com/agenteval/agenteval/provider"
	"github.com/agenteval/agenteval/report"
	"github.com/agenteval/agenteval/run"
	"github.com/agenteval/agenteval/suite"
	"github.com/agenteval/agenteval/target"
	"github.com/spf13/cobra"
)

// exitInterrupted is the conventional status of a run stopped by Ctrl-C.
const exitInterrupted = 130

type runFlags struct {
	config    string
	judge     judgeFlags
	simulator string
	targets   []string
	tags      []string
	strict    bool
	jobs      int
	trials    int
	filter    string
	threshold float64
	output    string
	junit     string
	resume    string
	force     bool
	// rerunFailed and retryErrors name an earlier results file whose
	// failed (or errored) tests run again.
	rerunFailed string
	retryErrors string
	// dryRun plays the agent, judge and simulated users with the fake
	// model; dryScript scripts its agent.
	dryRun    bool
	dryScript string
	// fakeJudge makes the fake model the judge and simulated users only.
	fakeJudge bool
	html      string
	noStore   bool
	runID     string
	shard     string
	format    string
	quiet     bool
	otlp      otlpFlags
	otel      otelFlags
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
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErr("run needs at least one eval file\nUsage: agenteval run SUITE... [--target NAME|provider:model]")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return runSuites(cmd.Context(), e, args, &f) },
	}
	cmd.Long += `

A SUITE may be a folder: its eval files (*.yaml and *.yml with tests:, and
agent_inspect JSON) are run, in name order, folders below it included; a
quoted glob such as 'evals/*.eval.yaml' is expanded the same way.`
	fl := cmd.Flags()
	fl.StringArrayVar(&f.targets, "target", nil, "target to test: a name from the suite's targets (or AgentV's targets.yaml), or provider:model; repeat it to run the suite once per target")
	fl.StringArrayVar(&f.tags, "tag", nil, "run only the eval files with this tag (repeatable: any of them); a v5 tags map matches as key=value")
	fl.BoolVar(&f.strict, "strict", false, "make every warning about an eval file an error")
	fl.StringVar(&f.config, "config", "", "project file with shared targets, tools, judge, simulator and defaults (default: the nearest agenteval.yaml at or above each eval file)")
	fl.StringVar(&f.simulator, "simulator", "", "model that plays simulated users (user: in a test), as provider:model (default: the judge)")
	fl.IntVarP(&f.jobs, "jobs", "j", 0, "conversations at once (default 4 per CPU)")
	fl.IntVar(&f.trials, "trials", 0, "run every test this many times (overrides the suite)")
	fl.StringVar(&f.filter, "filter", "", "run only tests whose id matches this glob")
	fl.Float64Var(&f.threshold, "threshold", -1, "pass mark for every test, from 0 to 1 (overrides the suite's, whose default is 0.8)")
	fl.Lookup("threshold").DefValue = "0" // -1 means unset; "0" is shown as no default
	fl.StringVarP(&f.output, "output", "o", "", "write results (JSONL) to this file, replacing it (--resume appends to the file it continues)")
	fl.StringVar(&f.junit, "junit", "", "also write JUnit XML to this file")
	fl.StringVar(&f.resume, "resume", "", "continue the run recorded in this results file: skip its tests, append the rest")
	fl.BoolVar(&f.force, "force", false, "with --resume: continue even though the file was written for other suites or another target")
	fl.StringVar(&f.rerunFailed, "rerun-failed", "", "run again the tests that failed or errored in this results file; its other results are carried into this run's")
	fl.StringVar(&f.retryErrors, "retry-errors", "", "run again the tests that ended in an execution error in this results file, or are missing from it; the rest are carried over")
	fl.BoolVar(&f.dryRun, "dry-run", false, "check the suite's plumbing offline: a fake model in this process plays the agent, the judge and the simulated users (quality failures do not fail a dry run)")
	fl.BoolVar(&f.fakeJudge, "fake-judge", false, "offline judging: a fake model in this process judges (every criterion passes) and plays the simulated users; the targets run as usual")
	fl.StringVar(&f.dryScript, "dry-run-script", "", "with --dry-run (implied): the fake agent follows this script (see agenteval fakellm --help)")
	fl.StringVar(&f.html, "html", "", "also write a self-contained HTML report to this file")
	fl.BoolVar(&f.noStore, "no-store", false, "do not record the run in the project's store (.agenteval/agenteval.db)")
	fl.StringVar(&f.runID, "run-id", "", "id of the run (default: 12 random hex digits; with --shard, the CI pipeline's run, e.g. gh-RUN_ID-ATTEMPT on GitHub Actions)")
	fl.StringVar(&f.shard, "shard", "", "run only shard i of n (e.g. 2/4): each test goes to one shard by a stable hash, tests linked by depends_on together; agenteval merge puts the shards' results files together")
	fl.StringVar(&f.format, "format", "", "stdout format: table, jsonl or json (default: table on a terminal, else jsonl)")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress on stderr")
	f.judge.add(fl)
	f.judge.noKeyHint = "\nTo try the suite without a key, add --fake-judge (a fake judge passes every criterion) or --dry-run (a fake plays the agent too)"
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

func (c *counters) add(r *agenteval.Result) {
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
	if r.Usage != nil {
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

func runSuites(ctx context.Context, e *env, paths []string, f *runFlags) error {
	if f.threshold != -1 && !(f.threshold >= 0 && f.threshold <= 1) {
		return usageErr("--threshold %v is outside [0, 1]", f.threshold)
	}
	if f.trials != 0 && (f.trials < 1 || f.trials > suite.MaxTrials) {
		return usageErr("--trials %d is outside 1..%d", f.trials, suite.MaxTrials)
	}
	paths, err := evalFiles(paths)
	if err != nil {
		return err
	}
	if dry := f.dryRun || f.dryScript != ""; dry || f.fakeJudge {
		stop, err := f.startFake(e, dry)
		if err != nil {
			return err
		}
		defer stop()
	}
	judgeAvailable := f.judge.spec != "" || os.Getenv("AGENTEVAL_JUDGE") != ""
	var suites []*suite.Suite
	var loadErrs []string
	// A YAML document is parsed whole, and its node tree is several times
	// the file's size but lives only until the tests are read out of it:
	// collect garbage eagerly meanwhile, so a large suite does not set the
	// run's peak memory.
	gc := debug.SetGCPercent(20)
	configs := map[*suite.Suite]*project.Config{}
	for _, p := range paths {
		if msg := notTests(p); msg != "" {
			loadErrs = append(loadErrs, msg)
			continue
		}
		cfg, err := loadProject(p, f.config, e.noExec)
		if err != nil {
			loadErrs = append(loadErrs, err.Error())
			continue
		}
		opt := projectOptions(cfg, judgeAvailable, f.simulator != "")
		opt.NoExec, opt.MaxFileBytes, opt.Strict = e.noExec, e.maxFile, f.strict
		s, err := suite.Load(p, opt)
		if s != nil && !f.quiet {
			for _, w := range s.Warnings {
				fmt.Fprintln(e.stderr, warning(w))
			}
		}
		if err != nil {
			loadErrs = append(loadErrs, err.Error())
			continue
		}
		if s.Schema == suite.SchemaAgentVJSONL {
			fmt.Fprintf(e.stderr, "%s: read as AgentV tests (JSONL), %d tests\n", p, len(s.Tests))
		}
		if !hasTag(s, f.tags) {
			continue
		}
		project.Apply(cfg, s)
		configs[s] = cfg
		// Every target's credentials are secrets, whichever target runs:
		// a command target inherits the whole environment.
		target.NoteSecrets(s)
		suites = append(suites, s)
	}
	debug.SetGCPercent(gc)
	// And hand the pages the trees took back to the system now, rather
	// than as the scavenger gets to them while the run grows its own heap:
	// the two would add up to the run's peak.
	debug.FreeOSMemory()
	if len(loadErrs) > 0 {
		fmt.Fprintln(e.stderr, strings.Join(loadErrs, "\n"))
		return exitCode(exitUsage)
	}
	if len(suites) == 0 && len(f.tags) > 0 {
		return usageErr("no eval file has the tag %s", strings.Join(f.tags, " or "))
	}

	hdr, err := f.header(suites, configs)
	if err != nil {
		return err
	}
	sharding, err := parseShard(f.shard, suites)
	if err != nil {
		return err
	}
	// What runs: each suite's tests, per target, in this shard.
	plans := map[*suite.Suite][]targetRun{}
	selected := map[*suite.Suite][]*agenteval.Test{}
	matched, shardTests := 0, 0
	for _, s := range suites {
		ts, err := run.Selected(s, f.filter)
		if err != nil {
			return usageErr("%v", err)
		}
		selected[s] = ts
		plans[s] = f.targetRuns(s)
		keep := sharding.keeps(s)
		for i := range plans[s] {
			tr := &plans[s][i]
			for _, t := range ts {
				if tr.selects(t) {
					matched++
				}
			}
			tr.keep = keep
			for _, t := range ts {
				if tr.selects(t) {
					shardTests++
				}
			}
		}
	}
	if matched == 0 && f.filter != "" {
		return usageErr("%s", noMatch(f.filter, suites))
	}
	sharding.label(e, hdr, f.runID, f.resume != "", shardTests)
	// Results: -o writes a file afresh; --resume appends to its file.
	out := f.output
	var done *resumed
	rerunFlag, rerunPath, err := f.rerunSource()
	if err != nil {
		return err
	}
	if rerunFlag != "" {
		// The file is read whole before -o, which may name it, is
		// started afresh.
		if done, err = f.startRerun(e, rerunFlag, rerunPath, hdr); err != nil {
			return err
		}
	}
	if f.resume != "" {
		if out != "" && out != f.resume {
			return usageErr("--resume %s and -o %s differ; a resumed run appends to the file it resumes", f.resume, out)
		}
		out = f.resume
		if done, err = readResumed(f.resume); err != nil {
			return usageErr("--resume: %v", err)
		}
		if done.cut > 0 {
			fmt.Fprintf(e.stderr, "agenteval: warning: %s ended in a cut-off line (%s, from a run that was killed); it was removed, and that test runs again\n", f.resume, bytesize.Format(done.cut))
		}
		if old := done.header; old != nil {
			if err := checkResume(f.resume, old, hdr); err != nil && !f.force {
				return usageErr("%v", err)
			}
			if f.runID != "" && f.runID != old.RunID {
				return usageErr("--run-id %s: %s holds run %s; a resumed run keeps its id", f.runID, f.resume, old.RunID)
			}
			// The file's run goes on, under its own id.
			hdr.RunID, hdr.Started = old.RunID, old.Started
		}
		if !f.quiet && e.stderrTTY {
			fmt.Fprintf(e.stderr, "resuming run %s: %s already in %s %s skipped\n", hdr.RunID, counted(done.n, "test"), f.resume, plural(done.n, "is", "are"))
		}
	}
	format, err := formatFor(f.format, "", e.stdoutTTY && out == "")
	if err != nil {
		return err
	}
	rec, err := startRecording(e, f.noStore)
	if err != nil {
		return err
	}
	defer rec.close()
	var writers report.Multi
	// started get the header: all but a resumed file, which has its own
	// (or, written before headers, must not get one in the middle).
	var started report.Multi
	// archives are the writers of the whole run, which also get the
	// results a resumed file already holds.
	var archives report.Multi
	var files []*os.File
	defer func() {
		for _, fh := range files {
			fh.Close()
		}
	}()
	if out != "" {
		// -o starts the file afresh; only --resume adds to one, so a new
		// run is never mixed into an old one's results.
		mode := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
		if f.resume != "" {
			mode = os.O_CREATE | os.O_WRONLY | os.O_APPEND
		}
		fh, err := os.OpenFile(out, mode, 0o644)
		if err != nil {
			return usageErr("open results file: %v", err)
		}
		files = append(files, fh)
		w := report.NewJSONL(fh)
		writers = append(writers, w)
		if f.resume == "" || (done.n == 0 && done.header == nil) {
			started = append(started, w)
		}
	}
	for _, a := range []struct {
		path string
		mk   func(io.Writer) report.Writer
	}{{f.junit, report.NewJUnit}, {f.html, func(w io.Writer) report.Writer { return report.NewHTML(w, report.HTMLOptions{}) }}} {
		if a.path == "" {
			continue
		}
		fh, err := os.Create(a.path)
		if err != nil {
			return usageErr("create %s: %v", a.path, err)
		}
		files = append(files, fh)
		w := a.mk(fh)
		writers = append(writers, w)
		started = append(started, w)
		archives = append(archives, w)
	}
	if ow, err := f.otel.writer(e.stderr); err != nil {
		return err
	} else if ow != nil {
		writers = append(writers, ow)
	}
	switch {
	case e.stdoutTTY && f.format == "":
		w := report.NewTable(e.stdout, report.TableOptions{Color: e.color, NoMetricSummary: true})
		writers, started = append(writers, w), append(started, w)
	case out == "" || f.format != "":
		w := newWriter(format, e.stdout, nil, e.color && format == "table")
		writers, started = append(writers, w), append(started, w)
	}
	if w := rec.writer(); w != nil {
		writers, started = append(writers, w), append(started, w)
	}
	if err := started.Start(hdr); err != nil {
		return usageErr("%v", err)
	}

	if err := f.otlp.start(); err != nil {
		return err
	}
	defer f.otlp.stop(e, f.quiet)

	var sum report.Summary
	var sumMu sync.Mutex
	var c counters
	if done != nil && done.kept != nil {
		// The results carried over from the earlier run are part of this
		// one: every writer gets them.
		if err := done.carryOver(func(r *agenteval.Result) error {
			c.add(r)
			sum.Add(r)
			return writers.Write(r)
		}); err != nil {
			return usageErr("%s: %v", rerunFlag, err)
		}
	} else if done != nil && done.n > 0 {
		// The whole run is summed, reported and recorded, not only this
		// session's part of it.
		if err := resumeArchives(ctx, f.resume, done.n, hdr, &sum, &c, archives, rec); err != nil {
			return usageErr("--resume: %v", err)
		}
	}
	for _, s := range suites {
		c.total += plannedTotal(s, plans[s], selected[s], done)
	}
	start := time.Now()
	live := e.stderrTTY && !f.quiet
	var prog *progressLine
	if live {
		prog = startProgress(e.stderr, func() string { return c.line(start) })
	}
	var runErr error
	emit := func(r *agenteval.Result) error {
		c.add(r)
		sumMu.Lock()
		sum.Add(r)
		sumMu.Unlock()
		if !live && !f.quiet && e.stderr != nil && !e.stdoutTTY {
			fmt.Fprintf(e.stderr, "%-5s %s/%s %.3f (%s)\n", strings.ToUpper(string(r.Verdict)), r.Suite, r.TestID, r.Score, time.Duration(r.DurationMS*float64(time.Millisecond)).Round(time.Millisecond))
		}
		return prog.around(func() error { return writers.Write(r) })
	}
runs:
	for _, s := range suites {
		for _, tr := range plans[s] {
			opt, err := f.options(s, configs[s], tr.target)
			if err != nil && len(plans[s]) == 1 {
				prog.stop()
				return err
			}
			if err != nil {
				// One target of a matrix that cannot run: its tests end in
				// execution_error, naming why; the other targets run.
				for i := range s.Tests {
					if t := &s.Tests[i]; tr.selects(t) {
						if werr := emit(targetErrorResult(t, tr.target, err)); werr != nil {
							runErr = werr
							break runs
						}
					}
				}
				continue
			}
			opt.Select = tr.selects
			if done != nil {
				opt.Done = done.doneFor(suiteName(s), opt.Target)
				if done.again != nil {
					name := opt.Target
					opt.Select = func(t *agenteval.Test) bool {
						return tr.selects(t) && done.runsAgain(suiteName(s), name, t.ID)
					}
				}
			}
			if err := run.RunSuite(ctx, s, opt, emit); err != nil {
				runErr = err
				break runs
			}
		}
	}
	prog.stop()
	sum.DurationMS = float64(time.Since(start).Microseconds()) / 1000
	rec.finish(runErr, ctx)
	if cerr := writers.Close(&sum); cerr != nil && runErr == nil {
		runErr = cerr
	}
	// The totals end every run whose results are not already a table on
	// the terminal: CI logs need them, after Ctrl-C too.
	if !f.quiet && !e.stdoutTTY {
		fmt.Fprintln(e.stderr, c.line(start))
		if u := report.UsageLine(sum.Usage); u != "" {
			fmt.Fprintln(e.stderr, u)
		}
	}
	f.judge.reportCache(e.stderr)
	if runErr != nil {
		var fe *agenteval.FatalError
		switch {
		case errors.As(runErr, &fe):
			return &exitError{code: exitUsage, err: fmt.Errorf("%s\nStopped after %s; fix the configuration and run again", provider.Redact(fe.Error()), counted(sum.Total, "test"))}
		case errors.Is(runErr, context.Canceled) || ctx.Err() != nil:
			fmt.Fprintf(e.stderr, "interrupted: %s kept", counted(sum.Total, "finished test"))
			if out != "" {
				fmt.Fprintf(e.stderr, " in %s; continue with --resume %s", out, out)
			}
			fmt.Fprintln(e.stderr)
			return exitCode(exitInterrupted)
		}
		return &exitError{code: exitExecution, err: runErr}
	}
	code := runExit(sum)
	if (f.dryRun || f.dryScript != "") && code == exitFailed {
		// The fake's replies are canned: failed checks are expected, and
		// only errors say the plumbing is broken.
		if !f.quiet {
			fmt.Fprintln(e.stderr, "dry run: the plumbing works (no execution errors); failed checks are expected from the fake's canned replies")
		}
		code = exitOK
	}
	return exitCode(code)
}

// header describes the run about to start.
func (f *runFlags) header(suites []*suite.Suite, configs map[*suite.Suite]*project.Config) (*report.Header, error) {
	h := newHeader("run")
	if f.runID != "" {
		if !validRunID(f.runID) {
			return nil, usageErr("--run-id %q: use 1 to 64 letters, digits, '.', '_' or '-'", f.runID)
		}
		h.RunID = f.runID
	}
	var targets, judges, simulators []string
	for _, s := range suites {
		sim := f.simulator
		if cfg := configs[s]; sim == "" && cfg != nil {
			sim = cfg.Simulator
		}
		simulators = append(simulators, sim)
		sf, err := suiteFile(s.File, suiteName(s))
		if err != nil {
			return nil, usageErr("%v", err)
		}
		h.Suites = append(h.Suites, sf)
		for _, tr := range f.targetRuns(s) {
			ts, err := target.Select(s, tr.target)
			if err != nil {
				return nil, usageErr("%v", err)
			}
			targets = append(targets, ts.Name)
		}
		j := f.judge.spec
		if j == "" && s.Judge != nil {
			j = s.Judge.Model
		}
		if j == "" {
			j = os.Getenv("AGENTEVAL_JUDGE")
		}
		judges = append(judges, j)
	}
	h.Target, h.Judge, h.Simulator, h.Trials = joinUnique(targets), joinUnique(judges), joinUnique(simulators), f.trials
	if f.threshold != -1 {
		th := f.threshold
		h.Threshold = &th
	}
	return h, nil
}

// resumeArchives gives the results a resumed file already holds to the
// summary and the totals line, to the writers of the whole run (HTML,
// JUnit), and to the store when it lacks them.
func resumeArchives(ctx context.Context, path string, n int, hdr *report.Header, sum *report.Summary, c *counters, archives report.Multi, rec *recording) error {
	runID := hdr.RunID
	toStore := rec.needsBackfill(ctx, hdr, n)
	_, err := report.ReadResults(path, func(r *agenteval.Result) error {
		sum.Add(r)
		c.add(r)
		if toStore {
			rec.add(runID, r)
		}
		return archives.Write(r)
	})
	return err
}

// loadProject finds the project file for an eval file: --config, else the
// nearest agenteval.yaml at or above it. Under --no-exec its command
// targets are refused, as an eval file's are.
func loadProject(path, explicit string, noExec bool) (*project.Config, error) {
	cfg, err := project.For(path, explicit, suite.Options{NoExec: noExec})
	if err != nil {
		return nil, err
	}
	return cfg, nil
}

// projectOptions are the loading options of an eval file under a project
// file: its judge and simulator count as configured.
func projectOptions(cfg *project.Config, judge, simulator bool) suite.Options {
	if cfg != nil {
		judge = judge || cfg.Judge != nil
		simulator = simulator || cfg.Simulator != ""
	}
	return suite.Options{JudgeAvailable: judge, SimulatorAvailable: simulator}
}

func suiteName(s *suite.Suite) string {
	if len(s.Tests) > 0 {
		return s.Tests[0].Suite
	}
	return s.Name
}

// options builds a suite's run options: its target (choice, or the
// suite's default), its judge, and the command line's overrides; cfg, the
// project file, fills in what neither the command line nor the suite says.
func (f *runFlags) options(s *suite.Suite, cfg *project.Config, choice string) (run.Options, error) {
	ts, err := target.Select(s, choice)
	if err != nil {
		return run.Options{}, usageErr("%v", err)
	}
	jobs, simulator := f.jobs, f.simulator
	if jobs == 0 && s.Workers > 0 {
		jobs = s.Workers // execution.workers
	}
	if cfg != nil {
		if jobs == 0 {
			jobs = cfg.Defaults.Jobs
		}
		if simulator == "" {
			simulator = cfg.Simulator
		}
	}
	// Each conversation has one agent call in flight, and its grading runs
	// beside it: a provider serving both needs room for twice -j.
	conc := max(32, 2*jobs)
	// The agent's calls are priced like the judge's, so cost budgets and
	// totals see --prices too.
	prices, err := f.judge.priceTable()
	if err != nil {
		return run.Options{}, err
	}
	agent, err := target.Open(ts, s, target.Options{Configure: func(c *provider.Config) {
		f.judge.dryRun(c)
		c.Prices = prices
		c.Timeout, c.RequestsPerMinute, c.Concurrency, c.CallBudget = f.judge.timeout, f.judge.rpm, conc, f.judge.callBudget
		c.MaxRetries = f.judge.maxRetries
		if f.judge.maxRetries == 0 {
			c.MaxRetries = -1
		}
	}})
	if err != nil {
		return run.Options{}, usageErr("target %s: %s", ts.Name, provider.Redact(err.Error()))
	}
	agent = f.otlp.wrap(agent)
	opt := run.Options{Agent: agent, Target: ts.Name, Concurrency: jobs, Trials: f.trials, Filter: f.filter}
	if f.threshold != -1 {
		th := f.threshold
		opt.Threshold = &th
	}
	jf := f.judge
	jf.concurrency = conc
	if jf.spec == "" && s.Judge != nil {
		jf.spec = s.Judge.Model
	}
	j, err := jf.build()
	if err != nil {
		return run.Options{}, err
	}
	if j != nil && s.Judge != nil && s.Judge.Samples > 0 {
		j.Samples = s.Judge.Samples
	}
	opt.Judge = j
	if simulator != "" {
		if opt.Simulator, opt.SimulatorName, err = jf.open(simulator, "simulator"); err != nil {
			return run.Options{}, err
		}
	}
	opt.OpenModel = func(spec string) (agenteval.Model, error) {
		m, _, err := jf.open(spec, "user.model")
		return m, err
	}
	return opt, nil
}
