package trace

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// The OpenAI Agents SDK's trace export: objects {object: "trace", id,
// workflow_name, group_id} and {object: "trace.span", id, trace_id,
// parent_id, started_at, ended_at, span_data, error}, one per line, in a
// JSON array, or in the {"data": [...]} batches its exporter sends.
// span_data.type is agent, function {name, input, output}, generation
// {input, output, model, usage}, response {response_id, usage}, handoff,
// guardrail, custom, mcp_tools, transcription or speech.
//
// Source: openai/openai-agents-python, src/agents/tracing/spans.py,
// traces.py and span_data.py (export methods).

func openAgents(in *input) (convReader, error) {
	return newGrouped(in, "openai-agents", scanAgents)
}

func scanAgents(r io.Reader, _ bool, yield func(*record, error) bool) {
	var ad argDecoder
	err := streamItems(r, []string{"data"}, func(raw json.RawMessage, _ map[string]json.RawMessage, pos Pos, bad error) bool {
		if bad != nil {
			return yield(&record{pos: pos, broken: true, problems: []problem{errAt(pos, bad.Error())}}, nil)
		}
		o, err := ad.record(raw)
		if err != nil || o == nil {
			why := "it is not a JSON object"
			if err != nil {
				why = err.Error()
			}
			return yield(&record{pos: pos, broken: true, problems: []problem{errAt(pos, fmt.Sprintf("not an Agents SDK trace object: %s; it is left out", why))}}, nil)
		}
		return yield(mapAgents(&ad, o, pos), nil)
	})
	if err != nil {
		yield(nil, err)
	}
}

func mapAgents(ad *argDecoder, o map[string]any, pos Pos) *record {
	r := &record{pos: pos}
	switch str(o, "object") {
	case "trace":
		// The trace names the conversation its spans belong to.
		r.trace, r.conv, r.kind, r.name = str(o, "id"), idText(o["group_id"]), kindIgnored, str(o, "workflow_name")
		return r
	case "trace.span":
	default:
		r.kind = kindOther
		r.name = str(o, "object")
		r.problems = append(r.problems, warnAt(pos, fmt.Sprintf("object %q is not a trace or trace.span; left out", r.name)))
		return r
	}
	r.trace, r.span, r.parent = str(o, "trace_id"), str(o, "id"), idText(o["parent_id"])
	r.start, r.end = isoNanos(str(o, "started_at")), isoNanos(str(o, "ended_at"))
	if e := obj(o["error"]); e != nil {
		r.errText = str(e, "message")
		if detail := str(obj(e["data"]), "error"); detail != "" {
			r.errText += ": " + detail
		}
		if r.errText == "" {
			r.errText = "error"
		}
	}
	d := obj(o["span_data"])
	typ := str(d, "type")
	r.name = typ
	switch typ {
	case "agent":
		r.kind, r.agent = kindAgent, str(d, "name")
		r.name = "agent " + r.agent
	case "function":
		r.kind = kindTool
		r.name = "function " + str(d, "name")
		t := &toolExec{}
		t.call = ad.args(ad.structured(d["input"]), pos, "function "+str(d, "name"), &r.problems)
		t.call.name = str(d, "name")
		if out, ok := d["output"]; ok && out != nil {
			t.result, t.hasResult = ad.text(out), true
		}
		if r.errText != "" {
			t.isError = true
			if !t.hasResult {
				t.result, t.hasResult = "error: "+r.errText, true
			}
		}
		r.tool = t
	case "generation":
		r.kind = kindLLM
		r.model = str(d, "model")
		r.input = ad.openAIMessages(d["input"], pos, "generation input", &r.problems)
		out, respID, u := completionOutput(d["output"])
		r.output = firstChoice(ad.openAIMessages(out, pos, "generation output", &r.problems), pos, "generation output", &r.problems)
		r.respID = respID
		r.usage = agentsUsage(d["usage"])
		if !r.usage.set {
			r.usage = agentsUsage(u)
		}
	case "response":
		r.kind = kindLLM
		r.respID = str(d, "response_id")
		r.usage = agentsUsage(d["usage"])
		r.problems = append(r.problems, warnAt(pos, "response spans carry only a response id (the SDK does not export the Responses API's messages); "+
			"the conversation holds what the function and generation spans give"))
	case "handoff":
		r.kind = kindIgnored
	case "guardrail", "mcp_tools":
		r.kind = kindIgnored
	case "custom":
		switch str(d, "name") {
		case "task", "turn":
			// The SDK's own run and turn markers: their usage repeats
			// the model calls'.
			r.kind = kindIgnored
		default:
			r.kind = kindOther
			r.name = "custom " + str(d, "name")
		}
	default:
		r.kind = kindOther
	}
	return r
}

// idText is an id that may be null.
func idText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return ""
}

// completionOutput reads a generation's output. The Python SDK writes the
// messages the model returned; the JavaScript SDK writes the whole
// ChatCompletion object ({id, object: "chat.completion", choices:
// [{message}], usage}), whose first choice's message is the reply (the
// others are alternatives, which firstChoice reports).
func completionOutput(v any) (out any, respID string, u any) {
	items := list(v)
	if items == nil {
		if m := obj(v); m != nil {
			items = []any{m}
		} else {
			return v, "", nil
		}
	}
	msgs := make([]any, 0, len(items))
	for _, it := range items {
		m := obj(it)
		if str(m, "object") == "response" {
			// The Python SDK's streamed chat completions: the Response it
			// assembles from the stream.
			if respID == "" {
				respID = str(m, "id")
			}
			if u == nil {
				u = m["usage"]
			}
			msgs = append(msgs, responseMessage(m))
			continue
		}
		if str(m, "object") != "chat.completion" {
			msgs = append(msgs, it)
			continue
		}
		if respID == "" {
			respID = str(m, "id")
		}
		if u == nil {
			u = m["usage"]
		}
		for _, c := range list(m["choices"]) {
			if msg := obj(c)["message"]; msg != nil {
				msgs = append(msgs, msg)
			}
		}
	}
	return msgs, respID, u
}

// responseMessage is the assistant message of a Responses API response:
// its output_text parts and its function calls.
func responseMessage(resp map[string]any) map[string]any {
	var texts []string
	var calls []any
	for _, it := range list(resp["output"]) {
		im := obj(it)
		switch str(im, "type") {
		case "message":
			for _, c := range list(im["content"]) {
				if cm := obj(c); str(cm, "type") == "output_text" {
					texts = append(texts, str(cm, "text"))
				}
			}
		case "function_call":
			calls = append(calls, map[string]any{"id": str(im, "call_id"), "type": "function",
				"function": map[string]any{"name": str(im, "name"), "arguments": im["arguments"]}})
		}
	}
	m := map[string]any{"role": "assistant", "content": strings.Join(texts, "\n")}
	if len(calls) > 0 {
		m["tool_calls"] = calls
	}
	return m
}

func agentsUsage(v any) usage {
	m := obj(v)
	if m == nil {
		return usage{}
	}
	var u usage
	if n, ok := intOf(m["input_tokens"]); ok {
		u.input, u.set = n, true
	} else if n, ok := intOf(m["prompt_tokens"]); ok {
		u.input, u.set = n, true
	}
	if n, ok := intOf(m["output_tokens"]); ok {
		u.output, u.set = n, true
	} else if n, ok := intOf(m["completion_tokens"]); ok {
		u.output, u.set = n, true
	}
	return u
}

// isoNanos parses an ISO 8601 time as unix nanoseconds; 0 when absent.
func isoNanos(s string) int64 {
	if s == "" {
		return 0
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999", "2006-01-02T15:04:05.999999-07:00", "2006-01-02 15:04:05.999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UnixNano()
		}
	}
	return 0
}
