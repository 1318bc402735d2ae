package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	oteltrace "go.opentelemetry.io/otel/trace"
)

// batchAgent is an HTTP agent that reports its tool calls only in its
// spans, exported by the official Go SDK's batch span processor on its
// default schedule (every 5 seconds) over OTLP/HTTP. It notes when it
// replies to each turn and when the next turn reaches it.
type batchAgent struct {
	tracer oteltrace.Tracer
	mu     sync.Mutex
	marks  []time.Time // reply, next request, reply, next request, ...
}

// turnCalls are the tool calls the agent makes for a user message, each
// as name and arguments (JSON text, keys in the order written).
func turnCalls(user string) [][2]string {
	switch {
	case strings.Contains(user, "Lisbon"):
		return [][2]string{{"get_weather", `{"city":"Lisbon","unit":"celsius"}`}}
	case strings.Contains(user, "table"):
		return [][2]string{
			{"find_table", `{"restaurant":"Chez Nous","party":{"size":2,"seating":"window"}}`},
			{"get_weather", `{"city":"Paris","unit":"celsius"}`},
		}
	case strings.Contains(user, "Book"):
		return [][2]string{{"book_table", `{"restaurant":"Chez Nous","time":"19:30"}`}}
	}
	return nil
}

func (a *batchAgent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mark()
	var req struct {
		ConversationID string `json:"conversation_id"`
		Messages       []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	user := ""
	for _, m := range req.Messages {
		if m.Role == "user" {
			user = m.Content
		}
	}
	ctx := propagation.TraceContext{}.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	conv := attribute.String("gen_ai.conversation.id", req.ConversationID)
	actx, agent := a.tracer.Start(ctx, "invoke_agent concierge", oteltrace.WithAttributes(
		attribute.String("gen_ai.operation.name", "invoke_agent"), attribute.String("gen_ai.agent.name", "concierge"), conv))
	calls := turnCalls(user)
	var parts []string
	for i, c := range calls {
		parts = append(parts, fmt.Sprintf(`{"type":"tool_call","id":"call_%d","name":%q,"arguments":%s}`, i, c[0], c[1]))
	}
	_, chat := a.tracer.Start(actx, "chat fake-model", oteltrace.WithAttributes(attribute.String("gen_ai.operation.name", "chat"),
		attribute.String("gen_ai.input.messages", fmt.Sprintf(`[{"role":"user","parts":[{"type":"text","content":%q}]}]`, user)),
		attribute.String("gen_ai.output.messages", `[{"role":"assistant","parts":[`+strings.Join(parts, ",")+`]}]`)))
	chat.End()
	for i, c := range calls {
		_, tool := a.tracer.Start(actx, "execute_tool "+c[0], oteltrace.WithAttributes(
			attribute.String("gen_ai.operation.name", "execute_tool"), attribute.String("gen_ai.tool.name", c[0]),
			attribute.String("gen_ai.tool.call.id", fmt.Sprintf("call_%d", i)),
			attribute.String("gen_ai.tool.call.arguments", c[1]), attribute.String("gen_ai.tool.call.result", `{"ok":true}`)))
		tool.End()
	}
	agent.End()
	json.NewEncoder(w).Encode(map[string]string{"content": "Done."})
	a.mark()
}

// noteExports notes when the batch processor starts each export.
type noteExports struct {
	sdktrace.SpanExporter
	mu sync.Mutex
	at []time.Time
}

func (n *noteExports) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	n.mu.Lock()
	n.at = append(n.at, time.Now())
	n.mu.Unlock()
	return n.SpanExporter.ExportSpans(ctx, spans)
}

func (a *batchAgent) mark() {
	a.mu.Lock()
	a.marks = append(a.marks, time.Now())
	a.mu.Unlock()
}

// TestOTLPBatchExport is the live test of --otlp-listen against
// OpenTelemetry's usual export: the agent is reached over HTTP and its
// spans go through the batch span processor, which sends them up to 5
// seconds after they end. With the default --otlp-wait, every turn waits
// for its spans, closes as soon as its top span is in, and every turn's
// tool calls are graded from them.
func TestOTLPBatchExport(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for OpenTelemetry's 5s batch schedule three times")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	receiver := ln.Addr().String()
	ln.Close()

	ctx := context.Background()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL("http://"+receiver+"/v1/traces"))
	if err != nil {
		t.Fatal(err)
	}
	sent := &noteExports{SpanExporter: exp}
	// The SDK's default schedule, said out loud so that no
	// OTEL_BSP_SCHEDULE_DELAY in the environment changes it.
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(sent, sdktrace.WithBatchTimeout(5*time.Second)),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "concierge"))))
	defer tp.Shutdown(ctx)
	agent := &batchAgent{tracer: tp.Tracer("concierge")}
	srv := httptest.NewServer(agent)
	defer srv.Close()

	dir := t.TempDir()
	suite := `targets:
  - name: concierge
    http: {url: "` + srv.URL + `"}
tests:
  - id: evening
    mode: conversation
    turns:
      - input: Weather in Lisbon?
        assertions:
          - type: tool_calls
            mode: exact
            expected:
              - {tool: get_weather, args: {city: Lisbon, unit: celsius}}
      - input: A table for two at Chez Nous, and the weather in Paris?
        assertions:
          - type: tool_calls
            mode: exact
            expected:
              - {tool: find_table, args: {restaurant: Chez Nous, party: {size: 2, seating: window}}}
              - {tool: get_weather, args: {city: Paris, unit: celsius}}
      - input: Book it.
        assertions:
          - type: tool_calls
            mode: exact
            expected:
              - {tool: book_table, args: {restaurant: Chez Nous, time: "19:30"}}
`
	if err := os.WriteFile(filepath.Join(dir, "suite.yaml"), []byte(suite), 0o644); err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(dir, "results.jsonl")
	var stdout, stderr bytes.Buffer
	start := time.Now()
	code := Main([]string{"run", filepath.Join(dir, "suite.yaml"), "--otlp-listen", receiver, "-o", results, "--no-cache"}, strings.NewReader(""), &stdout, &stderr)
	took := time.Since(start)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	m := regexp.MustCompile(`otlp: (\d+) spans and events received on \S+, (\d+) matched a turn`).FindStringSubmatch(stderr.String())
	if m == nil || m[1] != m[2] || m[1] != "10" {
		t.Errorf("not every span reached its turn:\n%s", stderr.String())
	}
	if strings.Contains(stderr.String(), "partial") || strings.Contains(stderr.String(), "late") {
		t.Errorf("a turn was graded without its spans:\n%s", stderr.String())
	}
	data, err := os.ReadFile(results)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"test_id":"evening"`) || !strings.Contains(string(data), `"verdict":"pass"`) {
		t.Errorf("the turns' tool calls were not graded from the spans:\n%s", data)
	}
	agent.mu.Lock()
	marks := agent.marks
	agent.mu.Unlock()
	sent.mu.Lock()
	exports := sent.at
	sent.mu.Unlock()
	// From each reply to the next turn's request: the wait for the spans,
	// at most the 5s schedule and a little; and from the export that
	// brought them to that request, how long the turn took to close once
	// they were in.
	for i := 1; i+1 < len(marks); i += 2 {
		gap := marks[i+1].Sub(marks[i])
		var in time.Duration = -1
		for _, e := range exports {
			if e.After(marks[i]) && e.Before(marks[i+1]) {
				in = marks[i+1].Sub(e)
			}
		}
		t.Logf("turn %d: the next turn came %s after its reply, %s after its spans were exported", i/2+1, gap.Round(time.Millisecond), in.Round(time.Millisecond))
		if gap > 5500*time.Millisecond {
			t.Errorf("turn %d waited %s after its reply, past the 5s batch schedule", i/2+1, gap)
		}
		if in < 0 || in > 500*time.Millisecond {
			t.Errorf("turn %d closed %s after its spans were exported", i/2+1, in)
		}
	}
	t.Logf("%s spans matched; the run took %s; %s", m[1], took.Round(time.Millisecond), strings.TrimSpace(stderr.String()))
}
