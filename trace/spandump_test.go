package trace

import (
	"encoding/json"
	"testing"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

func TestDumpedSpan(t *testing.T) {
	cases := []struct {
		name, json string
		check      func(t *testing.T, sp *tracepb.Span, a attrs)
	}{
		{"nested attributes are spread to the conventions' keys",
			`{"name": "llm", "context": {"trace_id": "0af7651916cd43dd8448eb211c80319c", "span_id": "b7ad6b7169203331"}, "span_kind": "LLM",
			  "start_time": "2025-01-01T12:00:00+00:00", "end_time": "2025-01-01T12:00:01.5+00:00",
			  "attributes": {"llm": {"input_messages": [{"message": {"role": "user", "content": "hi"}}], "model_name": "m"}}}`,
			func(t *testing.T, sp *tracepb.Span, a attrs) {
				if a.str("llm.input_messages.0.message.role") != "user" || a.str("llm.model_name") != "m" || a.str("openinference.span.kind") != "LLM" {
					t.Errorf("attributes = %v", sp.Attributes)
				}
				if sp.EndTimeUnixNano-sp.StartTimeUnixNano != 1.5e9 || hexID(sp.SpanId) != "b7ad6b7169203331" {
					t.Errorf("times %d..%d, id %x", sp.StartTimeUnixNano, sp.EndTimeUnixNano, sp.SpanId)
				}
			}},
		{"a structured message attribute stays whole, in its key order",
			`{"name": "chat", "traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203331",
			  "attributes": {"gen_ai.input.messages": [{"role": "user", "parts": [{"type": "text", "content": "hi"}]}]}}`,
			func(t *testing.T, sp *tracepb.Span, a attrs) {
				if got := a.str("gen_ai.input.messages"); got != `[{"role":"user","parts":[{"type":"text","content":"hi"}]}]` {
					t.Errorf("gen_ai.input.messages = %s", got)
				}
			}},
		{"the JavaScript SDK's ReadableSpan fields",
			`{"name": "x", "spanContext": {"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203331"},
			  "parentSpanContext": {"spanId": "00f067aa0ba902b7"}, "startTime": [1700000000, 5], "endTime": [1700000001, 5],
			  "status": {"code": 2, "message": "boom"}, "attributes": {"a": 1}}`,
			func(t *testing.T, sp *tracepb.Span, a attrs) {
				if hexID(sp.ParentSpanId) != "00f067aa0ba902b7" || sp.StartTimeUnixNano != 1700000000000000005 ||
					sp.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || sp.Status.Message != "boom" {
					t.Errorf("span = %v", sp)
				}
			}},
		{"the console exporter's timestamp and duration in microseconds",
			`{"name": "x", "traceId": "0af7651916cd43dd8448eb211c80319c", "id": "b7ad6b7169203331", "timestamp": 1700000000000000, "duration": 2000, "attributes": {}}`,
			func(t *testing.T, sp *tracepb.Span, a attrs) {
				if sp.StartTimeUnixNano != 1700000000000000000 || sp.EndTimeUnixNano != 1700000000002000000 || hexID(sp.SpanId) != "b7ad6b7169203331" {
					t.Errorf("times %d..%d", sp.StartTimeUnixNano, sp.EndTimeUnixNano)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sp, _, err := dumpedSpan(json.RawMessage(c.json))
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, sp, toAttrs(sp.Attributes))
		})
	}
}
