package target

import (
	"context"
	"fmt"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/suite"
)

// defaultToolRounds bounds the calls of one turn when max_steps is unset.
const defaultToolRounds = 10

// MockedTools wraps an http or command agent with the mock tools of an
// eval file or project file. Each request declares the tools (Tools), and
// a reply that ends with tool calls nobody answered is answered here: each
// call gets its tool's mock result (an unknown tool, an error text), and the
// agent is called again within the same turn with its calls and their
// results appended, until it replies without pending calls or MaxRounds
// rounds have passed. So an agent that keeps its tools outside, as a
// model's tool loop does, can run against the suite's tools.
type MockedTools struct {
	Agent agenteval.Agent
	Tools []suite.ToolMock
	// MaxRounds bounds the agent calls of one turn; 0 means 10.
	MaxRounds int
}

// Respond runs one turn, answering the agent's pending tool calls.
func (m *MockedTools) Respond(ctx context.Context, req *agenteval.AgentRequest) (*agenteval.AgentResponse, error) {
	specs := make([]agenteval.ToolSpec, len(m.Tools))
	byName := map[string]suite.ToolMock{}
	for i, t := range m.Tools {
		specs[i] = agenteval.ToolSpec{Name: t.Name, Description: t.Description, Parameters: t.Parameters}
		byName[t.Name] = t
	}
	rounds := m.MaxRounds
	if rounds <= 0 {
		rounds = defaultToolRounds
	}
	out := &agenteval.AgentResponse{}
	history := req.Messages
	for round := 1; ; round++ {
		r := *req
		r.Messages, r.Tools = history, specs
		resp, err := m.Agent.Respond(ctx, &r)
		if resp != nil {
			out.Usage.Add(&resp.Usage)
			out.Messages = append(out.Messages, resp.Messages...)
		}
		if err != nil {
			return out, err
		}
		pending := pendingCalls(resp.Messages)
		if len(pending) == 0 {
			return out, nil
		}
		if round >= rounds {
			return out, fmt.Errorf("the agent was still calling tools after %d rounds in one turn (max_steps)", rounds)
		}
		for _, c := range pending {
			result := fmt.Sprintf("error: unknown tool %q", c.Name)
			if t, ok := byName[c.Name]; ok {
				result = mock(t, c.Args)
				if c.Args == nil && c.RawArgs != "" {
					result = "error: the arguments are not valid JSON"
				}
			}
			out.Messages = append(out.Messages, agenteval.Message{Role: agenteval.RoleTool, ToolCallID: c.ID, Name: c.Name, Content: result})
		}
		history = append(append(agenteval.Conversation(nil), req.Messages...), out.Messages...)
	}
}

// pendingCalls are the calls of a reply's last message when it is an
// assistant message with tool calls: calls the agent left unanswered.
func pendingCalls(msgs agenteval.Conversation) []agenteval.ToolCall {
	if len(msgs) == 0 {
		return nil
	}
	last := msgs[len(msgs)-1]
	if last.Role != agenteval.RoleAssistant {
		return nil
	}
	return last.ToolCalls
}

// CloseConversation passes the end of a conversation on to the agent.
func (m *MockedTools) CloseConversation(id string) error {
	if c, ok := m.Agent.(agenteval.Closer); ok {
		return c.CloseConversation(id)
	}
	return nil
}
