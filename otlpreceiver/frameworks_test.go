package otlpreceiver

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agenteval/agenteval"
)

// The frameworks' own exports (trace/testdata/frameworks, written by
// their libraries) sent live: each first turn's spans, moved into the
// turn's trace and under its traceparent, reach the turn, and the reply
// gains every call and result once.
func TestFrameworkSpansLive(t *testing.T) {
	files := []string{
		"vercel_ai_7.0.173_genai.jsonl",
		"vercel_ai_7.0.173_legacy.jsonl",
		"adk_js_2.0.0.jsonl",
		"adk_python_1.38.0.jsonl",
		"mastra_1.71.0.jsonl",
		"langgraph_1.7.3_openinference_4.1.1.jsonl",
		"langchain_1.4.0_openinference_4.1.1.jsonl",
	}
	r := listen(t, Options{})
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			body := firstExport(t, filepath.Join("..", "trace", "testdata", "frameworks", f))
			a := &Agent{Receiver: r, Wait: 3 * time.Second, Inner: agenteval.AgentFunc(func(ctx context.Context, req *agenteval.AgentRequest) (*agenteval.AgentResponse, error) {
				tp := splitTraceParent(req.TraceParent)
				export := retrace(t, body, tp[1], tp[2])
				if code := post(t, r.Endpoint()+"/v1/traces", "application/json", export, false); code != 200 {
					t.Errorf("export: %d", code)
				}
				return &agenteval.AgentResponse{Messages: agenteval.Conversation{{Role: agenteval.RoleAssistant,
					Content: "Chez Nous has a window table at 19:30, and it will be 18°C and clear."}}}, nil
			})}
			start := time.Now()
			resp, err := a.Respond(context.Background(), &agenteval.AgentRequest{ConversationID: f, Messages: agenteval.Conversation{
				{Role: agenteval.RoleUser, Content: "Find me a table for two at Chez Nous tonight, and tell me the weather."}}})
			if err != nil {
				t.Fatal(err)
			}
			var calls []string
			results := 0
			for _, m := range resp.Messages {
				for _, c := range m.ToolCalls {
					calls = append(calls, c.Name)
				}
				if m.Role == agenteval.RoleTool {
					results++
				}
			}
			if len(calls) != 2 || calls[0] != "find_table" || calls[1] != "get_weather" || results != 2 {
				t.Errorf("calls %v, %d results: %+v", calls, results, resp.Messages)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("the turn took %s to close", d)
			}
		})
	}
}

func splitTraceParent(tp string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(tp); i++ {
		if i == len(tp) || tp[i] == '-' {
			out = append(out, tp[start:i])
			start = i + 1
		}
	}
	return out
}

// firstExport is the first export request of a file of them.
func firstExport(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	if !sc.Scan() {
		t.Fatalf("%s is empty", path)
	}
	return append([]byte(nil), sc.Bytes()...)
}

// retrace keeps the spans of an export request's first trace (its first
// run; an exporter flushed at exit sends several), moves them into trace
// traceID and parents its root span on span parent, as an agent that
// joins the turn's traceparent does.
func retrace(t *testing.T, body []byte, traceID, parent string) []byte {
	t.Helper()
	var req map[string]any
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	first, earliest := "", ""
	each := func(f func(ss map[string]any, spans []any)) {
		for _, rs := range req["resourceSpans"].([]any) {
			for _, ss := range rs.(map[string]any)["scopeSpans"].([]any) {
				f(ss.(map[string]any), ss.(map[string]any)["spans"].([]any))
			}
		}
	}
	each(func(_ map[string]any, spans []any) {
		for _, sp := range spans {
			m := sp.(map[string]any)
			start, _ := m["startTimeUnixNano"].(string)
			if first == "" || len(start) < len(earliest) || len(start) == len(earliest) && start < earliest {
				first, earliest = m["traceId"].(string), start
			}
		}
	})
	each(func(ss map[string]any, spans []any) {
		var kept []any
		for _, sp := range spans {
			m := sp.(map[string]any)
			if m["traceId"] != first {
				continue
			}
			m["traceId"] = traceID
			if p, _ := m["parentSpanId"].(string); p == "" {
				m["parentSpanId"] = parent
			}
			kept = append(kept, m)
		}
		ss["spans"] = kept
	})
	out, _ := json.Marshal(req)
	return out
}
