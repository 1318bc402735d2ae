package evaltest

import (
	"context"
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/fakellm"
	"github.com/agenteval/agenteval/judge"
	"github.com/agenteval/agenteval/provider"
)

// bookingAgent is a Go agent under test.
var bookingAgent = agenteval.AgentFunc(func(ctx context.Context, req *agenteval.AgentRequest) (*agenteval.AgentResponse, error) {
	last := req.Messages[len(req.Messages)-1].Content
	if strings.Contains(last, "book") {
		return &agenteval.AgentResponse{Messages: agenteval.Conversation{
			{Role: agenteval.RoleAssistant, ToolCalls: []agenteval.ToolCall{{ID: "1", Name: "book", Args: map[string]any{"time": "7pm"}}}},
			{Role: agenteval.RoleTool, ToolCallID: "1", Content: "ok"},
			{Role: agenteval.RoleAssistant, Content: "Booked for 7pm."},
		}}, nil
	}
	return &agenteval.AgentResponse{Messages: agenteval.Conversation{{Role: agenteval.RoleAssistant, Content: "Hello! " + last}}}, nil
})

func fakeJudge(t *testing.T, verdict bool) *judge.Judge {
	t.Helper()
	s, err := fakellm.Start(fakellm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	s.Add(&fakellm.Rule{Reply: fakellm.Reply{JSON: map[string]any{"c1": map[string]any{"reason": "the reply never states the time", "passed": verdict}}}})
	m, _ := provider.Open(provider.Config{Provider: "openai", Model: "fake", BaseURL: s.URL, APIKey: "k"})
	return &judge.Judge{Model: m, Name: "openai:fake"}
}

func TestRunPasses(t *testing.T) {
	results := Run(t, "testdata/booking.yaml", bookingAgent, Options{Judge: fakeJudge(t, true)})
	if len(results) != 2 {
		t.Fatalf("%d results", len(results))
	}
}

func TestExplainNamesTurnCriterionAndReason(t *testing.T) {
	results, err := Results("testdata/booking.yaml", bookingAgent, Options{Judge: fakeJudge(t, false)})
	if err != nil {
		t.Fatal(err)
	}
	books := results[1]
	if books.TestID != "books" || books.Verdict != agenteval.VerdictFail {
		t.Fatalf("books = %+v", books)
	}
	msg := Explain(books)
	for _, want := range []string{"books: fail (score 0.750)", "turn-1: fail", "✗ criterion-1: The assistant confirms the time", "because: the reply never states the time"} {
		if !strings.Contains(msg, want) {
			t.Errorf("Explain lacks %q:\n%s", want, msg)
		}
	}
}

// TestSimulatedUserInGoTest: a Go agent faces a simulated user inside go
// test, with the simulator and the judge both served by fakellm.
func TestSimulatedUserInGoTest(t *testing.T) {
	s, err := fakellm.Start(fakellm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	s.Add(
		&fakellm.Rule{Times: 1, Match: func(r *fakellm.Request) bool { return r.SchemaName() == "" }, Reply: fakellm.Reply{Content: "Please book a table for two at 7pm."}},
		&fakellm.Rule{Times: 1, Match: func(r *fakellm.Request) bool { return r.SchemaName() == "" }, Reply: fakellm.Reply{Content: "Thanks! ###STOP###"}},
	)
	m, _ := provider.Open(provider.Config{Provider: "openai", Model: "fake", BaseURL: s.URL, APIKey: "k"})
	results := Run(t, "testdata/simulated.yaml", bookingAgent, Options{Judge: &judge.Judge{Model: m, Name: "openai:fake"}, Simulator: m, SimulatorName: "openai:sim"})
	r := results[0]
	if r.Simulation == nil || r.Simulation.Turns != 1 || r.Simulation.EndReason != agenteval.EndStopMarker || r.Simulation.Model != "openai:sim" {
		t.Fatalf("simulation = %+v", r.Simulation)
	}
	if r.Verdict != agenteval.VerdictPass || len(r.Scores) != 3 {
		t.Errorf("result = %s %v", Explain(r), r.Scores)
	}
}
