package trace

import (
	"encoding/json"
	"fmt"
)

// ATIF, the Agent Trajectory Interchange Format of Harbor and
// Terminal-Bench: {schema_version: "ATIF-v1.x", session_id, agent: {name,
// version, model_name}, steps: [{step_id, timestamp, source:
// system|user|agent, message, reasoning_content, tool_calls: [{tool_call_id,
// function_name, arguments}], observation: {results: [{source_call_id,
// content}]}, metrics}], final_metrics}. A file holds one trajectory, or
// one per line.
//
// Source: laude-institute/harbor, docs/rfcs/0001-trajectory-format.md.

func openATIF(in *input) (convReader, error) {
	return perItem(in, nil, atifTrajectory)
}

func atifTrajectory(raw json.RawMessage, _ map[string]json.RawMessage, pos Pos) *conv {
	c := &conv{pos: pos}
	var ad argDecoder
	t, _ := ad.record(raw)
	if t == nil {
		c.problems = append(c.problems, errAt(pos, "an ATIF trajectory must be a JSON object"))
		return c
	}
	md := map[string]any{"source_format": "atif", "schema_version": str(t, "schema_version")}
	if a := obj(t["agent"]); a != nil {
		if n := str(a, "name"); n != "" {
			md["agent"] = n
		}
		if m := str(a, "model_name"); m != "" {
			md["models"] = []string{m}
		}
	}
	var s seq
	var u usage
	for i, it := range list(t["steps"]) {
		st := obj(it)
		if st == nil {
			continue
		}
		where := fmt.Sprintf("steps[%d]", i)
		body := contentText(st["message"], pos, where+".message", &c.problems)
		content, reasoning := body.Text, body.Reasoning
		if r := str(st, "reasoning_content"); r != "" {
			reasoning = joinNonEmpty(reasoning, r)
		}
		var m msg
		switch src := str(st, "source"); src {
		case "system":
			m = msg{role: "system", content: content, parts: body.Parts}
		case "user":
			m = msg{role: "user", content: content, parts: body.Parts}
		case "agent":
			m = msg{role: "assistant", content: content, parts: body.Parts, reasoning: reasoning}
			for j, tc := range list(st["tool_calls"]) {
				tm := obj(tc)
				cl := ad.args(tm["arguments"], pos, fmt.Sprintf("%s.tool_calls[%d]", where, j), &c.problems)
				cl.id, cl.name = str(tm, "tool_call_id"), str(tm, "function_name")
				m.calls = append(m.calls, cl)
			}
		default:
			c.problems = append(c.problems, warnAt(pos, fmt.Sprintf("%s has source %q, not system, user or agent; left out", where, src)))
			continue
		}
		if m.content != "" || len(m.calls) > 0 || m.role == "assistant" {
			s.add(m, pos, &c.problems)
		}
		for j, res := range list(obj(st["observation"])["results"]) {
			rm := obj(res)
			if rm == nil {
				continue
			}
			id := str(rm, "source_call_id")
			if id == "" && len(m.calls) == 0 {
				c.problems = append(c.problems, warnAt(pos, fmt.Sprintf("%s.observation.results[%d] answers no tool call; left out", where, j)))
				continue
			}
			s.result(msg{content: str(rm, "content"), callID: id}, pos, &c.problems)
		}
		if mt := obj(st["metrics"]); mt != nil {
			if n, ok := intOf(mt["prompt_tokens"]); ok {
				u.input, u.set = u.input+n, true
			}
			if n, ok := intOf(mt["completion_tokens"]); ok {
				u.output, u.set = u.output+n, true
			}
			if n, ok := intOf(mt["cached_tokens"]); ok {
				u.cacheRead += n
			}
		}
	}
	if u.set {
		md["usage"] = usageMeta(u)
	}
	if fm := obj(t["final_metrics"]); fm != nil {
		md["final_metrics"] = fm
	}
	c.sample = newSample(str(t, "session_id"), s.conversation(), md)
	return c
}
