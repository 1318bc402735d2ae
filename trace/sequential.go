package trace

import (
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"sort"
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
	return newPullReader(nil, func(yield func(*conv, error) bool) {
		var probs []problem
		err := streamItems(r, nil, func(raw json.RawMessage, _ map[string]json.RawMessage, pos Pos, bad error) bool {
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
		if c != nil {
			c.problems = append(probs, c.problems...)
			if !yield(c, nil) {
				return
			}
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
type seq struct {
	msgs  []msg
	usage usage
}

func (s *seq) add(m msg) {
	if n := len(s.msgs); n > 0 && m.role == "assistant" && s.msgs[n-1].role == "assistant" {
		last := &s.msgs[n-1]
		if strings.TrimSpace(m.content) == "" && (len(m.calls) > 0 || m.reasoning != "") {
			last.calls = append(last.calls, m.calls...)
			last.reasoning = joinNonEmpty(last.reasoning, m.reasoning)
			return
		}
		if strings.TrimSpace(last.content) == "" && len(last.calls) == 0 {
			m.reasoning = joinNonEmpty(last.reasoning, m.reasoning)
			*last = m
			return
		}
	}
	s.msgs = append(s.msgs, m)
}

// result adds a tool result after the calls it may answer.
func (s *seq) result(m msg) {
	m.role = "tool"
	s.msgs = append(s.msgs, m)
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

// countNote warns once about things of a kind that were left out.
type countNote struct {
	n   map[string]int
	pos map[string]Pos
}

func (c *countNote) add(kind string, pos Pos) {
	if c.n == nil {
		c.n, c.pos = map[string]int{}, map[string]Pos{}
	}
	if c.n[kind] == 0 {
		c.pos[kind] = pos
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
		out = append(out, warnAt(c.pos[k], fmt.Sprintf("%d %s: not part of the conversation; left out", c.n[k], k)))
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
