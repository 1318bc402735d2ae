package agent

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/grade"
	"github.com/agenteval/agenteval/internal/fakellm"
	"github.com/agenteval/agenteval/provider"
	_ "github.com/agenteval/agenteval/provider/openai"
)

type pair struct {
	A float64 `json:"a" jsonschema:"the first number"`
	B float64 `json:"b" jsonschema:"the second number"`
}

var div = MustFunc("div", "Divide a by b", func(_ context.Context, p pair) (float64, error) {
	if p.B == 0 {
		return 0, errors.New("division by zero")
	}
	return p.A / p.B, nil
})

func model(t testing.TB, rules ...*fakellm.Rule) (agenteval.Model, *fakellm.Server) {
	t.Helper()
	s, err := fakellm.Start(fakellm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	s.Add(rules...)
	m, err := provider.Open(provider.Config{Provider: "openai", Model: "gpt-4o-mini", BaseURL: s.URL, APIKey: "k", RetryWait: time.Millisecond, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return m, s
}

func calls(cs ...fakellm.ToolCall) *fakellm.Rule {
	return &fakellm.Rule{Times: 1, Reply: fakellm.Reply{ToolCalls: cs}}
}

func TestFuncSchema(t *testing.T) {
	b, _ := json.Marshal(div.Parameters)
	s := string(b)
	for _, want := range []string{`"type":"object"`, `"a":{"description":"the first number","type":"number"}`, `"required":["a","b"]`} {
		if !strings.Contains(s, want) {
			t.Errorf("schema %s lacks %s", s, want)
		}
	}
	if got, err := div.Run(context.Background(), map[string]any{"a": 3.0, "b": 4.0}); err != nil || got != "0.75" {
		t.Errorf("div = %q, %v", got, err)
	}
}

func TestSolve(t *testing.T) {
	m, s := model(t,
		calls(fakellm.ToolCall{Name: "div", Arguments: `{"a": 3, "b": 4}`}, fakellm.ToolCall{Name: "div", Arguments: `{"a": 1, "b": 0}`}),
		calls(fakellm.ToolCall{Name: "nope", Arguments: `{}`}, fakellm.ToolCall{Name: "div", Arguments: `{"a": "x"}`}, fakellm.ToolCall{Name: "div", Arguments: `{"a": 1`}),
		&fakellm.Rule{Reply: fakellm.Reply{Content: "So the result is 14.25."}},
	)
	dir := t.TempDir()
	loop := &ToolLoop{Model: m, Name: "math", System: "You are a calculator.", Tools: []Tool{div}, Extract: func(a string) (any, error) { return LastNumber(a) },
		Prompt: "Solve this mathematical expression step by step: %s", TraceDir: dir}
	run := loop.Solve(context.Background(), "15 - 3 / 4")
	if run.Err != nil || run.Result != 14.25 || run.Trace.End != EndFinalAnswer {
		t.Fatalf("run = %+v", run)
	}
	msgs := run.Trace.Messages
	results := []string{}
	for _, m := range msgs {
		if m.Role == agenteval.RoleTool {
			results = append(results, m.Content)
		}
	}
	want := []string{"0.75", "error: division by zero", `error: unknown tool "nope"`, "error: bad arguments", "error: the arguments are not valid JSON"}
	for i, w := range want {
		if i >= len(results) || !strings.HasPrefix(results[i], w) {
			t.Errorf("tool result %d = %q, want %q...", i, results, w)
		}
	}
	if msgs[0].Content != "You are a calculator." || msgs[1].Content != "Solve this mathematical expression step by step: 15 - 3 / 4" {
		t.Errorf("opening messages = %+v", msgs[:2])
	}
	kinds := map[string]int{}
	for _, e := range run.Trace.Events {
		kinds[e.Type]++
		if e.Time.IsZero() {
			t.Errorf("event %s has no timestamp", e.Type)
		}
	}
	if kinds[EventLLMCall] != 3 || kinds[EventLLMResponse] != 3 || kinds[EventToolExecution] != 5 || kinds[EventToolResult] != 5 || kinds[EventResultExtraction] != 1 {
		t.Errorf("events = %v", kinds)
	}
	b, err := os.ReadFile(run.LogFile)
	if err != nil || !strings.Contains(string(b), `"event_type": "tool_execution"`) || !strings.Contains(string(b), `"end": "final_answer"`) {
		t.Errorf("log %s: %v", run.LogFile, err)
	}
	if run.Trace.Usage.Calls != 3 || s.Calls() != 3 {
		t.Errorf("usage %+v", run.Trace.Usage)
	}

	// The trace scores like any recorded conversation.
	g, _ := grade.New(grade.Spec{Type: "tool_calls", Options: map[string]any{"mode": "any_order", "args_match": "ignore"}})
	sample := run.Trace.Sample("14.25", []agenteval.ToolCall{{Name: "div", Args: map[string]any{"a": 3, "b": 4}}})
	sc, err := g.Grade(context.Background(), agenteval.InputFromSample(sample))
	if err != nil || sc.Score != 1 {
		t.Errorf("tool_calls on the trace: %+v %v", sc, err)
	}
}

func TestEnds(t *testing.T) {
	m, _ := model(t, &fakellm.Rule{Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "div", Arguments: `{"a": 1, "b": 1}`}}}})
	run := (&ToolLoop{Model: m, Tools: []Tool{div}, MaxIterations: 3}).Solve(context.Background(), "loop")
	if run.Trace.End != EndMaxIterations || run.Err == nil || !strings.Contains(run.Err.Error(), "within 3 iterations") {
		t.Errorf("max iterations: %+v", run)
	}
	m2, _ := model(t, &fakellm.Rule{Reply: fakellm.Reply{Fault: fakellm.FaultServer}})
	run = (&ToolLoop{Model: m2}).Solve(context.Background(), "x")
	if run.Trace.End != EndError || !strings.Contains(run.Err.Error(), "iteration 1: model:") {
		t.Errorf("model error: %+v", run)
	}
	m3, _ := model(t, &fakellm.Rule{Reply: fakellm.Reply{Content: "I cannot say."}})
	run = (&ToolLoop{Model: m3, Extract: func(a string) (any, error) { return LastNumber(a) }}).Solve(context.Background(), "x")
	if run.Trace.End != EndError || !strings.Contains(run.Err.Error(), "no number in the answer") {
		t.Errorf("extraction: %+v", run)
	}
}

func TestToolLoopIsAnAgent(t *testing.T) {
	m, s := model(t,
		calls(fakellm.ToolCall{Name: "div", Arguments: `{"a": 6, "b": 3}`}),
		&fakellm.Rule{Reply: fakellm.Reply{Content: "It is 2."}},
	)
	var a agenteval.Agent = &ToolLoop{Model: m, Tools: []Tool{div}}
	history := agenteval.Conversation{{Role: agenteval.RoleUser, Content: "hi"}, {Role: agenteval.RoleAssistant, Content: "hello"}, {Role: agenteval.RoleUser, Content: "6/3?"}}
	resp, err := a.Respond(context.Background(), &agenteval.AgentRequest{ConversationID: "c#1", Turn: 2, Messages: history})
	if err != nil || len(resp.Messages) != 3 || resp.Messages[2].Content != "It is 2." || resp.Messages[1].Content != "2" {
		t.Fatalf("resp = %+v, %v", resp, err)
	}
	if len(s.Requests()[0].Messages) != 3 {
		t.Errorf("the loop must send the whole history")
	}
}

// TestFailedCallUsage: a turn whose model call failed still reports what
// the calls spent, the failed one included (one call, its retries).
func TestFailedCallUsage(t *testing.T) {
	s, err := fakellm.Start(fakellm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	s.Add(calls(fakellm.ToolCall{Name: "div", Arguments: `{"a": 6, "b": 3}`}),
		&fakellm.Rule{Reply: fakellm.Reply{Fault: fakellm.FaultServer}})
	m, err := provider.Open(provider.Config{Provider: "openai", Model: "gpt-4o-mini", BaseURL: s.URL, APIKey: "k", RetryWait: time.Millisecond, MaxRetries: 2})
	if err != nil {
		t.Fatal(err)
	}
	var a agenteval.Agent = &ToolLoop{Model: m, Tools: []Tool{div}}
	resp, err := a.Respond(context.Background(), &agenteval.AgentRequest{ConversationID: "c#1", Turn: 1, Messages: agenteval.Conversation{{Role: agenteval.RoleUser, Content: "6/3?"}}})
	if err == nil || resp == nil {
		t.Fatalf("resp = %+v, err = %v; want the model's failure", resp, err)
	}
	// The tool call's reply, then one call failed after 2 retries.
	if u := resp.Usage; u.Calls != 2 || u.Retries != 2 || u.InputTokens == 0 || s.Calls() != 4 {
		t.Errorf("usage = %+v for %d requests, want 2 calls, 2 retries and the first call's tokens", u, s.Calls())
	}
}

func TestLastNumber(t *testing.T) {
	for in, want := range map[string]float64{"The answer is 14.25.": 14.25, "-3 then 20": 20, "x = -0.5": -0.5, "1e3 apples": 1000} {
		if got, err := LastNumber(in); err != nil || got != want {
			t.Errorf("LastNumber(%q) = %v, %v", in, got, err)
		}
	}
}
