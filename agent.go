package agenteval

import "context"

// Agent is the agent under test. The runner calls Respond once per turn,
// with the whole conversation so far, ending with the user's message; the
// agent answers with the messages it adds (assistant messages, and tool
// messages for tools it ran). Nothing is added to what the agent receives:
// no hidden system prompt, no instructions of ours.
//
// An Agent is called for several conversations at once, so it must be safe
// for concurrent use; state that belongs to one conversation can be keyed
// by AgentRequest.ConversationID.
type Agent interface {
	Respond(ctx context.Context, req *AgentRequest) (*AgentResponse, error)
}

// AgentRequest is one turn's call.
type AgentRequest struct {
	// ConversationID names the conversation: the same for every turn of
	// it, and never the same for two conversations, in one run or across
	// runs (it is built from the run's id, the target, the suite, the test
	// and the trial). An agent may key its memory on it (a checkpointer's
	// thread, a session) without a run continuing an earlier one.
	ConversationID string `json:"conversation_id"`
	// TestID and Trial say which test and trial (from 1) the conversation
	// runs, for agents in this process that need them (a replay finds its
	// recording by test); they are not sent to HTTP and command targets.
	// Zero when the caller does not say.
	TestID string `json:"-"`
	Trial  int    `json:"-"`
	// Turn counts from 1.
	Turn int `json:"turn"`
	// Messages is the full history, ending with this turn's user message
	// (or, within a turn, with the results of the tool calls the agent
	// left for the harness to answer).
	Messages Conversation `json:"messages"`
	// Tools declares the tools the eval file or project file mocks, for
	// an agent that offers them to its model and leaves their calls for
	// the harness to answer; empty when there are none.
	Tools []ToolSpec `json:"tools,omitempty"`
	// TraceParent, when set, is a W3C traceparent for the turn: an agent
	// that parents its spans on it lets the runner match them to the turn
	// (agenteval run --otlp-listen). HTTP targets also send it as the
	// traceparent header.
	TraceParent string `json:"traceparent,omitempty"`
}

// AgentResponse is what the agent added in one turn.
type AgentResponse struct {
	Messages Conversation `json:"messages"`
	Usage    Usage        `json:"usage"`
	// DurationMS is the time the agent reports the turn took (AgentV's
	// cli duration_ms); nil lets the runner's own measure stand.
	DurationMS *float64 `json:"duration_ms,omitempty"`
}

// AgentFunc adapts a function to the Agent interface.
type AgentFunc func(ctx context.Context, req *AgentRequest) (*AgentResponse, error)

// Respond calls f.
func (f AgentFunc) Respond(ctx context.Context, req *AgentRequest) (*AgentResponse, error) {
	return f(ctx, req)
}

// Closer is implemented by agents that hold per-conversation resources,
// such as a child process. The runner calls Close when a conversation ends.
type Closer interface {
	CloseConversation(conversationID string) error
}
