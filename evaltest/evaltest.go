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
// It imports the root package, cache, suite, run, judge and provider.
package evaltest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/cache"
	"github.com/agenteval/agenteval/judge"
	"github.com/agenteval/agenteval/project"
	"github.com/agenteval/agenteval/provider"
	"github.com/agenteval/agenteval/run"
	"github.com/agenteval/agenteval/suite"
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
}

// Run loads the eval file and runs its tests against agent, each reported
// as a subtest named after the test's id. The tests that go test -run
// selects run side by side, with their depends_on; each subtest waits for
// its own result.
func Run(t *testing.T, path string, agent agenteval.Agent, opt Options) {
	t.Helper()
	s, ropt, err := prepare(path, agent, opt)
	if err != nil {
		t.Fatalf("evaltest: %v", err)
	}
	tests, err := run.Selected(s, opt.Filter)
	if err != nil {
		t.Fatalf("evaltest: %v", err)
	}
	// Each subtest that go test -run selects says so before it pauses
	// (t.Parallel); once all have, the chosen tests run together.
	var mu sync.Mutex
	chosen := map[string]chan *agenteval.Result{}
	for _, tc := range tests {
		ch := make(chan *agenteval.Result, 1)
		t.Run(tc.ID, func(t *testing.T) {
			mu.Lock()
			chosen[tc.ID] = ch
			mu.Unlock()
			t.Parallel()
			report(t, <-ch)
		})
	}
	if len(chosen) == 0 {
		return
	}
	sub := *s
	sub.Tests = nil
	for _, tc := range tests {
		if _, ok := chosen[tc.ID]; ok {
			sub.Tests = append(sub.Tests, *tc)
		}
	}
	ctx := t.Context()
	go func() {
		err := run.RunSuite(ctx, &sub, ropt, func(r *agenteval.Result) error {
			if ch := chosen[r.TestID]; ch != nil {
				ch <- r
				chosen[r.TestID] = nil
			}
			return nil
		})
		// A test the run could not finish (rejected credentials, a
		// cancelled run) still ends its subtest, with the reason.
		if err == nil {
			err = errors.New("the run ended without a result for this test")
		}
		for id, ch := range chosen {
			if ch != nil {
				ch <- &agenteval.Result{TestID: id, Verdict: agenteval.VerdictError, ExecutionStatus: agenteval.StatusExecutionError, Error: err.Error()}
			}
		}
	}()
}

// report ends a subtest as its result says.
func report(t *testing.T, r *agenteval.Result) {
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

// Results runs the eval file against agent and returns the results in the
// file's order, without reporting anything.
func Results(ctx context.Context, path string, agent agenteval.Agent, opt Options) ([]*agenteval.Result, error) {
	s, ropt, err := prepare(path, agent, opt)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	byID := map[string]*agenteval.Result{}
	err = run.RunSuite(ctx, s, ropt, func(r *agenteval.Result) error {
		mu.Lock()
		byID[r.TestID] = r
		mu.Unlock()
		return nil
	})
	if err != nil {
		return nil, err
	}
	tests, _ := run.Selected(s, opt.Filter)
	var out []*agenteval.Result
	for _, tc := range tests {
		if r := byID[tc.ID]; r != nil {
			out = append(out, r)
		}
	}
	return out, nil
}

// prepare loads the suite and the runner's options: the judge, and how
// to open a test's user.model.
func prepare(path string, agent agenteval.Agent, opt Options) (*suite.Suite, run.Options, error) {
	store := &cache.Store{Dir: cache.Dir(project.Here())}
	open := func(spec string) (agenteval.Model, error) {
		cfg, err := provider.ParseSpec(spec)
		if err != nil {
			return nil, err
		}
		m, err := provider.Open(cfg)
		if err != nil {
			return nil, err
		}
		return cache.Wrap(m, cfg.String()+" "+cfg.BaseURL, store), nil
	}
	j := opt.Judge
	if j == nil {
		if spec := os.Getenv("AGENTEVAL_JUDGE"); spec != "" {
			m, err := open(spec)
			if err != nil {
				return nil, run.Options{}, fmt.Errorf("AGENTEVAL_JUDGE: %w", err)
			}
			j = &judge.Judge{Model: m, Name: spec}
		}
	}
	s, err := suite.Load(path, suite.Options{JudgeAvailable: j != nil, SimulatorAvailable: opt.Simulator != nil})
	if err != nil {
		return nil, run.Options{}, err
	}
	if j == nil && s.Judge != nil {
		m, err := open(s.Judge.Model)
		if err != nil {
			return nil, run.Options{}, fmt.Errorf("judge: %w", err)
		}
		j = &judge.Judge{Model: m, Name: s.Judge.Model, Samples: s.Judge.Samples}
	}
	return s, run.Options{
		Agent: agent, Target: "go", Judge: j, Concurrency: opt.Concurrency, Threshold: opt.Threshold, Trials: opt.Trials, Filter: opt.Filter,
		Simulator: opt.Simulator, SimulatorName: opt.SimulatorName, OpenModel: open,
	}, nil
}

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
