package trace

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/messages"
)

// Codex CLI rollout logs: ~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl.
// Each line is {timestamp, type, payload}: session_meta (id, cwd,
// cli_version), turn_context (model), response_item (the Responses API
// items: message, reasoning, function_call {name, arguments, call_id},
// function_call_output {call_id, output}, custom_tool_call,
// local_shell_call, web_search_call) and event_msg (UI events, among them
// token_count). Rollouts written before the wrapper existed hold the
// response items bare, after a first line {id, timestamp, instructions}.
// User messages that carry <environment_context> or <user_instructions>
// are context the CLI added, and are kept as system messages.
//
// Source: openai/codex, codex-rs/protocol/src/models.rs (ResponseItem)
// and protocol.rs (RolloutItem, SessionMeta, EventMsg).

func openCodex(in *input) (convReader, error) {
	st := &codexState{}
	return perFile(in, st.add, st.done)
}

type codexState struct {
	session
	ad argDecoder
}

func (st *codexState) add(raw json.RawMessage, pos Pos, probs *[]problem) {
	l, err := st.ad.record(raw)
	if err != nil || l == nil {
		*probs = append(*probs, warnAt(pos, notObject(raw, "a Codex rollout line")))
		return
	}
	st.line(l, pos)
	typ := str(l, "type")
	p := obj(l["payload"])
	if p == nil {
		if v, ok := l["payload"]; ok {
			*probs = append(*probs, warnAt(pos, fmt.Sprintf("a %q line whose payload is %s, not an object; left out", typ, messages.KindOf(v))))
			return
		}
		// The older, unwrapped rollout.
		if typ == "" {
			if st.id == "" && l["instructions"] != nil {
				st.id = str(l, "id")
			}
			return
		}
		p, typ = l, "response_item"
	}
	switch typ {
	case "session_meta":
		if st.id == "" {
			st.id = str(p, "id")
		}
		st.cwd = str(p, "cwd")
	case "turn_context":
		st.model(str(p, "model"))
	case "event_msg":
		switch et := str(p, "type"); et {
		case "turn_aborted":
			st.event(pos, "interrupt", str(p, "reason"))
		case "error", "stream_error":
			st.event(pos, et, str(p, "message"))
		case "context_compacted":
			st.event(pos, "compaction", "")
		}
		if str(p, "type") == "token_count" {
			if tu := obj(obj(p["info"])["total_token_usage"]); tu != nil {
				var u usage
				u.input, _ = intOf(tu["input_tokens"])
				u.output, _ = intOf(tu["output_tokens"])
				u.cacheRead, _ = intOf(tu["cached_input_tokens"])
				u.set = true
				st.usage = u // a running total; the last one counts
			}
		}
	case "response_item":
		st.item(p, pos, probs)
	case "compacted":
		// The summary a compaction left in place of the history before it.
		st.event(pos, "compaction_summary", str(p, "message"))
	default:
		st.left.add(fmt.Sprintf("lines of type %q", typ), pos)
	}
}

func (st *codexState) item(p map[string]any, pos Pos, probs *[]problem) {
	switch t := str(p, "type"); t {
	case "message":
		role := normRole(str(p, "role"))
		body := contentText(p["content"], pos, "payload.content", probs)
		content := body.Text
		if role == "user" && isCodexContext(content) {
			role = "system"
		}
		if role == "" {
			*probs = append(*probs, warnAt(pos, fmt.Sprintf("message with role %q; left out", str(p, "role"))))
			return
		}
		st.s.add(msg{role: role, content: content, parts: body.Parts}, pos, probs)
	case "reasoning":
		var texts []string
		for _, s := range list(p["summary"]) {
			texts = append(texts, str(obj(s), "text"))
		}
		if len(texts) > 0 {
			st.s.add(msg{role: "assistant", reasoning: strings.Join(texts, "\n")}, pos, probs)
		}
	case "function_call":
		c := st.ad.args(p["arguments"], pos, "function_call "+str(p, "name"), probs)
		c.id, c.name = str(p, "call_id"), str(p, "name")
		st.s.add(msg{role: "assistant", calls: []call{c}}, pos, probs)
	case "custom_tool_call":
		// Freeform tools (apply_patch) take text, not JSON.
		st.s.add(msg{role: "assistant", calls: []call{{id: str(p, "call_id"), name: str(p, "name"), args: map[string]any{"input": str(p, "input")}}}}, pos, probs)
	case "local_shell_call":
		args := obj(p["action"])
		if args == nil {
			args = map[string]any{}
		}
		st.s.add(msg{role: "assistant", calls: []call{{id: str(p, "call_id", "id"), name: "local_shell", args: args}}}, pos, probs)
	case "web_search_call":
		args := obj(p["action"])
		if args == nil {
			args = map[string]any{}
		}
		st.s.add(msg{role: "assistant", calls: []call{{id: str(p, "id"), name: "web_search", args: args}}}, pos, probs)
	case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
		out := p["output"]
		isErr := false
		if o := obj(out); o != nil {
			// {content, success}, or {content_items, success}
			isErr = o["success"] == false
			if items, ok := o["content_items"]; ok && o["content"] == nil {
				out = items
			} else {
				out = o["content"]
			}
		}
		var parts []agenteval.Part
		if l, ok := out.([]any); ok {
			// A list of input_text and input_image items.
			body := contentText(l, pos, "payload.output", probs)
			out, parts = body.Text, body.Parts
		}
		st.s.result(msg{content: st.ad.text(out), parts: parts, callID: str(p, "call_id"), isError: isErr}, pos, probs)
	case "ghost_snapshot":
		// The CLI's undo snapshot of the working tree.
	default:
		st.left.add(fmt.Sprintf("response items of type %q", t), pos)
	}
}

func isCodexContext(s string) bool {
	t := strings.TrimSpace(s)
	for _, p := range []string{"<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<INSTRUCTIONS>"} {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

func (st *codexState) done() *conv { return st.finish("codex") }
