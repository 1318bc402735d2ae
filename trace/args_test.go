package trace

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/dataset"
	"github.com/agenteval/agenteval/grade"
)

// A Claude Code TodoWrite call, whose todos are objects written with
// content before status before activeForm, scores 1 on Ragas-exact
// tool_call_accuracy against a reference whose arguments were copied from
// the same log: the trace keeps the written key order, as the reference
// does. Sorted keys would print {'activeForm': ..., 'content': ...} and
// score 0.
func TestClaudeTodoWriteKeepsKeyOrder(t *testing.T) {
	dir := t.TempDir()
	todos := `{"todos":[{"content":"Run the test suite","status":"in_progress","activeForm":"Running the test suite"},{"content":"Fix the failing test","status":"pending","activeForm":"Fixing the failing test"}]}`
	log := `{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/repo","sessionId":"7d1c5b0e-todo","version":"2.0.14","gitBranch":"main","type":"user","message":{"role":"user","content":"Run the tests and fix what fails."},"uuid":"u1","timestamp":"2025-10-10T09:00:00.000Z"}
{"parentUuid":"u1","isSidechain":false,"userType":"external","cwd":"/repo","sessionId":"7d1c5b0e-todo","version":"2.0.14","gitBranch":"main","message":{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{"type":"tool_use","id":"toolu_01","name":"TodoWrite","input":` + todos + `}],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":50}},"requestId":"req_1","type":"assistant","uuid":"a1","timestamp":"2025-10-10T09:00:02.000Z"}
{"parentUuid":"a1","isSidechain":false,"userType":"external","cwd":"/repo","sessionId":"7d1c5b0e-todo","version":"2.0.14","gitBranch":"main","type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_01","type":"tool_result","content":"Todos have been modified successfully."}]},"uuid":"u2","timestamp":"2025-10-10T09:00:03.000Z","toolUseResult":{"oldTodos":[],"newTodos":[]}}
`
	ref := `{"id":"7d1c5b0e-todo","reference_tool_calls":[{"name":"TodoWrite","args":` + todos + `}]}` + "\n"
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	refs, probs, err := dataset.ReadReferences(write("refs.jsonl", ref))
	if err != nil || len(probs) > 0 {
		t.Fatal(err, probs)
	}
	src, err := Open(write("session.jsonl", log), Options{References: refs})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	row, err := src.Next()
	if err != nil {
		t.Fatal(err)
	}
	s := row.Sample
	if len(row.Errors) > 0 || len(row.Warnings) > 0 {
		t.Fatalf("problems: %v %v", row.Errors, row.Warnings)
	}
	g, err := grade.New(grade.Spec{Type: "tool_call_accuracy"})
	if err != nil {
		t.Fatal(err)
	}
	score, err := g.Grade(context.Background(), &agenteval.GradeInput{Transcript: s.UserInput, Output: s.UserInput, ReferenceToolCalls: s.ReferenceToolCalls})
	if err != nil {
		t.Fatal(err)
	}
	if score.Score != 1 {
		t.Errorf("tool_call_accuracy = %v, want 1: %s", score.Score, score.Reason)
	}
}
