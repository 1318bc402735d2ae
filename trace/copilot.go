package trace

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Copilot CLI session events: ~/.copilot/session-state/<session>/
// events.jsonl, one {type, data, id, timestamp, parentId} per line.
// session.start names the session; user.message {content};
// assistant.message {messageId, content, toolRequests: [{toolCallId, name,
// arguments}]}; tool.execution_start {toolCallId, toolName, arguments} and
// tool.execution_complete {toolCallId, success, result: {content}, error};
// assistant.usage {model, inputTokens, outputTokens}; the other session.*
// and assistant.* events are the CLI's own bookkeeping.
//
// Source: github/copilot-sdk, the generated session-events schema
// (nodejs/src/generated/session-events.ts).

func openCopilot(in *input) (convReader, error) {
	st := &copilotState{calls: map[string]bool{}}
	return perFile(in, st.add, st.done)
}

type copilotState struct {
	session
	ad    argDecoder
	calls map[string]bool // tool calls the assistant messages made
}

func (st *copilotState) add(raw json.RawMessage, pos Pos, probs *[]problem) {
	l, err := st.ad.record(raw)
	if err != nil || l == nil {
		*probs = append(*probs, warnAt(pos, notObject(raw, "a Copilot event")))
		return
	}
	st.line(l, pos)
	d := obj(l["data"])
	switch typ := str(l, "type"); typ {
	case "session.start":
		st.id = str(d, "sessionId")
		st.cwd = str(obj(d["context"]), "cwd")
	case "session.model_change":
		st.model(str(d, "newModel"))
	case "user.message":
		st.s.add(msg{role: "user", content: str(d, "content")}, pos, probs)
	case "assistant.message":
		m := msg{role: "assistant", content: str(d, "content")}
		for j, tr := range list(d["toolRequests"]) {
			t := obj(tr)
			c := st.ad.args(t["arguments"], pos, fmt.Sprintf("data.toolRequests[%d]", j), probs)
			c.id, c.name = str(t, "toolCallId"), str(t, "name")
			st.calls[c.id] = true
			m.calls = append(m.calls, c)
		}
		st.s.add(m, pos, probs)
	case "assistant.reasoning":
		st.s.add(msg{role: "assistant", reasoning: str(d, "content")}, pos, probs)
	case "tool.execution_start":
		// Calls the assistant message did not list (older CLIs) still count.
		if id := str(d, "toolCallId"); !st.calls[id] {
			c := st.ad.args(d["arguments"], pos, "data.arguments", probs)
			c.id, c.name = id, str(d, "toolName")
			st.calls[id] = true
			st.s.add(msg{role: "assistant", calls: []call{c}}, pos, probs)
		}
	case "tool.execution_complete":
		res := obj(d["result"])
		content := str(res, "content")
		isErr := d["success"] == false
		if e := obj(d["error"]); e != nil && content == "" {
			content = "error: " + str(e, "message")
		}
		st.s.result(msg{content: content, callID: str(d, "toolCallId"), isError: isErr}, pos, probs)
	case "assistant.usage":
		st.model(str(d, "model"))
		if n, ok := intOf(d["inputTokens"]); ok {
			st.usage.input, st.usage.set = st.usage.input+n, true
		}
		if n, ok := intOf(d["outputTokens"]); ok {
			st.usage.output, st.usage.set = st.usage.output+n, true
		}
		if n, ok := intOf(d["cacheReadTokens"]); ok {
			st.usage.cacheRead += n
		}
	case "assistant.turn_start", "assistant.turn_end", "assistant.intent", "session.info", "session.idle", "session.resume",
		"session.usage_info", "session.compaction_start",
		"assistant.message_delta", "assistant.reasoning_delta", "tool.execution_progress", "tool.execution_partial_result",
		"session.title_changed", "session.mode_changed", "session.plan_changed", "tool.user_requested":
	case "abort":
		st.event(pos, "interrupt", str(d, "reason"))
	case "session.error":
		st.event(pos, "error", str(d, "message", "errorType"))
	case "session.truncation", "session.compaction_complete":
		ev := st.event(pos, strings.TrimPrefix(typ, "session."), str(d, "summaryContent", "summary"))
		if d != nil {
			ev["data"] = d
		}
	default:
		st.left.add(fmt.Sprintf("events of type %q", typ), pos)
	}
}

func (st *copilotState) done() *conv { return st.finish("copilot") }
