package grade_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/grade"
	"github.com/agenteval/agenteval/internal/fakellm"
	"github.com/agenteval/agenteval/judge"
	"github.com/agenteval/agenteval/provider"
	_ "github.com/agenteval/agenteval/provider/openai" // links the openai adapter
)

// TestMain serves the judge of the examples: fakellm plays gpt-4o-mini
// over real HTTP.
func TestMain(m *testing.M) {
	os.Exit(fakellm.Main(m.Run,
		&fakellm.Rule{Match: fakellm.SchemaNamed("goal_and_end_state"), Reply: fakellm.Reply{JSON: map[string]any{
			"user_goal": "a table for two at 8pm", "end_state": "a table for two is booked at 8pm"}}},
	))
}

func booking() agenteval.Conversation {
	return agenteval.Conversation{
		{Role: agenteval.RoleUser, Content: "A table for two at 8pm, please."},
		{Role: agenteval.RoleAssistant, ToolCalls: []agenteval.ToolCall{{ID: "c1", Name: "book", Args: map[string]any{"party": 2, "time": "20:00"}}}},
		{Role: agenteval.RoleTool, ToolCallID: "c1", Content: `{"booked": true}`},
		{Role: agenteval.RoleAssistant, Content: "Booked: a table for two at 8pm."},
	}
}

// A grader is built from a Spec: its type, and its options as a typed
// struct (or, from eval files, a map of settings).
func ExampleNew() {
	g, err := grade.New(grade.Spec{Type: "tool_calls", Options: grade.ToolCallsOptions{
		Mode:      grade.ModeAnyOrder,
		ArgsMatch: grade.ArgsSuperset,
		Expected:  grade.ExpectedCalls{{Tool: "book", Args: map[string]any{"time": map[string]any{"$regex": "^20:"}}}},
	}})
	if err != nil {
		log.Fatal(err)
	}
	conv := booking()
	score, err := g.Grade(context.Background(), &agenteval.GradeInput{Transcript: conv, Output: conv})
	fmt.Println(score.Verdict, score.Score, err)
	fmt.Println(score.Assertions[0].Text, "->", score.Assertions[0].Evidence)
	// Output:
	// pass 1 <nil>
	// expected call 1: book({"time":{"$regex":"^20:"}}) -> matched call 1
}

// Graders that need the LLM judge get one in the Spec; any provider works.
func ExampleNew_judge() {
	m, err := provider.OpenSpec("openai:gpt-4o-mini") // OPENAI_API_KEY, OPENAI_BASE_URL
	if err != nil {
		log.Fatal(err)
	}
	j := &judge.Judge{Model: m, Name: "openai:gpt-4o-mini"} // cache.Wrap(m, ...) caches its calls
	g, err := grade.New(grade.Spec{Type: "agent_goal_accuracy", Judge: j})
	if err != nil {
		log.Fatal(err)
	}
	conv := booking()
	score, err := g.Grade(context.Background(), &agenteval.GradeInput{Transcript: conv, Output: conv, Reference: "A table for two is booked for 8pm."})
	fmt.Println(score.Verdict, score.Details["end_state"], err)
	// Output: pass a table for two is booked at 8pm <nil>
}

// The built-in graders are plain values; All lists them.
func ExampleAll() {
	for _, d := range grade.All()[:3] {
		fmt.Printf("%s: %s\n", d.Name, d.Doc)
	}
	// Output:
	// contains: the reply contains value
	// icontains: the reply contains value, ignoring case
	// contains_any: the reply contains at least one of value[]
}
