package trace

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Inspect eval logs, as `inspect log convert --to json` writes them:
// {version, status, eval: {task, model, ...}, results, stats, samples: [{id,
// epoch, input, target, messages: [{role, content, tool_calls: [{id,
// function, arguments}], tool_call_id, function, error}], output, scores:
// {name: {value, answer, explanation}}, metadata, model_usage}]}. Each
// sample is a conversation; its target is the reference, its scores and
// metadata are kept in the sample's metadata.
//
// Source: UKGovernmentBEIS/inspect_ai, src/inspect_ai/log/_log.py
// (EvalLog, EvalSample) and model/_chat_message.py, tool/_tool_call.py.

func openInspect(in *input) (convReader, error) {
	if isZip(in.head()) {
		return openInspectEval(in)
	}
	return perItem(in, []string{"samples"}, inspectSample)
}

func inspectSample(raw json.RawMessage, parent map[string]json.RawMessage, pos Pos) *conv {
	c := &conv{pos: pos}
	var ad argDecoder
	s, _ := ad.record(raw)
	if s == nil {
		c.problems = append(c.problems, errAt(pos, "an Inspect sample must be a JSON object"))
		return c
	}
	if _, ok := s["messages"]; !ok {
		if _, isLog := s["eval"]; isLog {
			c.problems = append(c.problems, errAt(pos, "this Inspect log has no samples; write them with `inspect log convert --to json` from a log that kept them"))
			return c
		}
	}
	if att := obj(s["attachments"]); att != nil {
		// Long content is kept once, in the sample's attachments, and
		// named where it was: "attachment://<hash>".
		missing := 0
		for _, k := range []string{"messages", "output"} {
			s[k] = resolveAttachments(s[k], att, &missing)
		}
		if missing > 0 {
			c.problems = append(c.problems, warnAt(pos, fmt.Sprintf("%d attachment:// references name no attachment of the sample; kept as written", missing)))
		}
	}
	md := map[string]any{"source_format": "inspect"}
	if ev := parent["eval"]; ev != nil {
		e := decodeItem(ev)
		for _, k := range []string{"task", "model", "run_id", "eval_id"} {
			if v := str(e, k); v != "" {
				md["inspect_"+k] = v
			}
		}
	}
	var seqm seq
	for i, it := range list(s["messages"]) {
		m := obj(it)
		if m == nil {
			continue
		}
		where := fmt.Sprintf("messages[%d]", i)
		body := contentText(m["content"], pos, where, &c.problems)
		om := msg{role: normRole(str(m, "role")), content: body.Text, parts: body.Parts, reasoning: body.Reasoning, callID: str(m, "tool_call_id"), name: str(m, "function")}
		if e := obj(m["error"]); e != nil {
			om.isError = true
			if om.content == "" {
				om.content = "error: " + str(e, "message")
			}
		}
		for j, tc := range list(m["tool_calls"]) {
			t := obj(tc)
			cl := ad.args(t["arguments"], pos, fmt.Sprintf("%s.tool_calls[%d]", where, j), &c.problems)
			cl.id, cl.name = str(t, "id"), str(t, "function")
			if pe := str(t, "parse_error"); pe != "" {
				c.problems = append(c.problems, warnAt(pos, fmt.Sprintf("%s.tool_calls[%d]: Inspect could not parse the model's arguments: %s", where, j, pe)))
			}
			om.calls = append(om.calls, cl)
		}
		if om.role == "" {
			c.problems = append(c.problems, warnAt(pos, fmt.Sprintf("%s: unknown role %q; left out", where, str(m, "role"))))
			continue
		}
		seqm.push(om, pos, &c.problems)
	}
	id := str(s, "id")
	if ep, ok := intOf(s["epoch"]); ok && ep > 1 {
		id = fmt.Sprintf("%s-epoch-%d", id, ep)
	}
	if sc := obj(s["scores"]); sc != nil {
		md["inspect_scores"] = sc
	}
	if m := obj(s["metadata"]); len(m) > 0 {
		md["inspect_metadata"] = m
	}
	var u usage
	for _, mu := range obj(s["model_usage"]) {
		um := obj(mu)
		if n, ok := intOf(um["input_tokens"]); ok {
			u.input, u.set = u.input+n, true
		}
		if n, ok := intOf(um["output_tokens"]); ok {
			u.output, u.set = u.output+n, true
		}
	}
	if u.set {
		md["usage"] = usageMeta(u)
	}
	if t, ok := s["total_time"]; ok && t != nil {
		md["total_time_s"] = t
	}
	if e := obj(s["error"]); e != nil {
		md["error"] = str(e, "message")
	}
	sample := newSample(id, seqm.conversation(), md)
	switch t := s["target"].(type) {
	case string:
		sample.Reference = t
	case []any:
		var parts []string
		for _, p := range t {
			if ps, ok := p.(string); ok {
				parts = append(parts, ps)
			}
		}
		sample.Reference = strings.Join(parts, "\n")
	}
	c.sample = sample
	return c
}

const attachmentPrefix = "attachment://"

// resolveAttachments replaces each string "attachment://<hash>" in v by
// the attachment it names, in place (maps keep their identity, and so
// their key order).
func resolveAttachments(v any, att map[string]any, missing *int) any {
	switch x := v.(type) {
	case string:
		if strings.HasPrefix(x, attachmentPrefix) {
			if a, ok := att[strings.TrimPrefix(x, attachmentPrefix)].(string); ok {
				return a
			}
			*missing++
		}
	case map[string]any:
		for k, e := range x {
			x[k] = resolveAttachments(e, att, missing)
		}
	case []any:
		for i, e := range x {
			x[i] = resolveAttachments(e, att, missing)
		}
	}
	return v
}
