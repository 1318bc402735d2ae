package run

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/agent"
	"github.com/agenteval/agenteval/internal/fakellm"
	"github.com/agenteval/agenteval/judge"
	"github.com/agenteval/agenteval/provider"
	"github.com/agenteval/agenteval/suite"
)

// simSuite is issue 6's workload: n simulated conversations of 6 turns,
// each with two subgoals (so the tracker judges every turn) and a
// conversation-level rubric.
func simSuite(b testing.TB, n int) *suite.Suite {
	var y strings.Builder
	y.WriteString("tests:\n")
	for i := range n {
		fmt.Fprintf(&y, `  - id: s%d
    input: [{role: system, content: You are a shop assistant.}]
    user: {instruction: "Customer %d wants to return a lamp.", persona: novice, max_turns: 6}
    subgoals: [The agent asks for the order number., The agent confirms the return.]
    assertions: [The agent stays polite.]
`, i, i)
	}
	s, err := suite.Parse("sim.yaml", []byte(y.String()), suite.Options{JudgeAvailable: true})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// neverAchieved answers subgoal requests with every open subgoal not yet
// reached, so each of the 6 turns is judged: the most judge calls a
// conversation can cost.
func neverAchieved(r *fakellm.Request) fakellm.Reply {
	var schema struct {
		Properties map[string]any `json:"properties"`
	}
	raw, _ := json.Marshal(r.ResponseFormat.JSONSchema.Schema)
	json.Unmarshal(raw, &schema)
	out := map[string]any{}
	for k := range schema.Properties {
		out[k] = map[string]any{"reason": "not yet", "passed": false}
	}
	return fakellm.Reply{JSON: out}
}

// BenchmarkSimulated runs 50 simulated conversations of 6 turns at 50 ms of
// model latency and -j 10. Each turn is two calls in a row (the simulated
// user, then the agent), so the ideal is 5 waves × 6 turns × 100 ms = 3.0 s.
// Judge calls (subgoals each turn, the conversation rubric, user_fidelity)
// run beside the conversation.
func BenchmarkSimulated(b *testing.B) {
	const latency, convs, turns = 50 * time.Millisecond, 50, 6
	srv, err := fakellm.Start(fakellm.Options{Latency: latency})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	srv.Add(&fakellm.Rule{Match: subgoalRequest, Reply: fakellm.Reply{Func: neverAchieved}})
	m, err := provider.Open(provider.Config{Provider: "openai", Model: "gpt-4o-mini", BaseURL: srv.URL, APIKey: "k", Concurrency: 64})
	if err != nil {
		b.Fatal(err)
	}
	s := simSuite(b, convs)
	agent := &agent.ToolLoop{Model: m}
	j := &judge.Judge{Model: m, Name: "openai:gpt-4o-mini"}
	for b.Loop() {
		srv.Reset()
		srv.Add(&fakellm.Rule{Match: subgoalRequest, Reply: fakellm.Reply{Func: neverAchieved}})
		begin := time.Now()
		n := 0
		err := RunSuite(context.Background(), s, Options{Agent: agent, Judge: j, Concurrency: 10}, func(r *agenteval.Result) error {
			if r.ExecutionStatus == agenteval.StatusExecutionError || r.Simulation.Turns != turns {
				return fmt.Errorf("%s: %s %s %+v", r.TestID, r.ExecutionStatus, r.Error, r.Simulation)
			}
			n++
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		wall := time.Since(begin)
		var judged, subgoal int
		for _, r := range srv.Requests() {
			if r.SchemaName() != "" {
				judged++
			}
			if subgoalRequest(r) {
				subgoal++
			}
		}
		b.ReportMetric(wall.Seconds(), "wall-s")
		b.ReportMetric(wall.Seconds()/3.0, "x-ideal")
		b.ReportMetric(float64(judged)/(convs*turns), "judge-calls/turn")
		b.ReportMetric(float64(subgoal)/(convs*turns), "subgoal-calls/turn")
		if n != convs {
			b.Fatalf("%d results", n)
		}
	}
}
