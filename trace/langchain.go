package trace

import (
	"encoding/json"
	"fmt"
	"strings"
)

// LangChain and LangGraph message dumps:
//
//   - messages_to_dict: [{type: human|ai|system|tool, data: {content,
//     tool_calls: [{name, args, id}], tool_call_id, usage_metadata}}];
//   - dumpd: {lc: 1, type: constructor, id: [..., "AIMessage"], kwargs};
//   - model_dump: the message fields flat, with type;
//   - LangGraph state snapshots: {"messages": [...]}, with a thread id in
//     thread_id or config.configurable.thread_id when there is one.
//
// A file holding one list of messages is one conversation; a JSON lines
// file holds one list or state per line.
//
// Source: langchain-ai/langchain, libs/core/langchain_core/messages/base.py
// (messages_to_dict, message_to_dict), ai.py (tool_calls, usage_metadata),
// and load/dump.py (dumpd).

func openLangChain(in *input) (convReader, error) {
	r, err := in.reader()
	if err != nil {
		return nil, err
	}
	return newPullReader(nil, func(yield func(*conv, error) bool) {
		n := 0
		err := streamValues(r, func(raw json.RawMessage, _ map[string]json.RawMessage, pos Pos, bad error) bool {
			n++
			if bad != nil {
				return yield(&conv{pos: pos, problems: []problem{errAt(pos, bad.Error())}}, nil)
			}
			return yield(langChainConv(raw, pos, n), nil)
		})
		if err != nil {
			yield(nil, err)
		}
	}), nil
}

func langChainConv(raw json.RawMessage, pos Pos, n int) *conv {
	c := &conv{pos: pos}
	var ad argDecoder
	v, err := ad.decode(string(raw))
	if err != nil {
		c.problems = append(c.problems, errAt(pos, "malformed JSON: "+err.Error()))
		return c
	}
	id := ""
	md := map[string]any{"source_format": "langchain"}
	var items []any
	switch x := v.(type) {
	case []any:
		items = x
	case map[string]any:
		if msgs, ok := x["messages"]; ok {
			items = list(msgs)
			id = str(x, "thread_id", "id", "session_id")
			if id == "" {
				id = str(obj(obj(x["config"])["configurable"]), "thread_id")
			}
			if m := obj(x["metadata"]); m != nil {
				md["langgraph"] = m
			}
		} else {
			items = []any{x}
		}
	default:
		c.problems = append(c.problems, errAt(pos, "expected a list of LangChain messages or a {\"messages\": [...]} state"))
		return c
	}
	var s seq
	for i, it := range items {
		m := obj(it)
		if m == nil {
			c.problems = append(c.problems, warnAt(pos, fmt.Sprintf("messages[%d] is not a message object; left out", i)))
			continue
		}
		lm, ok := langChainMessage(&ad, m, pos, fmt.Sprintf("messages[%d]", i), &c.problems, &s.usage)
		if ok {
			s.push(lm, pos, &c.problems)
		}
	}
	if id == "" {
		id = fmt.Sprintf("conversation-%d", n)
	}
	if s.usage.set {
		md["usage"] = usageMeta(s.usage)
	}
	c.sample = newSample(id, s.conversation(), md)
	return c
}

// langChainMessage reads one message in any of the dump forms.
func langChainMessage(ad *argDecoder, m map[string]any, pos Pos, where string, probs *[]problem, u *usage) (msg, bool) {
	typ := str(m, "type")
	data := obj(m["data"])
	switch {
	case m["lc"] != nil:
		// dumpd: the class name is the last element of id.
		ids := list(m["id"])
		if len(ids) > 0 {
			typ, _ = ids[len(ids)-1].(string)
		}
		data = obj(m["kwargs"])
	case data == nil:
		data = m
	}
	role := langChainRole(typ)
	if role == "" {
		role = normRole(str(data, "role"))
	}
	if role == "" {
		*probs = append(*probs, warnAt(pos, fmt.Sprintf("%s: unknown message type %q; left out", where, typ)))
		return msg{}, false
	}
	body := contentText(data["content"], pos, where, probs)
	out := msg{role: role, content: body.Text, parts: body.Parts, reasoning: body.Reasoning, callID: str(data, "tool_call_id"), name: str(data, "name")}
	if role == "tool" && str(data, "status") == "error" {
		out.isError = true
	}
	out.calls = ad.calls(toolCalls(data["tool_calls"], pos, where+".tool_calls", probs))
	if len(out.calls) == 0 {
		// Older dumps keep OpenAI's raw calls in additional_kwargs.
		out.calls = ad.calls(toolCalls(obj(data["additional_kwargs"])["tool_calls"], pos, where+".additional_kwargs.tool_calls", probs))
	}
	for j, tc := range list(data["invalid_tool_calls"]) {
		t := obj(tc)
		c := call{id: str(t, "id"), name: str(t, "name"), rawArgs: str(t, "args")}
		*probs = append(*probs, warnAt(pos, fmt.Sprintf("%s.invalid_tool_calls[%d]: the model's arguments did not parse (%s); kept as raw text", where, j, str(t, "error"))))
		out.calls = append(out.calls, c)
	}
	if um := obj(data["usage_metadata"]); um != nil {
		if n, ok := intOf(um["input_tokens"]); ok {
			u.input, u.set = u.input+n, true
		}
		if n, ok := intOf(um["output_tokens"]); ok {
			u.output, u.set = u.output+n, true
		}
	}
	return out, true
}

// langChainRole is the role of a LangChain message type or class name
// (human, AIMessage, ToolMessageChunk), by the one table of role names.
func langChainRole(typ string) string {
	t := strings.TrimSuffix(strings.TrimSuffix(typ, "Chunk"), "Message")
	if strings.EqualFold(t, "chat") {
		// ChatMessage carries any role; the message's own role says which.
		return ""
	}
	return normRole(t)
}
