package grade

import (
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"github.com/agenteval/agenteval"
)

// A script grader's stdin carries what AgentV 4.42.4's code graders get:
// the graded reply, the transcript as AgentV's messages, and trace, its
// derived record of the run (counts per tool, model calls, each message,
// tool call and tool result as an event, usage, cost and time), all with
// AgentV's field names and meanings. AgentV also renames every key below
// the top level to snake_case (queryText becomes query_text, in tool
// arguments, metadata, config and the per-tool counts alike, except keys
// that begin with a capital letter); so does this payload, for those
// fields, so that a grader reads the same keys here as there.

// avMessage is a message as AgentV's code graders read it.
type avMessage struct {
	Role       string     `json:"role"`
	Name       string     `json:"name,omitempty"`
	Content    any        `json:"content,omitempty"`
	ToolCalls  []avCall   `json:"tool_calls,omitempty"`
	StartTime  string     `json:"start_time,omitempty"`
	EndTime    string     `json:"end_time,omitempty"`
	DurationMS *float64   `json:"duration_ms,omitempty"`
	Metadata   any        `json:"metadata,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"` // ours: a tool message's call, which AgentV's messages do not name
	content    string     // the text, for the final response
	hasContent bool       // whether Content is set
	toolCalls  []avCallIn // the calls as they were, for the events
}

// avCall is a tool call as AgentV's messages hold it: its output with it.
type avCall struct {
	Tool       string   `json:"tool"`
	Input      any      `json:"input,omitempty"`
	Output     any      `json:"output,omitempty"`
	ID         string   `json:"id,omitempty"`
	Status     string   `json:"status,omitempty"`
	StartTime  string   `json:"start_time,omitempty"`
	EndTime    string   `json:"end_time,omitempty"`
	DurationMS *float64 `json:"duration_ms,omitempty"`
}

type avCallIn struct {
	call      agenteval.ToolCall
	input     any
	hasInput  bool
	output    any
	hasOutput bool
}

// avTrace is AgentV's Trace: the summary's fields, then the messages and
// events they are derived from.
type avTrace struct {
	EventCount    int                  `json:"event_count"`
	ToolCalls     map[string]int       `json:"tool_calls"`
	ErrorCount    int                  `json:"error_count"`
	LLMCallCount  int                  `json:"llm_call_count"`
	ToolDurations map[string][]float64 `json:"tool_durations,omitempty"`
	Messages      []avMessage          `json:"messages"`
	Events        []avEvent            `json:"events"`
	TokenUsage    *avTokens            `json:"token_usage,omitempty"`
	CostUSD       *float64             `json:"cost_usd,omitempty"`
	DurationMS    *float64             `json:"duration_ms,omitempty"`
	StartTime     string               `json:"start_time,omitempty"`
	EndTime       string               `json:"end_time,omitempty"`
	Metadata      map[string]any       `json:"metadata"`
}

// avSummary is AgentV's trace_summary, the compact form.
type avSummary struct {
	EventCount    int                  `json:"event_count"`
	ToolCalls     map[string]int       `json:"tool_calls"`
	ErrorCount    int                  `json:"error_count"`
	ToolDurations map[string][]float64 `json:"tool_durations,omitempty"`
	LLMCallCount  int                  `json:"llm_call_count"`
}

type avTokens struct {
	Input  int64  `json:"input"`
	Output int64  `json:"output"`
	Cached *int64 `json:"cached,omitempty"`
}

type avEvent struct {
	EventID    string         `json:"event_id"`
	ParentID   string         `json:"parent_event_id,omitempty"`
	Ordinal    int            `json:"ordinal"`
	Type       string         `json:"type"`
	Timestamp  string         `json:"timestamp,omitempty"`
	DurationMS *float64       `json:"duration_ms,omitempty"`
	Message    *avEventMsg    `json:"message,omitempty"`
	Tool       *avEventTool   `json:"tool,omitempty"`
	Metadata   map[string]int `json:"metadata"`
}

type avEventMsg struct {
	Role     string `json:"role"`
	Name     string `json:"name,omitempty"`
	Content  any    `json:"content,omitempty"`
	Metadata any    `json:"metadata,omitempty"`
}

type avEventTool struct {
	Name   string `json:"name"`
	CallID string `json:"call_id,omitempty"`
	Input  any    `json:"input,omitempty"`
	Output any    `json:"output,omitempty"`
	Status string `json:"status"`
}

// avRun is what a script gets of AgentV's view of the graded unit.
type avRun struct {
	candidate  string
	input      []avMessage
	messages   []avMessage
	inputFiles []string
	trace      *avTrace
	summary    *avSummary
	tokens     *avTokens
	costUSD    *float64
	durationMS *float64
	startTime  *string
	endTime    *string
}

// agentvRun derives AgentV's fields from a grade input: the unit's input
// (the conversation before its reply) and output (the reply) as AgentV's
// buildTraceFromMessages combines them.
func agentvRun(in *agenteval.GradeInput) avRun {
	input, output := splitIO(in)
	var r avRun
	r.candidate = candidate(output)
	r.input = avMessages(input)
	r.inputFiles = inputFiles(input)
	out := avMessages(output)
	if in.Stats != nil {
		u := in.Stats.Usage
		if u.TokensKnown() {
			r.tokens = &avTokens{Input: u.InputTokens, Output: u.OutputTokens}
			if u.CachedTokens != 0 {
				c := u.CachedTokens
				r.tokens.Cached = &c
			}
		}
		r.costUSD = u.CostUSD
		// Whole milliseconds, as AgentV measures them.
		ms := math.Round(in.Stats.LatencyMS)
		r.durationMS = &ms
	}
	// The summary counts the reply only; its times span the reply's
	// messages and calls.
	sum, start, end := summarize(out)
	if start != "" {
		r.startTime = &start
	}
	if end != "" {
		r.endTime = &end
	}
	r.summary = &sum
	r.messages = traceMessages(r.input, out)
	t := &avTrace{EventCount: sum.EventCount, ToolCalls: sum.ToolCalls, ErrorCount: sum.ErrorCount, LLMCallCount: sum.LLMCallCount,
		ToolDurations: sum.ToolDurations, Messages: r.messages, TokenUsage: r.tokens, CostUSD: r.costUSD, DurationMS: r.durationMS,
		StartTime: start, EndTime: end, Metadata: map[string]any{}}
	t.Events = traceEvents(r.messages, r.candidate, end)
	if in.Target != "" {
		t.Metadata["target"] = in.Target
	}
	if in.TestID != "" {
		t.Metadata["eval_case_id"] = in.TestID
	}
	r.trace = t
	return r
}

// splitIO is the unit's input and output: at a turn, the history before
// the turn's reply and the reply; for a whole conversation, what came
// before the graded tail and the tail (a recorded sample: nothing, and
// all of it).
func splitIO(in *agenteval.GradeInput) (agenteval.Conversation, agenteval.Conversation) {
	n := len(in.Output)
	if n <= len(in.Transcript) {
		return in.Transcript[:len(in.Transcript)-n], in.Output
	}
	return nil, in.Output
}

// candidate is AgentV's graded answer: the content of the last assistant
// message that has some. An assistant message that only calls tools has
// none.
func candidate(c agenteval.Conversation) string {
	for i := len(c) - 1; i >= 0; i-- {
		if m := c[i]; m.Role == agenteval.RoleAssistant && (m.Content != "" || len(m.ToolCalls) == 0) {
			return m.Content
		}
	}
	return ""
}

// inputFiles are the files the input's content blocks attached, as
// absolute paths in the order written: AgentV's input_files.
func inputFiles(c agenteval.Conversation) []string {
	files := []string{}
	for _, m := range c {
		for _, p := range m.Parts {
			if p.Type != "file" || p.Path == "" {
				continue
			}
			path := p.Path
			if abs, err := filepath.Abs(path); err == nil {
				path = abs
			}
			files = append(files, path)
		}
	}
	return files
}

// avMessages turns a conversation into AgentV's messages: a tool call
// carries its result as output, and the tool message that held it is
// left out, as AgentV's agents report results.
func avMessages(c agenteval.Conversation) []avMessage {
	answered := map[int]bool{}
	results := map[[2]int]string{}
	for i := 0; i < len(c); i++ {
		m := c[i]
		if m.Role != agenteval.RoleAssistant || len(m.ToolCalls) == 0 {
			continue
		}
		// The tool messages after the call block answer its calls: by ID,
		// or else the first call without an answer, when the message does
		// not name another tool. (A tool message of a cli target's own,
		// after the results of its calls, stays a message, as in AgentV.)
		done := make([]bool, len(m.ToolCalls))
		for j := i + 1; j < len(c) && c[j].Role == agenteval.RoleTool; j++ {
			k := -1
			if id := c[j].ToolCallID; id != "" {
				for x, tc := range m.ToolCalls {
					if tc.ID == id && !done[x] {
						k = x
						break
					}
				}
			} else {
				for x, tc := range m.ToolCalls {
					if !done[x] {
						if c[j].Name == "" || c[j].Name == tc.Name {
							k = x
						}
						break
					}
				}
			}
			if k < 0 {
				continue
			}
			done[k], answered[j] = true, true
			results[[2]int{i, k}] = c[j].Content
		}
	}
	out := []avMessage{}
	for i, m := range c {
		if answered[i] {
			continue
		}
		am := avMessage{Role: string(m.Role), Name: m.Name, StartTime: m.StartTime, EndTime: m.EndTime, content: m.Content}
		if m.Role == agenteval.RoleTool {
			am.ToolCallID = m.ToolCallID
		}
		// An assistant message that only calls tools has no content, as
		// in AgentV's; any other has its text, even empty.
		if m.Content != "" || len(m.ToolCalls) == 0 || m.Role != agenteval.RoleAssistant {
			am.Content, am.hasContent = m.Content, true
		}
		if m.DurationMS != 0 {
			d := m.DurationMS
			am.DurationMS = &d
		}
		if len(m.Metadata) > 0 {
			am.Metadata = snakeDeep(m.Metadata)
		}
		for k, tc := range m.ToolCalls {
			ci := avCallIn{call: tc}
			call := avCall{Tool: tc.Name, ID: tc.ID, Status: tc.Status, StartTime: tc.StartTime, EndTime: tc.EndTime}
			switch {
			case tc.Args != nil:
				ci.input, ci.hasInput = snakeDeep(map[string]any(tc.Args)), true
			case tc.RawArgs != "":
				var v any
				if json.Unmarshal([]byte(tc.RawArgs), &v) != nil {
					v = tc.RawArgs
				}
				ci.input, ci.hasInput = snakeDeep(v), true
			}
			call.Input = ci.input
			if res, ok := results[[2]int{i, k}]; ok {
				ci.output, ci.hasOutput = resultValue(res), true
				call.Output = ci.output
			}
			if tc.DurationMS != 0 {
				d := tc.DurationMS
				call.DurationMS = &d
			}
			am.ToolCalls = append(am.ToolCalls, call)
			am.toolCalls = append(am.toolCalls, ci)
		}
		out = append(out, am)
	}
	return out
}

// resultValue is a tool's result as a value: JSON objects and lists as
// what they hold (a result an agent reported as an object comes back as
// one), anything else as the text.
func resultValue(s string) any {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
		var v any
		if json.Unmarshal([]byte(t), &v) == nil {
			return snakeDeep(v)
		}
	}
	return s
}

// summarize is AgentV's computeTraceSummary over the reply: tool calls
// counted by name (AgentV's key renaming applies to the names), model
// calls (assistant messages), per-tool durations (reported, or from the
// call's start and end), and the earliest start and latest end given.
func summarize(msgs []avMessage) (avSummary, string, string) {
	s := avSummary{ToolCalls: map[string]int{}}
	var first, last time.Time
	see := func(ts string, end bool) {
		t, ok := parseTime(ts)
		if !ok {
			return
		}
		if !end && (first.IsZero() || t.Before(first)) {
			first = t
		}
		if end && (last.IsZero() || t.After(last)) {
			last = t
		}
	}
	for _, m := range msgs {
		if m.Role == string(agenteval.RoleAssistant) {
			s.LLMCallCount++
		}
		see(m.StartTime, false)
		see(m.EndTime, true)
		for _, ci := range m.toolCalls {
			c := ci.call
			name := snakeKey(c.Name)
			s.ToolCalls[name]++
			s.EventCount++
			see(c.StartTime, false)
			see(c.EndTime, true)
			d, ok := c.DurationMS, c.DurationMS != 0
			if !ok && c.StartTime != "" && c.EndTime != "" {
				t0, ok0 := parseTime(c.StartTime)
				t1, ok1 := parseTime(c.EndTime)
				if ok0 && ok1 {
					d, ok = float64(t1.Sub(t0).Milliseconds()), true
				}
			}
			if ok {
				if s.ToolDurations == nil {
					s.ToolDurations = map[string][]float64{}
				}
				s.ToolDurations[name] = append(s.ToolDurations[name], d)
			}
		}
	}
	iso := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02T15:04:05.000Z")
	}
	return s, iso(first), iso(last)
}

func parseTime(s string) (time.Time, bool) {
	if s == "" {
		return time.Time{}, false
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// traceMessages is the transcript of AgentV's trace: the input, then the
// reply; only the reply when it holds the conversation itself (a user
// or system message), or when it repeats a lone input message.
func traceMessages(input, output []avMessage) []avMessage {
	if len(output) == 0 {
		return input
	}
	for _, m := range output {
		if m.Role == "user" || m.Role == "system" {
			return output
		}
	}
	if len(input) == 1 && input[0].Role == output[0].Role && sameContent(input[0], output[0]) {
		return output
	}
	return append(append([]avMessage{}, input...), output...)
}

func sameContent(a, b avMessage) bool {
	x, _ := json.Marshal(a.Content)
	y, _ := json.Marshal(b.Content)
	return a.hasContent == b.hasContent && string(x) == string(y)
}

// traceEvents are the trace's events, as AgentV derives them: each
// message, each tool call under it, each call's result when it has one,
// and the final response under the last assistant message.
func traceEvents(msgs []avMessage, candidate, end string) []avEvent {
	events := []avEvent{}
	n := 0
	next := func() int { n++; return n - 1 }
	last := -1
	for i, m := range msgs {
		id := "message-" + itoa(i)
		ev := avEvent{EventID: id, Ordinal: next(), Type: "message", Timestamp: m.StartTime, DurationMS: m.DurationMS,
			Message:  &avEventMsg{Role: m.Role, Name: m.Name, Content: m.Content, Metadata: m.Metadata},
			Metadata: map[string]int{"message_index": i}}
		events = append(events, ev)
		for j, ci := range m.toolCalls {
			c := ci.call
			status := c.Status
			if status == "" {
				status = "ok"
			}
			tid := id + "-tool-" + itoa(j)
			meta := map[string]int{"message_index": i, "tool_index": j}
			call := avEvent{EventID: tid, ParentID: id, Ordinal: next(), Type: "tool_call", Timestamp: c.StartTime,
				Tool: &avEventTool{Name: c.Name, CallID: c.ID, Input: ci.input, Output: ci.output, Status: status}, Metadata: meta}
			if c.DurationMS != 0 {
				d := c.DurationMS
				call.DurationMS = &d
			}
			events = append(events, call)
			if ci.hasOutput {
				events = append(events, avEvent{EventID: tid + "-result", ParentID: tid, Ordinal: next(), Type: "tool_result", Timestamp: c.EndTime,
					Tool: &avEventTool{Name: c.Name, CallID: c.ID, Output: ci.output, Status: status}, Metadata: meta})
			}
		}
		if m.Role == string(agenteval.RoleAssistant) {
			last = i
		}
	}
	if last >= 0 {
		m := msgs[last]
		ts := m.EndTime
		if ts == "" {
			ts = m.StartTime
		}
		if ts == "" {
			ts = end
		}
		events = append(events, avEvent{EventID: "final-response", ParentID: "message-" + itoa(last), Ordinal: next(), Type: "final_response", Timestamp: ts,
			Message:  &avEventMsg{Role: m.Role, Name: m.Name, Content: candidate, Metadata: m.Metadata},
			Metadata: map[string]int{"message_index": last}})
	}
	return events
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// snakeKey is AgentV's renaming of a key: each capital letter becomes _
// and its lower case, unless the key begins with one (a tool name such as
// Read stays as it is).
func snakeKey(k string) string {
	if k == "" || (k[0] >= 'A' && k[0] <= 'Z') {
		return k
	}
	var b strings.Builder
	for _, r := range k {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// snakeDeep renames the keys of every object in v, as AgentV renames
// everything it sends a code grader.
func snakeDeep(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[snakeKey(k)] = snakeDeep(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = snakeDeep(e)
		}
		return out
	}
	return v
}
