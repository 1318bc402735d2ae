package openai

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/fakellm"
	"github.com/agenteval/agenteval/provider"
	"github.com/google/go-cmp/cmp"
	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

func start(t *testing.T, opts fakellm.Options) *fakellm.Server {
	t.Helper()
	s, err := fakellm.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func open(t *testing.T, s *fakellm.Server, mut func(*provider.Config)) agenteval.Model {
	t.Helper()
	cfg := provider.Config{Provider: "openai", Model: "gpt-4o-mini", BaseURL: s.URL, APIKey: "sk-test-secret-key-123456", APIKeyEnv: "OPENAI_API_KEY",
		RetryWait: time.Millisecond, Timeout: 2 * time.Second}
	if mut != nil {
		mut(&cfg)
	}
	m, err := provider.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func ask(text string) *agenteval.ModelRequest {
	zero := 0.0
	return &agenteval.ModelRequest{Messages: agenteval.Conversation{
		{Role: agenteval.RoleSystem, Content: "be brief"},
		{Role: agenteval.RoleUser, Content: text},
	}, Temperature: &zero}
}

func TestTextAndUsage(t *testing.T) {
	s := start(t, fakellm.Options{APIKey: "sk-test-secret-key-123456"})
	s.Add(&fakellm.Rule{Match: fakellm.Contains("capital"), Reply: fakellm.Reply{Content: "Paris", PromptTokens: 1000, CompletionTokens: 500}})
	resp, err := open(t, s, nil).Generate(context.Background(), ask("capital of France?"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "Paris" || resp.Message.Role != agenteval.RoleAssistant {
		t.Errorf("message = %+v", resp.Message)
	}
	if resp.Usage.InputTokens != 1000 || resp.Usage.OutputTokens != 500 || resp.Usage.Calls != 1 {
		t.Errorf("usage = %+v", resp.Usage)
	}
	// gpt-4o-mini: $0.15 in, $0.60 out per million tokens.
	if resp.Usage.CostUSD == nil || *resp.Usage.CostUSD != (1000*0.15+500*0.60)/1e6 {
		t.Errorf("cost = %v", resp.Usage.CostUSD)
	}
	req := s.Requests()[0]
	if req.Temperature == nil || *req.Temperature != 0 {
		t.Errorf("temperature 0 was not sent: %s", req.Raw)
	}
	if req.Messages[0].Role != "system" || req.Messages[1].Text() != "capital of France?" {
		t.Errorf("messages = %+v", req.Messages)
	}
}

func TestToolCallsRoundTrip(t *testing.T) {
	s := start(t, fakellm.Options{})
	s.Add(&fakellm.Rule{Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{
		{ID: "c1", Name: "weather", Arguments: `{"city": "Paris", "days": 2}`},
		{ID: "c2", Name: "broken", Arguments: `{"city": "Par`},
	}}})
	req := ask("weather?")
	req.Tools = []agenteval.ToolSpec{{Name: "weather", Description: "get weather", Parameters: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}}
	req.Messages = append(req.Messages,
		agenteval.Message{Role: agenteval.RoleAssistant, ToolCalls: []agenteval.ToolCall{{ID: "old", Name: "weather", Args: map[string]any{"city": "Rome"}}}},
		agenteval.Message{Role: agenteval.RoleTool, ToolCallID: "old", Content: "sunny"},
	)
	resp, err := open(t, s, nil).Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	calls := resp.Message.ToolCalls
	if len(calls) != 2 || calls[0].Name != "weather" || calls[0].ID != "c1" || calls[0].Args["city"] != "Paris" {
		t.Fatalf("calls = %+v", calls)
	}
	if calls[1].Args != nil || calls[1].RawArgs != `{"city": "Par` {
		t.Errorf("malformed arguments should be kept raw: %+v", calls[1])
	}
	if resp.FinishReason != "tool_calls" {
		t.Errorf("finish = %s", resp.FinishReason)
	}
	sent := s.Requests()[0]
	if len(sent.Tools) != 1 || sent.Tools[0].Function.Name != "weather" {
		t.Errorf("tools not sent: %s", sent.Raw)
	}
	if sent.Messages[2].ToolCalls[0].Function.Arguments != `{"city":"Rome"}` || sent.Messages[3].ToolCallID != "old" {
		t.Errorf("history not sent as tool calls: %s", sent.Raw)
	}
}

func TestStructuredOutput(t *testing.T) {
	s := start(t, fakellm.Options{})
	req := ask("judge")
	req.Schema = &agenteval.OutputSchema{Name: "verdict", Schema: map[string]any{
		"type": "object", "additionalProperties": false, "required": []any{"passed", "reason"},
		"properties": map[string]any{"passed": map[string]any{"type": "boolean"}, "reason": map[string]any{"type": "string"}},
	}}
	resp, err := open(t, s, nil).Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != `{"passed":true,"reason":"fake"}` {
		t.Errorf("content = %s", resp.Message.Content)
	}
	rf := s.Requests()[0].ResponseFormat
	if rf == nil || rf.Type != "json_schema" || rf.JSONSchema.Name != "verdict" || !rf.JSONSchema.Strict {
		t.Errorf("response_format = %+v", rf)
	}
}

func TestRetries(t *testing.T) {
	tests := []struct {
		name  string
		fault fakellm.Fault
	}{
		{"429", fakellm.FaultRateLimit},
		{"500", fakellm.FaultServer},
		{"503", fakellm.FaultUnavailable},
		{"garbage body", fakellm.FaultGarbage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := start(t, fakellm.Options{})
			s.Add(&fakellm.Rule{Times: 2, Reply: fakellm.Reply{Fault: tt.fault, RetryAfter: 20 * time.Millisecond}},
				&fakellm.Rule{Reply: fakellm.Reply{Content: "finally"}})
			resp, err := open(t, s, nil).Generate(context.Background(), ask("x"))
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if resp.Message.Content != "finally" || s.Calls() != 3 {
				t.Errorf("content %q after %d calls, want finally after 3", resp.Message.Content, s.Calls())
			}
		})
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	s := start(t, fakellm.Options{})
	s.Add(&fakellm.Rule{Times: 1, Reply: fakellm.Reply{Fault: fakellm.FaultRateLimit, RetryAfter: 300 * time.Millisecond}})
	begin := time.Now()
	if _, err := open(t, s, nil).Generate(context.Background(), ask("x")); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(begin); d < 300*time.Millisecond {
		t.Errorf("retried after %v, before the 300ms the server asked for", d)
	}
}

func TestGivesUpWithCause(t *testing.T) {
	s := start(t, fakellm.Options{})
	s.Add(&fakellm.Rule{Reply: fakellm.Reply{Fault: fakellm.FaultServer}})
	_, err := open(t, s, func(c *provider.Config) { c.MaxRetries = 2 }).Generate(context.Background(), ask("x"))
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Status != 500 || pe.Attempts != 3 || s.Calls() != 3 {
		t.Fatalf("err = %v (%d calls)", err, s.Calls())
	}
	if !strings.Contains(err.Error(), "openai:gpt-4o-mini: server error (HTTP 500)") || !strings.Contains(err.Error(), "gave up after 3 attempts") {
		t.Errorf("message = %v", err)
	}
}

func TestHangTimesOut(t *testing.T) {
	s := start(t, fakellm.Options{})
	s.Add(&fakellm.Rule{Reply: fakellm.Reply{Fault: fakellm.FaultHang}})
	begin := time.Now()
	_, err := open(t, s, func(c *provider.Config) { c.Timeout = 100 * time.Millisecond; c.MaxRetries = 1 }).Generate(context.Background(), ask("x"))
	if err == nil || !strings.Contains(err.Error(), "no answer within 100ms") {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(begin); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
}

func TestUnauthorizedIsFatalAndRedacted(t *testing.T) {
	s := start(t, fakellm.Options{APIKey: "the-right-key-0000"})
	m := open(t, s, nil)
	_, err := m.Generate(context.Background(), ask("x"))
	var fe *agenteval.FatalError
	if !errors.As(err, &fe) {
		t.Fatalf("err = %v, want a FatalError", err)
	}
	if !strings.Contains(err.Error(), "authentication failed (HTTP 401); check OPENAI_API_KEY") {
		t.Errorf("message = %v", err)
	}
	if strings.Contains(err.Error(), "sk-test-secret-key-123456") {
		t.Errorf("the key leaked: %v", err)
	}
	// Later calls fail at once, without another request.
	before := s.Calls()
	if _, err := m.Generate(context.Background(), ask("y")); !errors.As(err, &fe) || s.Calls() != before {
		t.Errorf("second call: %v after %d more requests", err, s.Calls()-before)
	}
}

func TestMissingKey(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	_, err := provider.OpenSpec("openai:gpt-4o-mini")
	if err == nil || !strings.Contains(err.Error(), "set OPENAI_API_KEY") {
		t.Errorf("err = %v", err)
	}
	// A local server needs no key.
	t.Setenv("OLLAMA_HOST", "127.0.0.1:1")
	cfg, err := provider.ParseSpec("ollama:llama3.2")
	if err != nil || cfg.BaseURL != "http://127.0.0.1:1/v1" {
		t.Fatalf("cfg = %+v, %v", cfg, err)
	}
	if _, err := provider.Open(cfg); err != nil {
		t.Errorf("ollama without a key: %v", err)
	}
}

// The SDK's streaming client reads fakellm's SSE stream, so the fake is
// faithful to the wire format streaming agents use.
func TestFakeStreamsLikeOpenAI(t *testing.T) {
	s := start(t, fakellm.Options{})
	s.Add(&fakellm.Rule{Reply: fakellm.Reply{Content: "a long streamed answer, in pieces", ToolCalls: []fakellm.ToolCall{{Name: "f", Arguments: `{"x": [1, 2, 3], "y": "some longer text"}`}}}})
	c := sdk.NewClient(option.WithBaseURL(s.URL+"/"), option.WithAPIKey("k"))
	stream := c.Chat.Completions.NewStreaming(context.Background(), sdk.ChatCompletionNewParams{
		Model: "fake", Messages: []sdk.ChatCompletionMessageParamUnion{sdk.UserMessage("hi")},
		StreamOptions: sdk.ChatCompletionStreamOptionsParam{IncludeUsage: sdk.Bool(true)},
	})
	acc := sdk.ChatCompletionAccumulator{}
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	msg := acc.Choices[0].Message
	if msg.Content != "a long streamed answer, in pieces" || len(msg.ToolCalls) != 1 || msg.ToolCalls[0].Function.Arguments != `{"x": [1, 2, 3], "y": "some longer text"}` {
		t.Errorf("accumulated = %+v", msg)
	}
	if acc.Usage.TotalTokens == 0 {
		t.Error("no usage chunk")
	}
}

// Reasoning models accept only their default temperature: the adapter asks
// again without one, and remembers.
func TestTemperatureRefused(t *testing.T) {
	s := start(t, fakellm.Options{})
	s.Add(&fakellm.Rule{Match: func(r *fakellm.Request) bool { return r.Temperature != nil },
		Reply: fakellm.Reply{Status: 400, ErrorMessage: "Unsupported value: 'temperature' does not support 0 with this model."}})
	m := open(t, s, nil)
	for i := 0; i < 2; i++ {
		resp, err := m.Generate(context.Background(), ask("hi"))
		if err != nil || resp.Message.Content == "" {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if s.Calls() != 3 {
		t.Errorf("%d requests; want one refused, then one per call without temperature", s.Calls())
	}
}

// TestCallBudget: a server asking for a long Retry-After does not hold a
// call past its budget; the error says why it stopped.
func TestCallBudget(t *testing.T) {
	s := start(t, fakellm.Options{})
	s.Add(&fakellm.Rule{Reply: fakellm.Reply{Fault: fakellm.FaultRateLimit, RetryAfter: 10 * time.Minute}})
	begin := time.Now()
	_, err := open(t, s, func(c *provider.Config) { c.CallBudget = 2 * time.Second }).Generate(context.Background(), ask("x"))
	if err == nil || !strings.Contains(err.Error(), "gave up: the call budget of 2s (--call-budget) would run out before the next attempt, which the server asked to wait 10m0s for") {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(begin); d > time.Second {
		t.Errorf("took %v", d)
	}
}

// TestRetriesAreCounted: a call that needed retries says how many, and how
// long it waited, in its usage.
func TestRetriesAreCounted(t *testing.T) {
	s := start(t, fakellm.Options{})
	s.Add(&fakellm.Rule{Times: 2, Reply: fakellm.Reply{Fault: fakellm.FaultRateLimit, RetryAfter: 50 * time.Millisecond}})
	resp, err := open(t, s, nil).Generate(context.Background(), ask("x"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Usage.Retries != 2 || resp.Usage.WaitedMS < 100 || resp.Usage.Calls != 1 {
		t.Errorf("usage = %+v", resp.Usage)
	}
}

// TestNothingListening: a provider with no server at its endpoint fails
// fast and for good, saying what to check.
func TestNothingListening(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	begin := time.Now()
	m, err := provider.Open(provider.Config{Provider: "ollama", Model: "llama3.2", BaseURL: "http://" + addr + "/v1", APIKey: "ollama"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Generate(context.Background(), ask("x"))
	var fe *agenteval.FatalError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "is Ollama running at http://"+addr+"?") {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(begin); d > 3*time.Second {
		t.Errorf("took %v to give up", d)
	}
	// Later calls fail at once.
	if _, err := m.Generate(context.Background(), ask("x")); !errors.As(err, &fe) {
		t.Errorf("second call: %v", err)
	}
}

// The wire shape of each message kind: plain text content, content parts
// for a message with an image, no content for an assistant message that
// only calls tools, and a tool result's call id.
func TestMessageWireShapes(t *testing.T) {
	s := start(t, fakellm.Options{})
	req := &agenteval.ModelRequest{Messages: agenteval.Conversation{
		{Role: agenteval.RoleSystem, Content: "be brief"},
		{Role: agenteval.RoleUser, Content: "what is this?", Parts: []agenteval.Part{{Type: "image", MediaType: "image/png", URL: "data:image/png;base64,AAAA"}}},
		{Role: agenteval.RoleAssistant, ToolCalls: []agenteval.ToolCall{{ID: "c1", Name: "look", Args: map[string]any{"at": "<img>"}}}},
		{Role: agenteval.RoleTool, ToolCallID: "c1", Content: "a <cat> & a dog"},
	}}
	if _, err := open(t, s, nil).Generate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	var sent struct {
		Messages []map[string]any `json:"messages"`
	}
	raw := s.Requests()[0].Raw
	if err := json.Unmarshal(raw, &sent); err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{
		{"role": "system", "content": "be brief"},
		{"role": "user", "content": []any{
			map[string]any{"type": "text", "text": "what is this?"},
			map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64,AAAA"}},
		}},
		{"role": "assistant", "tool_calls": []any{map[string]any{"id": "c1", "type": "function", "function": map[string]any{"name": "look", "arguments": `{"at":"\u003cimg\u003e"}`}}}},
		{"role": "tool", "content": "a <cat> & a dog", "tool_call_id": "c1"},
	}
	if diff := cmp.Diff(want, sent.Messages); diff != "" {
		t.Errorf("messages on the wire (-want +got):\n%s\nbody: %s", diff, raw)
	}
}
