package target

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/agent"
	"github.com/agenteval/agenteval/internal/redact"
	"github.com/agenteval/agenteval/mcptools"
	"github.com/agenteval/agenteval/suite"
)

// withMCP gives a model target's tool loop the tools of MCP servers,
// beside its mock tools. The servers are reached on the first turn, once
// for the whole run: every conversation shares their sessions (servers
// take concurrent calls). A server that cannot be reached fails every
// turn with the same error.
func withMCP(a *agent.ToolLoop, servers []suite.MCPServer, dir string) (agenteval.Agent, error) {
	m := &MCPAgent{Loop: a, ready: make(chan struct{})}
	for _, s := range servers {
		m.Servers = append(m.Servers, mcpServer(s, dir))
	}
	return m, nil
}

// mcpServer is how mcptools reaches a server of an eval or project file:
// relative paths start at the file's folder, as a command target's do, and
// its credentials are registered as secrets.
func mcpServer(s suite.MCPServer, dir string) mcptools.Server {
	base := s.BaseDir
	if base == "" {
		base = dir
	}
	out := mcptools.Server{Name: s.Name, Where: where(s.Pos), Env: s.Env, URL: s.URL, Headers: s.Headers, Tools: s.Tools}
	if len(s.Command) > 0 {
		out.Command = resolveArgv(s.Command, base)
		out.Dir = base
		if s.Dir != "" {
			out.Dir = s.Dir
			if !filepath.IsAbs(s.Dir) {
				out.Dir = filepath.Join(base, s.Dir)
			}
		}
	}
	noteMCPSecrets(s)
	return out
}

// resolveArgv makes a command's relative paths absolute from dir, for
// command targets and MCP servers alike: a program named by a path
// (absolute, so exec does not look a bare name up in PATH), and arguments
// that name a file there (absolute, because the process starts in that
// folder, where the relative path would be taken twice).
func resolveArgv(argv []string, dir string) []string {
	argv = append([]string(nil), argv...)
	if strings.ContainsRune(argv[0], filepath.Separator) && !filepath.IsAbs(argv[0]) {
		if abs, err := filepath.Abs(filepath.Join(dir, argv[0])); err == nil {
			argv[0] = abs
		}
	}
	for i := 1; i < len(argv); i++ {
		if p := filepath.Join(dir, argv[i]); !filepath.IsAbs(argv[i]) && strings.ContainsAny(argv[i], "./") && fileExists(p) {
			if abs, err := filepath.Abs(p); err == nil {
				argv[i] = abs
			}
		}
	}
	return argv
}

// noteMCPSecrets registers an MCP server's credentials: env values under
// secret-looking names, and a url server's headers.
func noteMCPSecrets(s suite.MCPServer) {
	for k, v := range s.Env {
		if redact.SecretName(k) {
			redact.Add(v)
		}
	}
	noteHTTPSecrets(s.URL, s.Headers)
}

func where(p agenteval.Pos) string {
	switch {
	case p.File == "":
		return ""
	case p.Col > 0:
		return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
	case p.Line > 0:
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	return p.File
}

// MCPAgent is a model target whose tool loop also has the tools of MCP
// servers. It connects on the first turn and stays connected until Close;
// the tool messages of its transcript name the server that ran the call
// (metadata "mcp_server").
type MCPAgent struct {
	// Loop is the model's tool loop; its Tools (the mock tools) are kept,
	// and the servers' tools are added to them.
	Loop    *agent.ToolLoop
	Servers []mcptools.Server
	// Options adjust the connections (timeouts).
	Options mcptools.Options

	start  sync.Once
	ready  chan struct{} // closed once connected, or failed
	client *mcptools.Client
	err    error

	mu     sync.Mutex
	cancel context.CancelFunc
	closed bool
}

// connect reaches the servers and gives the loop their tools.
func (m *MCPAgent) connect(ctx context.Context) {
	defer close(m.ready)
	c, err := mcptools.Connect(ctx, m.Servers, &m.Options)
	if err != nil {
		m.err = err
		return
	}
	mocks := map[string]bool{}
	for _, t := range m.Loop.Tools {
		mocks[t.Name] = true
	}
	for _, t := range c.Tools() {
		if mocks[t.Name] {
			c.Close()
			m.err = fmt.Errorf("tool %q of %s has the name of a tool of the file's tools: (a mock); rename the mock, or leave the server's tool out with tools: [...]", t.Name, m.label(c.ServerOf(t.Name)))
			return
		}
	}
	m.client = c
	m.Loop.Tools = append(append([]agent.Tool(nil), m.Loop.Tools...), c.Tools()...)
}

// label names a server as mcptools' messages do.
func (m *MCPAgent) label(name string) string {
	for _, s := range m.Servers {
		if s.Name == name && s.Where != "" {
			return fmt.Sprintf("MCP server %q (%s)", name, s.Where)
		}
	}
	return fmt.Sprintf("MCP server %q", name)
}

// Respond runs one turn of the tool loop, connecting first on the run's
// first turn.
func (m *MCPAgent) Respond(ctx context.Context, req *agenteval.AgentRequest) (*agenteval.AgentResponse, error) {
	m.start.Do(func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.ready == nil {
			m.ready = make(chan struct{})
		}
		if m.closed {
			m.err = errors.New("the MCP servers' sessions were closed")
			close(m.ready)
			return
		}
		// Not the turn's context: the connection outlives this turn,
		// and every later turn uses it.
		cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		m.cancel = cancel
		go m.connect(cctx)
	})
	select {
	case <-m.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if m.err != nil {
		return nil, m.err
	}
	m.mu.Lock()
	closed := m.closed
	m.mu.Unlock()
	if closed {
		return nil, errors.New("the MCP servers' sessions were closed")
	}
	resp, err := m.Loop.Respond(ctx, req)
	if resp != nil {
		for i, msg := range resp.Messages {
			if msg.Role != agenteval.RoleTool {
				continue
			}
			if name := m.client.ServerOf(msg.Name); name != "" {
				md := make(map[string]any, len(msg.Metadata)+1)
				for k, v := range msg.Metadata {
					md[k] = v
				}
				md["mcp_server"] = name
				resp.Messages[i].Metadata = md
			}
		}
	}
	return resp, err
}

// Close ends the servers' sessions and programs. The session closes the
// target when the run ends.
func (m *MCPAgent) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	cancel, ready := m.cancel, m.ready
	m.mu.Unlock()
	if cancel == nil {
		return nil // never connected
	}
	cancel()
	<-ready
	if m.client != nil {
		return m.client.Close()
	}
	return nil
}
