package target

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/jsonvalue"
	"github.com/agenteval/agenteval/suite"
)

// ModelAgent makes a model the agent under test. With tools, it drives the
// tool loop: it calls the model with the history, answers each tool call
// with the tool's mock result, and calls again, up to MaxSteps model calls
// per turn. Every call and result is recorded in the reply.
type ModelAgent struct {
	Model agenteval.Model
	Tools []suite.ToolMock
	// MaxSteps bounds model calls per turn; 0 means 10.
	MaxSteps    int
	Temperature *float64
	MaxTokens   int

	ids atomic.Int64
}

// ErrMaxSteps is wrapped by the error of a turn that was still calling
// tools when MaxSteps ran out.
var ErrMaxSteps = fmt.Errorf("the model was still calling tools after the last allowed step")

// Respond runs one turn.
func (a *ModelAgent) Respond(ctx context.Context, req *agenteval.AgentRequest) (*agenteval.AgentResponse, error) {
	steps := a.MaxSteps
	if steps <= 0 {
		steps = 10
	}
	specs := make([]agenteval.ToolSpec, len(a.Tools))
	for i, t := range a.Tools {
		specs[i] = agenteval.ToolSpec{Name: t.Name, Description: t.Description, Parameters: t.Parameters}
	}
	resp := &agenteval.AgentResponse{}
	history := append(agenteval.Conversation(nil), req.Messages...)
	for step := 0; step < steps; step++ {
		out, err := a.Model.Generate(ctx, &agenteval.ModelRequest{Messages: history, Tools: specs, Temperature: a.Temperature, MaxTokens: a.MaxTokens})
		if err != nil {
			return resp, err
		}
		resp.Usage.Add(&out.Usage)
		msg := out.Message
		msg.Role = agenteval.RoleAssistant
		for i := range msg.ToolCalls {
			if msg.ToolCalls[i].ID == "" {
				msg.ToolCalls[i].ID = "call_" + strconv.FormatInt(a.ids.Add(1), 10)
			}
		}
		history = append(history, msg)
		resp.Messages = append(resp.Messages, msg)
		if len(msg.ToolCalls) == 0 {
			if msg.Content == "" {
				return resp, fmt.Errorf("the model returned an empty reply (finish reason %q)", out.FinishReason)
			}
			return resp, nil
		}
		for _, c := range msg.ToolCalls {
			result := a.mock(c)
			tm := agenteval.Message{Role: agenteval.RoleTool, ToolCallID: c.ID, Name: c.Name, Content: result}
			history = append(history, tm)
			resp.Messages = append(resp.Messages, tm)
		}
	}
	return resp, fmt.Errorf("%w (max_steps %d)", ErrMaxSteps, steps)
}

// mock answers a tool call: the first case whose when-arguments all equal
// the call's, else the tool's default result. Unknown tools and undecodable
// arguments get an error result, which the model sees, as a real tool
// would answer.
func (a *ModelAgent) mock(c agenteval.ToolCall) string {
	for _, t := range a.Tools {
		if t.Name != c.Name {
			continue
		}
		if c.Args == nil && c.RawArgs != "" {
			return "error: the arguments are not valid JSON"
		}
	cases:
		for _, mc := range t.Cases {
			for k, want := range mc.When {
				if got, ok := c.Args[k]; !ok || !jsonvalue.Equal(want, got) {
					continue cases
				}
			}
			return resultText(mc.Result)
		}
		if t.Result == nil {
			return "ok"
		}
		return resultText(t.Result)
	}
	return fmt.Sprintf("error: unknown tool %q", c.Name)
}

func resultText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
