package target

import (
	"context"
	"errors"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/suite"
)

// AGUIAgent is an agent reached over the AG-UI protocol.
type AGUIAgent struct {
	URL     string
	Headers map[string]string
	Timeout time.Duration
}

// NewAGUI returns the AG-UI agent a target describes.
func NewAGUI(p suite.ProtocolTarget, timeout time.Duration) *AGUIAgent {
	return &AGUIAgent{URL: p.URL, Headers: p.Headers, Timeout: timeout}
}

// Respond runs one turn.
func (a *AGUIAgent) Respond(ctx context.Context, req *agenteval.AgentRequest) (*agenteval.AgentResponse, error) {
	return nil, errors.New("agui targets are not built yet")
}
