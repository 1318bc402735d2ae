package target

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/redact"
	"github.com/agenteval/agenteval/suite"
)

// HTTPAgent POSTs each turn to an endpoint: {conversation_id, turn,
// messages} with the full history, and reads back the new messages.
type HTTPAgent struct {
	URL     string
	Headers map[string]string
	// Timeout bounds each request; 0 means 120s.
	Timeout time.Duration
	Client  *http.Client

	secretsOnce sync.Once
}

// noteSecrets registers the credentials in the target's configuration,
// so that no error or result shows them.
func (a *HTTPAgent) noteSecrets() { noteHTTPSecrets(a.URL, a.Headers) }

// noteHTTPSecrets registers headers whose names say they hold a secret
// (Authorization, X-Api-Key, ...), a password in the URL, and query
// parameters named like keys or tokens. (Short ones, which Add skips, are
// still hidden wherever they show in a URL.)
func noteHTTPSecrets(rawURL string, headers map[string]string) {
	for k, v := range headers {
		if redact.SecretName(k) {
			redact.Add(v)
		}
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return
	}
	if pw, ok := u.User.Password(); ok {
		redact.Add(pw)
	}
	for k, vs := range u.Query() {
		if redact.CredentialParam(k) {
			for _, v := range vs {
				redact.Add(v)
			}
		}
	}
}

// NoteSecrets registers the credentials of every target of a suite (and of
// its MCP servers), not
// only the one that runs: a command target inherits the whole environment,
// and an agent may echo what it was given.
func NoteSecrets(s *suite.Suite) {
	for _, m := range s.MCPServers {
		noteMCPSecrets(m)
	}
	for _, t := range s.Targets {
		if t.HTTP != nil {
			noteHTTPSecrets(t.HTTP.URL, t.HTTP.Headers)
		}
		for _, p := range []*suite.ProtocolTarget{t.A2A, t.AGUI} {
			if p != nil {
				noteHTTPSecrets(p.URL, p.Headers)
			}
		}
		for _, m := range t.MCPServers {
			noteMCPSecrets(m)
		}
		for k, v := range t.Env {
			if redact.SecretName(k) {
				redact.Add(v)
			}
		}
	}
}

// Respond runs one turn.
func (a *HTTPAgent) Respond(ctx context.Context, req *agenteval.AgentRequest) (*agenteval.AgentResponse, error) {
	a.secretsOnce.Do(a.noteSecrets)
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	timeout := a.Timeout
	if timeout <= 0 {
		timeout = 120 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, a.URL, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("http target: %w", err)
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json")
	for k, v := range a.Headers {
		hr.Header.Set(k, v)
	}
	if req.TraceParent != "" {
		hr.Header.Set("traceparent", req.TraceParent)
	}
	client := a.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(hr)
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return nil, fmt.Errorf("http target %s: no answer within %s", a.URL, timeout)
		}
		return nil, fmt.Errorf("http target %s is unreachable: %v", a.URL, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return nil, fmt.Errorf("http target %s: read the reply: %v", a.URL, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("http target %s answered HTTP %d: %s", a.URL, resp.StatusCode, snippet(string(data)))
	}
	out, err := decodeReply(data)
	if err != nil {
		return nil, fmt.Errorf("http target %s: %w", a.URL, err)
	}
	return out, nil
}
