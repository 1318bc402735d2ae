package trace

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// Span dumps: spans written one by one rather than in OTLP export
// requests, in a JSON array, in {"data": [...]}, or one per line. Each is
// read as the span it is and mapped as OTLP spans are, so every
// convention (GenAI, OpenInference, the AI SDK's ai.*, ...) reads the same
// from a dump as from an export.
//
//   - Spans with flat attributes ({"llm.input_messages.0.message.role":
//     "user", ...}) and their ids in a context object or beside the name,
//     as written by JSON.stringify of the OpenTelemetry JavaScript SDK's
//     finished spans (spanContext, parentSpanContext, [seconds,
//     nanoseconds] times), and by Arize Phoenix's REST API (GET
//     /v1/projects/{id}/spans: context.{trace_id, span_id}, parent_id,
//     span_kind, ISO times, status_code). Phoenix's nested attributes
//     ({"llm": {"input_messages": [{"message": {...}}]}}) are flattened
//     to the dotted keys the conventions name.
//   - OTLP spans on their own (attributes as [{key, value}]), as Phoenix
//     serves them (GET /v1/projects/{id}/spans/otlpv1, snake_case).
//
// Source: Arize-ai/phoenix, the REST API's Span and OtlpSpan schemas (as
// @arizeai/phoenix-client 6.14.2 types them); open-telemetry/
// opentelemetry-js, sdk-trace-base ReadableSpan.

// isSpanDump reports whether a file's first value (or the first element
// of its array or its "data" list) is one span.
func isSpanDump(sh *shape) bool {
	if sh == nil {
		return false
	}
	if sh.first != nil && (sh.array || sh.inList == "data") {
		return isDumpedSpan(sh.first) || isLangfuseObservation(sh.first) || isLangfuseTrace(sh.first)
	}
	return !sh.array && (isDumpedSpan(sh) || isLangfuseObservation(sh) || isLangfuseTrace(sh))
}

func isDumpedSpan(s *shape) bool {
	if !s.has("attributes") || !s.has("name") || s.has("resourceSpans", "resource_spans", "span_data") {
		return false
	}
	return s.has("spanContext", "_spanContext", "context", "traceId", "trace_id", "spanId", "span_id")
}

// scanSpanDump reads a span dump as OTLP: scanFunc for it.
func scanSpanDump(r io.Reader, keysOnly bool, yield func(*record, error) bool) {
	var yieldItem itemFunc
	yieldItem = func(raw json.RawMessage, parent map[string]json.RawMessage, pos Pos, bad error) bool {
		if bad != nil {
			return yield(&record{pos: pos, broken: true, problems: []problem{errAt(pos, bad.Error())}}, nil)
		}
		var kind struct {
			TraceID      *string           `json:"traceId"`
			Type         *string           `json:"type"`
			StartTime    json.RawMessage   `json:"startTime"`
			Attributes   json.RawMessage   `json:"attributes"`
			Observations []json.RawMessage `json:"observations"`
			SessionID    *string           `json:"sessionId"`
		}
		json.Unmarshal(raw, &kind)
		switch {
		case kind.Observations != nil:
			// A Langfuse trace in a list, or one per line.
			session := ""
			if kind.SessionID != nil {
				session = *kind.SessionID
			}
			for _, o := range kind.Observations {
				if !yieldItem(o, map[string]json.RawMessage{"sessionId": json.RawMessage(strings.TrimSpace(quote(session)))}, pos, nil) {
					return false
				}
			}
			return true
		case kind.TraceID != nil && kind.Type != nil && kind.StartTime != nil && kind.Attributes == nil:
			var session string
			json.Unmarshal(parent["sessionId"], &session)
			sp, err := langfuseSpan(raw, session)
			if err != nil {
				return yield(brokenRecord(pos, "Langfuse observation", err), nil)
			}
			return yield(mapSpan(sp, resInfo{}, pos), nil)
		}
		sp, res, err := dumpedSpan(raw)
		if err != nil {
			return yield(brokenRecord(pos, "span", err), nil)
		}
		return yield(mapSpan(sp, res, pos), nil)
	}
	if err := streamItems(r, []string{"data", "observations"}, yieldItem); err != nil {
		yield(nil, err)
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// peekSpanDump reports whether the file br reads is a span dump.
func peekSpanDump(br *bufio.Reader) bool {
	head, _ := br.Peek(64 << 10)
	return isSpanDump(sniff(head))
}

// dumpedSpan reads one dumped span as an OTLP span.
func dumpedSpan(raw json.RawMessage) (*tracepb.Span, resInfo, error) {
	var ad argDecoder
	m, err := ad.record(raw)
	if err != nil {
		return nil, resInfo{}, err
	}
	if m == nil {
		return nil, resInfo{}, fmt.Errorf("it is not a JSON object")
	}
	if _, isList := m["attributes"].([]any); isList {
		// An OTLP span on its own.
		var sp tracepb.Span
		if err := protoJSON.Unmarshal(raw, &sp); err != nil {
			return nil, resInfo{}, err
		}
		return &sp, resInfo{}, nil
	}
	ctx := obj(first(m, "spanContext", "_spanContext", "context", "span_context"))
	pctx := obj(first(m, "parentSpanContext", "parent_span_context"))
	sp := &tracepb.Span{Name: str(m, "name")}
	sp.TraceId = idBytes(firstStr(ctx, m, "traceId", "trace_id"))
	sp.SpanId = idBytes(firstStr(ctx, m, "spanId", "span_id"))
	if len(sp.SpanId) == 0 {
		// The JavaScript SDK's console exporter names it id.
		sp.SpanId = idBytes(str(m, "id"))
	}
	parent := str(pctx, "spanId", "span_id")
	if parent == "" {
		parent = str(m, "parentSpanId", "parent_span_id", "parent_id", "parentId")
	}
	sp.ParentSpanId = idBytes(parent)
	start := timeNanos(first(m, "startTime", "start_time", "startTimeUnixNano", "start_time_unix_nano"))
	end := timeNanos(first(m, "endTime", "end_time", "endTimeUnixNano", "end_time_unix_nano"))
	if start == 0 {
		// The JavaScript SDK's console exporter: timestamp and duration,
		// in microseconds.
		if ts, ok := intOf(m["timestamp"]); ok {
			start = ts * 1000
			if d, ok := intOf(m["duration"]); ok {
				end = start + d*1000
			}
		}
	}
	sp.StartTimeUnixNano, sp.EndTimeUnixNano = uint64(max(start, 0)), uint64(max(end, 0))
	st := obj(m["status"])
	code := strings.ToUpper(str(m, "status_code", "statusCode"))
	if n, ok := intOf(st["code"]); ok && n == 2 || code == "ERROR" || strings.ToUpper(str(st, "code")) == "ERROR" {
		sp.Status = &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: str(st, "message")}
		if sp.Status.Message == "" {
			sp.Status.Message = str(m, "status_message", "statusMessage")
		}
	}
	attrs := map[string]any{}
	var keys []string
	flattenAttrs(&ad, "", obj(m["attributes"]), attrs, &keys)
	if kind := str(m, "span_kind", "spanKind"); kind != "" && attrs["openinference.span.kind"] == nil && isOIKind(kind) {
		attrs["openinference.span.kind"] = kind
		keys = append(keys, "openinference.span.kind")
	}
	sp.Attributes = keyValues(&ad, attrs, keys)
	for _, e := range list(m["events"]) {
		em := obj(e)
		ev := &tracepb.Span_Event{Name: str(em, "name"), TimeUnixNano: uint64(max(timeNanos(first(em, "time", "timestamp", "timeUnixNano")), 0))}
		ea := map[string]any{}
		var ek []string
		flattenAttrs(&ad, "", obj(em["attributes"]), ea, &ek)
		ev.Attributes = keyValues(&ad, ea, ek)
		sp.Events = append(sp.Events, ev)
	}
	res := resInfo{}
	if ra := obj(obj(m["resource"])["attributes"]); ra != nil {
		res.service = str(ra, "service.name")
	}
	return sp, res, nil
}

func isOIKind(k string) bool {
	switch strings.ToUpper(k) {
	case "LLM", "TOOL", "AGENT", "CHAIN", "RETRIEVER", "EMBEDDING", "RERANKER", "GUARDRAIL", "EVALUATOR":
		return true
	}
	return false
}

// firstStr is the first of keys found in a, else in b.
func firstStr(a, b map[string]any, keys ...string) string {
	if s := str(a, keys...); s != "" {
		return s
	}
	return str(b, keys...)
}

// idBytes is a hex id as the bytes OTLP holds; text that is not hex is
// kept as it is, so that ids still link spans.
func idBytes(s string) []byte {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	if s == "" {
		return nil
	}
	if b, err := hex.DecodeString(s); err == nil {
		return b
	}
	return []byte(s)
}

// timeNanos reads a time as unix nanoseconds: [seconds, nanoseconds] (the
// JavaScript SDK's HrTime), a number (nanoseconds, or milliseconds when
// it is too small to be nanoseconds), or an ISO 8601 string; 0 when it
// is none of them.
func timeNanos(v any) int64 {
	switch x := v.(type) {
	case []any:
		if len(x) == 2 {
			s, ok1 := intOf(x[0])
			ns, ok2 := intOf(x[1])
			if ok1 && ok2 {
				return s*1e9 + ns
			}
		}
	case string:
		if n, err := strconv.ParseInt(x, 10, 64); err == nil {
			return n
		}
		return isoNanos(x)
	case json.Number:
		if n, err := x.Int64(); err == nil {
			if n < 1e14 {
				return n * int64(time.Millisecond)
			}
			return n
		}
		if f, err := x.Float64(); err == nil && f < 1e14 {
			return int64(f * float64(time.Millisecond))
		}
	}
	return 0
}

// wholeAttrs are the attributes whose value is one structured whole
// (messages, arguments, a prompt), kept as JSON text rather than spread
// into dotted keys when a dump nests it.
var wholeAttrs = map[string]bool{
	"gen_ai.input.messages": true, "gen_ai.output.messages": true, "gen_ai.system_instructions": true,
	"gen_ai.tool.definitions": true, "gen_ai.tool.call.arguments": true, "gen_ai.tool.call.result": true,
	"gen_ai.prompt": true, "gen_ai.completion": true,
	"input.value": true, "output.value": true, "metadata": true, "llm.invocation_parameters": true,
	"tool.parameters": true, "ai.prompt": true, "ai.prompt.messages": true, "ai.response.toolCalls": true,
	"ai.toolCall.args": true, "ai.toolCall.result": true,
}

// flattenAttrs spreads nested attributes into dotted keys, in the order
// written: {"llm": {"input_messages": [{"message": {"role": "user"}}]}}
// gives "llm.input_messages.0.message.role".
func flattenAttrs(ad *argDecoder, prefix string, m map[string]any, out map[string]any, keys *[]string) {
	for _, k := range ad.ko.Keys(m) {
		v := m[k]
		key := k
		if prefix != "" {
			key = prefix + "." + k
		}
		flattenValue(ad, key, v, out, keys)
	}
}

func flattenValue(ad *argDecoder, key string, v any, out map[string]any, keys *[]string) {
	add := func(v any) {
		if _, dup := out[key]; !dup {
			*keys = append(*keys, key)
		}
		out[key] = v
	}
	if wholeAttrs[key] {
		switch v.(type) {
		case map[string]any, []any:
			add(ad.text(v))
			return
		}
		add(v)
		return
	}
	switch x := v.(type) {
	case map[string]any:
		flattenAttrs(ad, key, x, out, keys)
	case []any:
		scalars := true
		for _, e := range x {
			switch e.(type) {
			case map[string]any, []any:
				scalars = false
			}
		}
		if scalars {
			add(x)
			return
		}
		for i, e := range x {
			flattenValue(ad, key+"."+strconv.Itoa(i), e, out, keys)
		}
	default:
		add(v)
	}
}

// keyValues are attributes as OTLP holds them, in keys' order.
func keyValues(ad *argDecoder, attrs map[string]any, keys []string) []*commonpb.KeyValue {
	out := make([]*commonpb.KeyValue, 0, len(keys))
	for _, k := range keys {
		out = append(out, &commonpb.KeyValue{Key: k, Value: anyValue(ad, attrs[k])})
	}
	return out
}

func anyValue(ad *argDecoder, v any) *commonpb.AnyValue {
	switch x := v.(type) {
	case string:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: x}}
	case bool:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: x}}
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: n}}
		}
		if f, err := x.Float64(); err == nil && !math.IsInf(f, 0) {
			return &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: f}}
		}
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: string(x)}}
	case []any:
		vals := make([]*commonpb.AnyValue, 0, len(x))
		for _, e := range x {
			vals = append(vals, anyValue(ad, e))
		}
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: vals}}}
	case map[string]any:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: ad.text(x)}}
	case nil:
		return &commonpb.AnyValue{}
	}
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: fmt.Sprint(v)}}
}
