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

// An AG-UI agent runs a tool of its own and answers: the reply holds its
// call, the call's result and its text, for the tool checks to grade.
func ExampleAGUIAgent() {
	// A stand-in for an AG-UI endpoint (LangGraph's, ADK's, CopilotKit's
	// runtime): it streams one run's events.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range []string{
			`{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}`,
			`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"get_weather","parentMessageId":"m1"}`,
			`{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{\"city\":\"Oslo\"}"}`,
			`{"type":"TOOL_CALL_END","toolCallId":"c1"}`,
			`{"type":"TOOL_CALL_RESULT","messageId":"m2","toolCallId":"c1","content":"4°C, rain"}`,
			`{"type":"TEXT_MESSAGE_START","messageId":"m3","role":"assistant"}`,
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m3","delta":"Take an umbrella: "}`,
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m3","delta":"4°C and rain."}`,
			`{"type":"TEXT_MESSAGE_END","messageId":"m3"}`,
			`{"type":"RUN_FINISHED","threadId":"t1","runId":"r1"}`,
		} {
			fmt.Fprintf(w, "data: %s\n\n", e)
		}
	}))
	defer srv.Close()

	agent := target.NewAGUI(suite.ProtocolTarget{URL: srv.URL + "/agent"}, 0)
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
	// ToolOutput: 4°C, rain
	// AI: Take an umbrella: 4°C and rain.
}
