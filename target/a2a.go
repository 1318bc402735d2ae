package target

import (
	"context"
	"errors"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/suite"
)

// A2AAgent is an agent reached over the A2A protocol.
type A2AAgent struct {
	URL     string
	Headers map[string]string
	Timeout time.Duration
}

// NewA2A returns the A2A agent a target describes.
func NewA2A(p suite.ProtocolTarget, timeout time.Duration) *A2AAgent {
	return &A2AAgent{URL: p.URL, Headers: p.Headers, Timeout: timeout}
}

// Respond runs one turn.
func (a *A2AAgent) Respond(ctx context.Context, req *agenteval.AgentRequest) (*agenteval.AgentResponse, error) {
	return nil, errors.New("a2a targets are not built yet")
}
