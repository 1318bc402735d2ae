package target

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/jsonvalue"
)

// a2aTurn gathers what the agent sends during one turn: the task's state,
// its new agent messages and artifacts, in the order they came, from a
// SendMessage result, stream events and GetTask snapshots alike.
type a2aTurn struct {
	conv   *a2aConv
	sentID string
	// continued is the task this turn's message continues, if any;
	// streaming says the answers come as a stream, events how many came.
	continued string
	streaming bool
	events    int

	taskID, contextID, state string
	final                    bool // a 0.3 status update said final
	status                   *a2aMessage
	direct                   *a2aMessage // the agent answered with a message, no task
	msgs                     []*a2aMessage
	seen                     map[string]bool
	arts                     []*a2aArtifact
	artIndex                 map[string]int

	// Token usage as the agent reports it, at three levels; the first
	// level that reports any is kept, so that one report is not counted
	// twice when it shows at two levels.
	eventUsage, msgUsage, taskUsage agenteval.Usage
}

func newTurn(conv *a2aConv, sentID string) *a2aTurn {
	return &a2aTurn{conv: conv, sentID: sentID, seen: map[string]bool{}, artIndex: map[string]int{}}
}

// started reports whether the agent answered with anything.
func (t *a2aTurn) started() bool { return t.direct != nil || t.taskID != "" || t.state != "" }

// done reports whether the turn has its answer: a message, or a task in a
// final state (terminal, or waiting for input).
func (t *a2aTurn) done() bool {
	return t.direct != nil || t.final || (t.state != "" && !pending(t.state))
}

func (t *a2aTurn) setIDs(taskID, contextID string) {
	if taskID != "" {
		t.taskID = taskID
	}
	if contextID != "" {
		t.contextID = contextID
	}
}

func (t *a2aTurn) add(ev *a2aEvent) {
	defer func() { t.events++ }()
	switch {
	case ev.Task != nil:
		task := ev.Task
		t.setIDs(task.ID, task.ContextID)
		// A stream that continues a task opens with the task as it was:
		// still waiting for the input this turn sends.
		stale := t.streaming && t.events == 0 && task.ID == t.continued && interrupted(task.State)
		if !stale {
			t.state = task.State
		}
		// Agent messages after the one this turn sent are new; when the
		// history does not hold it, those not reported before are.
		from := 0
		for i, m := range task.History {
			if m.ID == t.sentID {
				from = i + 1
			}
		}
		for i := from; i < len(task.History); i++ {
			t.addMessage(&task.History[i])
		}
		if task.Status != nil && !stale && !t.conv.seenMsgs[task.Status.ID] {
			t.status = task.Status
			t.addMessage(task.Status)
		}
		for i := range task.Artifacts {
			t.addArtifact(task.Artifacts[i], false)
		}
		if u, ok := usageOf(task.Metadata); ok {
			t.taskUsage = u
		}
	case ev.Message != nil:
		t.direct = ev.Message
		t.setIDs(ev.Message.TaskID, ev.Message.ContextID)
		t.addMessage(ev.Message)
	case ev.Status != nil:
		s := ev.Status
		t.setIDs(s.TaskID, s.ContextID)
		t.state = s.State
		t.final = t.final || s.Final
		if s.Message != nil {
			t.status = s.Message
			t.addMessage(s.Message)
		}
		t.addEventUsage(s.Metadata)
	case ev.Artifact != nil:
		a := ev.Artifact
		t.setIDs(a.TaskID, a.ContextID)
		t.addArtifact(a.Artifact, a.Append)
		t.addEventUsage(a.Metadata)
	}
}

func (t *a2aTurn) addEventUsage(md map[string]any) {
	if u, ok := usageOf(md); ok {
		t.eventUsage.Add(&u)
	}
}

// addMessage keeps an agent message not seen before.
func (t *a2aTurn) addMessage(m *a2aMessage) {
	if m.Role == "user" {
		return
	}
	if m.ID != "" {
		if t.seen[m.ID] || t.conv.seenMsgs[m.ID] {
			return
		}
		t.seen[m.ID] = true
	}
	t.msgs = append(t.msgs, m)
	if u, ok := usageOf(m.Metadata); ok {
		t.msgUsage.Add(&u)
	}
}

// addArtifact keeps an artifact, replacing or extending (append) the one
// with the same id.
func (t *a2aTurn) addArtifact(a a2aArtifact, appendParts bool) {
	if i, ok := t.artIndex[a.ID]; ok && a.ID != "" {
		old := t.arts[i]
		if appendParts {
			merged := *old
			merged.Parts = append(append([]a2aPart(nil), old.Parts...), a.Parts...)
			if a.Name != "" {
				merged.Name = a.Name
			}
			t.arts[i] = &merged
		} else {
			t.arts[i] = &a
		}
		return
	}
	t.artIndex[a.ID] = len(t.arts)
	t.arts = append(t.arts, &a)
}

// statusText is the text of the task's last status message.
func (t *a2aTurn) statusText() string {
	if t.status == nil {
		return ""
	}
	return strings.Join(partTexts(t.status.Parts), "\n")
}

// adkType is the metadata key Google ADK's A2A converter marks function
// calls and responses with, in data parts.
const adkType = "adk_type"

// toolPart reports whether a part is an ADK function call or response.
func toolPart(p a2aPart) (string, bool) {
	if p.Kind != "data" {
		return "", false
	}
	kind, _ := p.Metadata[adkType].(string)
	return kind, kind == "function_call" || kind == "function_response"
}

// thought reports whether a text part is model reasoning, as ADK marks it.
func thought(p a2aPart) bool {
	b, _ := p.Metadata["adk_thought"].(bool)
	return b
}

// partTexts renders parts as reply text: consecutive text parts run
// together (the chunks a stream appends to one text), and each data part
// is compact JSON on its own. Tool parts and reasoning are left out.
func partTexts(parts []a2aPart) []string {
	var out []string
	var run strings.Builder
	flush := func() {
		if strings.TrimSpace(run.String()) != "" {
			out = append(out, run.String())
		}
		run.Reset()
	}
	for _, p := range parts {
		if _, ok := toolPart(p); ok {
			continue
		}
		switch p.Kind {
		case "text":
			if !thought(p) {
				run.WriteString(p.Text)
			}
		case "data":
			flush()
			if len(p.Data) > 0 && string(p.Data) != "null" {
				out = append(out, jsonvalue.Text(p.Data))
			}
		}
	}
	flush()
	return out
}

// fileParts are the parts that carry files, as message parts.
func fileParts(parts []a2aPart) []agenteval.Part {
	var out []agenteval.Part
	for _, p := range parts {
		if p.Kind != "file" {
			continue
		}
		u := p.URL
		if u == "" && p.Raw != "" {
			media := p.MediaType
			if media == "" {
				media = "application/octet-stream"
			}
			u = "data:" + media + ";base64," + p.Raw
		}
		if u == "" {
			continue
		}
		typ := "file"
		if strings.HasPrefix(p.MediaType, "image/") {
			typ = "image"
		}
		out = append(out, agenteval.Part{Type: typ, MediaType: p.MediaType, URL: u})
	}
	return out
}

// reply turns what the turn gathered into the agent's messages: the tool
// calls and results the agent reported, in order, then one assistant
// message with the answer.
func (t *a2aTurn) reply() *agenteval.AgentResponse {
	var out agenteval.Conversation
	var other [][]a2aPart
	open := map[string][]string{} // name -> ids of calls given no id, awaiting their response
	for _, m := range t.msgs {
		var rest []a2aPart
		for _, p := range m.Parts {
			kind, ok := toolPart(p)
			if !ok {
				rest = append(rest, p)
				continue
			}
			var d struct {
				ID       string          `json:"id"`
				Name     string          `json:"name"`
				Args     map[string]any  `json:"args"`
				Response json.RawMessage `json:"response"`
			}
			if err := json.Unmarshal(p.Data, &d); err != nil || d.Name == "" {
				rest = append(rest, p)
				continue
			}
			if kind == "function_call" {
				if d.ID == "" {
					t.conv.calls++
					d.ID = fmt.Sprintf("a2a_call_%d", t.conv.calls)
					open[d.Name] = append(open[d.Name], d.ID)
				}
				if d.Args == nil {
					d.Args = map[string]any{}
				}
				call := agenteval.ToolCall{ID: d.ID, Name: d.Name, Args: d.Args}
				if n := len(out); n > 0 && out[n-1].Role == agenteval.RoleAssistant && len(out[n-1].ToolCalls) > 0 {
					// Calls made together are one assistant message.
					out[n-1].ToolCalls = append(out[n-1].ToolCalls, call)
				} else {
					out = append(out, agenteval.Message{Role: agenteval.RoleAssistant, ToolCalls: []agenteval.ToolCall{call}})
				}
				continue
			}
			if d.ID == "" && len(open[d.Name]) > 0 {
				d.ID, open[d.Name] = open[d.Name][0], open[d.Name][1:]
			}
			content := ""
			if len(d.Response) > 0 {
				content = jsonvalue.Text(d.Response)
			}
			out = append(out, agenteval.Message{Role: agenteval.RoleTool, Content: content, ToolCallID: d.ID, Name: d.Name})
		}
		other = append(other, rest)
	}

	// The answer: the turn's new artifacts, then the final status message
	// when it adds to them (an agent may answer in either); when neither
	// says anything, the agent's messages.
	var texts []string
	var files []agenteval.Part
	var names []string
	for _, a := range t.arts {
		key := artifactKey(a)
		if prev, ok := t.conv.seenArts[a.ID]; ok && prev == key {
			continue
		}
		t.conv.seenArts[a.ID] = key
		texts = append(texts, partTexts(a.Parts)...)
		files = append(files, fileParts(a.Parts)...)
		switch {
		case a.Name != "":
			names = append(names, a.Name)
		case a.ID != "":
			names = append(names, a.ID)
		}
	}
	if t.status != nil && t.direct == nil {
		for _, s := range partTexts(t.status.Parts) {
			if !contains(texts, s) {
				texts = append(texts, s)
			}
		}
		files = append(files, fileParts(t.status.Parts)...)
	}
	if len(texts) == 0 {
		for _, parts := range other {
			texts = append(texts, partTexts(parts)...)
			files = append(files, fileParts(parts)...)
		}
	}
	for _, m := range t.msgs {
		if m.ID != "" {
			t.conv.seenMsgs[m.ID] = true
		}
	}

	final := agenteval.Message{Role: agenteval.RoleAssistant, Content: strings.Join(texts, "\n"), Parts: files}
	md := map[string]any{}
	if t.taskID != "" {
		md["a2a_task_id"] = t.taskID
	}
	if t.state != "" {
		md["a2a_state"] = t.state
	}
	if t.contextID != "" {
		md["a2a_context_id"] = t.contextID
	}
	if len(names) > 0 {
		md["artifacts"] = names
	}
	if len(md) > 0 {
		final.Metadata = md
	}
	out = append(out, final)

	usage := t.eventUsage
	if usage.Calls == 0 {
		usage = t.msgUsage
	}
	if usage.Calls == 0 {
		usage = t.taskUsage
	}
	return &agenteval.AgentResponse{Messages: out, Usage: usage}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// artifactKey identifies an artifact's content, so that a continued
// task's earlier artifacts are not reported again while changed ones are.
func artifactKey(a *a2aArtifact) string {
	b, _ := json.Marshal(a.Parts)
	return a.Name + "\x00" + string(b)
}

// usageOf reads token usage from metadata: Google ADK's
// adk_usage_metadata (Gemini's promptTokenCount, candidatesTokenCount,
// thoughtsTokenCount), or a "usage" object with input_tokens and
// output_tokens (or prompt_tokens and completion_tokens, or their
// camelCase forms). Calls is 1 when found: one model call's report.
func usageOf(md map[string]any) (agenteval.Usage, bool) {
	num := func(m map[string]any, keys ...string) (int64, bool) {
		for _, k := range keys {
			if f, ok := jsonvalue.Number(m[k]); ok {
				return int64(f), true
			}
		}
		return 0, false
	}
	obj := func(v any) map[string]any {
		switch v := v.(type) {
		case map[string]any:
			return v
		case string:
			// Some servers put it as JSON text.
			var m map[string]any
			if json.Unmarshal([]byte(v), &m) == nil {
				return m
			}
		}
		return nil
	}
	if m := obj(md["adk_usage_metadata"]); m != nil {
		in, ok1 := num(m, "promptTokenCount", "prompt_token_count")
		out, ok2 := num(m, "candidatesTokenCount", "candidates_token_count")
		th, _ := num(m, "thoughtsTokenCount", "thoughts_token_count")
		if ok1 || ok2 {
			return agenteval.Usage{Calls: 1, InputTokens: in, OutputTokens: out + th}, true
		}
	}
	if m := obj(md["usage"]); m != nil {
		in, ok1 := num(m, "input_tokens", "prompt_tokens", "inputTokens", "promptTokens")
		out, ok2 := num(m, "output_tokens", "completion_tokens", "outputTokens", "completionTokens")
		if ok1 || ok2 {
			return agenteval.Usage{Calls: 1, InputTokens: in, OutputTokens: out}, true
		}
	}
	return agenteval.Usage{}, false
}
