package trace

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"strconv"
	"strings"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// attrs are a span's or record's attributes by key.
type attrs map[string]*commonpb.AnyValue

func toAttrs(kvs []*commonpb.KeyValue) attrs {
	a := make(attrs, len(kvs))
	for _, kv := range kvs {
		a[kv.GetKey()] = kv.GetValue()
	}
	return a
}

// str returns a value as text: strings as they are, others formatted.
func (a attrs) str(keys ...string) string {
	for _, k := range keys {
		if v, ok := a[k]; ok && v != nil {
			if s, ok := v.Value.(*commonpb.AnyValue_StringValue); ok {
				if s.StringValue != "" {
					return s.StringValue
				}
				continue
			}
			if t := text(goValue(v)); t != "" {
				return t
			}
		}
	}
	return ""
}

func (a attrs) val(keys ...string) (any, bool) {
	for _, k := range keys {
		if v, ok := a[k]; ok && v != nil {
			return goValue(v), true
		}
	}
	return nil, false
}

func (a attrs) int(keys ...string) (int64, bool) {
	for _, k := range keys {
		if v, ok := a[k]; ok && v != nil {
			if n, ok := intOf(goValue(v)); ok {
				return n, true
			}
		}
	}
	return 0, false
}

func (a attrs) hasPrefix(p string) bool {
	for k := range a {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// goValue converts an OTLP value to the generic JSON form, numbers as
// json.Number.
func goValue(v *commonpb.AnyValue) any {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_BoolValue:
		return x.BoolValue
	case *commonpb.AnyValue_IntValue:
		return json.Number(strconv.FormatInt(x.IntValue, 10))
	case *commonpb.AnyValue_DoubleValue:
		if math.IsNaN(x.DoubleValue) || math.IsInf(x.DoubleValue, 0) {
			return strconv.FormatFloat(x.DoubleValue, 'g', -1, 64)
		}
		return json.Number(strconv.FormatFloat(x.DoubleValue, 'g', -1, 64))
	case *commonpb.AnyValue_ArrayValue:
		out := make([]any, 0, len(x.ArrayValue.GetValues()))
		for _, e := range x.ArrayValue.GetValues() {
			out = append(out, goValue(e))
		}
		return out
	case *commonpb.AnyValue_KvlistValue:
		out := make(map[string]any, len(x.KvlistValue.GetValues()))
		for _, kv := range x.KvlistValue.GetValues() {
			out[kv.GetKey()] = goValue(kv.GetValue())
		}
		return out
	case *commonpb.AnyValue_BytesValue:
		return base64.StdEncoding.EncodeToString(x.BytesValue)
	}
	return nil
}

// conversationKeys are the attributes that name a conversation, most
// specific first: the GenAI convention, OpenInference, OpenLLMetry's
// association properties, Langfuse.
var conversationKeys = []string{
	"gen_ai.conversation.id", "session.id",
	"traceloop.association.properties.session_id", "traceloop.association.properties.conversation_id",
	"traceloop.association.properties.thread_id", "langfuse.session.id",
}

// mapSpan reduces one span to a record.
func mapSpan(sp *tracepb.Span, res resInfo, pos Pos) *record {
	a := toAttrs(sp.Attributes)
	r := &record{
		pos: pos, trace: hexID(sp.TraceId), span: hexID(sp.SpanId), parent: hexID(sp.ParentSpanId), name: sp.Name,
		start: int64(sp.StartTimeUnixNano), end: int64(sp.EndTimeUnixNano),
		conv: a.str(conversationKeys...),
	}
	if sp.Status != nil && sp.Status.Code == tracepb.Status_STATUS_CODE_ERROR {
		r.errText = sp.Status.Message
		if r.errText == "" {
			r.errText = a.str("error.type")
		}
		if r.errText == "" {
			r.errText = "error"
		}
	}
	r.agent = a.str("gen_ai.agent.name", "agent.name")
	r.model = a.str("gen_ai.response.model", "gen_ai.request.model", "llm.response.model_name", "llm.model_name", "llm.request.model_name")
	op := a.str("gen_ai.operation.name")
	oi := strings.ToUpper(a.str("openinference.span.kind"))
	tl := a.str("traceloop.span.kind")
	switch {
	case op == "execute_tool" || oi == "TOOL" || tl == "tool":
		r.kind = kindTool
		r.tool = mapTool(a, sp.Name, r)
	case op == "invoke_agent" || op == "create_agent" || op == "invoke_workflow" || oi == "AGENT" || tl == "agent" || tl == "workflow":
		r.kind = kindAgent
		if r.agent == "" {
			r.agent = agentName(a, sp.Name, op)
		}
		if r.agent == "" && res.service != "" && op == "invoke_agent" {
			r.agent = res.service
		}
		mapContent(a, r)
	case op == "chat" || op == "text_completion" || op == "generate_content" || oi == "LLM" || tl == "llm" ||
		a.has("gen_ai.input.messages", "gen_ai.output.messages", "llm.request.type") ||
		a.hasPrefix("gen_ai.prompt.") || a.hasPrefix("gen_ai.completion.") || a.hasPrefix("llm.input_messages.") || a.hasPrefix("llm.output_messages."):
		r.kind = kindLLM
		mapContent(a, r)
		r.usage = usageOf(a)
		r.respID = a.str("gen_ai.response.id")
	}
	for _, ev := range sp.Events {
		mapSpanEvent(ev, r)
	}
	return r
}

func (a attrs) has(keys ...string) bool {
	for _, k := range keys {
		if _, ok := a[k]; ok {
			return true
		}
	}
	return false
}

func agentName(a attrs, spanName, op string) string {
	if n := a.str("traceloop.entity.name"); n != "" {
		return n
	}
	if op != "" && strings.HasPrefix(spanName, op+" ") {
		return strings.TrimPrefix(spanName, op+" ")
	}
	if op == "" {
		return spanName
	}
	return ""
}

// mapContent reads the messages of a model call or agent span, in
// whichever form its instrumentation wrote them.
func mapContent(a attrs, r *record) {
	if v, ok := a.val("gen_ai.system_instructions"); ok {
		r.system = systemTexts(v)
	}
	if v, ok := a.val("gen_ai.input.messages"); ok {
		r.input = genAIMessages(v, r.pos, "gen_ai.input.messages", &r.problems)
	}
	if v, ok := a.val("gen_ai.output.messages"); ok {
		r.output = firstChoice(genAIMessages(v, r.pos, "gen_ai.output.messages", &r.problems), r.pos, "gen_ai.output.messages", &r.problems)
	}
	if len(r.input) == 0 && a.hasPrefix("gen_ai.prompt.") {
		r.input = indexedMessages(a, "gen_ai.prompt.", r)
	}
	if len(r.output) == 0 && a.hasPrefix("gen_ai.completion.") {
		r.output = firstChoice(indexedMessages(a, "gen_ai.completion.", r), r.pos, "gen_ai.completion", &r.problems)
	}
	if len(r.input) == 0 && a.hasPrefix("llm.input_messages.") {
		r.input = oiMessages(a, "llm.input_messages.", r)
	}
	if len(r.output) == 0 && a.hasPrefix("llm.output_messages.") {
		r.output = firstChoice(oiMessages(a, "llm.output_messages.", r), r.pos, "llm.output_messages", &r.problems)
	}
	// The oldest form: whole histories as JSON text in gen_ai.prompt and
	// gen_ai.completion.
	if v, ok := a.val("gen_ai.prompt"); ok && len(r.input) == 0 {
		r.input = openAIMessages(v, r.pos, "gen_ai.prompt", &r.problems)
	}
	if v, ok := a.val("gen_ai.completion"); ok && len(r.output) == 0 {
		r.output = firstChoice(openAIMessages(v, r.pos, "gen_ai.completion", &r.problems), r.pos, "gen_ai.completion", &r.problems)
	}
}

func usageOf(a attrs) usage {
	var u usage
	if n, ok := a.int("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt"); ok {
		u.input, u.set = n, true
	}
	if n, ok := a.int("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens", "llm.token_count.completion"); ok {
		u.output, u.set = n, true
	}
	if n, ok := a.int("gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_read_input_tokens", "llm.token_count.prompt_details.cache_read"); ok {
		u.cacheRead = n
	}
	return u
}

// mapTool reads a tool execution: the GenAI execute_tool attributes,
// OpenInference's TOOL span, or OpenLLMetry's tool entity.
func mapTool(a attrs, spanName string, r *record) *toolExec {
	t := &toolExec{}
	name := a.str("gen_ai.tool.name", "tool.name", "traceloop.entity.name")
	if name == "" {
		name = strings.TrimPrefix(spanName, "execute_tool ")
	}
	var args any
	if v, ok := a.val("gen_ai.tool.call.arguments"); ok {
		args = v
	} else if v, ok := a.val("input.value"); ok {
		args = v
	} else if v, ok := a.val("traceloop.entity.input"); ok {
		// OpenLLMetry records the Python call: {"args": [...], "kwargs": {...}}.
		in := obj(structured(v))
		switch {
		case obj(in["kwargs"]) != nil && len(list(in["args"])) == 0:
			args = in["kwargs"]
		case obj(in["inputs"]) != nil:
			args = in["inputs"]
		default:
			args = v
		}
	}
	t.call = parseArgs(structured(args), r.pos, "tool "+name, &r.problems)
	t.call.name = name
	t.call.id = a.str("gen_ai.tool.call.id", "tool.id", "tool_call.id")
	if v, ok := a.val("gen_ai.tool.call.result", "output.value"); ok {
		t.result, t.hasResult = text(v), true
	} else if v, ok := a.val("traceloop.entity.output"); ok {
		// OpenLLMetry writes the return value as JSON.
		t.result, t.hasResult = text(structuredAll(v)), true
	}
	if r.errText != "" {
		t.isError = true
		if !t.hasResult {
			t.result, t.hasResult = "error: "+r.errText, true
		}
	}
	return t
}

// mapSpanEvent reads the content events an older instrumentation attached
// to its span.
func mapSpanEvent(ev *tracepb.Span_Event, r *record) {
	a := toAttrs(ev.Attributes)
	switch ev.Name {
	case "gen_ai.content.prompt":
		if v, ok := a.val("gen_ai.prompt"); ok && len(r.input) == 0 {
			r.input = openAIMessages(v, r.pos, "event gen_ai.content.prompt", &r.problems)
			r.kind = kindLLM
		}
	case "gen_ai.content.completion":
		if v, ok := a.val("gen_ai.completion"); ok && len(r.output) == 0 {
			r.output = firstChoice(openAIMessages(v, r.pos, "event gen_ai.content.completion", &r.problems), r.pos, "gen_ai.completion", &r.problems)
			r.kind = kindLLM
		}
	case "gen_ai.client.inference.operation.details":
		if len(r.input) == 0 && len(r.output) == 0 {
			mapContent(a, r)
			r.kind = kindLLM
		}
	case "gen_ai.system.message", "gen_ai.user.message", "gen_ai.assistant.message", "gen_ai.tool.message", "gen_ai.choice":
		m, choice := eventMessage(ev.Name, a, nil, r)
		if m == nil {
			return
		}
		if choice {
			if len(r.output) == 0 {
				r.output = append(r.output, *m)
			}
		} else {
			r.input = append(r.input, *m)
		}
		r.kind = kindLLM
	}
}

// mapLog reduces one log record (an event) to a record.
func mapLog(lr *logspb.LogRecord, res resInfo, pos Pos) *record {
	a := toAttrs(lr.Attributes)
	t := int64(lr.TimeUnixNano)
	if t == 0 {
		t = int64(lr.ObservedTimeUnixNano)
	}
	r := &record{pos: pos, trace: hexID(lr.TraceId), span: hexID(lr.SpanId), start: t, end: t, fromLogs: true, conv: a.str(conversationKeys...)}
	name := lr.EventName
	if name == "" {
		name = a.str("event.name")
	}
	r.name = name
	r.model = a.str("gen_ai.response.model", "gen_ai.request.model")
	switch name {
	case "gen_ai.client.inference.operation.details":
		r.kind = kindLLM
		mapContent(a, r)
		r.usage = usageOf(a)
	case "gen_ai.system.message", "gen_ai.user.message", "gen_ai.assistant.message", "gen_ai.tool.message", "gen_ai.choice":
		m, choice := eventMessage(name, a, lr.Body, r)
		if m != nil {
			r.kind, r.message, r.choice = kindMessage, m, choice
		} else {
			r.kind = kindIgnored
		}
	case "gen_ai.evaluation.result":
		// Someone's scores of this conversation, not part of it.
		r.kind = kindIgnored
	}
	return r
}

// eventMessage reads a per-message event: its body (or, on span events,
// its attributes) holds content, tool_calls and id; gen_ai.choice wraps
// the message as {index, finish_reason, message}.
func eventMessage(name string, a attrs, body *commonpb.AnyValue, r *record) (*msg, bool) {
	var b map[string]any
	if body != nil {
		b = obj(structured(goValue(body)))
		if b == nil {
			if s, ok := goValue(body).(string); ok {
				b = map[string]any{"content": s}
			}
		}
	}
	if b == nil {
		b = map[string]any{}
		for k, v := range a {
			b[k] = goValue(v)
		}
	}
	role := strings.TrimSuffix(strings.TrimPrefix(name, "gen_ai."), ".message")
	choice := name == "gen_ai.choice"
	if choice {
		if idx, ok := intOf(b["index"]); ok && idx > 0 {
			r.problems = append(r.problems, warnAt(r.pos, "gen_ai.choice with index "+strconv.FormatInt(idx, 10)+" is an alternative choice, not part of the conversation; left out"))
			return nil, true
		}
		if inner := obj(b["message"]); inner != nil {
			b = inner
		}
		role = "assistant"
	}
	if rr := str(b, "role"); rr != "" && normRole(rr) != "" {
		role = rr
	}
	c := contentText(b["content"], r.pos, "event "+name, &r.problems)
	m := &msg{role: normRole(role), content: c.Text, parts: c.Parts, reasoning: c.Reasoning}
	m.calls = toolCalls(b["tool_calls"], r.pos, "event "+name+".tool_calls", &r.problems)
	if m.role == "tool" {
		m.callID = str(b, "id", "tool_call_id")
	}
	return m, choice
}
