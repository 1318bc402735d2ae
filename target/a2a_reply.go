package target

import (
	"encoding/json"
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
	// status is the message of the task's current status, nil when the
	// current status has none: an earlier status's message ("working on
	// it") is progress, not the answer.
	status   *a2aMessage
	direct   *a2aMessage // the agent answered with a message, no task
	msgs     []*a2aMessage
	seen     map[string]bool
	arts     []*a2aArtifact
	artIndex map[string]int
	// order is the turn's messages and artifacts in the order they first
	// came, which is the order of the tool calls they report.
	order []a2aOutput
	// taskMeta is the task's metadata as last seen; whole says the last
	// answer read was the whole task in a final state, so that nothing
	// of it (its metadata above all, which stream events leave out) is
	// unknown.
	taskMeta map[string]any
	whole    bool

	// Token usage as the agent reports it, at three levels; the first
	// level that reports any is kept, so that one report is not counted
	// twice when it shows at two levels.
	eventUsage, msgUsage, taskUsage agenteval.Usage
}

// a2aOutput is a message, or the artifact arts[art] when msg is nil.
type a2aOutput struct {
	msg *a2aMessage
	art int
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
	t.whole = false
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
		if !stale {
			t.status = nil
			if task.Status != nil && !t.conv.seenMsgs[task.Status.ID] {
				t.status = task.Status
				t.addMessage(task.Status)
			}
			t.whole = !pending(t.state)
			t.noteTaskMeta(task.Metadata)
		}
		for i := range task.Artifacts {
			t.addArtifact(task.Artifacts[i], false)
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
		t.status = s.Message
		if s.Message != nil {
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

// noteTaskMeta keeps the task's metadata and the usage it reports.
func (t *a2aTurn) noteTaskMeta(md map[string]any) {
	if len(md) == 0 {
		return
	}
	t.taskMeta = md
	if u, ok := usageOf(md); ok {
		t.taskUsage = u
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
	t.order = append(t.order, a2aOutput{msg: m})
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
	t.order = append(t.order, a2aOutput{art: len(t.arts)})
	t.arts = append(t.arts, &a)
}

// hasToolParts reports whether any message or artifact of the turn
// carries a tool part.
func (t *a2aTurn) hasToolParts() bool {
	for _, o := range t.order {
		parts := t.arts[o.art].Parts
		if o.msg != nil {
			parts = o.msg.Parts
		}
		for _, p := range parts {
			if _, ok := toolPart(p); ok {
				return true
			}
		}
	}
	return false
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
//
// Tool calls come from the tool parts of the turn's messages and new
// artifacts, in the order they came (Google ADK sends each call and
// response as an artifact of its own; others put them in messages; a
// part reported both ways counts once); when no part carries any, from
// the task's metadata (Mastra's execution.toolCalls).
//
// The answer follows the spec's roles: a task's output is its artifacts,
// and a message of its final status speaks for that status. So the
// answer is the turn's new artifacts, then the final status message when
// it adds to them; when neither says anything, the agent's messages. The
// texts of messages that are not part of the answer (a working status's
// "Generating response...") are kept in the metadata as a2a_progress.
func (t *a2aTurn) reply() *agenteval.AgentResponse {
	// The artifacts not reported before: a continued task's artifacts
	// from earlier turns are left out unless they changed.
	fresh := make([]bool, len(t.arts))
	for i, a := range t.arts {
		key := artifactKey(a)
		if prev, ok := t.conv.seenArts[a.ID]; ok && prev == key {
			continue
		}
		t.conv.seenArts[a.ID] = key
		fresh[i] = true
	}

	tools := newToolParts(t.conv)
	var other [][]a2aPart // the messages' parts that are not tool parts
	for _, o := range t.order {
		switch {
		case o.msg != nil:
			other = append(other, tools.read(o.msg.Parts, false))
		case fresh[o.art]:
			tools.read(t.arts[o.art].Parts, true)
		}
	}
	out := tools.out
	if len(out) == 0 {
		out = metadataTools(t.taskMeta, t.conv)
	}

	var texts []string
	var files []agenteval.Part
	var names []string
	for i, a := range t.arts {
		if !fresh[i] {
			continue
		}
		ts, fs := partTexts(a.Parts), fileParts(a.Parts)
		if len(ts) == 0 && len(fs) == 0 {
			continue // tool parts only, or nothing
		}
		texts = append(texts, ts...)
		files = append(files, fs...)
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
	var progress []string
	if len(texts) == 0 {
		for _, parts := range other {
			texts = append(texts, partTexts(parts)...)
			files = append(files, fileParts(parts)...)
		}
	} else {
		for _, parts := range other {
			for _, s := range partTexts(parts) {
				if !contains(texts, s) && !contains(progress, s) {
					progress = append(progress, s)
				}
			}
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
	if len(progress) > 0 {
		md["a2a_progress"] = progress
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
// camelCase forms), at the top or in Mastra's "execution". Calls is 1
// when found: one report (Mastra's sums the model calls of the turn).
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
	if m := obj(md["execution"]); m != nil && m["execution"] == nil {
		return usageOf(m)
	}
	return agenteval.Usage{}, false
}
