// Package evaltest runs eval files inside go test, against an agent written
// in Go, as analysistest runs analyzers: each test of the suite is a
// subtest named after its id (so go test -run 'TestBooking/books' runs only
// that one), and a failure says which turn, which criterion, and why (the
// judge's reason, or the check's evidence).
//
//	func TestBookingAgent(t *testing.T) {
//		evaltest.Run(t, "testdata/booking.yaml", myAgent, evaltest.Options{})
//	}
//
// The selected tests run together, as many conversations at once as the
// runner allows, whatever go test's -parallel says; their subtests report
// as each finishes. A suite that names its judge (judge: openai:...)
// opens it through package provider, so import the adapter it needs, as
// database/sql drivers are imported:
//
//	import _ "github.com/agenteval/agenteval/provider/openai"
//
// Only the adapters a test imports are compiled into it.
//
// The eval file is loaded and run by package session, as agenteval run
// loads and runs it: the project file (agenteval.yaml) at or above it
// supplies the tools, targets, judge and defaults the suite does not set,
// so a suite behaves the same under go test as on the command line. No run
// is recorded in the store.
//
// It imports the root package, grade, judge, report, results and session.
package evaltest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/grade"
	"github.com/agenteval/agenteval/judge"
	"github.com/agenteval/agenteval/report"
	"github.com/agenteval/agenteval/results"
	"github.com/agenteval/agenteval/session"
)

// Options adjust Run. The zero value uses the suite's judge (or
// AGENTEVAL_JUDGE) and runs every test.
type Options struct {
	// Judge grades string assertions; nil means the suite's judge:, then
	// AGENTEVAL_JUDGE. Judges opened from a spec are cached under
	// .agenteval/cache in the package's folder.
	Judge *judge.Judge
	// Filter selects tests by id (path.Match syntax); go test -run selects
	// among them.
	Filter      string
	Concurrency int
	Threshold   *float64
	Trials      int
	// Simulator plays simulated users (user: in a test); nil means the
	// judge's model. A test's user.model is opened with provider.OpenSpec.
	Simulator     agenteval.Model
	SimulatorName string
	// Config is the project file; "" means the nearest agenteval.yaml at
	// or above the eval file.
	Config string
	// NoCache neither reads nor writes the cache of judge and
	// simulated-user replies.
	NoCache bool
	// Graders are the grader definitions the suite's assertion types are
	// looked up in; nil means grade.All(). Append your own to grade.All()
	// to use them in eval files.
	Graders []*grade.Definition
}

// Run loads the eval file, with the project file (agenteval.yaml) at or
// above it applied as agenteval run applies it, and runs its tests against
// agent, each reported as a subtest named after the test's id. A nil agent
// means the suite's own targets (from the eval or the project file), as
// agenteval run would run them. The tests
// that go test -run selects run side by side, with their depends_on; each
// subtest waits for its own result.
func Run(t *testing.T, path string, agent agenteval.Agent, opt Options) {
	t.Helper()
	// Each subtest that go test -run selects says so before it pauses
	// (t.Parallel); once all have, the chosen tests run together.
	var mu sync.Mutex
	chosen := map[string]chan *agenteval.Result{}
	plan, sopt, err := prepare(path, agent, opt, func(tc *agenteval.Test) bool {
		mu.Lock()
		defer mu.Unlock()
		return chosen[tc.ID] != nil
	})
	if err != nil {
		t.Fatalf("evaltest: %v", err)
	}
	var tests []*agenteval.Test
	for _, sp := range plan.Suites {
		tests = append(tests, sp.Tests...)
	}
	for _, tc := range tests {
		ch := make(chan *agenteval.Result, 1)
		t.Run(tc.ID, func(t *testing.T) {
			mu.Lock()
			chosen[tc.ID] = ch
			mu.Unlock()
			t.Parallel()
			end(t, <-ch)
		})
	}
	if len(chosen) == 0 {
		return
	}
	deliver := func(id string, r *agenteval.Result) {
		mu.Lock()
		ch := chosen[id]
		delete(chosen, id)
		mu.Unlock()
		if ch != nil {
			ch <- r
		}
	}
	sopt.Writers = []report.Writer{collect(func(r *agenteval.Result) { deliver(r.TestID, r) })}
	ctx := t.Context()
	go func() {
		_, err := runPlan(ctx, plan, sopt)
		// A test the run could not finish (rejected credentials, a
		// cancelled run) still ends its subtest, with the reason.
		if err == nil {
			err = errors.New("the run ended without a result for this test")
		}
		mu.Lock()
		left := make([]string, 0, len(chosen))
		for id := range chosen {
			left = append(left, id)
		}
		mu.Unlock()
		for _, id := range left {
			deliver(id, &agenteval.Result{TestID: id, Verdict: agenteval.VerdictError, ExecutionStatus: agenteval.StatusExecutionError, Error: err.Error()})
		}
	}()
}

// end ends a subtest as its result says.
func end(t *testing.T, r *agenteval.Result) {
	t.Helper()
	switch r.Verdict {
	case agenteval.VerdictSkip:
		t.Skip(r.Error)
	case agenteval.VerdictPass:
		t.Logf("score %.3f", r.Score)
	default:
		t.Error(Explain(r))
	}
}

// Results runs the eval file against agent, as Run does, and returns the
// results in the file's order, without reporting anything.
func Results(ctx context.Context, path string, agent agenteval.Agent, opt Options) ([]*agenteval.Result, error) {
	plan, sopt, err := prepare(path, agent, opt, nil)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	byID := map[string]*agenteval.Result{}
	sopt.Writers = []report.Writer{collect(func(r *agenteval.Result) {
		mu.Lock()
		byID[r.TestID] = r
		mu.Unlock()
	})}
	if _, err := runPlan(ctx, plan, sopt); err != nil {
		return nil, err
	}
	var out []*agenteval.Result
	for _, sp := range plan.Suites {
		for _, tc := range sp.Tests {
			if r := byID[tc.ID]; r != nil {
				out = append(out, r)
			}
		}
	}
	return out, nil
}

// prepare loads the eval file into a session that runs agent, and plans
// it; sel, when set, picks the tests that run.
func prepare(path string, agent agenteval.Agent, opt Options, sel func(*agenteval.Test) bool) (*session.Plan, *session.Options, error) {
	sopt := session.Options{
		Agent: agent, JudgeModel: opt.Judge, Models: session.Models{NoCache: opt.NoCache}, Filter: opt.Filter, Jobs: opt.Concurrency,
		Threshold: opt.Threshold, Trials: opt.Trials, SimulatorModel: opt.Simulator, SimulatorName: opt.SimulatorName,
		Config: opt.Config, Graders: opt.Graders, NoStore: true, Quiet: true, Select: sel, Command: "evaltest",
	}
	s, err := session.Load(sopt, path)
	if err != nil {
		return nil, nil, err
	}
	plan, err := s.Plan()
	if err != nil {
		return nil, nil, err
	}
	return plan, s.Options(), nil
}

// runPlan opens the plan's sink, with the collector the options now
// hold, and runs it.
func runPlan(ctx context.Context, plan *session.Plan, _ *session.Options) (*session.Outcome, error) {
	sink, err := plan.OpenSink()
	if err != nil {
		return nil, err
	}
	return plan.Run(ctx, sink)
}

// collect is a results writer that hands each result to fn.
type collect func(*agenteval.Result)

func (c collect) Write(r *agenteval.Result) error { c(r); return nil }
func (c collect) Close(*results.Summary) error    { return nil }

// Explain says why a test did not pass: its score, then each failed turn or
// conversation-level score with its failed criteria and their reasons.
func Explain(r *agenteval.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s (score %.3f)", r.TestID, r.Verdict, r.Score)
	if r.Error != "" {
		fmt.Fprintf(&b, "\n  error: %s", r.Error)
	}
	if sim := r.Simulation; sim != nil {
		fmt.Fprintf(&b, "\n  simulated user (%s): %d turns, ended by %s", sim.Model, sim.Turns, sim.EndReason)
	}
	for _, s := range r.Scores {
		explainScore(&b, s, "  ")
	}
	return b.String()
}

func explainScore(b *strings.Builder, s agenteval.Score, indent string) {
	if s.Verdict == agenteval.VerdictPass || s.Verdict == agenteval.VerdictSkip {
		return
	}
	fmt.Fprintf(b, "\n%s%s: %s %.3f", indent, s.Name, s.Verdict, s.Score)
	if len(s.Assertions) == 0 && s.Reason != "" {
		fmt.Fprintf(b, ": %s", s.Reason)
	}
	for _, a := range s.Assertions {
		if a.Passed {
			continue
		}
		fmt.Fprintf(b, "\n%s  ✗ %s", indent, a.Text)
		if a.Evidence != "" {
			fmt.Fprintf(b, "\n%s    because: %s", indent, a.Evidence)
		}
	}
}
