package target

import (
	"context"
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/suite"
)

// TestMockedToolsRoundTrip: an agent that leaves its tool calls unanswered
// gets the suite's mock results and is called again within the turn; the
// turn's messages are its calls, the results and its answer.
func TestMockedToolsRoundTrip(t *testing.T) {
	var reqs []agenteval.AgentRequest
	inner := agenteval.AgentFunc(func(_ context.Context, req *agenteval.AgentRequest) (*agenteval.AgentResponse, error) {
		reqs = append(reqs, *req)
		last := req.Messages[len(req.Messages)-1]
		if last.Role == agenteval.RoleUser {
			return &agenteval.AgentResponse{Messages: agenteval.Conversation{{Role: agenteval.RoleAssistant, ToolCalls: []agenteval.ToolCall{
				{ID: "c1", Name: "lookup", Args: map[string]any{"id": "A1"}}, {ID: "c2", Name: "nope", Args: map[string]any{}}}}},
				Usage: agenteval.Usage{InputTokens: 3}}, nil
		}
		return &agenteval.AgentResponse{Messages: agenteval.Conversation{{Role: agenteval.RoleAssistant, Content: "found: " + req.Messages[len(req.Messages)-2].Content}}, Usage: agenteval.Usage{InputTokens: 4}}, nil
	})
	tools := []suite.ToolMock{{Name: "lookup", Description: "Look an order up.", Parameters: map[string]any{"type": "object"},
		Cases: []suite.MockCase{{When: map[string]any{"id": "A1"}, Result: map[string]any{"status": "shipped"}}}}}
	m := &MockedTools{Agent: inner, Tools: tools}
	resp, err := m.Respond(context.Background(), &agenteval.AgentRequest{ConversationID: "x", Turn: 1, Messages: agenteval.Conversation{{Role: agenteval.RoleUser, Content: "Where is A1?"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 2 || len(reqs[0].Tools) != 1 || reqs[0].Tools[0].Name != "lookup" || reqs[1].Turn != 1 {
		t.Fatalf("requests = %+v", reqs)
	}
	got := resp.Messages
	if len(got) != 4 || got[1].Content != `{"status":"shipped"}` || got[1].ToolCallID != "c1" || !strings.Contains(got[2].Content, `unknown tool "nope"`) || got[3].Content != `found: {"status":"shipped"}` {
		t.Errorf("messages = %+v", got)
	}
	if len(reqs[1].Messages) != 4 || resp.Usage.InputTokens != 7 {
		t.Errorf("second request has %d messages, usage %+v", len(reqs[1].Messages), resp.Usage)
	}
	// An agent that never stops calling tools is stopped.
	loop := agenteval.AgentFunc(func(_ context.Context, req *agenteval.AgentRequest) (*agenteval.AgentResponse, error) {
		return &agenteval.AgentResponse{Messages: agenteval.Conversation{{Role: agenteval.RoleAssistant, ToolCalls: []agenteval.ToolCall{{ID: "c", Name: "lookup", Args: map[string]any{}}}}}}, nil
	})
	_, err = (&MockedTools{Agent: loop, Tools: tools, MaxRounds: 3}).Respond(context.Background(), &agenteval.AgentRequest{Messages: agenteval.Conversation{{Role: agenteval.RoleUser, Content: "hi"}}})
	if err == nil || !strings.Contains(err.Error(), "still calling tools after 3 rounds") {
		t.Errorf("err = %v", err)
	}
}
