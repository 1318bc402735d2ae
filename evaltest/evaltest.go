// Package evaltest runs eval files inside go test, against an agent written
// in Go: each test of the suite becomes a subtest, and a failure says which
// turn, which criterion, and why (the judge's reason, or the check's
// evidence).
//
//	func TestBookingAgent(t *testing.T) {
//		evaltest.Run(t, "testdata/booking.yaml", myAgent, evaltest.Options{})
//	}
//
// It imports the root package, suite, run, judge and provider (with the
// openai, anthropic and gemini adapters, so a suite's judge: works).
package evaltest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/judge"
	"github.com/agenteval/agenteval/provider"
	_ "github.com/agenteval/agenteval/provider/anthropic" // a suite's judge may name any provider
	_ "github.com/agenteval/agenteval/provider/gemini"
	_ "github.com/agenteval/agenteval/provider/openai"
	"github.com/agenteval/agenteval/run"
	"github.com/agenteval/agenteval/suite"
)

// Options adjust Run. The zero value uses the suite's judge (or
// AGENTEVAL_JUDGE) and runs every test.
type Options struct {
	// Judge grades string assertions; nil means the suite's judge:, then
	// AGENTEVAL_JUDGE.
	Judge *judge.Judge
	// Filter selects tests by id (path.Match syntax).
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
// as a subtest named after the test's id. It returns the results.
func Run(t *testing.T, path string, agent agenteval.Agent, opt Options) []*agenteval.Result {
	t.Helper()
	results, err := Results(path, agent, opt)
	if err != nil {
		t.Fatalf("evaltest: %v", err)
	}
	for _, r := range results {
		t.Run(r.TestID, func(t *testing.T) {
			t.Helper()
			switch r.Verdict {
			case agenteval.VerdictSkip:
				t.Skip(r.Error)
			case agenteval.VerdictPass:
				t.Logf("score %.3f", r.Score)
			default:
				t.Error(Explain(r))
			}
		})
	}
	return results
}

// Results runs the eval file against agent and returns the results in the
// file's order, without reporting anything.
func Results(path string, agent agenteval.Agent, opt Options) ([]*agenteval.Result, error) {
	j, err := opt.judgeFor()
	if err != nil {
		return nil, err
	}
	s, err := suite.Load(path, suite.Options{JudgeAvailable: j != nil, SimulatorAvailable: opt.Simulator != nil})
	if err != nil {
		return nil, err
	}
	if j == nil && s.Judge != nil {
		m, err := provider.OpenSpec(s.Judge.Model)
		if err != nil {
			return nil, fmt.Errorf("judge: %w", err)
		}
		j = &judge.Judge{Model: m, Name: s.Judge.Model, Samples: s.Judge.Samples, Cache: &judge.Cache{Dir: judge.DefaultCacheDir}}
	}
	var mu sync.Mutex
	byID := map[string]*agenteval.Result{}
	err = run.RunSuite(context.Background(), s, run.Options{
		Agent: agent, Target: "go", Judge: j, Concurrency: opt.Concurrency, Threshold: opt.Threshold, Trials: opt.Trials, Filter: opt.Filter,
		Simulator: opt.Simulator, SimulatorName: opt.SimulatorName, OpenModel: provider.OpenSpec, SimulatorCache: simCache(j),
	}, func(r *agenteval.Result) error {
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

func (o Options) judgeFor() (*judge.Judge, error) {
	if o.Judge != nil {
		return o.Judge, nil
	}
	if spec := os.Getenv("AGENTEVAL_JUDGE"); spec != "" {
		m, err := provider.OpenSpec(spec)
		if err != nil {
			return nil, fmt.Errorf("AGENTEVAL_JUDGE: %w", err)
		}
		return &judge.Judge{Model: m, Name: spec, Cache: &judge.Cache{Dir: judge.DefaultCacheDir}}, nil
	}
	return nil, nil
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

// simCache replays simulated users' replies from the judge's cache, when
// the judge has one.
func simCache(j *judge.Judge) *judge.Cache {
	if j == nil {
		return nil
	}
	return j.Cache
}
