package otelexport

import (
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/redact"
	"github.com/google/go-cmp/cmp"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// sink is an OTLP/HTTP endpoint that keeps every span it is sent.
type sink struct {
	mu    sync.Mutex
	spans []*tracepb.Span
	res   []*commonpb.KeyValue
}

func (s *sink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "unexpected request", http.StatusBadRequest)
		return
	}
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	data, _ := io.ReadAll(body)
	// An ExportTraceServiceRequest is a TracesData on the wire; reading
	// it so keeps the collector's gRPC types out of even the tests.
	var req tracepb.TracesData
	if err := proto.Unmarshal(data, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	for _, rs := range req.ResourceSpans {
		s.res = rs.Resource.GetAttributes()
		for _, ss := range rs.ScopeSpans {
			s.spans = append(s.spans, ss.Spans...)
		}
	}
	s.mu.Unlock()
	// An empty ExportTraceServiceResponse: every span accepted.
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.WriteHeader(http.StatusOK)
}

func attrMap(kvs []*commonpb.KeyValue) map[string]any {
	m := map[string]any{}
	for _, kv := range kvs {
		switch v := kv.Value.Value.(type) {
		case *commonpb.AnyValue_StringValue:
			m[kv.Key] = v.StringValue
		case *commonpb.AnyValue_DoubleValue:
			m[kv.Key] = v.DoubleValue
		case *commonpb.AnyValue_IntValue:
			m[kv.Key] = v.IntValue
		case *commonpb.AnyValue_BoolValue:
			m[kv.Key] = v.BoolValue
		}
	}
	return m
}

func TestExportEndToEnd(t *testing.T) {
	clearEnv(t)
	t.Setenv("AGENTEVAL_TEST_SECRET_KEY", "sk-live-abcdef123456")
	redact.Reload()
	s := &sink{}
	srv := httptest.NewServer(s)
	defer srv.Close()
	e, err := New(context.Background(), Options{Endpoint: srv.URL, Version: "v0.test"})
	if err != nil {
		t.Fatal(err)
	}
	conv := &agenteval.Result{
		TestID: "booking", Suite: "restaurant", Target: "agent", Score: 0.5, Verdict: agenteval.VerdictFail, ExecutionStatus: agenteval.StatusQualityFailure, DurationMS: 1200,
		Output: agenteval.Conversation{
			{Role: agenteval.RoleUser, Content: "Book Golden Dragon"},
			{Role: agenteval.RoleAssistant, Content: "Booked.", Metadata: map[string]any{"response_id": "chatcmpl-1"}},
			{Role: agenteval.RoleUser, Content: "Move it to 9pm"},
			{Role: agenteval.RoleAssistant, Content: "Done.", Metadata: map[string]any{"response_id": "chatcmpl-2"}},
		},
		Scores: []agenteval.Score{
			{Name: "turn-1", Type: "turn", Score: 1, Verdict: agenteval.VerdictPass, Weight: 1, DurationMS: 3, Scores: []agenteval.Score{
				{Name: "tool_calls", Type: "tool_calls", Score: 1, Verdict: agenteval.VerdictPass, Weight: 1, Reason: "1 of 1 expected calls found"},
			}},
			{Name: "turn-2", Type: "turn", Score: 0, Verdict: agenteval.VerdictFail, Weight: 1, DurationMS: 4, Scores: []agenteval.Score{
				{Name: "rubrics", Type: "rubrics", Score: 0, Verdict: agenteval.VerdictFail, Weight: 1, Reason: "the time is not confirmed"},
			}},
			{Name: "conversation", Type: "conversation", Score: 0, Verdict: agenteval.VerdictError, Weight: 1, Scores: []agenteval.Score{
				{Name: "goal", Type: "agent_goal_accuracy", Verdict: agenteval.VerdictError, Weight: 1, Reason: "judge: 401 with key sk-live-abcdef123456"},
			}},
		},
	}
	single := &agenteval.Result{TestID: "greet", Suite: "restaurant", Score: 1, Verdict: agenteval.VerdictPass, ExecutionStatus: agenteval.StatusOK,
		Scores: []agenteval.Score{{Name: "icontains", Type: "icontains", Score: 1, Verdict: agenteval.VerdictPass, Weight: 1}}}
	for _, r := range []*agenteval.Result{conv, single} {
		if err := e.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Close(nil); err != nil {
		t.Fatal(err)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if got := attrMap(s.res)["service.name"]; got != "agenteval" {
		t.Errorf("service.name = %v", got)
	}
	byName := map[string]*tracepb.Span{}
	var names []string
	for _, sp := range s.spans {
		byName[sp.Name] = sp
		names = append(names, sp.Name)
	}
	sort.Strings(names)
	want := []string{"conversation", "grade goal", "grade icontains", "grade rubrics", "grade tool_calls", "test booking", "test greet", "turn 1", "turn 2"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Fatalf("spans (-want +got):\n%s", diff)
	}
	// One trace per test; turns under the test, graders under their turn.
	test := byName["test booking"]
	parent := func(child, par string) {
		t.Helper()
		c, p := byName[child], byName[par]
		if string(c.ParentSpanId) != string(p.SpanId) || string(c.TraceId) != string(p.TraceId) {
			t.Errorf("%s is not a child of %s", child, par)
		}
	}
	parent("turn 1", "test booking")
	parent("turn 2", "test booking")
	parent("conversation", "test booking")
	parent("grade tool_calls", "turn 1")
	parent("grade rubrics", "turn 2")
	parent("grade goal", "conversation")
	parent("grade icontains", "test greet")
	if string(byName["test greet"].TraceId) == string(test.TraceId) {
		t.Error("two tests share a trace")
	}
	ta := attrMap(test.Attributes)
	for k, v := range map[string]any{"test.suite.name": "restaurant", "test.case.id": "booking", "test.case.result.status": "fail", "agenteval.verdict": "fail"} {
		if ta[k] != v {
			t.Errorf("test span %s = %v, want %v", k, ta[k], v)
		}
	}
	if got := attrMap(byName["test greet"].Attributes)["test.case.result.status"]; got != "pass" {
		t.Errorf("passing test status = %v", got)
	}
	eval := func(span string) map[string]any {
		t.Helper()
		for _, ev := range byName[span].Events {
			if ev.Name == "gen_ai.evaluation.result" {
				return attrMap(ev.Attributes)
			}
		}
		t.Fatalf("%s has no gen_ai.evaluation.result event", span)
		return nil
	}
	if diff := cmp.Diff(map[string]any{
		"gen_ai.evaluation.name": "tool_calls", "gen_ai.evaluation.score.value": 1.0, "gen_ai.evaluation.score.label": "pass",
		"gen_ai.evaluation.explanation": "1 of 1 expected calls found", "gen_ai.response.id": "chatcmpl-1",
	}, eval("grade tool_calls")); diff != "" {
		t.Errorf("tool_calls event (-want +got):\n%s", diff)
	}
	if got := eval("grade rubrics")["gen_ai.response.id"]; got != "chatcmpl-2" {
		t.Errorf("turn 2's grader cites response %v", got)
	}
	goal := eval("grade goal")
	if goal["gen_ai.evaluation.score.label"] != "error" || goal["error.type"] != "_OTHER" {
		t.Errorf("error score event = %v", goal)
	}
	if ex := goal["gen_ai.evaluation.explanation"].(string); strings.Contains(ex, "sk-live-abcdef123456") {
		t.Errorf("the explanation leaks a secret: %q", ex)
	}
	if byName["grade goal"].Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR {
		t.Error("an error score's span should have error status")
	}
	if got := eval("test booking"); got["gen_ai.evaluation.name"] != "score" || got["gen_ai.evaluation.score.value"] != 0.5 {
		t.Errorf("test event = %v", got)
	}
}

// An endpoint that cannot be reached is reported by Close, redacted.
func TestExportUnreachable(t *testing.T) {
	clearEnv(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	url := srv.URL
	srv.Close()
	e, err := New(context.Background(), Options{Endpoint: url, Timeout: 500e6})
	if err != nil {
		t.Fatal(err)
	}
	e.Write(&agenteval.Result{TestID: "t", Verdict: agenteval.VerdictPass})
	if err := e.Close(nil); err == nil || !strings.Contains(err.Error(), "otel export") {
		t.Fatalf("Close = %v, want an export error", err)
	}
}
