package trace

import (
	"encoding/json"
	"fmt"
	"strings"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// Langfuse exports: a trace as its API gives it (GET
// /api/public/traces/{id}: {id, sessionId, ..., observations: [...]}),
// one per line or in a list, or observations alone ({data: [...]} from GET
// /api/public/observations). An observation is {id, traceId, type,
// name, startTime, endTime, parentObservationId, input, output, model,
// usageDetails, level, statusMessage}; its type says what it is:
// GENERATION (a model call: input the messages it was sent, output what
// it answered), TOOL (input the arguments, output the result), AGENT,
// and SPAN, CHAIN, EVENT and the like, which are structure. Each is read
// as the span it stands for, with the GenAI attributes that say the same,
// and the trace's sessionId names the conversation.
//
// Source: langfuse/langfuse-js, packages/core (the public API's Trace,
// TraceWithFullDetails and Observation types, @langfuse/core 5.11.1).

func isLangfuseObservation(s *shape) bool {
	return s.has("traceId") && s.has("type") && s.has("startTime") && !s.has("attributes")
}

// isLangfuseTrace matches a trace with its observations.
func isLangfuseTrace(s *shape) bool {
	return s.has("observations") && s.has("id") && (s.has("sessionId") || s.has("timestamp"))
}

// langfuseSpan reads one observation as a span; sessionID is its trace's.
func langfuseSpan(raw json.RawMessage, sessionID string) (*tracepb.Span, error) {
	var ad argDecoder
	m, err := ad.record(raw)
	if err != nil {
		return nil, err
	}
	if m == nil {
		return nil, fmt.Errorf("it is not a JSON object")
	}
	sp := &tracepb.Span{Name: str(m, "name")}
	sp.TraceId = idBytes(strings.ReplaceAll(str(m, "traceId"), "-", ""))
	sp.SpanId = idBytes(strings.ReplaceAll(str(m, "id"), "-", ""))
	sp.ParentSpanId = idBytes(strings.ReplaceAll(idText(m["parentObservationId"]), "-", ""))
	sp.StartTimeUnixNano = uint64(max(timeNanos(m["startTime"]), 0))
	sp.EndTimeUnixNano = uint64(max(timeNanos(m["endTime"]), 0))
	if strings.EqualFold(str(m, "level"), "ERROR") {
		sp.Status = &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: idText(m["statusMessage"])}
	}
	attrs := map[string]any{}
	var keys []string
	set := func(k string, v any) {
		if _, dup := attrs[k]; !dup {
			keys = append(keys, k)
		}
		attrs[k] = v
	}
	if sessionID != "" {
		set("gen_ai.conversation.id", sessionID)
	}
	switch typ := strings.ToUpper(str(m, "type")); typ {
	case "GENERATION":
		set("gen_ai.operation.name", "chat")
		if model := idText(m["model"]); model != "" {
			set("gen_ai.request.model", model)
		}
		in := m["input"]
		if o := obj(in); o != nil && o["messages"] != nil {
			in = o["messages"]
		}
		if in != nil {
			set("gen_ai.input.messages", ad.text(langfuseMessages(in, "user")))
		}
		if out := m["output"]; out != nil {
			set("gen_ai.output.messages", ad.text(langfuseMessages(out, "assistant")))
		}
		u := obj(m["usageDetails"])
		if u == nil {
			u = obj(m["usage"])
		}
		if n, ok := intOf(first(u, "input", "promptTokens", "input_tokens")); ok {
			set("gen_ai.usage.input_tokens", json.Number(fmt.Sprint(n)))
		}
		if n, ok := intOf(first(u, "output", "completionTokens", "output_tokens")); ok {
			set("gen_ai.usage.output_tokens", json.Number(fmt.Sprint(n)))
		}
	case "TOOL":
		set("gen_ai.operation.name", "execute_tool")
		set("gen_ai.tool.name", str(m, "name"))
		if id := str(obj(m["metadata"]), "toolCallId", "tool_call_id"); id != "" {
			set("gen_ai.tool.call.id", id)
		}
		if in, ok := m["input"]; ok && in != nil {
			set("gen_ai.tool.call.arguments", ad.text(in))
		}
		if out, ok := m["output"]; ok && out != nil {
			set("gen_ai.tool.call.result", ad.text(out))
		}
	case "AGENT":
		set("gen_ai.operation.name", "invoke_agent")
		set("gen_ai.agent.name", str(m, "name"))
	case "SPAN", "CHAIN", "EVENT", "RETRIEVER", "EMBEDDING", "EVALUATOR", "GUARDRAIL":
		set("openinference.span.kind", "CHAIN")
	}
	sp.Attributes = keyValues(&ad, attrs, keys)
	return sp, nil
}

// langfuseMessages is an observation's input or output as a list of
// messages: a list is one already; an object with a role is one message;
// text is a message of role.
func langfuseMessages(v any, role string) any {
	switch x := v.(type) {
	case []any:
		return x
	case map[string]any:
		if x["role"] != nil {
			return []any{x}
		}
		if c, ok := x["content"]; ok {
			return []any{map[string]any{"role": role, "content": c}}
		}
	case string:
		return []any{map[string]any{"role": role, "content": x}}
	}
	return []any{map[string]any{"role": role, "content": text(v)}}
}
