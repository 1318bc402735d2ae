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

// valOf is val, with the key order of what it decodes noted by ad: a
// string holding a JSON object or list comes back decoded.
func (a attrs) valOf(ad *argDecoder, keys ...string) (any, bool) {
	for _, k := range keys {
		if v, ok := a[k]; ok && v != nil {
			return ad.structured(orderedValue(ad, v)), true
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
func goValue(v *commonpb.AnyValue) any { return orderedValue(nil, v) }

// orderedValue is goValue, noting with ad (when not nil) the key order of
// the objects a kvlist makes.
func orderedValue(ad *argDecoder, v *commonpb.AnyValue) any {
	if ad == nil {
		return plainValue(v)
	}
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_ArrayValue:
		out := make([]any, 0, len(x.ArrayValue.GetValues()))
		for _, e := range x.ArrayValue.GetValues() {
			out = append(out, orderedValue(ad, e))
		}
		return out
	case *commonpb.AnyValue_KvlistValue:
		out := make(map[string]any, len(x.KvlistValue.GetValues()))
		keys := make([]string, 0, len(out))
		for _, kv := range x.KvlistValue.GetValues() {
			if _, dup := out[kv.GetKey()]; !dup {
				keys = append(keys, kv.GetKey())
			}
			out[kv.GetKey()] = orderedValue(ad, kv.GetValue())
		}
		ad.note(out, keys)
		return out
	}
	return plainValue(v)
}

func plainValue(v *commonpb.AnyValue) any {
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
	// Google ADK's model calls carry the session apart from gen_ai.
	"gcp.vertex.agent.session_id",
	// Mastra's thread (its memory's conversation).
	"mastra.metadata.threadId",
	// The Vercel AI SDK's telemetry metadata, as its users name it.
	"ai.telemetry.metadata.sessionId", "ai.telemetry.metadata.conversationId", "ai.telemetry.metadata.threadId",
}

// mapSpan reduces one span to a record.
func mapSpan(sp *tracepb.Span, res resInfo, pos Pos) *record {
	a := toAttrs(sp.Attributes)
	ad := &argDecoder{}
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
	switch {
	case a.has("ai.operationId"):
		mapVercel(ad, a, r)
	case a.has("mastra.span.type"):
		mapMastra(ad, a, sp.Name, r)
	case a.has("gcp.vertex.agent.llm_request", "gcp.vertex.agent.tool_call_args", "gcp.vertex.agent.tool_response"):
		mapADK(ad, a, sp.Name, r)
	default:
		mapGenAI(ad, a, sp.Name, res, r)
	}
	for _, ev := range sp.Events {
		mapSpanEvent(ad, ev, r)
	}
	return r
}

// mapGenAI reads the OpenTelemetry GenAI conventions, OpenInference and
// OpenLLMetry.
func mapGenAI(ad *argDecoder, a attrs, name string, res resInfo, r *record) {
	op := a.str("gen_ai.operation.name")
	oi := strings.ToUpper(a.str("openinference.span.kind"))
	tl := a.str("traceloop.span.kind")
	switch {
	case op == "execute_tool" || oi == "TOOL" || tl == "tool":
		r.kind = kindTool
		r.tool = mapTool(ad, a, name, r)
	case op == "invoke_agent" || op == "create_agent" || op == "invoke_workflow" || oi == "AGENT" || tl == "agent" || tl == "workflow":
		r.kind = kindAgent
		if r.agent == "" {
			r.agent = agentName(a, name, op)
		}
		if r.agent == "" && res.service != "" && op == "invoke_agent" {
			r.agent = res.service
		}
		mapContent(ad, a, r)
	case op == "chat" || op == "text_completion" || op == "generate_content" || oi == "LLM" || tl == "llm" ||
		a.has("gen_ai.input.messages", "gen_ai.output.messages", "llm.request.type") ||
		a.hasPrefix("gen_ai.prompt.") || a.hasPrefix("gen_ai.completion.") || a.hasPrefix("llm.input_messages.") || a.hasPrefix("llm.output_messages."):
		r.kind = kindLLM
		mapContent(ad, a, r)
		r.usage = usageOf(a)
		r.respID = a.str("gen_ai.response.id")
	case oi == "CHAIN" || op == "agent_step":
		// A framework's own structure around the calls (a LangChain
		// chain, an AI SDK step): what it holds, its model calls and
		// tools record.
		r.kind = kindIgnored
	}
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
// whichever form its instrumentation wrote them. An agent's output is
// its whole run, not one of several choices.
func mapContent(ad *argDecoder, a attrs, r *record) {
	choice := func(out []msg, where string) []msg {
		if r.kind == kindAgent {
			return out
		}
		return firstChoice(out, r.pos, where, &r.problems)
	}
	if v, ok := a.val("gen_ai.system_instructions"); ok {
		r.system = systemTexts(v)
	}
	if v, ok := a.valOf(ad, "gen_ai.input.messages"); ok {
		r.input = ad.genAIMessages(v, r.pos, "gen_ai.input.messages", &r.problems)
	}
	if v, ok := a.valOf(ad, "gen_ai.output.messages"); ok {
		r.output = choice(ad.genAIMessages(v, r.pos, "gen_ai.output.messages", &r.problems), "gen_ai.output.messages")
	}
	if len(r.input) == 0 && a.hasPrefix("gen_ai.prompt.") {
		r.input = indexedMessages(ad, a, "gen_ai.prompt.", r)
	}
	if len(r.output) == 0 && a.hasPrefix("gen_ai.completion.") {
		r.output = choice(indexedMessages(ad, a, "gen_ai.completion.", r), "gen_ai.completion")
	}
	if len(r.input) == 0 && a.hasPrefix("llm.input_messages.") {
		r.input = oiMessages(ad, a, "llm.input_messages.", r)
	}
	if len(r.output) == 0 && a.hasPrefix("llm.output_messages.") {
		r.output = choice(oiMessages(ad, a, "llm.output_messages.", r), "llm.output_messages")
	}
	// The oldest form: whole histories as JSON text in gen_ai.prompt and
	// gen_ai.completion.
	if v, ok := a.valOf(ad, "gen_ai.prompt"); ok && len(r.input) == 0 {
		r.input = ad.openAIMessages(v, r.pos, "gen_ai.prompt", &r.problems)
	}
	if v, ok := a.valOf(ad, "gen_ai.completion"); ok && len(r.output) == 0 {
		r.output = choice(ad.openAIMessages(v, r.pos, "gen_ai.completion", &r.problems), "gen_ai.completion")
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
func mapTool(ad *argDecoder, a attrs, spanName string, r *record) *toolExec {
	t := &toolExec{}
	name := a.str("gen_ai.tool.name", "tool.name", "traceloop.entity.name")
	if name == "" {
		name = strings.TrimPrefix(spanName, "execute_tool ")
	}
	var args any
	id := a.str("gen_ai.tool.call.id", "tool.id", "tool_call.id")
	if v, ok := a.valOf(ad, "gen_ai.tool.call.arguments"); ok {
		args = v
	} else if v, ok := a.valOf(ad, "input.value"); ok {
		args = v
		// LangChain invoked with a whole ToolCall: {name, args, id, type}.
		if tc := obj(v); tc != nil && str(tc, "type") == "tool_call" && obj(tc["args"]) != nil {
			args = tc["args"]
			if id == "" {
				id = str(tc, "id")
			}
		}
	} else if v, ok := a.valOf(ad, "traceloop.entity.input"); ok {
		// OpenLLMetry records the Python call: {"args": [...], "kwargs": {...}}.
		in := obj(v)
		switch {
		case obj(in["kwargs"]) != nil && len(list(in["args"])) == 0:
			args = in["kwargs"]
		case obj(in["inputs"]) != nil:
			args = in["inputs"]
		default:
			args = v
		}
	}
	t.call = ad.args(args, r.pos, "tool "+name, &r.problems)
	t.call.name = name
	t.call.id = id
	if v, ok := a.val("gen_ai.tool.call.result"); ok {
		t.result, t.hasResult = resultText(ad, v), true
	} else if v, ok := a.valOf(ad, "output.value"); ok {
		t.result, t.hasResult = ad.text(v), true
		// LangChain's tools return a ToolMessage, which OpenInference
		// records whole (as {"output": <the message>}): its content is the
		// result, its tool_call_id the call's.
		if content, callID, isErr, ok := toolMessage(ad, v); ok {
			t.result = content
			t.isError = t.isError || isErr
			if t.call.id == "" {
				t.call.id = callID
			}
		}
	} else if v, ok := a.valOf(ad, "traceloop.entity.output"); ok {
		// OpenLLMetry writes the return value as JSON.
		t.result, t.hasResult = ad.text(structuredAll(v)), true
	}
	if r.errText != "" {
		t.isError = true
		if !t.hasResult {
			t.result, t.hasResult = "error: "+r.errText, true
		}
	}
	return t
}

// resultText is a tool's result as text. Instrumentations that write it
// as JSON (the Vercel AI SDK's JSON.stringify of what the tool returned)
// quote a string result; the tool returned the string.
func resultText(ad *argDecoder, v any) string {
	if s, ok := v.(string); ok {
		t := strings.TrimSpace(s)
		if len(t) >= 2 && t[0] == '"' && t[len(t)-1] == '"' {
			if d, err := decodeJSON(t); err == nil {
				if u, ok := d.(string); ok {
					return u
				}
			}
		}
		return s
	}
	return ad.text(v)
}

// toolMessage reads a LangChain ToolMessage a tool span recorded as its
// output: dumpd's {lc, type: constructor, id: [..., "ToolMessage"],
// kwargs: {content, tool_call_id, status}}, or the plain {content,
// tool_call_id, type: "tool"}, alone or under "output".
func toolMessage(ad *argDecoder, v any) (content, callID string, isErr, ok bool) {
	m := obj(v)
	if inner := obj(m["output"]); inner != nil && len(m) == 1 {
		m = inner
	}
	if kw := obj(m["kwargs"]); kw != nil && m["lc"] != nil {
		ids := list(m["id"])
		if len(ids) == 0 || !strings.HasPrefix(text(ids[len(ids)-1]), "ToolMessage") {
			return "", "", false, false
		}
		m = kw
	} else if str(m, "type") != "tool" {
		return "", "", false, false
	}
	c, has := m["content"]
	if !has {
		return "", "", false, false
	}
	switch x := c.(type) {
	case string:
		content = x
	case []any:
		var texts []string
		for _, p := range x {
			if pm := obj(p); pm != nil && str(pm, "type") == "text" {
				texts = append(texts, str(pm, "text"))
			} else {
				texts = append(texts, ad.text(p))
			}
		}
		content = strings.Join(texts, "\n")
	default:
		content = ad.text(c)
	}
	return content, str(m, "tool_call_id"), str(m, "status") == "error", true
}

// mapSpanEvent reads the content events an older instrumentation attached
// to its span.
func mapSpanEvent(ad *argDecoder, ev *tracepb.Span_Event, r *record) {
	a := toAttrs(ev.Attributes)
	switch ev.Name {
	case "gen_ai.content.prompt":
		if v, ok := a.valOf(ad, "gen_ai.prompt"); ok && len(r.input) == 0 {
			r.input = ad.openAIMessages(v, r.pos, "event gen_ai.content.prompt", &r.problems)
			r.kind = kindLLM
		}
	case "gen_ai.content.completion":
		if v, ok := a.valOf(ad, "gen_ai.completion"); ok && len(r.output) == 0 {
			r.output = firstChoice(ad.openAIMessages(v, r.pos, "event gen_ai.content.completion", &r.problems), r.pos, "gen_ai.completion", &r.problems)
			r.kind = kindLLM
		}
	case "gen_ai.client.inference.operation.details":
		if len(r.input) == 0 && len(r.output) == 0 {
			mapContent(ad, a, r)
			r.kind = kindLLM
		}
	case "gen_ai.system.message", "gen_ai.user.message", "gen_ai.assistant.message", "gen_ai.tool.message", "gen_ai.choice":
		m, choice := eventMessage(ad, ev.Name, a, nil, r)
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
	ad := &argDecoder{}
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
		mapContent(ad, a, r)
		r.usage = usageOf(a)
	case "gen_ai.system.message", "gen_ai.user.message", "gen_ai.assistant.message", "gen_ai.tool.message", "gen_ai.choice":
		m, choice := eventMessage(ad, name, a, lr.Body, r)
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
func eventMessage(ad *argDecoder, name string, a attrs, body *commonpb.AnyValue, r *record) (*msg, bool) {
	var b map[string]any
	if body != nil {
		bv := ad.structured(orderedValue(ad, body))
		b = obj(bv)
		if b == nil {
			if s, ok := bv.(string); ok {
				b = map[string]any{"content": s}
			}
		}
	}
	if b == nil {
		b = map[string]any{}
		for k, v := range a {
			b[k] = orderedValue(ad, v)
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
	m.calls = ad.toolCalls(b["tool_calls"], r.pos, "event "+name+".tool_calls", &r.problems)
	if m.role == "tool" {
		m.callID = str(b, "id", "tool_call_id")
	}
	return m, choice
}
