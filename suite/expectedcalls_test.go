package suite

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/grade"
)

// TestIdenticalExpectationsInEveryForm runs one probe, the same tool call
// expected twice and made once, written in each form agenteval reads:
// agent_inspect's EvaluationSample JSON and dataset JSON, and our YAML,
// with and without a turn. agent_inspect checks each expectation on its
// own, so one call meets both; every form scores what it does.
func TestIdenticalExpectationsInEveryForm(t *testing.T) {
	conv := agenteval.Conversation{
		{Role: agenteval.RoleUser, Content: "Move my flight to economy."},
		{Role: agenteval.RoleAssistant, ToolCalls: []agenteval.ToolCall{{ID: "c1", Name: "update_reservation_flights", Args: map[string]any{"reservation_id": "OWZ4XL", "cabin": "economy"}}}},
		{Role: agenteval.RoleTool, ToolCallID: "c1", Content: "ok"},
		{Role: agenteval.RoleAssistant, Content: "Done."},
	}
	forms := []struct{ name, file, src string }{
		{"agent_inspect EvaluationSample JSON", "sample.json", `[{"id": "probe",
  "conversation": [{"turn_id": 1, "message": "Move my flight to economy."}],
  "expected_tool_calls": [
    {"tool": "update_reservation_flights", "expected_parameters": [{"name": "cabin", "value": "economy"}], "turn": 0},
    {"tool": "update_reservation_flights", "expected_parameters": [{"name": "cabin", "value": "economy"}], "turn": 0}]}]`},
		{"agent_inspect dataset JSON", "dataset.json", `[{"id": "probe",
  "input": [{"role": "user", "content": "Move my flight to economy."}], "target": ["Done."],
  "metadata": {"expected_tools": [
    "[{'tool_code': 'update_reservation_flights(cabin=economy)'}]",
    "[{'tool_code': 'update_reservation_flights(cabin=economy)'}]"]}}]`},
		{"our YAML, in turn 1", "evals.yaml", `
tests:
  - id: probe
    mode: conversation
    turns:
      - input: Move my flight to economy.
    expected_tool_calls:
      - {tool: update_reservation_flights, args: {cabin: economy}, turn: 1}
      - {tool: update_reservation_flights, args: {cabin: economy}, turn: 1}
`},
		{"our YAML, any turn", "evals.yaml", `
tests:
  - id: probe
    input: Move my flight to economy.
    expected_tool_calls:
      - {tool: update_reservation_flights, args: {cabin: economy}}
      - {tool: update_reservation_flights, args: {cabin: economy}}
`},
	}
	for _, f := range forms {
		t.Run(f.name, func(t *testing.T) {
			s, err := Parse(f.file, []byte(f.src), Options{JudgeAvailable: true})
			if err != nil {
				t.Fatal(err)
			}
			tc := s.Tests[0]
			plan, errs := grade.NewPlan(&tc, grade.PlanOptions{})
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			var g agenteval.Grader
			for _, x := range plan.Extras {
				if x.Type == "expected_tool_calls" {
					g = x.Grader
				}
			}
			if g == nil {
				t.Fatalf("no expected_tool_calls grader in %+v", plan.Extras)
			}
			sc, err := g.Grade(context.Background(), &agenteval.GradeInput{Transcript: conv, Output: conv})
			if err != nil {
				t.Fatal(err)
			}
			if sc.Score != 1 || len(sc.Assertions) != 2 {
				b, _ := json.Marshal(sc)
				t.Errorf("score %v with %d assertions, want 1 with both expectations met: %s", sc.Score, len(sc.Assertions), b)
			}
		})
	}
}
