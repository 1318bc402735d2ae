package trace

import (
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/agenteval/agenteval"
)

// Formats that record a conversation message by message (LangChain,
// Inspect, ATIF, coding-agent logs) need no grouping: each file, line or
// list element is one conversation, read in order.

// pullReader turns a function that pushes conversations into a
// convReader.
type pullReader struct {
	next2 func() (*conv, error, bool)
	stop  func()
	warn  *[]problem
	err   error
}

func newPullReader(warn *[]problem, seq func(yield func(*conv, error) bool)) *pullReader {
	next, stop := iter.Pull2(iter.Seq2[*conv, error](seq))
	return &pullReader{next2: next, stop: stop, warn: warn}
}

func (p *pullReader) next() (*conv, error) {
	if p.err != nil {
		return nil, p.err
	}
	c, err, ok := p.next2()
	if !ok {
		p.err = io.EOF
		return nil, io.EOF
	}
	if err != nil {
		p.err = err
		return nil, err
	}
	return c, nil
}

func (p *pullReader) warnings() []problem {
	if p.warn == nil {
		return nil
	}
	return *p.warn
}

func (p *pullReader) close() error {
	p.stop()
	return nil
}

// perItem reads a file whose items (lines, or list elements) are each one
// conversation; parse builds one from an item's JSON.
func perItem(in *input, listKeys []string, parse func(raw json.RawMessage, parent map[string]json.RawMessage, pos Pos) *conv) (convReader, error) {
	r, err := in.reader()
	if err != nil {
		return nil, err
	}
	return newPullReader(nil, func(yield func(*conv, error) bool) {
		err := streamItems(r, listKeys, func(raw json.RawMessage, parent map[string]json.RawMessage, pos Pos, bad error) bool {
			if bad != nil {
				return yield(&conv{pos: pos, problems: []problem{errAt(pos, bad.Error())}}, nil)
			}
			c := parse(raw, parent, pos)
			if c == nil {
				return true
			}
			return yield(c, nil)
		})
		if err != nil {
			yield(nil, err)
		}
	}), nil
}

// perFile reads a log whose lines together are one session: each line
// goes to add, and done builds the conversation at the end.
func perFile(in *input, add func(raw json.RawMessage, pos Pos, probs *[]problem), done func() *conv) (convReader, error) {
	r, err := in.reader()
	if err != nil {
		return nil, err
	}
	var fileWarn []problem
	return newPullReader(&fileWarn, func(yield func(*conv, error) bool) {
		var probs []problem
		// Lines are passed whole: a line that is a list is one bad line.
		err := streamValues(r, func(raw json.RawMessage, _ map[string]json.RawMessage, pos Pos, bad error) bool {
			if bad != nil {
				// A session log being written often ends with a partial
				// line: note it, and keep the rest.
				probs = append(probs, warnAt(pos, bad.Error()))
				return true
			}
			add(raw, pos, &probs)
			return true
		})
		c := done()
		switch {
		case c != nil && c.sample != nil && len(c.sample.UserInput) == 0:
			// Bookkeeping only (a Claude Code file of summaries, a
			// session opened and left): nothing to score, which is not
			// an error of the file.
			fileWarn = append(fileWarn, probs...)
			fileWarn = append(fileWarn, c.problems...)
			fileWarn = append(fileWarn, warnAt(c.pos, "this session log holds no message of the conversation; no row is read from it"))
		case c != nil:
			c.problems = append(probs, c.problems...)
			if !yield(c, nil) {
				return
			}
		default:
			fileWarn = append(fileWarn, probs...)
		}
		if err != nil {
			yield(nil, err)
		}
	}), nil
}

// decodeItem parses an item as a generic JSON object.
func decodeItem(raw json.RawMessage) map[string]any {
	v, err := decodeJSON(string(raw))
	if err != nil {
		return nil
	}
	return obj(v)
}

// seq builds a conversation from messages in order. An assistant message
// that only makes calls joins the assistant message just before it, as
// logs that write text and calls as separate items mean one message.
//
// seq keeps the conversation one a model could have had, whatever the log
// holds, and says so at the line that would break it: a tool result that
// answers no call before it, or a call already answered, is left out with
// a warning; a result that comes after other messages is placed right
// after its call's other results; a call with no name is left out. So one
// odd line never costs the whole session.
type seq struct {
	msgs  []msg
	usage usage
	// pending maps the id of each call not yet answered to the index of
	// the assistant message that made it; answered holds the rest.
	pending  map[string]int
	answered map[string]bool
}

// add appends a message, joining an assistant message that only makes
// calls (or only reasons) to the assistant message before it.
func (s *seq) add(m msg, pos Pos, probs *[]problem) {
	m.calls = s.named(m.calls, pos, probs)
	if n := len(s.msgs); n > 0 && m.role == "assistant" && s.msgs[n-1].role == "assistant" {
		last := &s.msgs[n-1]
		if strings.TrimSpace(m.content) == "" && (len(m.calls) > 0 || m.reasoning != "") {
			last.calls = append(last.calls, m.calls...)
			last.reasoning = joinNonEmpty(last.reasoning, m.reasoning)
			s.opened(n-1, m.calls)
			return
		}
		if strings.TrimSpace(last.content) == "" && len(last.calls) == 0 {
			m.reasoning = joinNonEmpty(last.reasoning, m.reasoning)
			*last = m
			s.opened(n-1, m.calls)
			return
		}
	}
	s.push(m, pos, probs)
}

// extend adds the next part of the assistant message the conversation
// ends with (a streamed message written as several lines).
func (s *seq) extend(m msg, pos Pos, probs *[]problem) {
	n := len(s.msgs)
	if n == 0 || s.msgs[n-1].role != "assistant" {
		s.push(m, pos, probs)
		return
	}
	m.calls = s.named(m.calls, pos, probs)
	last := &s.msgs[n-1]
	last.content = joinNonEmpty(last.content, m.content)
	last.reasoning = joinNonEmpty(last.reasoning, m.reasoning)
	last.parts = append(last.parts, m.parts...)
	last.calls = append(last.calls, m.calls...)
	s.opened(n-1, m.calls)
}

// push appends a message as it is; a tool message goes through result.
func (s *seq) push(m msg, pos Pos, probs *[]problem) {
	if m.role == "tool" {
		s.result(m, pos, probs)
		return
	}
	m.calls = s.named(m.calls, pos, probs)
	s.msgs = append(s.msgs, m)
	s.opened(len(s.msgs)-1, m.calls)
}

// named leaves out calls with no name, which no check could match.
func (s *seq) named(calls []call, pos Pos, probs *[]problem) []call {
	out := calls[:0]
	for _, c := range calls {
		if strings.TrimSpace(c.name) == "" {
			*probs = append(*probs, warnAt(pos, fmt.Sprintf("a tool call with no name (id %q); left out", c.id)))
			continue
		}
		out = append(out, c)
	}
	return out
}

func (s *seq) opened(at int, calls []call) {
	for _, c := range calls {
		if c.id == "" {
			continue
		}
		if s.pending == nil {
			s.pending = map[string]int{}
		}
		s.pending[c.id] = at
	}
}

// result adds a tool result after the call it answers.
func (s *seq) result(m msg, pos Pos, probs *[]problem) {
	m.role = "tool"
	n := len(s.msgs)
	inChain := n > 0 && (s.msgs[n-1].role == "tool" || (s.msgs[n-1].role == "assistant" && len(s.msgs[n-1].calls) > 0))
	if m.callID == "" {
		if !inChain {
			*probs = append(*probs, warnAt(pos, "a tool result with no call id that does not follow a tool call; left out"))
			return
		}
		s.msgs = append(s.msgs, m)
		return
	}
	at, ok := s.pending[m.callID]
	if !ok {
		if s.answered[m.callID] {
			*probs = append(*probs, warnAt(pos, fmt.Sprintf("a second result for tool call %q; the first is kept, this one left out", m.callID)))
		} else {
			*probs = append(*probs, warnAt(pos, fmt.Sprintf("the tool result for call %q answers no tool call before it; left out", m.callID)))
		}
		return
	}
	delete(s.pending, m.callID)
	if s.answered == nil {
		s.answered = map[string]bool{}
	}
	s.answered[m.callID] = true
	end := at + 1
	for end < n && s.msgs[end].role == "tool" {
		end++
	}
	if end == n {
		s.msgs = append(s.msgs, m)
		return
	}
	*probs = append(*probs, warnAt(pos, fmt.Sprintf("the result of tool call %q comes after other messages; it is placed right after its call", m.callID)))
	s.msgs = slices.Insert(s.msgs, end, m)
	for id, i := range s.pending {
		if i >= end {
			s.pending[id] = i + 1
		}
	}
}

func joinNonEmpty(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n" + b
}

func (s *seq) conversation() agenteval.Conversation {
	out := make(agenteval.Conversation, 0, len(s.msgs))
	for _, m := range s.msgs {
		out = append(out, m.message())
	}
	return out
}

// usageMeta renders usage for metadata.
func usageMeta(u usage) map[string]any {
	m := map[string]any{"input_tokens": u.input, "output_tokens": u.output}
	if u.cacheRead > 0 {
		m["cache_read_tokens"] = u.cacheRead
	}
	return m
}

// countNote warns once per kind about lines that were left out, at the
// first of them, naming the others' lines.
type countNote struct {
	n     map[string]int
	lines map[string][]int
	pos   map[string]Pos
}

const maxNotedLines = 10

func (c *countNote) add(kind string, pos Pos) {
	if c.n == nil {
		c.n, c.pos, c.lines = map[string]int{}, map[string]Pos{}, map[string][]int{}
	}
	if c.n[kind] == 0 {
		c.pos[kind] = pos
	} else if len(c.lines[kind]) < maxNotedLines {
		c.lines[kind] = append(c.lines[kind], pos.Line)
	}
	c.n[kind]++
}

func (c *countNote) problems() []problem {
	kinds := make([]string, 0, len(c.n))
	for k := range c.n {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var out []problem
	for _, k := range kinds {
		msg := fmt.Sprintf("%s: not part of the conversation; left out", k)
		if n := c.n[k]; n > 1 {
			ls := make([]string, len(c.lines[k]))
			for i, l := range c.lines[k] {
				ls[i] = strconv.Itoa(l)
			}
			more := ""
			if n-1 > len(ls) {
				more = fmt.Sprintf(" and %d more", n-1-len(ls))
			}
			msg = fmt.Sprintf("%s (%d of them: here, and at lines %s%s): not part of the conversation; left out", k, n, strings.Join(ls, ", "), more)
		}
		out = append(out, warnAt(c.pos[k], msg))
	}
	return out
}

func newSample(id string, c agenteval.Conversation, md map[string]any) *agenteval.Sample {
	return &agenteval.Sample{ID: id, UserInput: c, Metadata: md}
}

// session is what the coding agents' logs share: one conversation per
// file, and what is known about it.
type session struct {
	s       seq
	id      string
	pos     Pos
	started bool
	models  []string
	cwd     string
	usage   usage
	left    countNote
	first   int64
	last    int64
	md      map[string]any
	// events are the log's lines that are not turns of the conversation
	// (compactions, interruptions, commands, notices), kept in order.
	events []map[string]any
}

// event keeps a line that is not a turn in the metadata; the caller may
// add fields to what it returns.
func (ss *session) event(pos Pos, kind, text string) map[string]any {
	ev := map[string]any{"line": pos.Line, "kind": kind}
	if text != "" {
		ev["text"] = text
	}
	ss.events = append(ss.events, ev)
	return ev
}

// meta sets a metadata field of the sample.
func (ss *session) meta(k string, v any) {
	if ss.md == nil {
		ss.md = map[string]any{}
	}
	ss.md[k] = v
}

// line notes a log line: where the session starts, and its timestamp.
func (ss *session) line(l map[string]any, pos Pos) {
	if !ss.started {
		ss.started, ss.pos = true, pos
	}
	if t := isoNanos(str(l, "timestamp")); t > 0 {
		if ss.first == 0 {
			ss.first = t
		}
		ss.last = t
	}
}

func (ss *session) model(m string) {
	if m != "" && !contains(ss.models, m) {
		ss.models = append(ss.models, m)
	}
}

// finish builds the conversation; nil for an empty file.
func (ss *session) finish(format string) *conv {
	if !ss.started {
		return nil
	}
	md := map[string]any{"source_format": format}
	for k, v := range ss.md {
		md[k] = v
	}
	if len(ss.events) > 0 {
		md["session_events"] = ss.events
	}
	if ss.usage.set {
		md["usage"] = usageMeta(ss.usage)
	}
	if len(ss.models) > 0 {
		md["models"] = ss.models
	}
	if ss.cwd != "" {
		md["cwd"] = ss.cwd
	}
	if ss.last > ss.first && ss.first > 0 {
		md["duration_ms"] = float64((ss.last-ss.first)/1000) / 1000
	}
	return &conv{pos: ss.pos, sample: newSample(ss.id, ss.s.conversation(), md), problems: ss.left.problems()}
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
