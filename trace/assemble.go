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
	var usageOnly []*record
	kept := items[:0]
	for _, r := range items {
		if r.kind == kindUsage {
			usageOnly = append(usageOnly, r)
			continue
		}
		kept = append(kept, r)
	}
	items = kept
	b := &builder{}
	for _, mo := range moments(items, recs) {
		r := mo.rec
		switch {
		case r.kind == kindTool:
			b.addTool(r.tool)
		case mo.end && r.kind == kindAgent:
			b.addAgentOutput(r.output)
		case mo.end:
			b.addOutput(r.output, r.respID)
		default:
			b.addSystem(r.system)
			b.addInput(r.input)
		}
	}
	s := &agenteval.Sample{ID: id, UserInput: b.conversation(), Metadata: metadata(format, items, usageOnly)}
	c.sample = s
	c.problems = dedupe(c.problems)
	if len(s.UserInput) == 0 {
		c.problems = append(c.problems, errAt(c.pos, "no message content was recorded for this conversation: its model calls and tools carry no messages; "+
			"if the instrumentation sent the content as GenAI log events, they are in its logs file: read both together (cat traces.jsonl logs.jsonl > all.jsonl); "+
			"otherwise turn content capture on in the instrumentation (for OpenTelemetry GenAI, OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true)"))
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
	// after is set on a tool run inside a model call's span (the Vercel
	// AI SDK, Google ADK and Mastra run a step's tools inside it): it
	// comes right after that call's end, since its call is in the call's
	// output.
	after bool
	rec   *record
}

// moments orders the records' inputs and outputs in time. At equal times
// ends come before starts, a span starts before the spans inside it and
// ends after them, and of two spans that do not nest, the one that ends
// first starts first. Without times, file order stands.
func moments(items, all []*record) []moment {
	timed := true
	for _, r := range items {
		if r.start == 0 {
			timed = false
		}
	}
	spans := map[string]*record{}
	for _, r := range all {
		if !r.fromLogs && r.span != "" {
			spans[r.trace+"/"+r.span] = r
		}
	}
	// inside reports whether a is a span inside b.
	inside := func(a, b *record) bool {
		for p, n := a, 0; p != nil && p.parent != "" && n < 64; n++ {
			p = spans[p.trace+"/"+p.parent]
			if p == b {
				return true
			}
		}
		return false
	}
	// modelCall is the model call a tool ran inside, if any.
	modelCall := func(r *record) *record {
		for p, n := r, 0; p != nil && p.parent != "" && n < 64; n++ {
			p = spans[p.trace+"/"+p.parent]
			if p != nil && p.kind == kindLLM {
				return p
			}
		}
		return nil
	}
	var out []moment
	for _, r := range items {
		if r.kind == kindTool {
			if m := modelCall(r); m != nil && timed {
				out = append(out, moment{t: max(m.end, m.start), after: true, rec: r})
				continue
			}
			out = append(out, moment{t: r.start, rec: r})
			continue
		}
		out = append(out, moment{t: r.start, rec: r}, moment{t: max(r.end, r.start), end: true, rec: r})
	}
	phase := func(m moment) int {
		switch {
		case m.end:
			return 0
		case m.after:
			return 1
		}
		return 2
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
		if pa, pb := phase(a), phase(b); pa != pb {
			return pa < pb
		}
		switch {
		case inside(b.rec, a.rec):
			return !a.end
		case inside(a.rec, b.rec):
			return a.end
		}
		if !a.end && a.rec.end != b.rec.end {
			// Siblings that start together: the one done first came first.
			return a.rec.end < b.rec.end
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
	answered []bool // for an assistant message, which calls have a result
}

// sameMsg reports whether two records of a message are the same message.
// Instrumentations record the same message with more or less of it: a
// call's id in one place and not in another (OpenInference's JavaScript
// instrumentation keeps no call ids; a tool span may), so ids are
// compared when both have them, and the rest otherwise.
func sameMsg(x, y msg) bool {
	if x.role != y.role {
		return false
	}
	if x.role == "tool" {
		if x.callID != "" && y.callID != "" {
			return x.callID == y.callID
		}
		return strings.TrimSpace(x.content) == strings.TrimSpace(y.content)
	}
	if strings.TrimSpace(x.content) != strings.TrimSpace(y.content) || len(x.calls) != len(y.calls) {
		return false
	}
	for i := range x.calls {
		if !sameCall(x.calls[i], y.calls[i]) {
			return false
		}
	}
	return true
}

func sameCall(a, b call) bool {
	if a.id != "" && b.id != "" {
		return a.id == b.id
	}
	return a.name == b.name && argsText(a) == argsText(b)
}

func argsText(c call) string {
	if c.args == nil {
		return c.rawArgs
	}
	j, _ := json.Marshal(c.args)
	return string(j)
}

func (b *builder) push(m msg) {
	e := entry{m: m}
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
		dup := false
		for _, e := range b.entries {
			if sameMsg(e.m, m) {
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
		b.entries[at] = entry{m: m}
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
	for k < len(rest) && k < len(have) && sameMsg(rest[k], b.entries[have[k]].m) {
		e := &b.entries[have[k]]
		// A tool result is kept as the model saw it, which may differ in
		// form from what the tool span recorded.
		if e.m.role == "tool" && rest[k].content != "" {
			e.m.content = rest[k].content
		}
		b.fillIDs(e, rest[k])
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
		if !b.sinceLastAssistant(m) {
			b.push(m)
		}
	}
}

// fillIDs gives a message the call ids another record of it has.
func (b *builder) fillIDs(e *entry, o msg) {
	if e.m.role == "tool" && e.m.callID == "" {
		e.m.callID = o.callID
	}
	if len(e.m.calls) == len(o.calls) {
		for i := range e.m.calls {
			if e.m.calls[i].id == "" {
				e.m.calls[i].id = o.calls[i].id
			}
		}
	}
}

func (b *builder) sinceLastAssistant(m msg) bool {
	for i := len(b.entries) - 1; i >= 0; i-- {
		if sameMsg(b.entries[i].m, m) {
			return true
		}
		if b.entries[i].m.role == "assistant" {
			return false
		}
	}
	return false
}

// addOutput adds what a model returned, unless the conversation already
// ends with it.
func (b *builder) addOutput(out []msg, respID string) {
	for _, m := range out {
		if m.role == "assistant" && m.respID == "" {
			m.respID = respID
		}
		if n := len(b.entries); n > 0 && sameMsg(b.entries[n-1].m, m) {
			continue
		}
		if m.role == "assistant" {
			if last := b.lastAssistant(); last != nil && sameMsg(*last, m) {
				continue
			}
		}
		b.push(m)
	}
}

// addAgentOutput adds what an agent returned: its run, which its model
// calls and tools have mostly recorded already. A message the run since
// the last user message already holds is left out; so is an assistant
// message whose calls it already holds, each (several steps' calls may
// be lumped into one).
func (b *builder) addAgentOutput(out []msg) {
	from := 0
	for i := len(b.entries) - 1; i >= 0; i-- {
		if b.entries[i].m.role == "user" {
			from = i + 1
			break
		}
	}
	held := func(m msg) bool {
		if m.role == "assistant" && len(m.calls) > 0 && strings.TrimSpace(m.content) == "" {
			for _, c := range m.calls {
				found := false
				for _, e := range b.entries[from:] {
					for _, ec := range e.m.calls {
						if sameCall(ec, c) {
							found = true
						}
					}
				}
				if !found {
					return false
				}
			}
			return true
		}
		for _, e := range b.entries[from:] {
			if sameMsg(e.m, m) {
				return true
			}
		}
		return false
	}
	for _, m := range out {
		if !held(m) {
			b.push(m)
		}
	}
}

func (b *builder) lastAssistant() *msg {
	for i := len(b.entries) - 1; i >= 0; i-- {
		switch b.entries[i].m.role {
		case "assistant":
			return &b.entries[i].m
		case "user":
			return nil
		}
	}
	return nil
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
	if e.m.calls[ci].id == "" {
		// The model call did not record the call's id; the tool did.
		e.m.calls[ci].id = t.call.id
	}
	if e.answered[ci] || !t.hasResult {
		return
	}
	// After the results of the calls before it in the message: parallel
	// tools end in any order, but their results answer the calls in order.
	j := ai + 1
	for j < len(b.entries) && b.entries[j].m.role == "tool" && b.callIndex(ai, b.entries[j].m.callID) < ci {
		j++
	}
	m := msg{role: "tool", content: t.result, callID: e.m.calls[ci].id, name: e.m.calls[ci].name, isError: t.isError}
	b.entries = append(b.entries, entry{})
	copy(b.entries[j+1:], b.entries[j:])
	b.entries[j] = entry{m: m}
	e = &b.entries[ai]
	e.answered[ci] = true
}

// callIndex is the index, among the calls of the assistant message at ai,
// of the call with id; -1 (before every call) when it has none of that id.
func (b *builder) callIndex(ai int, id string) int {
	for k, c := range b.entries[ai].m.calls {
		if id != "" && c.id == id {
			return k
		}
	}
	return -1
}

// findCall finds the call a tool execution answers: by id, else the
// latest unanswered call of the same name (and, when the model call kept
// no ids, of the same arguments, or failing that of the same name).
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
		}
	}
	for _, sameArgs := range []bool{true, false} {
		for i := len(b.entries) - 1; i >= 0; i-- {
			e := b.entries[i]
			if e.m.role != "assistant" {
				continue
			}
			for k, ec := range e.m.calls {
				if (c.id == "" || ec.id == "") && ec.name == c.name && !e.answered[k] && (!sameArgs || argsText(ec) == argsText(c)) {
					return i, k
				}
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
func metadata(format string, items, usageOnly []*record) map[string]any {
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
	for _, r := range usageOnly {
		u.add(r.usage)
		addU(&models, r.model, "m")
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
