package agenteval

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Role says who wrote a message.
type Role string

// The roles of a conversation. Other names formats use for them (Ragas's
// human and ai, Gemini's model, ...) are in roleNames.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// roleNames is the one table of role names: each role, then every other
// name a format we read gives it. Datasets, traces and eval files all read
// roles through ParseRole, so a name is accepted everywhere or nowhere.
//
//   - developer: OpenAI's name for system instructions to reasoning models;
//   - human, ai: Ragas's message types (also LangChain's);
//   - model: Gemini's assistant;
//   - agent, bot: what some chat exports and frameworks call the assistant;
//   - function: OpenAI's older role for a function's result;
//   - ipython: Llama 3's role for a tool's output.
var roleNames = []struct {
	role  Role
	names []string
}{
	{RoleSystem, []string{"system", "developer"}},
	{RoleUser, []string{"user", "human"}},
	{RoleAssistant, []string{"assistant", "ai", "model", "agent", "bot"}},
	{RoleTool, []string{"tool", "function", "ipython"}},
}

// ParseRole maps a role name, or a Ragas message type, onto a Role,
// case-insensitively and ignoring surrounding space. roleNames lists the
// names it knows.
func ParseRole(s string) (Role, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	for _, r := range roleNames {
		for _, n := range r.names {
			if n == s {
				return r.role, true
			}
		}
	}
	return "", false
}

// RoleNames returns every name ParseRole accepts for r, r's own first.
func RoleNames(r Role) []string {
	for _, rn := range roleNames {
		if rn.role == r {
			return append([]string(nil), rn.names...)
		}
	}
	return nil
}

// Valid reports whether r is one of the four known roles.
func (r Role) Valid() bool {
	switch r {
	case RoleSystem, RoleUser, RoleAssistant, RoleTool:
		return true
	}
	return false
}

// ToolCall is one call an assistant asked for.
//
// Args is always a decoded JSON object. When a model produced arguments that
// are not valid JSON, Args is nil and RawArgs keeps the text, so the call can
// still be shown and fails every check of its arguments instead of aborting
// the run.
type ToolCall struct {
	ID      string         `json:"id,omitempty"`
	Name    string         `json:"name"`
	Args    map[string]any `json:"args"`
	RawArgs string         `json:"raw_args,omitempty"`
	// DurationMS is how long the tool took, when the agent reports it
	// (AgentV's per-call latency checks read it); 0 means unknown.
	DurationMS float64 `json:"duration_ms,omitempty"`
	// Status is how the call ended, when the agent says: ok, error,
	// timeout, cancelled or unknown (AgentV's tool status).
	Status string `json:"status,omitempty"`
	// StartTime and EndTime are when the call ran, as the agent reports
	// them (ISO 8601); empty when unknown.
	StartTime string `json:"start_time,omitempty"`
	EndTime   string `json:"end_time,omitempty"`
	// KeyOrder is the written order of the keys of the objects nested in
	// Args (KeyOrderOf), where the call was decoded from JSON text; nil
	// when unknown. Ragas's tool_call_accuracy depends on it.
	KeyOrder map[string][]string `json:"-"`
}

// ArgsText renders the arguments as compact JSON with sorted keys, or the raw
// text when they could not be decoded.
func (c ToolCall) ArgsText() string {
	if c.Args == nil && c.RawArgs != "" {
		return c.RawArgs
	}
	if c.Args == nil {
		return "{}"
	}
	b, err := json.Marshal(c.Args)
	if err != nil {
		return fmt.Sprintf("%v", c.Args)
	}
	return string(b)
}

// String renders the call as name({json args}).
func (c ToolCall) String() string { return c.Name + "(" + c.ArgsText() + ")" }

// Message is one message of a conversation.
type Message struct {
	Role       Role           `json:"role"`
	Content    string         `json:"content"`
	ToolCalls  []ToolCall     `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
	Name       string         `json:"name,omitempty"`
	Metadata   map[string]any `json:"metadata,omitempty"`
	// Parts holds what a message carries besides text, such as images
	// from an eval file's content blocks (type: image). Content still holds
	// all of the message's text.
	Parts []Part `json:"parts,omitempty"`
	// StartTime, EndTime (ISO 8601) and DurationMS are when the message
	// was produced and how long it took, as an agent reports them
	// (AgentV's cli output); empty when unknown.
	StartTime  string  `json:"start_time,omitempty"`
	EndTime    string  `json:"end_time,omitempty"`
	DurationMS float64 `json:"duration_ms,omitempty"`
}

// Part is a piece of a message that is not plain text: an image, kept
// as a data URL so that it travels in JSON and reaches a model as is; or a
// file whose text the message's Content already holds, kept by path for
// agents that take files (AgentV's cli {FILES}) and for graders.
type Part struct {
	// Type is "image" or "file".
	Type string `json:"type"`
	// MediaType is the MIME type, such as image/png.
	MediaType string `json:"media_type,omitempty"`
	// URL is a data: URL with the bytes, or the URL or path as written.
	URL string `json:"url,omitempty"`
	// Path is the file the part was read from, as the eval file wrote it.
	Path string `json:"path,omitempty"`
}

// Pretty renders one message the way Ragas does for judges and humans, except
// that tool arguments are printed as JSON rather than as a Python dict.
func (m Message) Pretty() string {
	var b strings.Builder
	m.pretty(&b)
	return b.String()
}

func (m Message) pretty(b *strings.Builder) {
	switch m.Role {
	case RoleUser:
		b.WriteString("Human: ")
		b.WriteString(m.Content)
	case RoleSystem:
		b.WriteString("System: ")
		b.WriteString(m.Content)
	case RoleTool:
		b.WriteString("ToolOutput: ")
		b.WriteString(m.Content)
	case RoleAssistant:
		sep := ""
		if m.Content != "" {
			b.WriteString("AI: ")
			b.WriteString(m.Content)
			sep = "\n"
		}
		if len(m.ToolCalls) > 0 {
			b.WriteString(sep)
			b.WriteString("Tools:")
			for _, c := range m.ToolCalls {
				b.WriteString("\n  ")
				b.WriteString(c.Name)
				b.WriteString(": ")
				b.WriteString(c.ArgsText())
			}
		}
	default:
		fmt.Fprintf(b, "%s: %s", m.Role, m.Content)
	}
}

// Conversation is an ordered list of messages.
type Conversation []Message

// Pretty renders the conversation one message after another, joined by
// newlines: "Human: …", "AI: …" with a "Tools:" block, "ToolOutput: …".
func (c Conversation) Pretty() string {
	var b strings.Builder
	for i, m := range c {
		if i > 0 {
			b.WriteByte('\n')
		}
		m.pretty(&b)
	}
	return b.String()
}

// ToolCalls returns every tool call of every assistant message, in order.
func (c Conversation) ToolCalls() []ToolCall {
	var out []ToolCall
	for _, m := range c {
		if m.Role == RoleAssistant {
			out = append(out, m.ToolCalls...)
		}
	}
	return out
}

// LastAssistant returns the content of the last assistant message that has
// text, or "" when there is none. It is what text checks grade.
func (c Conversation) LastAssistant() string {
	for i := len(c) - 1; i >= 0; i-- {
		if c[i].Role == RoleAssistant && c[i].Content != "" {
			return c[i].Content
		}
	}
	return ""
}

// WithCallIDs returns the conversation with every tool call and tool result
// linked by ID, as provider APIs require: a call without an ID gets
// "call_N", and a tool message without one takes the ID of the call it
// answers by position in its block. The receiver is not modified.
func (c Conversation) WithCallIDs() Conversation {
	out := make(Conversation, len(c))
	copy(out, c)
	n := 0
	var pending []string
	for i, m := range out {
		switch m.Role {
		case RoleAssistant:
			pending = pending[:0]
			if len(m.ToolCalls) > 0 {
				calls := make([]ToolCall, len(m.ToolCalls))
				copy(calls, m.ToolCalls)
				for j := range calls {
					n++
					if calls[j].ID == "" {
						calls[j].ID = "call_" + strconv.Itoa(n)
					}
					pending = append(pending, calls[j].ID)
				}
				out[i].ToolCalls = calls
			}
		case RoleTool:
			if m.ToolCallID == "" && len(pending) > 0 {
				out[i].ToolCallID = pending[0]
			}
			// Whatever it answers, that call is no longer pending.
			for k, id := range pending {
				if id == out[i].ToolCallID {
					pending = append(pending[:k:k], pending[k+1:]...)
					break
				}
			}
		default:
			pending = pending[:0]
		}
	}
	return out
}

// Turns splits the conversation into turns: each turn starts at a user
// message and runs to the next one. Messages before the first user message
// (a system prompt, an opening assistant greeting) belong to the first turn.
func (c Conversation) Turns() []Conversation {
	var turns []Conversation
	start := 0
	for i, m := range c {
		if m.Role == RoleUser && i > 0 && hasUser(c[start:i]) {
			turns = append(turns, c[start:i])
			start = i
		}
	}
	if start < len(c) {
		turns = append(turns, c[start:])
	}
	return turns
}

func hasUser(c Conversation) bool {
	for _, m := range c {
		if m.Role == RoleUser {
			return true
		}
	}
	return false
}

// Numbered renders the conversation for a judge with each turn headed
// "[Turn N]", so that verdicts can cite turns.
func (c Conversation) Numbered() string {
	var b strings.Builder
	for i, t := range c.Turns() {
		if i > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString("[Turn ")
		b.WriteString(strconv.Itoa(i + 1))
		b.WriteString("]\n")
		b.WriteString(t.Pretty())
	}
	return b.String()
}
