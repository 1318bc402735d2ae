package target_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/suite"
	"github.com/agenteval/agenteval/target"
)

// An A2A agent answers a turn with a task: the function call and response
// it reports as ADK-style data parts become the reply's tool call and
// result, and its artifact the reply's text.
func ExampleA2AAgent() {
	// A stand-in for an A2A server (@a2a-js/sdk, a2a-python, ADK): its
	// agent card, and a spec 1.0 SendMessage answer.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			fmt.Fprintf(w, `{"name":"weather","supportedInterfaces":[{"url":"http://%s/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"capabilities":{"streaming":false}}`, r.Host)
			return
		}
		fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"},
"history":[
 {"messageId":"a1","role":"ROLE_AGENT","parts":[{"data":{"id":"f1","name":"get_weather","args":{"city":"Oslo"}},"metadata":{"adk_type":"function_call"}}]},
 {"messageId":"a2","role":"ROLE_AGENT","parts":[{"data":{"id":"f1","name":"get_weather","response":{"forecast":"4°C, rain"}},"metadata":{"adk_type":"function_response"}}]}],
"artifacts":[{"artifactId":"r1","name":"answer","parts":[{"text":"Take an umbrella: 4°C and rain."}]}]}}}`)
	}))
	defer srv.Close()

	agent := target.NewA2A(suite.ProtocolTarget{URL: srv.URL}, 0)
	resp, err := agent.Respond(context.Background(), &agenteval.AgentRequest{
		ConversationID: "weather#1", Turn: 1,
		Messages: agenteval.Conversation{{Role: agenteval.RoleUser, Content: "Do I need an umbrella in Oslo?"}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range resp.Messages {
		fmt.Println(m.Pretty())
	}
	// Output:
	// Tools:
	//   get_weather: {"city":"Oslo"}
	// ToolOutput: {"forecast":"4°C, rain"}
	// AI: Take an umbrella: 4°C and rain.
}
