package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/fakellm"
	"github.com/agenteval/agenteval/provider"
	"github.com/google/go-cmp/cmp"
)

// responses opens a model that speaks the Responses API to s.
func responses(t *testing.T, s *fakellm.Server, store *bool) agenteval.Model {
	t.Helper()
	return open(t, s, func(c *provider.Config) { c.API, c.Store = "responses", store })
}

func ptr[T any](v T) *T { return &v }

// TestResponsesRequestGolden: the bodies sent for each kind of request,
// against golden files (UPDATE_GOLDEN=1 rewrites them).
func TestResponsesRequestGolden(t *testing.T) {
	weather := agenteval.ToolSpec{Name: "get_weather", Description: "Weather for a city.", Parameters: map[string]any{
		"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []any{"city"}}}
	for _, tc := range []struct {
		name  string
		store *bool
		req   *agenteval.ModelRequest
	}{
		{"text", nil, &agenteval.ModelRequest{Messages: agenteval.Conversation{
			{Role: agenteval.RoleSystem, Content: "Be brief. <b>Bold</b> is fine."},
			{Role: agenteval.RoleUser, Content: "Capital of France?"},
		}, Temperature: ptr(0.0), MaxTokens: 300}},
		{"tools_and_history", nil, &agenteval.ModelRequest{Messages: agenteval.Conversation{
			{Role: agenteval.RoleUser, Content: "Weather in Paris and Rome?"},
			{Role: agenteval.RoleAssistant, Content: "Checking both.", ToolCalls: []agenteval.ToolCall{
				{ID: "call_a", Name: "get_weather", Args: map[string]any{"city": "Paris"}},
				{Name: "get_weather", Args: map[string]any{"city": "Rome"}},
			}},
			{Role: agenteval.RoleTool, ToolCallID: "call_a", Content: "sunny"},
			{Role: agenteval.RoleTool, Content: "rain"},
			{Role: agenteval.RoleSystem, Content: "Answer in one line."},
		}, Tools: []agenteval.ToolSpec{weather, {Name: "now"}}}},
		{"structured_output", nil, &agenteval.ModelRequest{Messages: agenteval.Conversation{
			{Role: agenteval.RoleSystem, Content: "You are a judge."},
			{Role: agenteval.RoleUser, Content: "Grade it."},
		}, Temperature: ptr(0.0), Schema: &agenteval.OutputSchema{Name: "verdict",
			JSON: []byte(`{"type":"object","properties":{"reason":{"type":"string"},"passed":{"type":"boolean"}},"required":["reason","passed"],"additionalProperties":false}`)}}},
		{"image", nil, &agenteval.ModelRequest{Messages: agenteval.Conversation{
			{Role: agenteval.RoleUser, Content: "What is this?", Parts: []agenteval.Part{{Type: "image", MediaType: "image/png", URL: "data:image/png;base64,iVBORw0KGgo="}}},
		}}},
		{"store_false", ptr(false), &agenteval.ModelRequest{Messages: agenteval.Conversation{
			{Role: agenteval.RoleUser, Content: "hi"},
		}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := start(t, fakellm.Options{})
			if _, err := responses(t, s, tc.store).Generate(context.Background(), tc.req); err != nil {
				t.Fatal(err)
			}
			r := s.Requests()[0]
			if r.Path != "/v1/responses" {
				t.Errorf("path %s", r.Path)
			}
			var got bytes.Buffer
			if err := json.Indent(&got, r.Raw, "", "  "); err != nil {
				t.Fatal(err)
			}
			got.WriteByte('\n')
			path := filepath.Join("testdata", "responses", tc.name+".json")
			if os.Getenv("UPDATE_GOLDEN") != "" {
				os.MkdirAll(filepath.Dir(path), 0o755)
				if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (UPDATE_GOLDEN=1 writes it)", err)
			}
			if diff := cmp.Diff(string(want), got.String()); diff != "" {
				t.Errorf("%s (-want +got):\n%s", path, diff)
			}
		})
	}
}

// TestResponsesRead: what the reply's output items, status and usage
// become.
func TestResponsesRead(t *testing.T) {
	for _, tc := range []struct {
		name   string
		reply  fakellm.Reply
		check  func(t *testing.T, r *agenteval.ModelResponse)
		errHas string
	}{
		{name: "text and usage", reply: fakellm.Reply{Content: "Paris", PromptTokens: 1000, CompletionTokens: 500}, check: func(t *testing.T, r *agenteval.ModelResponse) {
			if r.Message.Content != "Paris" || r.FinishReason != "stop" || r.Model != "gpt-4o-mini" {
				t.Errorf("response = %+v", r)
			}
			if r.Usage.InputTokens != 1000 || r.Usage.OutputTokens != 500 || r.Usage.Calls != 1 {
				t.Errorf("usage = %+v", r.Usage)
			}
			if r.Usage.CostUSD == nil || *r.Usage.CostUSD != (1000*0.15+500*0.60)/1e6 {
				t.Errorf("cost = %v", r.Usage.CostUSD)
			}
			if id, _ := r.Message.Metadata["response_id"].(string); !strings.HasPrefix(id, "resp_") {
				t.Errorf("metadata = %v", r.Message.Metadata)
			}
		}},
		{name: "tool calls", reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{
			{ID: "call_1", Name: "book", Arguments: `{"when": {"time": "7pm", "day": "fri"}, "party": 2}`},
			{ID: "call_2", Name: "broken", Arguments: `{"city": "Par`},
		}}, check: func(t *testing.T, r *agenteval.ModelResponse) {
			calls := r.Message.ToolCalls
			if len(calls) != 2 || calls[0].ID != "call_1" || calls[0].Name != "book" || r.FinishReason != "tool_calls" {
				t.Fatalf("calls = %+v", calls)
			}
			if diff := cmp.Diff(map[string][]string{"/when": {"time", "day"}}, calls[0].KeyOrder); diff != "" {
				t.Errorf("key order (-want +got):\n%s", diff)
			}
			if calls[1].Args != nil || calls[1].RawArgs != `{"city": "Par` {
				t.Errorf("malformed arguments should be kept raw: %+v", calls[1])
			}
		}},
		{name: "reasoning", reply: fakellm.Reply{Content: "42", Reasoning: []string{"Add them.", "Check."}}, check: func(t *testing.T, r *agenteval.ModelResponse) {
			rs, _ := r.Message.Metadata["reasoning"].([]map[string]any)
			if r.Message.Content != "42" || len(rs) != 1 || !strings.HasPrefix(rs[0]["id"].(string), "rs_") {
				t.Fatalf("message = %+v", r.Message)
			}
			if diff := cmp.Diff([]string{"Add them.", "Check."}, rs[0]["summary"]); diff != "" {
				t.Errorf("summary (-want +got):\n%s", diff)
			}
			if d, _ := r.Message.Metadata["usage_details"].(map[string]any); d["reasoning_tokens"] == nil {
				t.Errorf("no reasoning tokens: %v", r.Message.Metadata)
			}
		}},
		{name: "incomplete", reply: fakellm.Reply{Content: "Once upon a", Incomplete: "max_output_tokens"}, check: func(t *testing.T, r *agenteval.ModelResponse) {
			if r.Message.Content != "Once upon a" || r.FinishReason != "length" {
				t.Errorf("response = %+v", r)
			}
		}},
		{name: "failed", reply: fakellm.Reply{Fault: fakellm.FaultFailed}, errHas: "failed: server_error: The model failed to generate a response."},
		{name: "error", reply: fakellm.Reply{Status: 400, ErrorMessage: "Invalid schema for function 'book'."}, errHas: "HTTP 400: Invalid schema for function 'book'."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := start(t, fakellm.Options{})
			s.Add(&fakellm.Rule{Reply: tc.reply})
			m := open(t, s, func(c *provider.Config) { c.API, c.MaxRetries = "responses", 1 })
			r, err := m.Generate(context.Background(), ask("go"))
			if tc.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errHas) {
					t.Fatalf("err = %v, want it to say %q", err, tc.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, r)
		})
	}
}

// TestResponsesRetry: a 429 with Retry-After and a 500 are retried by the
// same wrapper as chat calls.
func TestResponsesRetry(t *testing.T) {
	s := start(t, fakellm.Options{})
	s.Add(&fakellm.Rule{Times: 1, Reply: fakellm.Reply{Fault: fakellm.FaultRateLimit, RetryAfter: 20 * time.Millisecond}},
		&fakellm.Rule{Times: 1, Reply: fakellm.Reply{Fault: fakellm.FaultServer}},
		&fakellm.Rule{Reply: fakellm.Reply{Content: "ok"}})
	r, err := responses(t, s, nil).Generate(context.Background(), ask("go"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Message.Content != "ok" || r.Usage.Retries != 2 || s.Calls() != 3 {
		t.Errorf("content %q, retries %d, calls %d", r.Message.Content, r.Usage.Retries, s.Calls())
	}
}

// sentInput is a request's input items, as sent.
func sentInput(t *testing.T, r *fakellm.Request) (string, []map[string]any) {
	t.Helper()
	var body struct {
		PreviousResponseID string           `json:"previous_response_id"`
		Store              *bool            `json:"store"`
		Instructions       string           `json:"instructions"`
		Input              []map[string]any `json:"input"`
	}
	if err := json.Unmarshal(r.Raw, &body); err != nil {
		t.Fatal(err)
	}
	if body.Store == nil {
		t.Errorf("store not sent: %s", r.Raw)
	}
	return body.PreviousResponseID, body.Input
}

func types(items []map[string]any) []string {
	var out []string
	for _, it := range items {
		s, _ := it["type"].(string)
		if r, ok := it["role"].(string); ok {
			s += ":" + r
		}
		out = append(out, s)
	}
	return out
}

// converse plays a two-turn conversation with a tool call, as a tool loop
// does: the model's messages and the tool's results are appended, and
// each call sends the whole history.
func converse(t *testing.T, m agenteval.Model) {
	t.Helper()
	tools := []agenteval.ToolSpec{{Name: "book", Parameters: map[string]any{"type": "object", "properties": map[string]any{"time": map[string]any{"type": "string"}}}}}
	conv := agenteval.Conversation{{Role: agenteval.RoleSystem, Content: "You book tables."}, {Role: agenteval.RoleUser, Content: "A table at 7pm."}}
	step := func() *agenteval.ModelResponse {
		t.Helper()
		r, err := m.Generate(context.Background(), &agenteval.ModelRequest{Messages: conv, Tools: tools})
		if err != nil {
			t.Fatal(err)
		}
		conv = append(conv, r.Message)
		return r
	}
	r := step()
	if len(r.Message.ToolCalls) != 1 {
		t.Fatalf("first reply = %+v", r.Message)
	}
	conv = append(conv, agenteval.Message{Role: agenteval.RoleTool, ToolCallID: r.Message.ToolCalls[0].ID, Content: `{"ok":true}`})
	if r = step(); r.Message.Content == "" {
		t.Fatalf("second reply = %+v", r.Message)
	}
	conv = append(conv, agenteval.Message{Role: agenteval.RoleUser, Content: "Thanks!"})
	step()
}

// TestResponsesThreading: with store (the default), each call after the
// first continues the previous response and sends only the new items; the
// server's view of the conversation is the whole of it.
func TestResponsesThreading(t *testing.T) {
	s := start(t, fakellm.Options{CallTools: true})
	converse(t, responses(t, s, nil))
	reqs := s.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	var got [][]string
	var prevs []string
	for _, r := range reqs {
		prev, input := sentInput(t, r)
		got = append(got, types(input))
		prevs = append(prevs, prev)
	}
	want := [][]string{{"message:user"}, {"function_call_output"}, {"message:user"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("input items sent (-want +got):\n%s", diff)
	}
	if prevs[0] != "" || prevs[1] == "" || prevs[2] == "" || prevs[1] == prevs[2] {
		t.Errorf("previous_response_id per call = %q", prevs)
	}
	// The fake rebuilt the whole conversation from the stored chain.
	var roles []string
	for _, m := range reqs[2].Messages {
		roles = append(roles, m.Role)
	}
	if diff := cmp.Diff([]string{"system", "user", "assistant", "tool", "assistant", "user"}, roles); diff != "" {
		t.Errorf("conversation the server saw (-want +got):\n%s", diff)
	}
}

// TestResponsesStoreFalse: store false sends the whole input every call,
// with no previous_response_id.
func TestResponsesStoreFalse(t *testing.T) {
	s := start(t, fakellm.Options{CallTools: true})
	converse(t, responses(t, s, ptr(false)))
	var got [][]string
	for _, r := range s.Requests() {
		prev, input := sentInput(t, r)
		if prev != "" || !strings.Contains(string(r.Raw), `"store":false`) {
			t.Errorf("request = %s", r.Raw)
		}
		got = append(got, types(input))
	}
	want := [][]string{
		{"message:user"},
		{"message:user", "function_call", "function_call_output"},
		{"message:user", "function_call", "function_call_output", "message:assistant", "message:user"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("input items sent (-want +got):\n%s", diff)
	}
}

// TestResponsesPreviousNotFound: when the server no longer holds the
// previous response, the same call sends the whole input instead.
func TestResponsesPreviousNotFound(t *testing.T) {
	s := start(t, fakellm.Options{})
	m := responses(t, s, nil)
	conv := agenteval.Conversation{{Role: agenteval.RoleUser, Content: "one"}}
	r, err := m.Generate(context.Background(), &agenteval.ModelRequest{Messages: conv})
	if err != nil {
		t.Fatal(err)
	}
	s.ForgetResponses()
	conv = append(conv, r.Message, agenteval.Message{Role: agenteval.RoleUser, Content: "two"})
	r, err = m.Generate(context.Background(), &agenteval.ModelRequest{Messages: conv})
	if err != nil {
		t.Fatal(err)
	}
	if r.Usage.Retries != 0 || r.Usage.Calls != 1 {
		t.Errorf("the fallback counted as a retry: %+v", r.Usage)
	}
	reqs := s.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	prev, input := sentInput(t, reqs[1])
	if prev == "" || len(input) != 1 {
		t.Errorf("second request should continue the first: %s", reqs[1].Raw)
	}
	prev, input = sentInput(t, reqs[2])
	if diff := cmp.Diff([]string{"message:user", "message:assistant", "message:user"}, types(input)); prev != "" || diff != "" {
		t.Errorf("fallback sent previous %q, items (-want +got):\n%s", prev, diff)
	}
	// The next call continues the fallback's response.
	conv = append(conv, r.Message, agenteval.Message{Role: agenteval.RoleUser, Content: "three"})
	if _, err := m.Generate(context.Background(), &agenteval.ModelRequest{Messages: conv}); err != nil {
		t.Fatal(err)
	}
	if prev, input = sentInput(t, s.Requests()[3]); prev == "" || len(input) != 1 {
		t.Errorf("after the fallback: %s", s.Requests()[3].Raw)
	}
}

// TestResponsesSettings: api values the adapter does not know, and store
// without api: responses, are refused at open.
func TestResponsesSettings(t *testing.T) {
	s := start(t, fakellm.Options{})
	for _, tc := range []struct {
		api   string
		store *bool
		want  string
	}{
		{"assistants", nil, `api "assistants" is not one this adapter speaks`},
		{"chat", ptr(false), "store is a setting of the Responses API"},
	} {
		_, err := provider.Open(provider.Config{Provider: "openai", Model: "m", BaseURL: s.URL, APIKey: "k", API: tc.api, Store: tc.store})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("api %q store %v: err = %v", tc.api, tc.store, err)
		}
	}
}
