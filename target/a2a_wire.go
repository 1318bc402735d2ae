package target

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agenteval/agenteval"
)

// The A2A wire forms. Spec 1.0 writes its objects as ProtoJSON: PascalCase
// JSON-RPC methods (SendMessage), enum names for roles and states
// (ROLE_USER, TASK_STATE_COMPLETED), a part is {"text"} | {"data"} |
// {"url"} | {"raw"}, and results are wrapped by kind ({"task": {...}},
// {"statusUpdate": {...}}). Spec 0.3 uses slash methods (message/send),
// lower-case roles and states (user, input-required), and a "kind" field on
// every part, message, task and event. Requests are written exactly in the
// chosen form; answers are read in either, whatever the card said, since
// servers that speak both exist.

const (
	a2aV10 = "1.0"
	a2aV03 = "0.3"
)

// a2aMethods names the JSON-RPC methods of one protocol version.
type a2aMethods struct{ send, stream, get string }

var a2aMethodNames = map[string]a2aMethods{
	a2aV10: {send: "SendMessage", stream: "SendStreamingMessage", get: "GetTask"},
	a2aV03: {send: "message/send", stream: "message/stream", get: "tasks/get"},
}

// The task states, as 0.3 spells them; 1.0's enum names map onto these.
const (
	stateSubmitted     = "submitted"
	stateWorking       = "working"
	stateCompleted     = "completed"
	stateFailed        = "failed"
	stateCanceled      = "canceled"
	stateRejected      = "rejected"
	stateInputRequired = "input-required"
	stateAuthRequired  = "auth-required"
	stateUnknown       = "unknown"
)

// normState maps either spelling of a task state onto the 0.3 one.
func normState(s string) string {
	s = strings.TrimSpace(s)
	if rest, ok := strings.CutPrefix(s, "TASK_STATE_"); ok {
		s = strings.ReplaceAll(strings.ToLower(rest), "_", "-")
	}
	switch s {
	case "", "unspecified":
		return stateUnknown
	case "cancelled":
		return stateCanceled
	}
	return s
}

// pending reports whether a task in state s is still running: the client
// waits (streams or polls) for it to reach a final state.
func pending(s string) bool { return s == stateSubmitted || s == stateWorking }

// interrupted reports whether a task in state s waits for the client: the
// next turn continues it.
func interrupted(s string) bool { return s == stateInputRequired || s == stateAuthRequired }

// a2aPart is one part of a message or artifact, in either form.
type a2aPart struct {
	Kind      string // text, data or file
	Text      string
	Data      json.RawMessage
	URL       string
	Raw       string // base64
	MediaType string
	Filename  string
	Metadata  map[string]any
}

// a2aMessage is a message, in either form.
type a2aMessage struct {
	ID        string
	Role      string // user or agent
	ContextID string
	TaskID    string
	Parts     []a2aPart
	Metadata  map[string]any
}

// a2aArtifact is an artifact, in either form.
type a2aArtifact struct {
	ID          string
	Name        string
	Description string
	Parts       []a2aPart
	Metadata    map[string]any
}

// a2aTask is a task, in either form.
type a2aTask struct {
	ID        string
	ContextID string
	State     string
	Status    *a2aMessage
	Artifacts []a2aArtifact
	History   []a2aMessage
	Metadata  map[string]any
}

// a2aEvent is one answer: a SendMessage result or GetTask task, or one
// event of a stream. Exactly one field is set.
type a2aEvent struct {
	Task     *a2aTask
	Message  *a2aMessage
	Status   *a2aStatusUpdate
	Artifact *a2aArtifactUpdate
}

type a2aStatusUpdate struct {
	TaskID    string
	ContextID string
	State     string
	Message   *a2aMessage
	Final     bool // 0.3 only; 1.0 says it with the state
	Metadata  map[string]any
}

type a2aArtifactUpdate struct {
	TaskID    string
	ContextID string
	Artifact  a2aArtifact
	Append    bool
	LastChunk bool
	Metadata  map[string]any
}

// Wire objects as both versions write them; absent fields stay zero.
type (
	wirePart struct {
		Kind      string          `json:"kind"`
		Text      *string         `json:"text"`
		Data      json.RawMessage `json:"data"`
		URL       string          `json:"url"`
		Raw       string          `json:"raw"`
		File      *wireFile       `json:"file"`
		MediaType string          `json:"mediaType"`
		Filename  string          `json:"filename"`
		Metadata  map[string]any  `json:"metadata"`
	}
	wireFile struct {
		URI      string `json:"uri"`
		Bytes    string `json:"bytes"`
		MimeType string `json:"mimeType"`
		Name     string `json:"name"`
	}
	wireMessage struct {
		Kind      string         `json:"kind"`
		MessageID string         `json:"messageId"`
		Role      string         `json:"role"`
		ContextID string         `json:"contextId"`
		TaskID    string         `json:"taskId"`
		Parts     []wirePart     `json:"parts"`
		Metadata  map[string]any `json:"metadata"`
	}
	wireArtifact struct {
		ArtifactID  string         `json:"artifactId"`
		Name        string         `json:"name"`
		Description string         `json:"description"`
		Parts       []wirePart     `json:"parts"`
		Metadata    map[string]any `json:"metadata"`
	}
	wireStatus struct {
		State   string       `json:"state"`
		Message *wireMessage `json:"message"`
	}
	wireTask struct {
		Kind      string         `json:"kind"`
		ID        string         `json:"id"`
		ContextID string         `json:"contextId"`
		Status    wireStatus     `json:"status"`
		Artifacts []wireArtifact `json:"artifacts"`
		History   []wireMessage  `json:"history"`
		Metadata  map[string]any `json:"metadata"`
	}
	wireStatusUpdate struct {
		Kind      string         `json:"kind"`
		TaskID    string         `json:"taskId"`
		ContextID string         `json:"contextId"`
		Status    wireStatus     `json:"status"`
		Final     bool           `json:"final"`
		Metadata  map[string]any `json:"metadata"`
	}
	wireArtifactUpdate struct {
		Kind      string         `json:"kind"`
		TaskID    string         `json:"taskId"`
		ContextID string         `json:"contextId"`
		Artifact  wireArtifact   `json:"artifact"`
		Append    bool           `json:"append"`
		LastChunk bool           `json:"lastChunk"`
		Metadata  map[string]any `json:"metadata"`
	}
)

func (p wirePart) norm() a2aPart {
	out := a2aPart{MediaType: p.MediaType, Filename: p.Filename, Metadata: p.Metadata}
	switch {
	case p.Kind == "text" || (p.Kind == "" && p.Text != nil):
		out.Kind = "text"
		if p.Text != nil {
			out.Text = *p.Text
		}
	case p.Kind == "data" || (p.Kind == "" && len(p.Data) > 0):
		out.Kind, out.Data = "data", p.Data
	case p.Kind == "file" && p.File != nil:
		out.Kind, out.URL, out.Raw = "file", p.File.URI, p.File.Bytes
		out.MediaType, out.Filename = p.File.MimeType, p.File.Name
	case p.URL != "" || p.Raw != "":
		out.Kind, out.URL, out.Raw = "file", p.URL, p.Raw
	default:
		out.Kind = p.Kind
	}
	return out
}

func normParts(ps []wirePart) []a2aPart {
	out := make([]a2aPart, 0, len(ps))
	for _, p := range ps {
		out = append(out, p.norm())
	}
	return out
}

func (m *wireMessage) norm() *a2aMessage {
	if m == nil {
		return nil
	}
	role := strings.ToLower(strings.TrimPrefix(m.Role, "ROLE_"))
	return &a2aMessage{ID: m.MessageID, Role: role, ContextID: m.ContextID, TaskID: m.TaskID, Parts: normParts(m.Parts), Metadata: m.Metadata}
}

func (a wireArtifact) norm() a2aArtifact {
	return a2aArtifact{ID: a.ArtifactID, Name: a.Name, Description: a.Description, Parts: normParts(a.Parts), Metadata: a.Metadata}
}

func (t *wireTask) norm() *a2aTask {
	out := &a2aTask{ID: t.ID, ContextID: t.ContextID, State: normState(t.Status.State), Status: t.Status.Message.norm(), Metadata: t.Metadata}
	for _, a := range t.Artifacts {
		out.Artifacts = append(out.Artifacts, a.norm())
	}
	for i := range t.History {
		out.History = append(out.History, *t.History[i].norm())
	}
	return out
}

// decodeEvent reads a SendMessage result, a GetTask result or a stream
// event, in either form: 1.0 wraps it ({"task": ...}, {"message": ...},
// {"statusUpdate": ...}, {"artifactUpdate": ...}; GetTask answers the
// bare task), 0.3 names it with "kind".
func decodeEvent(raw json.RawMessage) (*a2aEvent, error) {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(raw, &probe); err != nil || probe == nil {
		return nil, fmt.Errorf("the result is not a JSON object: %q", snippet(string(raw)))
	}
	body, kind := raw, ""
	for _, k := range []string{"task", "message", "statusUpdate", "artifactUpdate"} {
		if v, ok := probe[k]; ok && len(probe) == 1 {
			body, kind = v, k
			break
		}
	}
	if kind == "" {
		var k string
		_ = json.Unmarshal(probe["kind"], &k)
		switch {
		case k == "task":
			kind = "task"
		case k == "message":
			kind = "message"
		case k == "status-update":
			kind = "statusUpdate"
		case k == "artifact-update":
			kind = "artifactUpdate"
		case probe["messageId"] != nil:
			kind = "message"
		case probe["artifact"] != nil:
			kind = "artifactUpdate"
		case probe["taskId"] != nil && probe["status"] != nil:
			kind = "statusUpdate"
		case probe["id"] != nil && probe["status"] != nil:
			kind = "task"
		default:
			return nil, fmt.Errorf("the result is neither a task, a message nor a task event: %q", snippet(string(raw)))
		}
	}
	bad := func(err error) error {
		return fmt.Errorf("its %s is malformed (%v): %q", kind, err, snippet(string(body)))
	}
	ev := &a2aEvent{}
	switch kind {
	case "task":
		var t wireTask
		if err := json.Unmarshal(body, &t); err != nil {
			return nil, bad(err)
		}
		ev.Task = t.norm()
	case "message":
		var m wireMessage
		if err := json.Unmarshal(body, &m); err != nil {
			return nil, bad(err)
		}
		ev.Message = m.norm()
	case "statusUpdate":
		var s wireStatusUpdate
		if err := json.Unmarshal(body, &s); err != nil {
			return nil, bad(err)
		}
		ev.Status = &a2aStatusUpdate{TaskID: s.TaskID, ContextID: s.ContextID, State: normState(s.Status.State), Message: s.Status.Message.norm(), Final: s.Final, Metadata: s.Metadata}
	case "artifactUpdate":
		var a wireArtifactUpdate
		if err := json.Unmarshal(body, &a); err != nil {
			return nil, bad(err)
		}
		ev.Artifact = &a2aArtifactUpdate{TaskID: a.TaskID, ContextID: a.ContextID, Artifact: a.Artifact.norm(), Append: a.Append, LastChunk: a.LastChunk, Metadata: a.Metadata}
	}
	return ev, nil
}

// The request bodies. Field order follows each version's schema, so that
// what is sent reads as the spec's examples do.
type (
	sendParams10 struct {
		Tenant  string    `json:"tenant,omitempty"`
		Message message10 `json:"message"`
	}
	message10 struct {
		MessageID string   `json:"messageId"`
		ContextID string   `json:"contextId,omitempty"`
		TaskID    string   `json:"taskId,omitempty"`
		Role      string   `json:"role"`
		Parts     []part10 `json:"parts"`
	}
	part10 struct {
		Text      *string `json:"text,omitempty"`
		Raw       string  `json:"raw,omitempty"`
		URL       string  `json:"url,omitempty"`
		MediaType string  `json:"mediaType,omitempty"`
	}
	getParams10 struct {
		Tenant string `json:"tenant,omitempty"`
		ID     string `json:"id"`
	}

	sendParams03 struct {
		Message message03 `json:"message"`
	}
	message03 struct {
		Kind      string   `json:"kind"`
		MessageID string   `json:"messageId"`
		ContextID string   `json:"contextId,omitempty"`
		TaskID    string   `json:"taskId,omitempty"`
		Role      string   `json:"role"`
		Parts     []part03 `json:"parts"`
	}
	part03 struct {
		Kind string  `json:"kind"`
		Text *string `json:"text,omitempty"`
		File *file03 `json:"file,omitempty"`
	}
	file03 struct {
		URI      string `json:"uri,omitempty"`
		Bytes    string `json:"bytes,omitempty"`
		MimeType string `json:"mimeType,omitempty"`
	}
	getParams03 struct {
		ID string `json:"id"`
	}
)

// outMessage is the user message of a turn, before it takes a wire form.
type outMessage struct {
	ID, ContextID, TaskID string
	Text                  string
	Files                 []agenteval.Part
}

// sendParams is the params of SendMessage / message/send (and of their
// streaming forms) in the endpoint's version.
func (e *a2aEndpoint) sendParams(m outMessage) any {
	if e.version == a2aV03 {
		msg := message03{Kind: "message", MessageID: m.ID, ContextID: m.ContextID, TaskID: m.TaskID, Role: "user"}
		if m.Text != "" || len(m.Files) == 0 {
			text := m.Text
			msg.Parts = append(msg.Parts, part03{Kind: "text", Text: &text})
		}
		for _, f := range m.Files {
			data, media, ok := dataURL(f.URL)
			switch {
			case ok:
				msg.Parts = append(msg.Parts, part03{Kind: "file", File: &file03{Bytes: data, MimeType: media}})
			default:
				msg.Parts = append(msg.Parts, part03{Kind: "file", File: &file03{URI: f.URL, MimeType: f.MediaType}})
			}
		}
		return sendParams03{Message: msg}
	}
	msg := message10{MessageID: m.ID, ContextID: m.ContextID, TaskID: m.TaskID, Role: "ROLE_USER"}
	if m.Text != "" || len(m.Files) == 0 {
		text := m.Text
		msg.Parts = append(msg.Parts, part10{Text: &text})
	}
	for _, f := range m.Files {
		if data, media, ok := dataURL(f.URL); ok {
			msg.Parts = append(msg.Parts, part10{Raw: data, MediaType: media})
		} else {
			msg.Parts = append(msg.Parts, part10{URL: f.URL, MediaType: f.MediaType})
		}
	}
	return sendParams10{Tenant: e.tenant, Message: msg}
}

// getParams is the params of GetTask / tasks/get.
func (e *a2aEndpoint) getParams(taskID string) any {
	if e.version == a2aV03 {
		return getParams03{ID: taskID}
	}
	return getParams10{Tenant: e.tenant, ID: taskID}
}

// dataURL splits a base64 data: URL into its bytes (still base64) and
// media type.
func dataURL(u string) (data, media string, ok bool) {
	rest, ok := strings.CutPrefix(u, "data:")
	if !ok {
		return "", "", false
	}
	head, data, ok := strings.Cut(rest, ",")
	if !ok || !strings.HasSuffix(head, ";base64") {
		return "", "", false
	}
	if _, err := base64.StdEncoding.DecodeString(data); err != nil {
		return "", "", false
	}
	return data, strings.TrimSuffix(head, ";base64"), true
}
