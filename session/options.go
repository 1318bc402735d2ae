package session

import (
	"fmt"
	"io"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/grade"
	"github.com/agenteval/agenteval/judge"
	"github.com/agenteval/agenteval/report"
)

// Options configure a session. They mirror agenteval run's flags; the zero
// value runs every test of the files against each suite's default target,
// with the suite's judge, recording the run in the project's store and
// writing results nowhere but the caller's Writers.
type Options struct {
	// Config is the project file; "" means the nearest agenteval.yaml at
	// or above each eval file.
	Config string
	// Root is the project's root, where the store, the reply cache and .env
	// live: "" means the root of the first eval file (the folder of the
	// nearest agenteval.yaml, else its git work tree, else the working
	// directory), so a run finds its project from any working directory.
	Root string
	// NoExec refuses every program an eval or project file names
	// (command targets, script graders).
	NoExec bool
	// DryRun starts none of the programs the graders name (script
	// graders, prompt_command, code aggregators): each scores a skip that
	// names its program. agenteval run --dry-run sets it, with a fake
	// model for every target.
	DryRun bool
	// Strict makes every warning about an eval file an error.
	Strict bool
	// MaxFileBytes bounds an eval file; 0 means the default.
	MaxFileBytes int64
	// Tags keeps only the eval files with one of these tags.
	Tags []string
	// Graders are the grader definitions assertion types are looked up
	// in, when loading and when running; nil means grade.All(). A Go
	// program adds its own graders by passing grade.All() and them.
	Graders []*grade.Definition

	// Targets runs every test against each of these (names from the
	// suite or provider:model); none means each test's own targets, else
	// the suite's matrix, else its default.
	Targets []string
	// Agent, when set, is the agent under test for every suite, named
	// AgentName in results ("go" by default); Targets is then ignored.
	Agent     agenteval.Agent
	AgentName string
	// Filter runs only the tests whose id matches this glob.
	Filter string
	// Select, when set, runs only the tests it accepts, of those Filter
	// selects; it is asked as the run goes (go test -run's choice, say).
	Select func(*agenteval.Test) bool
	// Stream leaves each eval file's tests in the file between loading
	// and running (suite.Options.Stream), as agenteval run does: every
	// test is read and checked when the session loads, and read again as
	// the run starts it, so the run's memory follows the tests in flight,
	// not the size of the suite. A suite read that way has no Tests
	// (Suite.Streamed; NumTests, Info and EachTest give them), nor has its
	// SuitePlan. Select, which is asked of each whole test, turns it off.
	Stream bool
	// Shard runs only part i of n of the tests ("2/4").
	Shard string
	// RunID names the run; "" means a new id (with Shard, the CI
	// pipeline's).
	RunID string
	// Trials, when not 0, runs every test this many times.
	Trials int
	// Threshold, when set, is every test's pass mark.
	Threshold *float64
	// Jobs is how many conversations run at once; 0 means the suite's
	// workers, the project's jobs, else 4 per CPU.
	Jobs int

	// Resume continues the run a results file holds, appending to it;
	// Force does so even when it was written for other suites or another
	// target.
	Resume string
	Force  bool
	// RerunFailed and RetryErrors name an earlier results file whose
	// failed (or errored) tests run again, the rest carried over.
	RerunFailed, RetryErrors string

	// Models says how the judge, simulated users and model targets are
	// called.
	Models Models
	// JudgeModel and SimulatorModel, when set, are used as they are
	// instead of opening Models.Judge and Models.Simulator.
	JudgeModel     *judge.Judge
	SimulatorModel agenteval.Model
	SimulatorName  string

	// Output is the results file (JSONL), written afresh; with Resume it
	// must be "" or the same file, which is appended to.
	Output string
	// JUnit and HTML are further report files.
	JUnit, HTML string
	// Writers also get the header and every result (a terminal table, a
	// caller's collector).
	Writers []report.Writer
	// NoStore records nothing in the run store; Store names it (a SQLite
	// path or a postgres:// URL), else $AGENTEVAL_STORE, else the project
	// file's store:, else the project's own.
	NoStore bool
	Store   string
	// WrapAgent, when set, wraps each agent the session opens (to see
	// the telemetry it exports, say).
	WrapAgent func(agenteval.Agent) agenteval.Agent

	// Command and Version are recorded in the run's header.
	Command, Version string
	// Log gets warnings and notes (nil: discarded); Quiet drops the notes
	// and the eval files' warnings.
	Log   io.Writer
	Quiet bool
	// OnResult is told of each result as it joins the run (Carried: from
	// the earlier file of Resume or RerunFailed), before it is written.
	// It may be called from several goroutines at once.
	OnResult func(r *agenteval.Result, carried bool)
}

func (o *Options) logf(format string, a ...any) {
	if o.Log != nil {
		fmt.Fprintf(o.Log, format, a...)
	}
}

// notef logs what -q silences.
func (o *Options) notef(format string, a ...any) {
	if !o.Quiet {
		o.logf(format, a...)
	}
}
