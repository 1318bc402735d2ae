package target

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/redact"
	"github.com/agenteval/agenteval/suite"
)

// A2AAgent is an agent reached over the A2A protocol (a2aproject's
// Agent2Agent), as @a2a-js/sdk, a2a-python, Google ADK and others serve
// it, in spec 1.0 or 0.3 over JSON-RPC.
//
// On the first turn it reads the agent card at
// {URL}/.well-known/agent-card.json (or the older agent.json) and picks
// the card's first JSON-RPC interface; the interface's protocolVersion
// decides the wire form (SendMessage or message/send), and
// capabilities.streaming whether turns stream (SendStreamingMessage,
// message/stream) or wait for the answer and then poll GetTask while the
// task is still working.
//
// The agent keeps the conversation: each turn sends only the new user
// message, with the contextId the agent gave on the first turn, and with
// the taskId of a task left waiting for input (input-required,
// auth-required), which the turn continues.
//
// The reply is one assistant message: the text and data (as JSON) of the
// turn's new artifacts, else of the task's final status message, else of
// the agent's messages; the artifacts' names are in its metadata, and so
// are (as a2a_progress) the texts of earlier status messages that the
// answer leaves out, such as a "working" status's "Generating
// response...". The tool calls and results the agent reports come first,
// as assistant tool calls and tool messages: data parts marked as Google
// ADK's A2A converter marks them (metadata adk_type function_call /
// function_response), in messages or artifacts, in the order they came;
// else the calls a completed task lists in its metadata as Mastra's
// server does (execution.toolCalls and toolResults), which is why a
// streamed turn that reported no tool part reads its finished task once.
// Agents that report tool use only in their OpenTelemetry spans get the
// turn's traceparent header, for run --otlp-listen.
type A2AAgent struct {
	URL string
	// Headers go with every request, the agent card's included: the
	// credentials the card's security schemes ask for.
	Headers map[string]string
	// Timeout bounds one turn: the card, the call, the stream or the
	// polling; 0 means 120s.
	Timeout time.Duration
	Client  *http.Client
	// PollInterval is the first wait between GetTask calls while a task
	// is submitted or working; it doubles up to 2s. 0 means 200ms.
	PollInterval time.Duration

	// newID makes message ids; tests set it to get known ones.
	newID func() string
	rpcID atomic.Int64

	secretsOnce sync.Once
	cardMu      sync.Mutex
	endpoint    *a2aEndpoint

	mu    sync.Mutex
	convs map[string]*a2aConv
}

// a2aConv is what a conversation's turns share.
type a2aConv struct {
	contextID string
	// taskID is the task waiting for the user's input, if any.
	taskID string
	// seenMsgs and seenArts are the agent messages and artifacts already
	// reported, so that a continued task's earlier output is not
	// reported again.
	seenMsgs map[string]bool
	seenArts map[string]string
	// calls numbers the tool calls the agent reported without an id.
	calls int
}

// NewA2A returns the A2A agent a target describes.
func NewA2A(p suite.ProtocolTarget, timeout time.Duration) *A2AAgent {
	return &A2AAgent{URL: p.URL, Headers: p.Headers, Timeout: timeout}
}

func (a *A2AAgent) timeout() time.Duration {
	if a.Timeout > 0 {
		return a.Timeout
	}
	return 120 * time.Second
}

func (a *A2AAgent) client() *http.Client {
	if a.Client != nil {
		return a.Client
	}
	return http.DefaultClient
}

func (a *A2AAgent) messageID() string {
	if a.newID != nil {
		return a.newID()
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// setHeaders adds the target's headers and the turn's traceparent.
func (a *A2AAgent) setHeaders(hr *http.Request, traceparent string) {
	for k, v := range a.Headers {
		hr.Header.Set(k, v)
	}
	if traceparent != "" {
		hr.Header.Set("traceparent", traceparent)
	}
}

// transportError words a failed request: the turn's deadline is reported
// by Respond, which knows the timeout.
func (a *A2AAgent) transportError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("unreachable: %v", err)
}

// CloseConversation forgets a conversation's context and task.
func (a *A2AAgent) CloseConversation(id string) error {
	a.mu.Lock()
	delete(a.convs, id)
	a.mu.Unlock()
	return nil
}

func (a *A2AAgent) conversation(id string) *a2aConv {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.convs == nil {
		a.convs = map[string]*a2aConv{}
	}
	c := a.convs[id]
	if c == nil {
		c = &a2aConv{seenMsgs: map[string]bool{}, seenArts: map[string]string{}}
		a.convs[id] = c
	}
	return c
}

// card returns the endpoint the agent card describes, reading the card
// once per target; a failure is tried again on the next turn.
func (a *A2AAgent) card(ctx context.Context, traceparent string) (*a2aEndpoint, error) {
	a.cardMu.Lock()
	defer a.cardMu.Unlock()
	if a.endpoint != nil {
		return a.endpoint, nil
	}
	ep, err := a.fetchCard(ctx, traceparent)
	if err != nil {
		return nil, err
	}
	a.endpoint = ep
	return ep, nil
}

// Respond runs one turn: it sends the last user message and waits for the
// agent's task to finish or to ask for input.
func (a *A2AAgent) Respond(ctx context.Context, req *agenteval.AgentRequest) (*agenteval.AgentResponse, error) {
	a.secretsOnce.Do(func() { noteHTTPSecrets(a.URL, a.Headers) })
	timeout := a.timeout()
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var t *a2aTurn
	resp, err := a.respond(tctx, req, &t)
	if err == nil {
		return resp, nil
	}
	if ctx.Err() != nil {
		// The run was stopped: say so in a way the caller can test.
		return nil, fmt.Errorf("a2a target %s: %w", redact.String(a.URL), ctx.Err())
	}
	if tctx.Err() != nil {
		detail := ""
		if t != nil && t.taskID != "" {
			detail = fmt.Sprintf("; its task %s was still %s", t.taskID, orUnknown(t.state))
		}
		err = fmt.Errorf("no final answer within %s (the target's timeout)%s", timeout, detail)
	}
	// What the agent sent back may echo a credential.
	return nil, errors.New(redact.String(fmt.Sprintf("a2a target %s: %v", a.URL, err)))
}

func orUnknown(s string) string {
	if s == "" {
		return stateUnknown
	}
	return s
}

func (a *A2AAgent) respond(ctx context.Context, req *agenteval.AgentRequest, tp **a2aTurn) (*agenteval.AgentResponse, error) {
	user, ok := lastUserMessage(req.Messages)
	if !ok {
		return nil, fmt.Errorf("turn %d has no user message to send", req.Turn)
	}
	ep, err := a.card(ctx, req.TraceParent)
	if err != nil {
		return nil, err
	}
	conv := a.conversation(req.ConversationID)
	out := outMessage{ID: a.messageID(), ContextID: conv.contextID, TaskID: conv.taskID, Text: user.Content, Files: user.Parts}
	t := newTurn(conv, out.ID)
	t.continued, t.streaming = out.TaskID, ep.streaming
	*tp = t
	methods := a2aMethodNames[ep.version]
	add := func(ev *a2aEvent) (bool, error) { t.add(ev); return t.done(), nil }
	method := methods.send
	if ep.streaming {
		method = methods.stream
	}
	if err := a.call(ctx, ep, method, ep.sendParams(out), ep.streaming, req.TraceParent, add); err != nil {
		var rpcErr *rpcError
		if conv.taskID != "" && errors.As(err, &rpcErr) && rpcErr.Code == -32001 {
			// The agent forgot the task it asked input for: the next
			// turn starts a new one.
			conv.taskID = ""
		}
		return nil, err
	}
	if !t.started() {
		return nil, fmt.Errorf("%s answered with neither a task nor a message", method)
	}
	// A task still running (a server that answered before it finished,
	// or a stream that ended early) is polled until it is final.
	wait := a.PollInterval
	if wait <= 0 {
		wait = 200 * time.Millisecond
	}
	for !t.done() {
		if t.taskID == "" {
			return nil, fmt.Errorf("the task is %s but the agent gave no task id to follow it", orUnknown(t.state))
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, ctx.Err()
		case <-timer.C:
		}
		if err := a.call(ctx, ep, methods.get, ep.getParams(t.taskID), false, req.TraceParent, add); err != nil {
			return nil, err
		}
		wait = min(2*wait, 2*time.Second)
	}
	// A stream's last event says the task completed, but not what its
	// metadata holds, and some agents report their tool calls there
	// alone (Mastra's execution.toolCalls): when no part carried any,
	// read the finished task once. Its metadata is all that is taken;
	// the answer stays what the stream said. A failure leaves the turn
	// as it is: the agent has answered.
	if t.streaming && !t.whole && t.state == stateCompleted && t.taskID != "" && t.direct == nil && !t.hasToolParts() {
		_ = a.call(ctx, ep, methods.get, ep.getParams(t.taskID), false, req.TraceParent, func(ev *a2aEvent) (bool, error) {
			if ev.Task != nil && ev.Task.ID == t.taskID {
				t.noteTaskMeta(ev.Task.Metadata)
			}
			return true, nil
		})
	}
	if t.contextID != "" {
		conv.contextID = t.contextID
	}
	conv.taskID = ""
	if interrupted(t.state) {
		conv.taskID = t.taskID
	}
	if t.state == stateFailed || t.state == stateRejected {
		text := strings.TrimSpace(t.statusText())
		if text == "" {
			text = "(the agent gave no reason)"
		}
		return nil, fmt.Errorf("the agent's task %s %s: %s", t.taskID, t.state, text)
	}
	return t.reply(), nil
}

// lastUserMessage is the message a turn sends: the history's last user
// message, since the agent keeps the rest.
func lastUserMessage(msgs agenteval.Conversation) (agenteval.Message, bool) {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == agenteval.RoleUser {
			return msgs[i], true
		}
	}
	return agenteval.Message{}, false
}
