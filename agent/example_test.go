package agent_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/agent"
	"github.com/agenteval/agenteval/grade"
	"github.com/agenteval/agenteval/internal/fakellm"
	"github.com/agenteval/agenteval/provider"
	_ "github.com/agenteval/agenteval/provider/openai" // links the openai adapter
)

// TestMain serves the examples' model: fakellm plays gpt-4o-mini over
// real HTTP, asking for 3 / 4 and then answering with the result.
func TestMain(m *testing.M) {
	lastRole := func(role string) func(*fakellm.Request) bool {
		return func(r *fakellm.Request) bool { return r.Messages[len(r.Messages)-1].Role == role }
	}
	os.Exit(fakellm.Main(m.Run,
		&fakellm.Rule{Match: lastRole("user"), Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "div", Arguments: `{"a": 3, "b": 4}`}}}},
		&fakellm.Rule{Match: lastRole("tool"), Reply: fakellm.Reply{Content: "3 / 4 = 0.75, so 15 - 0.75 = 14.25"}},
	))
}

// A ToolLoop runs a model with tools until it answers. Tools come from Go
// functions; their parameter struct is the tool's JSON Schema.
func ExampleToolLoop() {
	type pair struct {
		A float64 `json:"a" jsonschema:"the first number"`
		B float64 `json:"b" jsonschema:"the second number"`
	}
	div := agent.MustFunc("div", "Divide a by b", func(ctx context.Context, p pair) (float64, error) {
		if p.B == 0 {
			return 0, errors.New("division by zero")
		}
		return p.A / p.B, nil
	})
	model, err := provider.OpenSpec("openai:gpt-4o-mini") // OPENAI_API_KEY, OPENAI_BASE_URL
	if err != nil {
		log.Fatal(err) // an unknown provider, or no API key
	}
	loop := &agent.ToolLoop{Model: model, System: "Use the tools for arithmetic.", Tools: []agent.Tool{div}, MaxIterations: 10,
		Extract: func(answer string) (any, error) { return agent.LastNumber(answer) }}
	run := loop.Solve(context.Background(), "15 - 3 / 4") // also run.Answer, run.Trace, run.LogFile (with TraceDir)
	fmt.Println(run.Result, run.Err, run.Trace.End)
	// Output: 14.25 <nil> final_answer
}

// A run's trace is a conversation, so any metric can score it.
func ExampleTrace_Sample() {
	type pair struct {
		A float64 `json:"a"`
		B float64 `json:"b"`
	}
	div := agent.MustFunc("div", "Divide a by b", func(ctx context.Context, p pair) (float64, error) { return p.A / p.B, nil })
	model, err := provider.OpenSpec("openai:gpt-4o-mini")
	if err != nil {
		log.Fatal(err)
	}
	run := (&agent.ToolLoop{Model: model, Tools: []agent.Tool{div}}).Solve(context.Background(), "15 - 3 / 4")

	expected := []agenteval.ToolCall{{Name: "div", Args: map[string]any{"a": 3, "b": 4}}}
	g, err := grade.New(grade.Spec{Type: "tool_calls", Options: grade.ToolCallsOptions{Mode: grade.ModeAnyOrder}})
	if err != nil {
		log.Fatal(err)
	}
	score, err := g.Grade(context.Background(), agenteval.InputFromSample(run.Trace.Sample("14.25", expected)))
	fmt.Println(score.Verdict, score.Reason, err)
	// Output: pass 1 of 1 expected calls made, in any order (1 calls made) <nil>
}
