package trace

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Claude Code session logs: ~/.claude/projects/<project>/<session>.jsonl,
// one JSON object per line. Lines of type user and assistant hold an
// Anthropic message: content is text or a list of blocks (text, thinking,
// tool_use {id, name, input}, tool_result {tool_use_id, content,
// is_error}). A streamed assistant message is written as several lines
// with the same message.id, one block each. Tool results come back in
// user lines. isSidechain lines belong to subagents, isMeta lines are
// context the CLI injected; summary, system and file-history-snapshot
// lines are bookkeeping.
//
// Source: Anthropic Claude Code documentation (data usage, session
// storage) and the Messages API content blocks; anthropics/claude-code
// issues describing the transcript format.

func openClaude(in *input) (convReader, error) {
	st := &claudeState{}
	return perFile(in, st.add, st.done)
}

type claudeState struct {
	session
	ad      argDecoder
	lastMsg string // message.id of the assistant message being streamed
	usageBy map[string]usage
}

func (st *claudeState) add(raw json.RawMessage, pos Pos, probs *[]problem) {
	l, _ := st.ad.record(raw)
	if l == nil {
		return
	}
	st.line(l, pos)
	if st.id == "" {
		st.id = str(l, "sessionId")
	}
	if st.cwd == "" {
		st.cwd = str(l, "cwd")
	}
	typ := str(l, "type")
	switch typ {
	case "user", "assistant":
	case "summary", "file-history-snapshot", "queue-operation", "system":
		return
	default:
		st.left.add(fmt.Sprintf("lines of type %q", typ), pos)
		return
	}
	if l["isSidechain"] == true {
		st.left.add("subagent (sidechain) lines", pos)
		return
	}
	m := obj(l["message"])
	if m == nil {
		return
	}
	if typ == "assistant" {
		st.assistant(m, pos, probs)
		return
	}
	st.lastMsg = ""
	if l["isMeta"] == true {
		body := contentText(m["content"], pos, "message.content", probs)
		if body.Text != "" || len(body.Parts) > 0 {
			st.s.add(msg{role: "system", content: body.Text, parts: body.Parts})
		}
		return
	}
	st.user(m, pos, probs)
}

func (st *claudeState) user(m map[string]any, pos Pos, probs *[]problem) {
	blocks, ok := m["content"].([]any)
	if !ok {
		st.s.add(msg{role: "user", content: str(m, "content")})
		return
	}
	var texts []string
	for i, b := range blocks {
		bm := obj(b)
		switch t := str(bm, "type"); t {
		case "text":
			texts = append(texts, str(bm, "text"))
		case "tool_result":
			body := contentText(bm["content"], pos, fmt.Sprintf("message.content[%d].content", i), probs)
			st.s.result(msg{content: body.Text, parts: body.Parts, callID: str(bm, "tool_use_id"), isError: bm["is_error"] == true})
		case "image", "document":
			*probs = append(*probs, warnAt(pos, fmt.Sprintf("message.content[%d] is an %s; left out", i, t)))
		default:
			*probs = append(*probs, warnAt(pos, fmt.Sprintf("message.content[%d] has type %q; left out", i, t)))
		}
	}
	if len(texts) > 0 {
		st.s.add(msg{role: "user", content: strings.Join(texts, "\n")})
	}
}

func (st *claudeState) assistant(m map[string]any, pos Pos, probs *[]problem) {
	id := str(m, "id")
	if model := str(m, "model"); model != "<synthetic>" {
		st.model(model)
	}
	if u := obj(m["usage"]); u != nil && id != "" {
		if st.usageBy == nil {
			st.usageBy = map[string]usage{}
		}
		var us usage
		us.input, _ = intOf(u["input_tokens"])
		us.output, _ = intOf(u["output_tokens"])
		us.cacheRead, _ = intOf(u["cache_read_input_tokens"])
		us.set = true
		// Each streamed line repeats the message's usage so far; the last wins.
		st.usageBy[id] = us
	}
	out := msg{role: "assistant"}
	var texts, thinking []string
	blocks, ok := m["content"].([]any)
	if !ok {
		texts = append(texts, str(m, "content"))
	}
	for i, b := range blocks {
		bm := obj(b)
		switch t := str(bm, "type"); t {
		case "text":
			texts = append(texts, str(bm, "text"))
		case "thinking":
			thinking = append(thinking, str(bm, "thinking"))
		case "redacted_thinking":
		case "tool_use", "server_tool_use":
			c := st.ad.args(bm["input"], pos, fmt.Sprintf("message.content[%d].input", i), probs)
			c.id, c.name = str(bm, "id"), str(bm, "name")
			out.calls = append(out.calls, c)
		default:
			*probs = append(*probs, warnAt(pos, fmt.Sprintf("message.content[%d] has type %q; left out", i, t)))
		}
	}
	out.content = strings.Join(texts, "\n")
	out.reasoning = strings.Join(thinking, "\n")
	n := len(st.s.msgs)
	if id != "" && id == st.lastMsg && n > 0 && st.s.msgs[n-1].role == "assistant" {
		// The next block of the message being streamed.
		last := &st.s.msgs[n-1]
		last.content = joinNonEmpty(last.content, out.content)
		last.reasoning = joinNonEmpty(last.reasoning, out.reasoning)
		last.calls = append(last.calls, out.calls...)
		return
	}
	st.lastMsg = id
	st.s.msgs = append(st.s.msgs, out)
}

func (st *claudeState) done() *conv {
	for _, us := range st.usageBy {
		st.usage.add(us)
	}
	return st.finish("claude")
}
