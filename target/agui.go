package target

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/redact"
	"github.com/agenteval/agenteval/suite"
)

// The bounds of one AG-UI run: an event's data, and the whole stream. An
// agent that streams more is stopped with an error rather than filling
// memory. (Variables, so that tests can lower them.)
var (
	aguiMaxEventBytes = 4 << 20
	aguiMaxRunBytes   = 32 << 20
)

// AGUIAgent is an agent reached over the AG-UI protocol: each call POSTs a
// RunAgentInput to URL and reads the run's events from the
// text/event-stream answer, as the protocol's own HttpAgent client does.
//
// Every run sends the whole conversation (the protocol's client sends its
// full message list, and servers such as LangGraph's merge it into their
// checkpoint by message id), under one threadId per conversation and a
// fresh runId. The ids the agent gave its own messages are remembered per
// conversation and sent back with them, so a server that keys its memory
// on message ids does not see them twice.
//
// The request's Tools are offered as the run's tools (the client-side
// tools of AG-UI). A run that ends on calls of those tools, with no
// TOOL_CALL_RESULT, returns them as the last assistant message's calls:
// MockedTools answers them, and the next call runs again with the results
// in the history, as a frontend would. Tools the agent runs itself
// (TOOL_CALL_RESULT events) become calls and tool messages in the reply.
type AGUIAgent struct {
	URL     string
	Headers map[string]string
	// Timeout bounds each run; 0 means 120s.
	Timeout time.Duration
	Client  *http.Client

	// newID makes run ids; nil means random UUIDs. Tests set it.
	newID func() string

	secretsOnce sync.Once
	mu          sync.Mutex
	// threads holds, per conversation, the ids the agent gave its
	// messages, by message fingerprint (aguiFingerprint).
	threads map[string]map[string]string
}

// NewAGUI returns the AG-UI agent a target describes.
func NewAGUI(p suite.ProtocolTarget, timeout time.Duration) *AGUIAgent {
	return &AGUIAgent{URL: p.URL, Headers: p.Headers, Timeout: timeout}
}

// aguiRunInput is the protocol's RunAgentInput, its fields in the order
// the protocol's types list them.
type aguiRunInput struct {
	ThreadID       string         `json:"threadId"`
	RunID          string         `json:"runId"`
	State          map[string]any `json:"state"`
	Messages       []aguiMessage  `json:"messages"`
	Tools          []aguiTool     `json:"tools"`
	Context        []any          `json:"context"`
	ForwardedProps map[string]any `json:"forwardedProps"`
}

type aguiTool struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Parameters  map[string]any `json:"parameters"`
}

// Respond runs the agent once: one AG-UI run.
func (a *AGUIAgent) Respond(ctx context.Context, req *agenteval.AgentRequest) (*agenteval.AgentResponse, error) {
	a.secretsOnce.Do(func() { noteHTTPSecrets(a.URL, a.Headers) })
	thread := aguiThreadID(req.ConversationID)
	known := a.known(req.ConversationID)
	msgs, sent := aguiMessages(thread, req.Messages, known)
	in := aguiRunInput{
		ThreadID: thread, RunID: a.runID(), State: map[string]any{}, Messages: msgs,
		Tools: aguiTools(req.Tools), Context: []any{}, ForwardedProps: map[string]any{},
	}
	body, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("agui target %s: encode the run input: %w", a.where(), err)
	}
	timeout := a.Timeout
	if timeout <= 0 {
		timeout = 120 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, a.URL, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("agui target %s: %w", a.where(), err)
	}
	for k, v := range a.Headers {
		hr.Header.Set(k, v)
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "text/event-stream")
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
			return nil, fmt.Errorf("agui target %s: no answer within %s", a.where(), timeout)
		}
		return nil, fmt.Errorf("agui target %s is unreachable: %v", a.where(), redact.String(err.Error()))
	}
	defer resp.Body.Close()
	if err := aguiCheckAnswer(resp); err != nil {
		return nil, fmt.Errorf("agui target %s %w", a.where(), err)
	}
	run := newAGUIRun(in.RunID, sent)
	err = run.read(resp.Body)
	if err != nil && ctx.Err() == context.DeadlineExceeded {
		err = fmt.Errorf("the run did not finish within %s", timeout)
	}
	out, ids := run.reply()
	if err != nil {
		// What the agent said before it failed still counts: its usage,
		// and the messages, which show where it stopped.
		return out, fmt.Errorf("agui target %s: %w", a.where(), err)
	}
	if len(out.Messages) == 0 {
		return out, fmt.Errorf("agui target %s: the run finished without a message or a tool call", a.where())
	}
	a.remember(req.ConversationID, thread, req.Messages, out.Messages, ids)
	return out, nil
}

// aguiCheckAnswer accepts an HTTP answer that is an event stream, and
// otherwise says what came instead, quoting a server's error.
func aguiCheckAnswer(resp *http.Response) error {
	ct := resp.Header.Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(ct)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return fmt.Errorf("answered HTTP %d: %s", resp.StatusCode, redact.String(snippet(strings.TrimSpace(string(data)))))
	}
	if mt != "" && mt != "text/event-stream" {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return fmt.Errorf("answered %s, not an AG-UI event stream (text/event-stream): %s; is the URL the agent's AG-UI endpoint?", mt, redact.String(snippet(strings.TrimSpace(string(data)))))
	}
	return nil
}

// where is the URL for messages, without the credentials it may hold.
func (a *AGUIAgent) where() string { return redact.String(a.URL) }

func (a *AGUIAgent) runID() string {
	if a.newID != nil {
		return a.newID()
	}
	return aguiRandomUUID()
}

// known returns a copy of the ids remembered for a conversation.
func (a *AGUIAgent) known(conv string) map[string]string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := map[string]string{}
	for k, v := range a.threads[conv] {
		out[k] = v
	}
	return out
}

// remember keeps the ids the agent gave the messages of its reply, so the
// next run sends them back under the same ids.
func (a *AGUIAgent) remember(conv, thread string, history, reply agenteval.Conversation, ids []string) {
	if conv == "" {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.threads == nil {
		a.threads = map[string]map[string]string{}
	}
	m := a.threads[conv]
	if m == nil {
		m = map[string]string{}
		a.threads[conv] = m
	}
	seen := map[string]int{}
	for _, msg := range history {
		seen[aguiFingerprint(msg)]++
	}
	for i, msg := range reply {
		fp := aguiFingerprint(msg)
		seen[fp]++
		if i < len(ids) && ids[i] != "" {
			m[fmt.Sprintf("%s#%d", fp, seen[fp])] = ids[i]
		}
	}
}

// CloseConversation forgets the ids of a conversation's messages.
func (a *AGUIAgent) CloseConversation(id string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.threads, id)
	return nil
}

// aguiTools declares the request's tools as AG-UI tools; a tool without
// a schema takes any object.
func aguiTools(specs []agenteval.ToolSpec) []aguiTool {
	out := make([]aguiTool, 0, len(specs))
	for _, s := range specs {
		p := s.Parameters
		if p == nil {
			p = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		out = append(out, aguiTool{Name: s.Name, Description: s.Description, Parameters: p})
	}
	return out
}

// errAGUINoEnd is a stream that stopped before the run said it ended.
var errAGUINoEnd = errors.New("the event stream ended before RUN_FINISHED or RUN_ERROR: the agent stopped mid-run")
