package run

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agenteval/agenteval"
)

// TestDispatchOrder: with one slot, tests start in file order among those
// that may start; a test waits for its dependencies, even one later in
// the file; skipped tests and tests whose dependency failed end without a
// slot; tests a resumed run finished are neither run nor reported.
func TestDispatchOrder(t *testing.T) {
	yaml := `
assertions: [{type: contains, value: reply}]
tests:
  - {id: a, input: a}
  - {id: b, input: b, depends_on: [d]}
  - {id: s, input: s}
  - {id: c, input: c}
  - {id: d, input: d}
  - {id: e, input: e, depends_on: [s]}
  - {id: r, input: r}
  - {id: f, input: f, depends_on: [r]}
  - {id: g, input: g, depends_on: [x]}
  - {id: x, input: x}
`
	s := loadSuite(t, yaml)
	s.Tests[2].Skip = "a feature this runner lacks"
	var mu sync.Mutex
	var started, emitted []string
	agent := agenteval.AgentFunc(func(ctx context.Context, req *agenteval.AgentRequest) (*agenteval.AgentResponse, error) {
		mu.Lock()
		started = append(started, req.TestID)
		mu.Unlock()
		return (&echo{}).Respond(ctx, req)
	})
	done := map[string]agenteval.ExecutionStatus{"r": agenteval.StatusOK, "x": agenteval.StatusExecutionError}
	res := map[string]*agenteval.Result{}
	err := RunSuite(context.Background(), s, Options{Agent: agent, Concurrency: 1, Done: done}, func(r *agenteval.Result) error {
		emitted = append(emitted, r.TestID)
		res[r.TestID] = r
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// A slot is free again at a conversation's last agent call, before
	// its result is out, so b (readied by d's result) and e may start
	// either way round.
	at := func(id string) int { return slices.Index(started, id) }
	if len(started) != 6 || at("a") != 0 || at("c") != 1 || at("d") != 2 || at("b") < 3 || at("e") < 3 || at("f") < at("e") {
		t.Errorf("started %v, want a, c, d, then b, e and f with e before f", started)
	}
	// The tests that need no slot are out first.
	if len(emitted) != 8 || emitted[0] != "s" || emitted[1] != "g" {
		t.Errorf("emitted %v, want s and g first, then the 6 that ran", emitted)
	}
	if r := res["s"]; r.Verdict != agenteval.VerdictSkip || r.ExecutionStatus != agenteval.StatusOK {
		t.Errorf("s = %s %s", r.Verdict, r.ExecutionStatus)
	}
	if r := res["g"]; r.Verdict != agenteval.VerdictSkip || !strings.Contains(r.Error, "[x] ended in execution_error") {
		t.Errorf("g = %s %q", r.Verdict, r.Error)
	}
	for _, id := range []string{"a", "b", "c", "d", "e", "f"} {
		if r := res[id]; r.Verdict != agenteval.VerdictPass {
			t.Errorf("%s = %s %q", id, r.Verdict, r.Error)
		}
	}
}
