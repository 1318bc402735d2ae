package fakellm

import (
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"time"
)

// The request log: with Options.Log set, the server writes one JSON line
// per chat request, with what was asked and what was answered, so that a
// script can compare what two clients sent for the same work (the
// differential test against AgentV does). Lines are written whole, in the
// order the answers finish.

// TagHeader names the request header that tags a request in the log. A
// request to a path under /t/TAG/ (for example a base URL of
// http://127.0.0.1:8089/t/TAG/v1) is tagged TAG too, for clients whose
// headers cannot be set; otherwise Options.Tag applies.
const TagHeader = "X-Fakellm-Tag"

// LogEntry is one line of the request log.
type LogEntry struct {
	Time time.Time `json:"time"`
	// Tag says which client or run sent the request (see TagHeader).
	Tag  string `json:"tag,omitempty"`
	Path string `json:"path"`
	// Client is the request's User-Agent.
	Client string `json:"client,omitempty"`
	Model  string `json:"model"`
	Stream bool   `json:"stream,omitempty"`
	// PreviousResponseID is a Responses API request's: Messages are then
	// the whole conversation, the stored part included.
	PreviousResponseID string       `json:"previous_response_id,omitempty"`
	Messages           []LogMessage `json:"messages"`
	// Tools are the names of the offered tools, in order.
	Tools []string `json:"tools,omitempty"`
	// ResponseFormat is the requested format's type (json_schema,
	// json_object) and Schema the JSON schema's name.
	ResponseFormat string `json:"response_format,omitempty"`
	Schema         string `json:"schema,omitempty"`
	// Status is the HTTP status answered; 0 when the request got no answer
	// (a hang, or a client that went away).
	Status int      `json:"status"`
	Reply  LogReply `json:"reply"`

	written bool
}

// LogMessage is a request message, its content reduced to text.
type LogMessage struct {
	Role       string        `json:"role"`
	Content    string        `json:"content"`
	ToolCalls  []LogToolCall `json:"tool_calls,omitempty"`
	ToolCallID string        `json:"tool_call_id,omitempty"`
}

// LogToolCall is a tool call in a message or a reply.
type LogToolCall struct {
	ID        string `json:"id,omitempty"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// LogReply is what the server answered: the assistant message, or the
// error it sent instead.
type LogReply struct {
	Content   string        `json:"content,omitempty"`
	ToolCalls []LogToolCall `json:"tool_calls,omitempty"`
	Error     string        `json:"error,omitempty"`
}

// reqLog writes entries to a writer, one line at a time.
type reqLog struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *reqLog) write(e *LogEntry) {
	b, err := json.Marshal(e)
	if err != nil {
		return
	}
	b = append(b, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	l.w.Write(b)
}

// flushLog writes e to the log, once.
func (s *Server) flushLog(e *LogEntry) {
	if e == nil || e.written {
		return
	}
	e.written = true
	s.rlog.write(e)
}

// newLogEntry describes a request, without its answer yet.
func newLogEntry(r *http.Request, req *Request, defaultTag string) *LogEntry {
	e := &LogEntry{
		Time:   time.Now().UTC(),
		Tag:    defaultTag,
		Path:   r.URL.Path,
		Client: r.Header.Get("User-Agent"),
		Model:  req.Model,
		Stream: req.Stream,

		PreviousResponseID: req.PreviousResponseID,
	}
	if t := r.PathValue("tag"); t != "" {
		e.Tag = t
	}
	if t := r.Header.Get(TagHeader); t != "" {
		e.Tag = t
	}
	e.Messages = make([]LogMessage, len(req.Messages))
	for i, m := range req.Messages {
		lm := LogMessage{Role: m.Role, Content: m.Text(), ToolCallID: m.ToolCallID}
		for _, c := range m.ToolCalls {
			lm.ToolCalls = append(lm.ToolCalls, LogToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
		}
		e.Messages[i] = lm
	}
	for _, t := range req.Tools {
		e.Tools = append(e.Tools, t.Function.Name)
	}
	if rf := req.ResponseFormat; rf != nil {
		e.ResponseFormat = rf.Type
		e.Schema = req.SchemaName()
	}
	return e
}
