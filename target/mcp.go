package target

import (
	"errors"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/agent"
	"github.com/agenteval/agenteval/suite"
)

// withMCP gives a model target's tool loop the tools of MCP servers.
func withMCP(a *agent.ToolLoop, servers []suite.MCPServer, dir string) (agenteval.Agent, error) {
	return nil, errors.New("mcp_servers are not built yet")
}
