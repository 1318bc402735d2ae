package evaltest_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/evaltest"
	"github.com/agenteval/agenteval/internal/fakellm"
	_ "github.com/agenteval/agenteval/provider/openai" // the suite's judge: is an openai model
)

// TestMain serves the suite's judge: fakellm plays it over real HTTP.
func TestMain(m *testing.M) { os.Exit(fakellm.Main(m.Run)) }

// booker is the agent under test: any agenteval.Agent, such as an
// agent.ToolLoop. It books when asked, and greets otherwise.
var booker = agenteval.AgentFunc(func(ctx context.Context, req *agenteval.AgentRequest) (*agenteval.AgentResponse, error) {
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

// Each test of the eval file is a subtest: go test -run 'TestBookingAgent/books'
// runs one.
func TestBookingAgent(t *testing.T) {
	evaltest.Run(t, "testdata/booking.yaml", booker, evaltest.Options{})
}

// Results runs an eval file and returns its results, for code that
// reports them its own way.
func ExampleResults() {
	results, err := evaltest.Results(context.Background(), "testdata/booking.yaml", booker, evaltest.Options{})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range results {
		fmt.Println(r.TestID, r.Verdict, len(r.Scores), "scores")
	}
	// Output:
	// greets pass 1 scores
	// books pass 2 scores
}
