package trace

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/agenteval/agenteval"
)

// assemble builds one conversation from the records of a span format that
// belong to it. Model calls each carry a snapshot of the history they were
// given and what they returned; tool spans carry one call and its result.
// They are replayed in time order: a history that extends the conversation
// so far adds its new messages, one that does not (trimmed, summarised, or
// another agent's) adds only what follows its last assistant message, and a
// tool result is put after the call that asked for it, or after a call
// made up from the tool span when no model call recorded one.
//
// It returns nil when no record carries GenAI data.
func assemble(format, id string, recs []*record) *conv {
	c := &conv{pos: recs[0].pos}
	items, other := attachEvents(recs, c)
	if len(items) == 0 {
		return nil
	}
	b := &builder{}
	for _, mo := range moments(items) {
		r := mo.rec
		switch {
		case r.kind == kindTool:
			b.addTool(r.tool)
		case mo.end:
			b.addOutput(r.output, r.respID)
		default:
			b.addSystem(r.system)
			b.addInput(r.input)
		}
	}
	s := &agenteval.Sample{ID: id, UserInput: b.conversation(), Metadata: metadata(format, items)}
	c.sample = s
	c.problems = dedupe(c.problems)
	if len(s.UserInput) == 0 {
		c.problems = append(c.problems, errAt(c.pos, "no message content was recorded for this conversation: its model calls and tools carry no messages; "+
			"turn content capture on in the instrumentation (for OpenTelemetry GenAI, OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true)"))
	}
	if len(other) > 0 {
		what := "span"
		if other[0].fromLogs {
			what = "event"
		}
		msg := fmt.Sprintf("%s %q carries no GenAI data and is not part of the conversation", what, other[0].name)
		if len(other) > 1 {
			msg = fmt.Sprintf("%s %q and %d more carry no GenAI data and are not part of the conversation", what, other[0].name, len(other)-1)
		}
		c.problems = append(c.problems, warnAt(other[0].pos, msg))
	}
	return c
}

// dedupe keeps the first of problems that say the same thing, and says
// how many there were.
func dedupe(ps []problem) []problem {
	count := map[string]int{}
	for _, p := range ps {
		count[p.msg]++
	}
	var out []problem
	for _, p := range ps {
		n, ok := count[p.msg]
		if !ok {
			continue
		}
		delete(count, p.msg)
		if n > 1 {
			p.msg = fmt.Sprintf("%s (%d times; the first is at this place)", p.msg, n)
		}
		out = append(out, p)
	}
	return out
}

// attachEvents folds per-message events into one model call per span, and
// event records (which carry content) into their span's record when it
// has none. It returns the records that contribute, and those that carry
// nothing.
func attachEvents(recs []*record, c *conv) (items, other []*record) {
	spans := map[string]*record{}
	for _, r := range recs {
		c.problems = append(c.problems, r.problems...)
		if !r.fromLogs && r.span != "" && (r.kind == kindLLM || r.kind == kindAgent) {
			spans[r.span] = r
		}
	}
	groups := map[string]*record{}
	for _, r := range recs {
		switch r.kind {
		case kindOther:
			other = append(other, r)
			continue
		case kindIgnored:
			continue
		case kindMessage:
			g := groups[r.trace+"/"+r.span]
			if g == nil {
				g = &record{kind: kindLLM, fromLogs: true, pos: r.pos, ord: r.ord, span: r.span, trace: r.trace, conv: r.conv, start: r.start, end: r.end}
				groups[r.trace+"/"+r.span] = g
				items = append(items, g)
			}
			if r.choice {
				if len(g.output) == 0 {
					g.output = append(g.output, *r.message)
				}
				g.end = max(g.end, r.end, r.start)
			} else {
				g.input = append(g.input, *r.message)
				if r.start != 0 && (g.start == 0 || r.start < g.start) {
					g.start = r.start
				}
			}
			if g.model == "" {
				g.model = r.model
			}
			g.usage.add(r.usage)
			continue
		}
		items = append(items, r)
	}
	// An event that describes a span the file also holds gives that span
	// its content; its usage is the span's, already counted.
	kept := items[:0]
	for _, r := range items {
		if r.fromLogs && r.span != "" {
			if sp := spans[r.span]; sp != nil && len(sp.input) == 0 && len(sp.output) == 0 {
				sp.input, sp.output = r.input, r.output
				if len(sp.system) == 0 {
					sp.system = r.system
				}
				if !sp.usage.set {
					sp.usage = r.usage
				}
				if sp.kind == kindOther {
					sp.kind = kindLLM
				}
				continue
			}
		}
		kept = append(kept, r)
	}
	return kept, other
}

// moment is a record's start (its input) or end (its output).
type moment struct {
	t   int64
	end bool
	rec *record
}

// moments orders the records' inputs and outputs in time. At equal times
// ends come before starts, an outer span starts before the spans inside
// it and ends after them. Without times, file order stands.
func moments(items []*record) []moment {
	timed := true
	for _, r := range items {
		if r.start == 0 {
			timed = false
		}
	}
	var out []moment
	for _, r := range items {
		if r.kind == kindTool {
			out = append(out, moment{t: r.start, rec: r})
			continue
		}
		out = append(out, moment{t: r.start, rec: r}, moment{t: max(r.end, r.start), end: true, rec: r})
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if !timed {
			if a.rec.ord != b.rec.ord {
				return a.rec.ord < b.rec.ord
			}
			return !a.end && b.end
		}
		if a.t != b.t {
			return a.t < b.t
		}
		if a.rec == b.rec {
			return !a.end && b.end
		}
		if a.end != b.end {
			return a.end
		}
		if !a.end && a.rec.end != b.rec.end {
			return a.rec.end > b.rec.end
		}
		if a.end && a.rec.start != b.rec.start {
			return a.rec.start > b.rec.start
		}
		return a.rec.ord < b.rec.ord
	})
	return out
}

// builder grows the conversation.
type builder struct {
	entries []entry
}

type entry struct {
	m        msg
	key      string
	answered []bool // for an assistant message, which calls have a result
}

func msgKey(m msg) string {
	var b strings.Builder
	b.WriteString(m.role)
	b.WriteByte(0)
	if m.role == "tool" && m.callID != "" {
		b.WriteString(m.callID)
		return b.String()
	}
	b.WriteString(strings.TrimSpace(m.content))
	for _, c := range m.calls {
		b.WriteByte(0)
		if c.id != "" {
			b.WriteString(c.id)
			continue
		}
		b.WriteString(c.name)
		b.WriteString(argsText(c))
	}
	return b.String()
}

func argsText(c call) string {
	if c.args == nil {
		return c.rawArgs
	}
	j, _ := json.Marshal(c.args)
	return string(j)
}

func (b *builder) push(m msg) {
	e := entry{m: m, key: msgKey(m)}
	if m.role == "assistant" {
		e.answered = make([]bool, len(m.calls))
	}
	b.entries = append(b.entries, e)
	if m.role == "tool" {
		b.markAnswered(len(b.entries)-1, m.callID)
	}
}

// markAnswered records that the tool message at i answers a call: the one
// with its id, else the first unanswered call of the assistant message it
// follows.
func (b *builder) markAnswered(i int, id string) {
	for j := i - 1; j >= 0; j-- {
		e := &b.entries[j]
		if e.m.role != "assistant" {
			continue
		}
		for k, c := range e.m.calls {
			if (id != "" && c.id == id) || (id == "" && !e.answered[k]) {
				e.answered[k] = true
				return
			}
		}
		if id == "" {
			return
		}
	}
}

func (b *builder) addSystem(texts []string) {
	for _, t := range texts {
		if strings.TrimSpace(t) == "" {
			continue
		}
		m := msg{role: "system", content: t}
		k := msgKey(m)
		dup := false
		for _, e := range b.entries {
			if e.key == k {
				dup = true
				break
			}
		}
		if dup {
			continue
		}
		at := 0
		for at < len(b.entries) && b.entries[at].m.role == "system" {
			at++
		}
		b.entries = append(b.entries, entry{})
		copy(b.entries[at+1:], b.entries[at:])
		b.entries[at] = entry{m: m, key: k}
	}
}

// addInput merges a model call's history. System messages are compared
// apart, since instrumentations record them in different places.
func (b *builder) addInput(in []msg) {
	var sys []string
	var rest []msg
	for _, m := range in {
		if m.role == "system" {
			sys = append(sys, m.content)
		} else {
			rest = append(rest, m)
		}
	}
	b.addSystem(sys)
	var have []int
	for i, e := range b.entries {
		if e.m.role != "system" {
			have = append(have, i)
		}
	}
	k := 0
	for k < len(rest) && k < len(have) && msgKey(rest[k]) == b.entries[have[k]].key {
		// A tool result is kept as the model saw it, which may differ in
		// form from what the tool span recorded.
		if e := &b.entries[have[k]]; e.m.role == "tool" && rest[k].content != "" {
			e.m.content = rest[k].content
		}
		k++
	}
	if k == len(have) {
		for _, m := range rest[k:] {
			b.push(m)
		}
		return
	}
	// The history is not an extension of ours: take what is new since its
	// last assistant message.
	from := 0
	for i := len(rest) - 1; i >= 0; i-- {
		if rest[i].role == "assistant" {
			from = i + 1
			break
		}
	}
	for _, m := range rest[from:] {
		if !b.sinceLastAssistant(msgKey(m)) {
			b.push(m)
		}
	}
}

func (b *builder) sinceLastAssistant(key string) bool {
	for i := len(b.entries) - 1; i >= 0; i-- {
		if b.entries[i].key == key {
			return true
		}
		if b.entries[i].m.role == "assistant" {
			return false
		}
	}
	return false
}

// addOutput adds what a model or agent returned, unless the conversation
// already ends with it (an agent's answer is its last model call's).
func (b *builder) addOutput(out []msg, respID string) {
	for _, m := range out {
		if m.role == "assistant" && m.respID == "" {
			m.respID = respID
		}
		k := msgKey(m)
		if n := len(b.entries); n > 0 && b.entries[n-1].key == k {
			continue
		}
		if m.role == "assistant" && b.lastAssistantKey() == k {
			continue
		}
		b.push(m)
	}
}

func (b *builder) lastAssistantKey() string {
	for i := len(b.entries) - 1; i >= 0; i-- {
		switch b.entries[i].m.role {
		case "assistant":
			return b.entries[i].key
		case "user":
			return ""
		}
	}
	return ""
}

// addTool puts a tool execution's result after the call that asked for it.
func (b *builder) addTool(t *toolExec) {
	ai, ci := b.findCall(t.call)
	if ai < 0 {
		// No model call recorded this call: the tool span is all we have.
		b.push(msg{role: "assistant", calls: []call{t.call}})
		if t.hasResult {
			b.push(msg{role: "tool", content: t.result, callID: t.call.id, name: t.call.name, isError: t.isError})
		}
		return
	}
	e := &b.entries[ai]
	if e.answered[ci] || !t.hasResult {
		return
	}
	j := ai + 1
	for j < len(b.entries) && b.entries[j].m.role == "tool" {
		j++
	}
	m := msg{role: "tool", content: t.result, callID: e.m.calls[ci].id, name: e.m.calls[ci].name, isError: t.isError}
	b.entries = append(b.entries, entry{})
	copy(b.entries[j+1:], b.entries[j:])
	b.entries[j] = entry{m: m, key: msgKey(m)}
	e = &b.entries[ai]
	e.answered[ci] = true
}

// findCall finds the call a tool execution answers: by id, else the
// latest unanswered call of the same name.
func (b *builder) findCall(c call) (int, int) {
	for i := len(b.entries) - 1; i >= 0; i-- {
		e := b.entries[i]
		if e.m.role != "assistant" {
			continue
		}
		for k, ec := range e.m.calls {
			if c.id != "" && ec.id == c.id {
				return i, k
			}
			if c.id == "" && ec.name == c.name && !e.answered[k] {
				return i, k
			}
		}
	}
	return -1, -1
}

func (b *builder) conversation() agenteval.Conversation {
	out := make(agenteval.Conversation, 0, len(b.entries))
	for _, e := range b.entries {
		out = append(out, e.m.message())
	}
	return out
}

func (m msg) message() agenteval.Message {
	role, _ := agenteval.ParseRole(m.role)
	out := agenteval.Message{Role: role, Content: m.content, ToolCallID: m.callID, Name: m.name, Parts: m.parts}
	if role == "" {
		out.Role = agenteval.Role(m.role)
	}
	for _, c := range m.calls {
		tc := agenteval.ToolCall{ID: c.id, Name: c.name, Args: c.args, RawArgs: c.rawArgs, KeyOrder: c.keyOrder, DurationMS: c.durationMS}
		if tc.Args == nil && tc.RawArgs == "" {
			tc.Args = map[string]any{}
		}
		out.ToolCalls = append(out.ToolCalls, tc)
	}
	if len(m.meta) > 0 || m.reasoning != "" || m.isError || m.respID != "" {
		out.Metadata = make(map[string]any, len(m.meta)+3)
		for k, v := range m.meta {
			out.Metadata[k] = v
		}
		if m.reasoning != "" {
			out.Metadata["reasoning"] = m.reasoning
		}
		if m.isError {
			out.Metadata["error"] = true
		}
		if m.respID != "" {
			out.Metadata["response_id"] = m.respID
		}
	}
	return out
}

// metadata describes where a conversation came from: the format, traces,
// agents and models, the usage the model calls reported, and how long it
// took.
func metadata(format string, items []*record) map[string]any {
	md := map[string]any{"source_format": format}
	var traces, agents, models, errs []string
	seen := map[string]bool{}
	addU := func(list *[]string, v, kind string) {
		if v != "" && !seen[kind+v] {
			seen[kind+v] = true
			*list = append(*list, v)
		}
	}
	var u usage
	var first, last int64
	llm, tools := 0, 0
	for _, r := range items {
		addU(&traces, r.trace, "t")
		addU(&agents, r.agent, "a")
		addU(&models, r.model, "m")
		if r.errText != "" {
			addU(&errs, r.name+": "+r.errText, "e")
		}
		switch r.kind {
		case kindLLM:
			llm++
			u.add(r.usage)
		case kindTool:
			tools++
		}
		if r.start > 0 && (first == 0 || r.start < first) {
			first = r.start
		}
		last = max(last, r.end)
	}
	if len(traces) == 1 {
		md["trace_id"] = traces[0]
	} else if len(traces) > 1 {
		md["trace_ids"] = traces
	}
	if len(agents) > 0 {
		md["agent"] = agents[0]
		if len(agents) > 1 {
			md["agents"] = agents
		}
	}
	if len(models) > 0 {
		md["models"] = models
	}
	if len(errs) > 0 {
		md["errors"] = errs
	}
	if llm > 0 {
		md["llm_calls"] = llm
	}
	if tools > 0 {
		md["tool_executions"] = tools
	}
	if u.set {
		md["usage"] = map[string]any{"input_tokens": u.input, "output_tokens": u.output}
		if u.cacheRead > 0 {
			md["usage"].(map[string]any)["cache_read_tokens"] = u.cacheRead
		}
	}
	if first > 0 && last > first {
		md["duration_ms"] = float64((last-first)/1000) / 1000
	}
	return md
}
