package target

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/agenteval/agenteval"
)

// aguiEvent holds the fields of every AG-UI event this client reads;
// each event type sets some of them.
type aguiEvent struct {
	Type            string          `json:"type"`
	ThreadID        string          `json:"threadId"`
	RunID           string          `json:"runId"`
	MessageID       *string         `json:"messageId"`
	Role            string          `json:"role"`
	Name            string          `json:"name"`
	Delta           json.RawMessage `json:"delta"`
	ToolCallID      *string         `json:"toolCallId"`
	ToolCallName    *string         `json:"toolCallName"`
	ParentMessageID *string         `json:"parentMessageId"`
	Content         json.RawMessage `json:"content"`
	Messages        []aguiWireMsg   `json:"messages"`
	Message         string          `json:"message"`
	Code            any             `json:"code"`
	Usage           []struct {
		InputTokens  int64 `json:"inputTokens"`
		OutputTokens int64 `json:"outputTokens"`
	} `json:"usage"`
	Outcome *struct {
		Type       string `json:"type"`
		Interrupts []struct {
			ID         string `json:"id"`
			Reason     string `json:"reason"`
			Message    string `json:"message"`
			ToolCallID string `json:"toolCallId"`
		} `json:"interrupts"`
	} `json:"outcome"`
}

// aguiWireMsg is a message of a MESSAGES_SNAPSHOT.
type aguiWireMsg struct {
	ID         string          `json:"id"`
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []aguiToolCall  `json:"toolCalls"`
	ToolCallID string          `json:"toolCallId"`
}

// aguiKnownEvents are the protocol's event types. The ones the reply is
// not made of (state, steps, activity, custom and raw events) are read
// and left aside; a type not in this list is counted in the reply's
// metadata, as a sign of a newer protocol or a server's own extension.
var aguiKnownEvents = map[string]bool{
	"TEXT_MESSAGE_START": true, "TEXT_MESSAGE_CONTENT": true, "TEXT_MESSAGE_END": true, "TEXT_MESSAGE_CHUNK": true,
	"TOOL_CALL_START": true, "TOOL_CALL_ARGS": true, "TOOL_CALL_END": true, "TOOL_CALL_CHUNK": true, "TOOL_CALL_RESULT": true,
	"THINKING_START": true, "THINKING_END": true, "THINKING_TEXT_MESSAGE_START": true, "THINKING_TEXT_MESSAGE_CONTENT": true, "THINKING_TEXT_MESSAGE_END": true,
	"STATE_SNAPSHOT": true, "STATE_DELTA": true, "MESSAGES_SNAPSHOT": true, "ACTIVITY_SNAPSHOT": true, "ACTIVITY_DELTA": true,
	"RAW": true, "CUSTOM": true, "RUN_STARTED": true, "RUN_FINISHED": true, "RUN_ERROR": true, "STEP_STARTED": true, "STEP_FINISHED": true,
	"REASONING_START": true, "REASONING_MESSAGE_START": true, "REASONING_MESSAGE_CONTENT": true, "REASONING_MESSAGE_END": true,
	"REASONING_MESSAGE_CHUNK": true, "REASONING_END": true, "REASONING_ENCRYPTED_VALUE": true,
}

// aguiMsg is a message the run is building.
type aguiMsg struct {
	id, role   string
	text       strings.Builder
	calls      []*aguiCall
	toolCallID string // a tool message's call
	reasoning  string // what the agent thought before it
}

type aguiCall struct {
	id, name string
	args     strings.Builder
	owner    *aguiMsg
	answered bool
}

// aguiRun assembles one run's events into messages, as the protocol's
// client applies them: text messages by messageId, tool calls by
// toolCallId under their parent message, results as tool messages right
// after the calls they answer, and a messages snapshot replacing what was
// built so far.
type aguiRun struct {
	runID string
	// sent is the ids of the messages the run was given: a snapshot
	// repeats them, and they are not part of the reply.
	sent  map[string]bool
	msgs  []*aguiMsg
	byID  map[string]*aguiMsg
	calls map[string]*aguiCall
	// chunk is the message or call that *_CHUNK events continue:
	// "text:ID", "tool:ID", "reasoning:ID" or "".
	chunk     string
	reasoning strings.Builder
	unknown   map[string]int
	usage     agenteval.Usage
	events    int
	finished  bool
}

func newAGUIRun(runID string, sent map[string]bool) *aguiRun {
	return &aguiRun{runID: runID, sent: sent, byID: map[string]*aguiMsg{}, calls: map[string]*aguiCall{}, unknown: map[string]int{}}
}

// read consumes the event stream until the run ends. Fields other than
// data (event, id, retry) and comments are ignored: AG-UI puts each event
// in one data field.
func (r *aguiRun) read(body io.Reader) error {
	br := bufio.NewReaderSize(io.LimitReader(body, int64(aguiMaxRunBytes)+1), 64<<10)
	var data bytes.Buffer
	total := 0
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A long line: keep reading it in pieces.
			rest, err2 := r.readLong(br, line, &data)
			total += rest
			if err2 != nil {
				return err2
			}
			continue
		}
		total += len(line)
		if total > aguiMaxRunBytes {
			return fmt.Errorf("the event stream is over %d MiB; stopped reading", aguiMaxRunBytes>>20)
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("reading the event stream: %v", err)
		}
		if err == io.EOF && len(line) == 0 {
			// Data with no blank line after it: dispatched if whole.
			if data.Len() > 0 && json.Valid(bytes.TrimSuffix(data.Bytes(), []byte("\n"))) {
				if done, derr := r.dispatch(&data); done || derr != nil {
					return derr
				}
			}
			return errAGUINoEnd
		}
		l := bytes.TrimRight(line, "\r\n")
		switch {
		case len(l) == 0:
			if data.Len() > 0 {
				if done, derr := r.dispatch(&data); done || derr != nil {
					return derr
				}
			}
		case bytes.HasPrefix(l, []byte("data:")):
			v := bytes.TrimPrefix(l[5:], []byte(" "))
			if data.Len()+len(v) > aguiMaxEventBytes {
				return fmt.Errorf("an event is over %d MiB; stopped reading", aguiMaxEventBytes>>20)
			}
			data.Write(v)
			data.WriteByte('\n')
		}
		if err == io.EOF {
			if data.Len() > 0 && json.Valid(bytes.TrimSuffix(data.Bytes(), []byte("\n"))) {
				if done, derr := r.dispatch(&data); done || derr != nil {
					return derr
				}
			}
			return errAGUINoEnd
		}
	}
}

// readLong reads the rest of a line longer than the reader's buffer,
// appending a data field's value within the event bound.
func (r *aguiRun) readLong(br *bufio.Reader, first []byte, data *bytes.Buffer) (int, error) {
	isData := bytes.HasPrefix(first, []byte("data:"))
	n := len(first)
	if isData {
		data.Write(bytes.TrimPrefix(first[5:], []byte(" ")))
	}
	for {
		chunk, err := br.ReadSlice('\n')
		n += len(chunk)
		if n > aguiMaxRunBytes {
			return n, fmt.Errorf("the event stream is over %d MiB; stopped reading", aguiMaxRunBytes>>20)
		}
		if isData {
			if data.Len()+len(chunk) > aguiMaxEventBytes {
				return n, fmt.Errorf("an event is over %d MiB; stopped reading", aguiMaxEventBytes>>20)
			}
			data.Write(bytes.TrimRight(chunk, "\r\n"))
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == nil:
			if isData {
				data.WriteByte('\n')
			}
			return n, nil
		case err == io.EOF:
			return n, errAGUINoEnd
		default:
			return n, fmt.Errorf("reading the event stream: %v", err)
		}
	}
}

// dispatch applies one event; done is true when the run ended.
func (r *aguiRun) dispatch(data *bytes.Buffer) (done bool, err error) {
	raw := bytes.TrimSuffix(data.Bytes(), []byte("\n"))
	defer data.Reset()
	var ev aguiEvent
	if err := json.Unmarshal(raw, &ev); err != nil {
		return false, fmt.Errorf("event %d is not JSON: %q", r.events+1, snippet(string(raw)))
	}
	r.events++
	if ev.Type == "" {
		return false, fmt.Errorf("event %d has no type: %q", r.events, snippet(string(raw)))
	}
	return r.apply(&ev)
}

func aguiStr(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// delta is an event's delta as text (STATE_DELTA's is a patch, not read).
func (ev *aguiEvent) delta() string {
	var s string
	if len(ev.Delta) > 0 && json.Unmarshal(ev.Delta, &s) == nil {
		return s
	}
	return ""
}

func (r *aguiRun) apply(ev *aguiEvent) (bool, error) {
	// A chunk continues only until another kind of event comes between.
	switch ev.Type {
	case "TEXT_MESSAGE_CHUNK", "TOOL_CALL_CHUNK", "REASONING_MESSAGE_CHUNK", "RAW", "ACTIVITY_SNAPSHOT", "ACTIVITY_DELTA", "REASONING_ENCRYPTED_VALUE":
	default:
		r.chunk = ""
	}
	switch ev.Type {
	case "RUN_FINISHED":
		r.finished = true
		r.addUsage(ev)
		if ev.Outcome != nil && ev.Outcome.Type == "interrupt" && len(r.pending()) == 0 {
			var why []string
			for _, in := range ev.Outcome.Interrupts {
				w := in.Reason
				if in.Message != "" {
					w += ": " + in.Message
				}
				why = append(why, w)
			}
			return true, fmt.Errorf("the run paused for a person's answer (an interrupt: %s); agenteval answers tool calls, not interrupts: run the agent without approval steps", strings.Join(why, "; "))
		}
		return true, nil
	case "RUN_ERROR":
		r.addUsage(ev)
		msg := ev.Message
		if msg == "" {
			msg = "(no message)"
		}
		if ev.Code != nil && fmt.Sprint(ev.Code) != "" {
			return true, fmt.Errorf("the agent reported RUN_ERROR: %s (code %v)", msg, ev.Code)
		}
		return true, fmt.Errorf("the agent reported RUN_ERROR: %s", msg)
	case "TEXT_MESSAGE_START":
		r.text(aguiStr(ev.MessageID), ev.Role)
	case "TEXT_MESSAGE_CONTENT":
		r.text(aguiStr(ev.MessageID), "").text.WriteString(ev.delta())
	case "TEXT_MESSAGE_END":
	case "TEXT_MESSAGE_CHUNK":
		id := aguiStr(ev.MessageID)
		if !strings.HasPrefix(r.chunk, "text:") || (id != "" && "text:"+id != r.chunk) {
			if id == "" {
				return false, fmt.Errorf("event %d: the first TEXT_MESSAGE_CHUNK of a message has no messageId", r.events)
			}
			r.text(id, ev.Role)
			r.chunk = "text:" + id
		}
		r.text(strings.TrimPrefix(r.chunk, "text:"), "").text.WriteString(ev.delta())
	case "TOOL_CALL_START":
		r.startCall(aguiStr(ev.ToolCallID), aguiStr(ev.ToolCallName), aguiStr(ev.ParentMessageID))
	case "TOOL_CALL_ARGS":
		r.call(aguiStr(ev.ToolCallID)).args.WriteString(ev.delta())
	case "TOOL_CALL_END":
	case "TOOL_CALL_CHUNK":
		id := aguiStr(ev.ToolCallID)
		if !strings.HasPrefix(r.chunk, "tool:") || (id != "" && "tool:"+id != r.chunk) {
			if id == "" || ev.ToolCallName == nil {
				return false, fmt.Errorf("event %d: the first TOOL_CALL_CHUNK of a call needs a toolCallId and a toolCallName", r.events)
			}
			r.startCall(id, *ev.ToolCallName, aguiStr(ev.ParentMessageID))
			r.chunk = "tool:" + id
		}
		r.call(strings.TrimPrefix(r.chunk, "tool:")).args.WriteString(ev.delta())
	case "TOOL_CALL_RESULT":
		r.result(aguiStr(ev.MessageID), aguiStr(ev.ToolCallID), aguiText(ev.Content))
	case "MESSAGES_SNAPSHOT":
		r.snapshot(ev.Messages)
	case "REASONING_MESSAGE_CHUNK":
		r.chunk = "reasoning"
		r.reasoning.WriteString(ev.delta())
	case "REASONING_MESSAGE_CONTENT", "THINKING_TEXT_MESSAGE_CONTENT":
		r.reasoning.WriteString(ev.delta())
	default:
		if !aguiKnownEvents[ev.Type] {
			r.unknown[ev.Type]++
		}
	}
	return false, nil
}

func (r *aguiRun) addUsage(ev *aguiEvent) {
	for _, u := range ev.Usage {
		r.usage.InputTokens += u.InputTokens
		r.usage.OutputTokens += u.OutputTokens
	}
	if len(ev.Usage) > 0 {
		// The turn's tokens are known (Usage.TokensKnown), as an http
		// target's reported usage is.
		r.usage.Calls = 1
	}
}

// text returns the message with this id, started when new. A role other
// than the assistant's (the protocol allows a server to echo a user's
// message) makes a message the reply leaves out.
func (r *aguiRun) text(id, role string) *aguiMsg {
	if m, ok := r.byID[id]; ok {
		return m
	}
	if role == "" {
		role = "assistant"
	}
	return r.add(&aguiMsg{id: id, role: role})
}

func (r *aguiRun) add(m *aguiMsg) *aguiMsg {
	if r.reasoning.Len() > 0 && m.role == "assistant" {
		m.reasoning = r.reasoning.String()
		r.reasoning.Reset()
	}
	r.msgs = append(r.msgs, m)
	if m.id != "" {
		r.byID[m.id] = m
	}
	return m
}

// startCall adds a call to its parent message: the assistant message
// parentMessageId names, else a new one keyed by it, else a new one keyed
// by the call.
func (r *aguiRun) startCall(id, name, parent string) {
	if c, ok := r.calls[id]; ok {
		c.name = name
		return
	}
	var owner *aguiMsg
	if m, ok := r.byID[parent]; ok && parent != "" && m.role == "assistant" {
		owner = m
	} else {
		key := parent
		if key == "" || ok {
			key = id
		}
		owner = r.add(&aguiMsg{id: key, role: "assistant"})
	}
	c := &aguiCall{id: id, name: name, owner: owner}
	owner.calls = append(owner.calls, c)
	r.calls[id] = c
}

// call returns the call with this id; arguments for a call never started
// start one of no name, which the reply shows as it is.
func (r *aguiRun) call(id string) *aguiCall {
	if c, ok := r.calls[id]; ok {
		return c
	}
	r.startCall(id, "", "")
	return r.calls[id]
}

// result places a tool message right after the message whose call it
// answers, after the results already there, as the protocol's client
// does; a result for no known call goes last.
func (r *aguiRun) result(id, callID, content string) {
	m := &aguiMsg{id: id, role: "tool", toolCallID: callID}
	m.text.WriteString(content)
	if id != "" {
		r.byID[id] = m
	}
	c, ok := r.calls[callID]
	if !ok {
		r.msgs = append(r.msgs, m)
		return
	}
	c.answered = true
	at := len(r.msgs)
	for i, x := range r.msgs {
		if x == c.owner {
			at = i + 1
			for at < len(r.msgs) && r.msgs[at].role == "tool" {
				at++
			}
			break
		}
	}
	r.msgs = append(r.msgs[:at], append([]*aguiMsg{m}, r.msgs[at:]...)...)
}

// snapshot replaces what the run built with the agent's own account of
// the conversation: its messages after the last one the run was sent
// (or, when the agent renamed them all, after the last user message).
// Events after it add to it.
func (r *aguiRun) snapshot(all []aguiWireMsg) {
	start := -1
	for i, m := range all {
		if r.sent[m.ID] {
			start = i
		}
	}
	if start < 0 {
		for i, m := range all {
			if m.Role == "user" {
				start = i
			}
		}
	}
	r.msgs, r.byID, r.calls = nil, map[string]*aguiMsg{}, map[string]*aguiCall{}
	for _, w := range all[start+1:] {
		if r.sent[w.ID] {
			continue
		}
		switch w.Role {
		case "assistant":
			m := r.add(&aguiMsg{id: w.ID, role: "assistant"})
			m.text.WriteString(aguiText(w.Content))
			for _, tc := range w.ToolCalls {
				c := &aguiCall{id: tc.ID, name: tc.Function.Name, owner: m}
				c.args.WriteString(tc.Function.Arguments)
				m.calls = append(m.calls, c)
				r.calls[tc.ID] = c
			}
		case "tool":
			r.result(w.ID, w.ToolCallID, aguiText(w.Content))
		case "reasoning":
			r.reasoning.WriteString(aguiText(w.Content))
		}
	}
}

// pending is the calls no result answered, in the order they were made.
func (r *aguiRun) pending() []*aguiCall {
	var out []*aguiCall
	for _, m := range r.msgs {
		for _, c := range m.calls {
			if !c.answered {
				out = append(out, c)
			}
		}
	}
	return out
}

// reply is the run as agenteval messages, with the id the agent gave
// each. Calls left unanswered end the reply, in the last assistant
// message, for the caller to answer (MockedTools); when they were made
// elsewhere (beside answered calls, or before text), they move there,
// and that message takes the id of the one they came from.
func (r *aguiRun) reply() (*agenteval.AgentResponse, []string) {
	out := &agenteval.AgentResponse{Usage: r.usage}
	var ids []string
	pending := r.pending()
	moved := map[*aguiCall]bool{}
	if len(pending) > 0 {
		last := r.msgs[len(r.msgs)-1]
		if !(last.role == "assistant" && len(last.calls) == len(pending) && last.calls[0] == pending[0]) {
			for _, c := range pending {
				moved[c] = true
			}
		}
	}
	names := map[string]string{}
	for _, m := range r.msgs {
		for _, c := range m.calls {
			names[c.id] = c.name
		}
	}
	var lastAssistant *agenteval.Message
	for _, m := range r.msgs {
		switch m.role {
		case "assistant":
			msg := agenteval.Message{Role: agenteval.RoleAssistant, Content: m.text.String()}
			for _, c := range m.calls {
				if !moved[c] {
					msg.ToolCalls = append(msg.ToolCalls, aguiCallOf(c))
				}
			}
			if m.reasoning != "" {
				msg.Metadata = map[string]any{"reasoning": m.reasoning}
			}
			if msg.Content == "" && len(msg.ToolCalls) == 0 && m.reasoning == "" {
				continue
			}
			out.Messages = append(out.Messages, msg)
			ids = append(ids, m.id)
			lastAssistant = &out.Messages[len(out.Messages)-1]
		case "tool":
			out.Messages = append(out.Messages, agenteval.Message{Role: agenteval.RoleTool, ToolCallID: m.toolCallID, Name: names[m.toolCallID], Content: m.text.String()})
			ids = append(ids, m.id)
		}
	}
	if len(moved) > 0 {
		msg := agenteval.Message{Role: agenteval.RoleAssistant}
		for _, c := range pending {
			msg.ToolCalls = append(msg.ToolCalls, aguiCallOf(c))
		}
		out.Messages = append(out.Messages, msg)
		ids = append(ids, pending[0].owner.id)
		lastAssistant = &out.Messages[len(out.Messages)-1]
	}
	if r.reasoning.Len() > 0 && lastAssistant != nil {
		// Reasoning after the last message: it still belongs to the reply.
		if lastAssistant.Metadata == nil {
			lastAssistant.Metadata = map[string]any{}
		}
		prev, _ := lastAssistant.Metadata["reasoning"].(string)
		lastAssistant.Metadata["reasoning"] = prev + r.reasoning.String()
	}
	if len(r.unknown) > 0 && len(out.Messages) > 0 {
		last := &out.Messages[len(out.Messages)-1]
		if last.Metadata == nil {
			last.Metadata = map[string]any{}
		}
		types := make([]string, 0, len(r.unknown))
		for t := range r.unknown {
			types = append(types, t)
		}
		sort.Strings(types)
		counts := map[string]any{}
		for _, t := range types {
			counts[t] = r.unknown[t]
		}
		last.Metadata["agui_unknown_events"] = counts
	}
	return out, ids
}

// aguiCallOf reads a call's streamed arguments: a JSON object, or kept as
// text that every argument check fails.
func aguiCallOf(c *aguiCall) agenteval.ToolCall {
	call := agenteval.ToolCall{ID: c.id, Name: c.name}
	args := c.args.String()
	if strings.TrimSpace(args) == "" {
		call.Args = map[string]any{}
		return call
	}
	dec := json.NewDecoder(strings.NewReader(args))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil || dec.More() {
		call.RawArgs = args
		return call
	}
	call.Args = m
	if agenteval.HasNestedObjects(m) {
		call.KeyOrder = agenteval.KeyOrderOf([]byte(args))
	}
	return call
}
