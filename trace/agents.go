package trace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
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

type agentsObject struct {
	Object    string         `json:"object"`
	ID        string         `json:"id"`
	TraceID   string         `json:"trace_id"`
	ParentID  string         `json:"parent_id"`
	GroupID   string         `json:"group_id"`
	Workflow  string         `json:"workflow_name"`
	StartedAt string         `json:"started_at"`
	EndedAt   string         `json:"ended_at"`
	SpanData  map[string]any `json:"span_data"`
	Error     map[string]any `json:"error"`
}

func scanAgents(r io.Reader, _ bool, yield func(*record, error) bool) {
	err := streamItems(r, []string{"data"}, func(raw json.RawMessage, _ map[string]json.RawMessage, pos Pos, bad error) bool {
		if bad != nil {
			return yield(&record{pos: pos, broken: true, problems: []problem{errAt(pos, bad.Error())}}, nil)
		}
		var o agentsObject
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&o); err != nil {
			return yield(&record{pos: pos, broken: true, problems: []problem{errAt(pos, fmt.Sprintf("not an Agents SDK trace object: %v; it is left out", err))}}, nil)
		}
		return yield(mapAgents(&o, pos), nil)
	})
	if err != nil {
		yield(nil, err)
	}
}

func mapAgents(o *agentsObject, pos Pos) *record {
	r := &record{pos: pos}
	switch o.Object {
	case "trace":
		// The trace names the conversation its spans belong to.
		r.trace, r.conv, r.kind, r.name = o.ID, o.GroupID, kindIgnored, o.Workflow
		return r
	case "trace.span":
	default:
		r.kind = kindOther
		r.name = o.Object
		r.problems = append(r.problems, warnAt(pos, fmt.Sprintf("object %q is not a trace or trace.span; left out", o.Object)))
		return r
	}
	r.trace, r.span = o.TraceID, o.ID
	r.start, r.end = isoNanos(o.StartedAt), isoNanos(o.EndedAt)
	if o.Error != nil {
		r.errText = str(o.Error, "message")
		if detail := str(obj(o.Error["data"]), "error"); detail != "" {
			r.errText += ": " + detail
		}
		if r.errText == "" {
			r.errText = "error"
		}
	}
	d := o.SpanData
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
		t.call = parseArgs(structured(d["input"]), pos, "function "+str(d, "name"), &r.problems)
		t.call.name = str(d, "name")
		if out, ok := d["output"]; ok && out != nil {
			t.result, t.hasResult = text(out), true
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
		r.input = openAIMessages(d["input"], pos, "generation input", &r.problems)
		r.output = firstChoice(openAIMessages(d["output"], pos, "generation output", &r.problems), pos, "generation output", &r.problems)
		r.usage = agentsUsage(d["usage"])
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
