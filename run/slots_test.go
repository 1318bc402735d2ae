package run

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/grade"
	"github.com/agenteval/agenteval/suite"
)

// gateGrader is a grader of the test's own that waits for wait before it
// passes; it gives up after a while, so that a runner that never lets it
// through fails the test instead of hanging it.
func gateGrader(wait func(in *agenteval.GradeInput) <-chan struct{}) *grade.Definition {
	return &grade.Definition{Name: "gate", Doc: "passes once let through",
		New: func(any, grade.Env) (grade.Func, error) {
			return func(ctx context.Context, in *agenteval.GradeInput) (grade.Outcome, error) {
				select {
				case <-wait(in):
					return grade.Outcome{Score: 1, Reason: "let through"}, nil
				case <-time.After(5 * time.Second):
					return grade.Outcome{Score: 0, Reason: "never let through"}, nil
				}
			}, nil
		}}
}

// gatedSuite is n conversations of turns turns, each turn graded by gate.
func gatedSuite(t *testing.T, gate *grade.Definition, n, turns int) *suite.Suite {
	t.Helper()
	var y strings.Builder
	y.WriteString("tests:\n")
	for i := range n {
		fmt.Fprintf(&y, "  - id: c%d\n    mode: conversation\n    turns:\n", i)
		for k := range turns {
			fmt.Fprintf(&y, "      - {input: q%d, assertions: [{type: gate}]}\n", k+1)
		}
	}
	s, err := suite.Parse("t.yaml", []byte(y.String()), suite.Options{Graders: append(grade.All(), gate)})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSlotFreedAtLastAgentCall: with one slot, the second conversation
// starts while the first one's last turn is still being graded. Here that
// grading waits for the second conversation's agent call, so a runner
// that kept the slot until grading ended would fail it.
func TestSlotFreedAtLastAgentCall(t *testing.T) {
	secondStarted := make(chan struct{})
	open := make(chan struct{})
	close(open)
	gate := gateGrader(func(in *agenteval.GradeInput) <-chan struct{} {
		if in.TestID == "c0" && in.Turn == 2 {
			return secondStarted
		}
		return open
	})
	var once atomic.Bool
	agent := agenteval.AgentFunc(func(ctx context.Context, req *agenteval.AgentRequest) (*agenteval.AgentResponse, error) {
		if req.TestID == "c1" && once.CompareAndSwap(false, true) {
			close(secondStarted)
		}
		return &agenteval.AgentResponse{Messages: agenteval.Conversation{{Role: agenteval.RoleAssistant, Content: "ok"}}}, nil
	})
	s := gatedSuite(t, gate, 2, 2)
	res := runAll(t, s, Options{Agent: agent, Graders: append(grade.All(), gate), Concurrency: 1})
	for _, id := range []string{"c0", "c1"} {
		if r := res[id]; r == nil || r.Verdict != agenteval.VerdictPass {
			t.Errorf("%s: %+v; want a pass: the first conversation's slot was held while its last turn was graded", id, r)
		}
	}
}

// TestGradingIsBounded: conversations that gave their slot back and are
// still being graded are bounded by the slots too, so a judge slower than
// the agent holds up new conversations instead of piling up finished ones.
// With one slot: one conversation is graded, a second has talked to the
// agent and waits for room to be graded, and no third starts.
func TestGradingIsBounded(t *testing.T) {
	open := make(chan struct{})
	gate := gateGrader(func(*agenteval.GradeInput) <-chan struct{} { return open })
	var started atomic.Int32
	twoStarted := make(chan struct{})
	agent := agenteval.AgentFunc(func(ctx context.Context, req *agenteval.AgentRequest) (*agenteval.AgentResponse, error) {
		if started.Add(1) == 2 {
			close(twoStarted)
		}
		return &agenteval.AgentResponse{Messages: agenteval.Conversation{{Role: agenteval.RoleAssistant, Content: "ok"}}}, nil
	})
	s := gatedSuite(t, gate, 4, 1)
	go func() {
		<-twoStarted
		// Time for a third conversation to start, were it let.
		time.Sleep(100 * time.Millisecond)
		if n := started.Load(); n != 2 {
			t.Errorf("%d conversations started while the first was being graded; want 2", n)
		}
		close(open)
	}()
	res := runAll(t, s, Options{Agent: agent, Graders: append(grade.All(), gate), Concurrency: 1})
	if len(res) != 4 {
		t.Fatalf("%d results, want 4", len(res))
	}
	for id, r := range res {
		if r.Verdict != agenteval.VerdictPass {
			t.Errorf("%s: %s %s", id, r.Verdict, r.Error)
		}
	}
}
