package run

import (
	"context"
	"fmt"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/suite"
)

// BenchmarkDispatch runs n four-turn conversations against an instant
// agent with one deterministic check a turn: the runner's own cost per
// test, which must not grow with the size of the suite (ns/test the same
// at 1,000 and 100,000 tests). The tests share their turns, so the suite
// itself costs little.
func BenchmarkDispatch(b *testing.B) {
	for _, n := range []int{1000, 100000} {
		b.Run(fmt.Sprintf("tests=%d", n), func(b *testing.B) {
			one, err := suite.Parse("t.yaml", []byte(`
tests:
  - id: c
    mode: conversation
    turns:
      - {input: q1, assertions: [{type: contains, value: reply}]}
      - {input: q2, assertions: [{type: contains, value: reply}]}
      - {input: q3, assertions: [{type: contains, value: reply}]}
      - {input: q4, assertions: [{type: contains, value: reply}]}
`), suite.Options{})
			if err != nil {
				b.Fatal(err)
			}
			s := *one
			s.Tests = make([]agenteval.Test, n)
			for i := range s.Tests {
				s.Tests[i] = one.Tests[0]
				s.Tests[i].ID = fmt.Sprintf("c%d", i)
			}
			agent := agenteval.AgentFunc(func(ctx context.Context, req *agenteval.AgentRequest) (*agenteval.AgentResponse, error) {
				return &agenteval.AgentResponse{Messages: agenteval.Conversation{{Role: agenteval.RoleAssistant, Content: "a reply"}}}, nil
			})
			for b.Loop() {
				got := 0
				err := RunSuite(context.Background(), &s, Options{Agent: agent, Concurrency: 20}, func(r *agenteval.Result) error {
					if r.Verdict != agenteval.VerdictPass {
						return fmt.Errorf("%s: %s %s", r.TestID, r.Verdict, r.Error)
					}
					got++
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
				if got != n {
					b.Fatalf("%d results, want %d", got, n)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/test")
		})
	}
}
