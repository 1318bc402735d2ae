package target

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agenteval/agenteval/agent"
	"github.com/agenteval/agenteval/internal/jsonvalue"
	"github.com/agenteval/agenteval/suite"
)

// MockTools makes a suite's tools: for a model target, the agent.ToolLoop
// that drives the model answers each call with the tool's mock result
// instead of running anything, and records the call and its result.
func MockTools(mocks []suite.ToolMock) []agent.Tool {
	out := make([]agent.Tool, len(mocks))
	for i, t := range mocks {
		out[i] = agent.Tool{Name: t.Name, Description: t.Description, Parameters: t.Parameters,
			Run: func(_ context.Context, args map[string]any) (string, error) { return mock(t, args), nil }}
	}
	return out
}

// mock answers a call: the first case whose when-arguments all equal the
// call's, else the tool's default result.
func mock(t suite.ToolMock, args map[string]any) string {
cases:
	for _, mc := range t.Cases {
		for k, want := range mc.When {
			if got, ok := args[k]; !ok || !jsonvalue.Equal(want, got) {
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
