package grade

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/redact"
	"github.com/agenteval/agenteval/judge"
)

// InjectionKey is the key of a score's details under which the replies and
// tool traffic that seem to address the grader are listed.
const InjectionKey = "injection_suspected"

// InjectionFlag is one piece of what a judge read that seems to speak to
// the grader rather than to the user: a closing tag of the judge's prompt,
// "ignore previous instructions", a note to the evaluator, a verdict in
// JSON. It is a flag for whoever reads the results, not a verdict: the
// judge was told to treat such text as evidence, and it decided.
type InjectionFlag struct {
	// Turn is the 1-based turn of the message, 0 when unknown.
	Turn int `json:"turn"`
	// Part is "reply", "tool call NAME" or "tool result".
	Part    string `json:"part"`
	Signal  string `json:"signal"`
	Excerpt string `json:"excerpt"`
}

// flagInjection marks a score that a judge helped make (it used judge
// calls, cached or not) when the assistant's replies, tool calls or tool
// results in what the judge read address the grader. The user's messages
// are the test's own input and are not flagged.
func flagInjection(s *agenteval.Score, in *agenteval.GradeInput, usage *agenteval.Usage) {
	if usage == nil || usage.Calls+usage.CachedCalls == 0 || in == nil {
		return
	}
	var flags []InjectionFlag
	for k, turn := range in.Transcript.Turns() {
		flags = append(flags, suspectMessages(turn, k+1)...)
	}
	if !isSuffix(in.Output, in.Transcript) {
		flags = append(flags, suspectMessages(in.Output, in.Turn)...)
	}
	if len(flags) == 0 {
		return
	}
	if s.Details == nil {
		s.Details = map[string]any{}
	}
	s.Details[InjectionKey] = flags
	f := flags[0]
	where := f.Part
	if f.Turn > 0 {
		where = fmt.Sprintf("turn %d %s", f.Turn, f.Part)
	}
	more := ""
	if len(flags) > 1 {
		more = fmt.Sprintf("; %d more in details", len(flags)-1)
	}
	s.Reason += fmt.Sprintf(" [injection suspected: %s %s%s]", where, f.Signal, more)
}

func suspectMessages(conv agenteval.Conversation, turn int) []InjectionFlag {
	var out []InjectionFlag
	add := func(part, text string) {
		found := judge.Suspect(text)
		if len(found) > 0 {
			// An excerpt is a window cut from the text, and it may cut a
			// secret in two: the piece left is no secret the redaction of
			// the written result knows. Hide them before cutting.
			if hidden := redact.String(text); hidden != text {
				found = judge.Suspect(hidden)
			}
		}
		for _, s := range found {
			out = append(out, InjectionFlag{Turn: turn, Part: part, Signal: s.Signal, Excerpt: s.Excerpt})
		}
	}
	for _, m := range conv {
		switch m.Role {
		case agenteval.RoleAssistant:
			add("reply", m.Content)
			for _, c := range m.ToolCalls {
				add("tool call "+c.Name, argsText(c))
			}
		case agenteval.RoleTool:
			add("tool result", m.Content)
		}
	}
	return out
}

// argsText is a call's arguments as the agent wrote them: JSON without
// ArgsText's escaping of "<" and ">", which would hide a closing tag.
func argsText(c agenteval.ToolCall) string {
	if c.Args == nil {
		return c.RawArgs
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(c.Args) != nil {
		return c.ArgsText()
	}
	return b.String()
}

// isSuffix reports whether tail is the end of conv, as a turn's output is
// the end of its transcript.
func isSuffix(tail, conv agenteval.Conversation) bool {
	if len(tail) > len(conv) {
		return false
	}
	base := conv[len(conv)-len(tail):]
	for i := range tail {
		if tail[i].Role != base[i].Role || tail[i].Content != base[i].Content || len(tail[i].ToolCalls) != len(base[i].ToolCalls) {
			return false
		}
	}
	return true
}
