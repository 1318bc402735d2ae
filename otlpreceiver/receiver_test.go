package otlpreceiver

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agenteval/agenteval"
	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	"google.golang.org/protobuf/proto"
)

func post(t *testing.T, url, ctype string, body []byte, gz bool) int {
	t.Helper()
	if gz {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write(body)
		zw.Close()
		body = b.Bytes()
	}
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", ctype)
	if gz {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// A turn's spans arrive as OTLP JSON (hex ids, as the spec writes them) and
// its message events as gzipped protobuf logs; both reach the turn, and the
// reply gains the tool call its text did not report.
func TestReceiverMatchesTurn(t *testing.T) {
	r, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	conv := "weather#1"
	agent := agenteval.AgentFunc(func(ctx context.Context, req *agenteval.AgentRequest) (*agenteval.AgentResponse, error) {
		// The traceparent is 00-<trace>-<span>-01.
		parts := strings.Split(req.TraceParent, "-")
		if len(parts) != 4 || len(parts[1]) != 32 || len(parts[2]) != 16 {
			t.Errorf("traceparent %q", req.TraceParent)
		}
		now := time.Now().UnixNano()
		spans := `{"resourceSpans":[{"resource":{},"scopeSpans":[{"spans":[
 {"traceId":"` + parts[1] + `","spanId":"1111111111111111","parentSpanId":"` + parts[2] + `","name":"invoke_agent a","startTimeUnixNano":"` + itoa(now) + `","endTimeUnixNano":"` + itoa(now+3e6) + `",
  "attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"invoke_agent"}}]},
 {"traceId":"` + parts[1] + `","spanId":"2222222222222222","parentSpanId":"1111111111111111","name":"execute_tool get_weather","startTimeUnixNano":"` + itoa(now+1e6) + `","endTimeUnixNano":"` + itoa(now+2e6) + `",
  "attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"execute_tool"}},{"key":"gen_ai.tool.name","value":{"stringValue":"get_weather"}},
   {"key":"gen_ai.tool.call.arguments","value":{"stringValue":"{\"city\":\"Paris\"}"}},{"key":"gen_ai.tool.call.result","value":{"stringValue":"sunny"}}]}]}]}]}`
		if code := post(t, r.Endpoint()+"/v1/traces", "application/json", []byte(spans), false); code != 200 {
			t.Errorf("JSON traces: %d", code)
		}
		logs := &collogspb.ExportLogsServiceRequest{ResourceLogs: []*logspb.ResourceLogs{{ScopeLogs: []*logspb.ScopeLogs{{LogRecords: []*logspb.LogRecord{{
			TimeUnixNano: uint64(now + 1e5), EventName: "gen_ai.client.inference.operation.details",
			Attributes: []*commonpb.KeyValue{
				{Key: "gen_ai.conversation.id", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: conv}}},
				{Key: "gen_ai.usage.input_tokens", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: 30}}},
				{Key: "gen_ai.usage.output_tokens", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: 7}}},
			},
		}}}}}}}
		b, _ := proto.Marshal(logs)
		if code := post(t, r.Endpoint()+"/v1/logs", "application/x-protobuf", b, true); code != 200 {
			t.Errorf("gzipped protobuf logs: %d", code)
		}
		return &agenteval.AgentResponse{Messages: agenteval.Conversation{{Role: agenteval.RoleAssistant, Content: "It is sunny."}}}, nil
	})
	a := &Agent{Inner: agent, Receiver: r}
	resp, err := a.Respond(context.Background(), &agenteval.AgentRequest{ConversationID: conv, Turn: 1,
		Messages: agenteval.Conversation{{Role: agenteval.RoleUser, Content: "Weather in Paris?"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Messages) != 3 || len(resp.Messages[0].ToolCalls) != 1 || resp.Messages[0].ToolCalls[0].Name != "get_weather" ||
		resp.Messages[1].Content != "sunny" || resp.Messages[2].Content != "It is sunny." {
		t.Fatalf("reply = %+v", resp.Messages)
	}
	if resp.Usage.InputTokens != 30 || resp.Usage.OutputTokens != 7 {
		t.Errorf("usage = %+v", resp.Usage)
	}
	st := r.Stats()
	if st.Received != 3 || st.Taken != 3 || st.Unmatched != 0 {
		t.Errorf("stats = %+v", st)
	}
	// The agent's next turn gets its own history, without the added messages.
	var seen agenteval.Conversation
	a.Inner = agenteval.AgentFunc(func(ctx context.Context, req *agenteval.AgentRequest) (*agenteval.AgentResponse, error) {
		seen = req.Messages
		return &agenteval.AgentResponse{Messages: agenteval.Conversation{{Role: agenteval.RoleAssistant, Content: "ok"}}}, nil
	})
	a.Wait = 50 * time.Millisecond
	hist := append(agenteval.Conversation{{Role: agenteval.RoleUser, Content: "Weather in Paris?"}}, resp.Messages...)
	hist = append(hist, agenteval.Message{Role: agenteval.RoleUser, Content: "Thanks"})
	if _, err := a.Respond(context.Background(), &agenteval.AgentRequest{ConversationID: conv, Turn: 2, Messages: hist}); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 3 {
		t.Errorf("the agent saw %d messages, want its own 3: %+v", len(seen), seen)
	}
}

func TestReceiverRejects(t *testing.T) {
	r, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if code := post(t, r.Endpoint()+"/v1/traces", "text/plain", []byte("hi"), false); code != http.StatusUnsupportedMediaType {
		t.Errorf("text/plain: %d", code)
	}
	if code := post(t, r.Endpoint()+"/v1/traces", "application/x-protobuf", []byte{0xff, 0xff, 0xff}, false); code != http.StatusBadRequest {
		t.Errorf("garbage protobuf: %d", code)
	}
	if code := post(t, r.Endpoint()+"/v1/metrics", "application/json", []byte("{}"), false); code != http.StatusNotFound {
		t.Errorf("metrics: %d", code)
	}
	resp, err := http.Get(r.Endpoint() + "/v1/traces")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d", resp.StatusCode)
	}
	if st := r.Stats(); st.Rejected != 2 {
		t.Errorf("rejected = %d", st.Rejected)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// span is one span of a test export: its id, parent, name and GenAI
// attributes as JSON key-value pairs.
type span struct {
	id, parent, name string
	attrs            string
	conv             string
}

// export posts spans of trace traceID as one OTLP JSON request, ended now.
func export(t *testing.T, r *Receiver, traceID string, spans ...span) {
	t.Helper()
	now := time.Now().UnixNano()
	var parts []string
	for _, s := range spans {
		attrs := s.attrs
		if s.conv != "" {
			if attrs != "" {
				attrs += ","
			}
			attrs += `{"key":"gen_ai.conversation.id","value":{"stringValue":"` + s.conv + `"}}`
		}
		parts = append(parts, `{"traceId":"`+traceID+`","spanId":"`+s.id+`","parentSpanId":"`+s.parent+`","name":"`+s.name+
			`","startTimeUnixNano":"`+itoa(now-5e6)+`","endTimeUnixNano":"`+itoa(now)+`","attributes":[`+attrs+`]}`)
	}
	body := `{"resourceSpans":[{"scopeSpans":[{"spans":[` + strings.Join(parts, ",") + `]}]}]}`
	if code := post(t, r.Endpoint()+"/v1/traces", "application/json", []byte(body), false); code != 200 {
		t.Fatalf("export: %d", code)
	}
}

func attr(k, v string) string {
	return `{"key":"` + k + `","value":{"stringValue":` + strconv.Quote(v) + `}}`
}

var (
	agentAttrs = attr("gen_ai.operation.name", "invoke_agent")
	toolAttrs  = attr("gen_ai.operation.name", "execute_tool") + "," + attr("gen_ai.tool.name", "get_weather") + "," +
		attr("gen_ai.tool.call.arguments", `{"city":"Paris"}`) + "," + attr("gen_ai.tool.call.result", "sunny")
	chatAttrs = attr("gen_ai.operation.name", "chat") + "," +
		attr("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"text","content":"It is sunny."}]}]`)
)

// turnAgent replies at once and has export send the turn's spans, given
// its trace and span ids, at the times it chooses.
func turnAgent(export func(traceID, parent string)) agenteval.Agent {
	return agenteval.AgentFunc(func(ctx context.Context, req *agenteval.AgentRequest) (*agenteval.AgentResponse, error) {
		p := strings.Split(req.TraceParent, "-")
		go export(p[1], p[2])
		return &agenteval.AgentResponse{Messages: agenteval.Conversation{{Role: agenteval.RoleAssistant, Content: "It is sunny."}}}, nil
	})
}

func calls(resp *agenteval.AgentResponse) int {
	n := 0
	for _, m := range resp.Messages {
		n += len(m.ToolCalls)
	}
	return n
}

// A turn waits for its whole trace: spans exported before their parent
// (out of order, or by a second batch) are held until the top span
// arrives, and the turn closes as soon as it does.
func TestTurnWaitsForItsTopSpan(t *testing.T) {
	r := listen(t, Options{})
	var rootAt time.Time
	a := &Agent{Receiver: r, Wait: 3 * time.Second, Inner: turnAgent(func(tr, parent string) {
		export(t, r, tr, span{id: "2222222222222222", parent: "1111111111111111", name: "execute_tool get_weather", attrs: toolAttrs})
		time.Sleep(400 * time.Millisecond)
		export(t, r, tr, span{id: "3333333333333333", parent: "1111111111111111", name: "chat", attrs: chatAttrs})
		time.Sleep(400 * time.Millisecond)
		rootAt = time.Now()
		export(t, r, tr, span{id: "1111111111111111", parent: parent, name: "invoke_agent", attrs: agentAttrs})
	})}
	resp, err := a.Respond(context.Background(), &agenteval.AgentRequest{ConversationID: "c1", Messages: agenteval.Conversation{{Role: agenteval.RoleUser, Content: "Paris?"}}})
	if err != nil {
		t.Fatal(err)
	}
	closed := time.Since(rootAt)
	if calls(resp) != 1 {
		t.Fatalf("reply = %+v", resp.Messages)
	}
	if closed > 200*time.Millisecond {
		t.Errorf("the turn closed %s after its top span arrived", closed)
	}
	if st := r.Stats(); st.Taken != 3 || st.Partial != 0 {
		t.Errorf("stats = %+v", st)
	}
}

// Spans with no single top span (a flat export) close the turn once they
// have been quiet a while after the reply.
func TestFlatSpansCloseWhenQuiet(t *testing.T) {
	r := listen(t, Options{})
	a := &Agent{Receiver: r, Wait: 3 * time.Second, Inner: turnAgent(func(tr, parent string) {
		time.Sleep(100 * time.Millisecond)
		export(t, r, tr, span{id: "2222222222222222", parent: parent, name: "execute_tool get_weather", attrs: toolAttrs},
			span{id: "3333333333333333", parent: parent, name: "chat", attrs: chatAttrs})
	})}
	start := time.Now()
	resp, err := a.Respond(context.Background(), &agenteval.AgentRequest{ConversationID: "c2", Messages: agenteval.Conversation{{Role: agenteval.RoleUser, Content: "Paris?"}}})
	if err != nil {
		t.Fatal(err)
	}
	if calls(resp) != 1 {
		t.Fatalf("reply = %+v", resp.Messages)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("a flat export took %s to close", d)
	}
}

// A turn whose spans still miss a parent when the wait runs out is graded
// on them, and says so on its reply and in the stats; a span of its trace
// that comes later is counted late, with how late.
func TestPartialTurnSaysSo(t *testing.T) {
	r := listen(t, Options{})
	a := &Agent{Receiver: r, Wait: 300 * time.Millisecond, Inner: turnAgent(func(tr, parent string) {
		export(t, r, tr, span{id: "2222222222222222", parent: "1111111111111111", name: "execute_tool get_weather", attrs: toolAttrs})
		time.Sleep(600 * time.Millisecond)
		export(t, r, tr, span{id: "1111111111111111", parent: parent, name: "invoke_agent", attrs: agentAttrs})
	})}
	resp, err := a.Respond(context.Background(), &agenteval.AgentRequest{ConversationID: "c3", Messages: agenteval.Conversation{{Role: agenteval.RoleUser, Content: "Paris?"}}})
	if err != nil {
		t.Fatal(err)
	}
	last := resp.Messages[len(resp.Messages)-1]
	if w, _ := last.Metadata[WarningKey].(string); !strings.Contains(w, "partial trace: 1 spans whose parent span had not arrived when --otlp-wait 300ms ran out") {
		t.Errorf("warning = %q", w)
	}
	if calls(resp) != 1 {
		t.Errorf("the tool call that did arrive is not graded: %+v", resp.Messages)
	}
	time.Sleep(500 * time.Millisecond)
	st := r.Stats()
	if st.Partial != 1 || st.Late != 1 || st.LateBy < 300*time.Millisecond {
		t.Errorf("stats = %+v", st)
	}
}

// An agent that sends its content as events gets its model calls' events
// waited for, even after the top span is in.
func TestTurnWaitsForContentEvents(t *testing.T) {
	r := listen(t, Options{})
	r.mu.Lock()
	r.logs = true
	r.mu.Unlock()
	a := &Agent{Receiver: r, Wait: 3 * time.Second, Inner: turnAgent(func(tr, parent string) {
		export(t, r, tr, span{id: "3333333333333333", parent: "1111111111111111", name: "chat", attrs: attr("gen_ai.operation.name", "chat")},
			span{id: "1111111111111111", parent: parent, name: "invoke_agent", attrs: agentAttrs})
		time.Sleep(300 * time.Millisecond)
		logs := &collogspb.ExportLogsServiceRequest{ResourceLogs: []*logspb.ResourceLogs{{ScopeLogs: []*logspb.ScopeLogs{{LogRecords: []*logspb.LogRecord{{
			TimeUnixNano: uint64(time.Now().UnixNano()), EventName: "gen_ai.client.inference.operation.details",
			TraceId: hexBytes(tr), SpanId: hexBytes("3333333333333333"),
			Attributes: []*commonpb.KeyValue{{Key: "gen_ai.output.messages", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{
				StringValue: `[{"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"get_weather","arguments":{"city":"Paris"}}]}]`}}}},
		}}}}}}}
		b, _ := proto.Marshal(logs)
		post(t, r.Endpoint()+"/v1/logs", "application/x-protobuf", b, false)
	})}
	resp, err := a.Respond(context.Background(), &agenteval.AgentRequest{ConversationID: "c4", Messages: agenteval.Conversation{{Role: agenteval.RoleUser, Content: "Paris?"}}})
	if err != nil {
		t.Fatal(err)
	}
	if calls(resp) != 1 {
		t.Fatalf("the call the event carries is missing: %+v", resp.Messages)
	}
}

func hexBytes(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}
