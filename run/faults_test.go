package run

import (
	"context"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/agent"
	"github.com/agenteval/agenteval/internal/fakellm"
	"github.com/agenteval/agenteval/judge"
	"github.com/agenteval/agenteval/provider"
)

// faultMix answers 1 call in 5 with a fault, each kind in turn: a 429 with
// Retry-After, a 500, a 503, a body that is not JSON, a hang past the call
// timeout, and (for judges) output that is not the JSON asked for. The
// rest are answered normally. It is deterministic for a seed.
type faultMix struct {
	mu     sync.Mutex
	rng    *rand.Rand
	next   int
	counts map[string]int
}

var faultKinds = []string{"429", "500", "503", "garbage", "hang", "bad-json"}

func (f *faultMix) reply(r *fakellm.Request) fakellm.Reply {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.rng.IntN(5) != 0 {
		f.counts["ok"]++
		return fakellm.Reply{} // the default: schema-shaped JSON, or text
	}
	kind := faultKinds[f.next%len(faultKinds)]
	f.next++
	f.counts[kind]++
	switch kind {
	case "429":
		return fakellm.Reply{Fault: fakellm.FaultRateLimit, RetryAfter: 5 * time.Millisecond}
	case "500":
		return fakellm.Reply{Fault: fakellm.FaultServer}
	case "503":
		return fakellm.Reply{Fault: fakellm.FaultUnavailable}
	case "garbage":
		return fakellm.Reply{Fault: fakellm.FaultGarbage}
	case "hang":
		return fakellm.Reply{Fault: fakellm.FaultHang}
	}
	if r.SchemaName() != "" {
		return fakellm.Reply{Content: `{"c1": {"passed": "maybe"`}
	}
	return fakellm.Reply{Content: ""} // an empty agent reply
}

// runUnderFaults runs n conversations of 3 judged turns with every model
// call at the mercy of faultMix, and checks the results: one per test, no
// duplicate, each scored or an execution_error with its cause.
func runUnderFaults(t testing.TB, n int, seed uint64) map[string]int {
	mix := &faultMix{rng: rand.New(rand.NewPCG(seed, seed)), counts: map[string]int{}}
	srv, err := fakellm.Start(fakellm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	srv.Add(&fakellm.Rule{Reply: fakellm.Reply{Func: mix.reply}})
	m, err := provider.Open(provider.Config{Provider: "openai", Model: "gpt-4o-mini", BaseURL: srv.URL, APIKey: "k",
		Concurrency: 64, Timeout: 200 * time.Millisecond, MaxRetries: 2, RetryWait: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	s := loadSuiteN(t, n)
	for i := range s.Tests {
		s.Tests[i].Turns = s.Tests[i].Turns[:3]
	}
	var mu sync.Mutex
	seen := map[string]int{}
	var results []*agenteval.Result
	err = RunSuite(context.Background(), s, Options{Agent: &agent.ToolLoop{Model: m}, Judge: &judge.Judge{Model: m, Name: "openai:gpt-4o-mini"}, Concurrency: 16},
		func(r *agenteval.Result) error {
			mu.Lock()
			defer mu.Unlock()
			seen[r.TestID]++
			results = append(results, r)
			return nil
		})
	if err != nil {
		t.Fatalf("the run failed: %v", err)
	}
	status := map[string]int{}
	for _, tc := range s.Tests {
		if seen[tc.ID] != 1 {
			t.Errorf("test %s has %d results", tc.ID, seen[tc.ID])
		}
	}
	for _, r := range results {
		status[string(r.ExecutionStatus)]++
		switch r.ExecutionStatus {
		case agenteval.StatusExecutionError:
			if strings.TrimSpace(r.Error) == "" {
				t.Errorf("%s: execution_error without a cause: %+v", r.TestID, r)
			}
		case agenteval.StatusOK, agenteval.StatusQualityFailure:
			if len(r.Scores) == 0 {
				t.Errorf("%s: scored without scores", r.TestID)
			}
		default:
			t.Errorf("%s: status %q", r.TestID, r.ExecutionStatus)
		}
		for _, sc := range r.Scores {
			if sc.Verdict == agenteval.VerdictError && strings.TrimSpace(sc.Reason) == "" {
				t.Errorf("%s/%s: an error score without its cause", r.TestID, sc.Name)
			}
		}
	}
	for _, k := range faultKinds {
		if mix.counts[k] == 0 {
			t.Errorf("no %s fault was injected in %d calls", k, mix.counts["ok"])
		}
		status["fault:"+k] = mix.counts[k]
	}
	status["calls"] = srv.Calls()
	return status
}

// TestFaultInjection: with a fifth of all model calls failing, in every
// way the fake can fail, every test ends with exactly one result, scored
// or marked execution_error with its cause.
func TestFaultInjection(t *testing.T) {
	n := 40
	if testing.Short() {
		n = 15
	}
	counts := runUnderFaults(t, n, 1)
	t.Logf("%v", counts)
}

// BenchmarkFaultInjection is the full-size run: 500 conversations of 3
// judged turns under the same fault mix.
func BenchmarkFaultInjection(b *testing.B) {
	for i := 0; b.Loop(); i++ {
		counts := runUnderFaults(b, 500, uint64(i+1))
		b.ReportMetric(float64(counts["execution_error"]), "execution-errors")
		b.ReportMetric(float64(counts["calls"]), "calls")
	}
}
