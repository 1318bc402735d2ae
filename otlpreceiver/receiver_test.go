package otlpreceiver

import (
	"bytes"
	"compress/gzip"
	"context"
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
