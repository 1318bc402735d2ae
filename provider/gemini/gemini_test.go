package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/provider"
)

// fakeGemini is a wire-level fake of POST /v1beta/models/{model}:generateContent.
type fakeGemini struct {
	*httptest.Server
	mu     sync.Mutex
	paths  []string
	bodies []map[string]any
	keys   []string
}

func newFake(t *testing.T, handle func(n int, body map[string]any, w http.ResponseWriter)) *fakeGemini {
	f := &fakeGemini{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var body map[string]any
		json.Unmarshal(b, &body)
		f.mu.Lock()
		f.paths = append(f.paths, r.URL.Path)
		f.bodies = append(f.bodies, body)
		f.keys = append(f.keys, r.Header.Get("X-Goog-Api-Key"))
		n := len(f.bodies)
		f.mu.Unlock()
		handle(n, body, w)
	}))
	t.Cleanup(f.Close)
	return f
}

func answer(w http.ResponseWriter, parts []map[string]any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "finishReason": "STOP"}},
		"usageMetadata": map[string]any{"promptTokenCount": 1000, "candidatesTokenCount": 200, "totalTokenCount": 1200},
		"modelVersion":  "gemini-2.0-flash-001",
	})
}

func open(t *testing.T, url string) agenteval.Model {
	t.Helper()
	m, err := provider.Open(provider.Config{Provider: "gemini", Model: "gemini-2.0-flash", BaseURL: url,
		APIKey: "AIza-secret-gemini-key", APIKeyEnv: "GEMINI_API_KEY", RetryWait: time.Millisecond, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestGenerateContentWire(t *testing.T) {
	f := newFake(t, func(n int, body map[string]any, w http.ResponseWriter) {
		answer(w, []map[string]any{{"text": "Checking."}, {"functionCall": map[string]any{"name": "weather", "args": map[string]any{"city": "Paris"}}}})
	})
	zero := 0.0
	req := &agenteval.ModelRequest{
		Temperature: &zero,
		Messages: agenteval.Conversation{
			{Role: agenteval.RoleSystem, Content: "be brief"},
			{Role: agenteval.RoleUser, Content: "weather?"},
			{Role: agenteval.RoleAssistant, ToolCalls: []agenteval.ToolCall{{Name: "weather", Args: map[string]any{"city": "Rome"}}}},
			{Role: agenteval.RoleTool, Content: "sunny"},
		},
		Tools: []agenteval.ToolSpec{{Name: "weather", Parameters: map[string]any{"type": "object"}}},
	}
	resp, err := open(t, f.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "Checking." || len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].Args["city"] != "Paris" {
		t.Errorf("message = %+v", resp.Message)
	}
	if resp.Usage.InputTokens != 1000 || resp.Usage.OutputTokens != 200 || resp.Usage.CostUSD == nil {
		t.Errorf("usage = %+v", resp.Usage)
	}
	if f.paths[0] != "/v1beta/models/gemini-2.0-flash:generateContent" || f.keys[0] != "AIza-secret-gemini-key" {
		t.Errorf("path %s, key %q", f.paths[0], f.keys[0])
	}
	body := f.bodies[0]
	if body["generationConfig"].(map[string]any)["temperature"] != 0.0 {
		t.Errorf("generationConfig = %v", body["generationConfig"])
	}
	if sys := body["systemInstruction"].(map[string]any)["parts"].([]any)[0].(map[string]any)["text"]; sys != "be brief" {
		t.Errorf("systemInstruction = %v", body["systemInstruction"])
	}
	contents := body["contents"].([]any)
	resp3 := contents[2].(map[string]any)["parts"].([]any)[0].(map[string]any)["functionResponse"].(map[string]any)
	if resp3["name"] != "weather" || resp3["response"].(map[string]any)["output"] != "sunny" {
		t.Errorf("function response = %v", resp3)
	}
}

func TestStructuredOutput(t *testing.T) {
	f := newFake(t, func(n int, body map[string]any, w http.ResponseWriter) {
		answer(w, []map[string]any{{"text": `{"passed": true, "reason": "fine"}`}})
	})
	req := &agenteval.ModelRequest{Messages: agenteval.Conversation{{Role: agenteval.RoleUser, Content: "judge"}},
		Schema: &agenteval.OutputSchema{Name: "v", Schema: map[string]any{"type": "object", "properties": map[string]any{"passed": map[string]any{"type": "boolean"}}}}}
	resp, err := open(t, f.URL).Generate(context.Background(), req)
	if err != nil || resp.Message.Content != `{"passed": true, "reason": "fine"}` {
		t.Fatalf("resp %+v, err %v", resp, err)
	}
	gc := f.bodies[0]["generationConfig"].(map[string]any)
	if gc["responseMimeType"] != "application/json" || gc["responseJsonSchema"] == nil {
		t.Errorf("generationConfig = %v", gc)
	}
}

func TestRetryAndAuth(t *testing.T) {
	f := newFake(t, func(n int, body map[string]any, w http.ResponseWriter) {
		if n == 1 {
			w.WriteHeader(503)
			w.Write([]byte(`{"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}`))
			return
		}
		answer(w, []map[string]any{{"text": "ok"}})
	})
	resp, err := open(t, f.URL).Generate(context.Background(), &agenteval.ModelRequest{Messages: agenteval.Conversation{{Role: agenteval.RoleUser, Content: "hi"}}})
	if err != nil || resp.Message.Content != "ok" {
		t.Fatalf("resp %+v, err %v", resp, err)
	}
	bad := newFake(t, func(n int, body map[string]any, w http.ResponseWriter) {
		w.WriteHeader(403)
		w.Write([]byte(`{"error":{"code":403,"message":"API key AIza-secret-gemini-key not valid","status":"PERMISSION_DENIED"}}`))
	})
	_, err = open(t, bad.URL).Generate(context.Background(), &agenteval.ModelRequest{Messages: agenteval.Conversation{{Role: agenteval.RoleUser, Content: "hi"}}})
	var fe *agenteval.FatalError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "check GEMINI_API_KEY") || strings.Contains(err.Error(), "AIza-secret-gemini-key") {
		t.Errorf("err = %v", err)
	}
}

// The reply's thoughts are left out of its text but counted in its output
// tokens; a call's nested arguments keep the order they were written in.
func TestThoughtsAndCalls(t *testing.T) {
	f := newFake(t, func(n int, body map[string]any, w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"candidates":[{"content":{"role":"model","parts":[
			{"text":"let me think","thought":true},{"text":"Hello, "},{"text":"world."},
			{"functionCall":{"id":"c9","name":"book","args":{"trip":{"to":"Rome","from":"Paris"}}}},
			{"functionCall":{"name":"noop"}}]},"finishReason":"STOP"}],
			"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":5,"thoughtsTokenCount":3},"modelVersion":"gemini-x-001"}`)
	})
	resp, err := open(t, f.URL).Generate(context.Background(), &agenteval.ModelRequest{Messages: agenteval.Conversation{{Role: agenteval.RoleUser, Content: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "Hello, world." || resp.Model != "gemini-x-001" || resp.FinishReason != "STOP" {
		t.Errorf("resp = %+v", resp)
	}
	if resp.Usage.InputTokens != 10 || resp.Usage.OutputTokens != 8 {
		t.Errorf("usage = %+v", resp.Usage)
	}
	calls := resp.Message.ToolCalls
	if len(calls) != 2 || calls[0].ID != "c9" || calls[0].Args["trip"].(map[string]any)["to"] != "Rome" || calls[1].Name != "noop" || calls[1].Args == nil {
		t.Fatalf("calls = %+v", calls)
	}
	if got := strings.Join(calls[0].KeyOrder["/trip"], ","); got != "to,from" {
		t.Errorf("key order of /trip = %q", got)
	}
}

// A model name may be a bare name or a resource name; the call's path is
// the API's either way, and a call with no arguments sends none.
func TestModelPathAndEmptyArgs(t *testing.T) {
	f := newFake(t, func(n int, body map[string]any, w http.ResponseWriter) {
		answer(w, []map[string]any{{"text": "ok"}})
	})
	conv := agenteval.Conversation{
		{Role: agenteval.RoleUser, Content: "go"},
		{Role: agenteval.RoleAssistant, ToolCalls: []agenteval.ToolCall{{ID: "a", Name: "start"}}},
		{Role: agenteval.RoleTool, ToolCallID: "a", Content: "started"},
	}
	for _, name := range []string{"models/gemini-2.5-pro", "tunedModels/mine-1"} {
		m, err := provider.Open(provider.Config{Provider: "gemini", Model: name, BaseURL: f.URL + "/", APIKey: "k", APIKeyEnv: "GEMINI_API_KEY", Timeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Generate(context.Background(), &agenteval.ModelRequest{Messages: conv}); err != nil {
			t.Fatal(err)
		}
	}
	if f.paths[0] != "/v1beta/models/gemini-2.5-pro:generateContent" || f.paths[1] != "/v1beta/tunedModels/mine-1:generateContent" {
		t.Errorf("paths = %v", f.paths)
	}
	call := f.bodies[0]["contents"].([]any)[1].(map[string]any)["parts"].([]any)[0].(map[string]any)["functionCall"].(map[string]any)
	if _, ok := call["args"]; ok || call["name"] != "start" || call["id"] != "a" {
		t.Errorf("functionCall = %v", call)
	}
	if sys := f.bodies[0]["systemInstruction"]; sys != nil {
		t.Errorf("systemInstruction = %v, want none", sys)
	}
}

// Errors say what the API said: its status and message, or the first line
// of a body that is not its error object. No answer is an error too.
func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		status int
		body   string
		want   string
	}{
		{400, `{"error":{"code":400,"message":"* GenerateContentRequest.contents: contents is not specified","status":"INVALID_ARGUMENT"}}`,
			"HTTP 400: Gemini API: INVALID_ARGUMENT: * GenerateContentRequest.contents: contents is not specified"},
		{404, `{"error":{"code":404,"message":"models/nope is not found","status":"NOT_FOUND"}}`,
			`model or endpoint not found (HTTP 404); check the model name "gemini-2.0-flash" and the base URL: Gemini API: NOT_FOUND: models/nope is not found`},
		{502, "upstream connect error\nmore", "server error (HTTP 502): Gemini API: upstream connect error"},
		{200, `{"candidates":[],"promptFeedback":{"blockReason":"SAFETY"}}`, "Gemini returned no answer (prompt blocked: SAFETY)"},
		{200, `{}`, "Gemini returned no answer (no candidates)"},
		{200, `{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":[1]}}]}}]}`, "its args are not a JSON object"},
	} {
		f := newFake(t, func(n int, body map[string]any, w http.ResponseWriter) {
			w.WriteHeader(tc.status)
			io.WriteString(w, tc.body)
		})
		m, err := provider.Open(provider.Config{Provider: "gemini", Model: "gemini-2.0-flash", BaseURL: f.URL, APIKey: "k", APIKeyEnv: "GEMINI_API_KEY",
			RetryWait: time.Millisecond, Timeout: 2 * time.Second, MaxRetries: 1})
		if err != nil {
			t.Fatal(err)
		}
		_, err = m.Generate(context.Background(), &agenteval.ModelRequest{Messages: agenteval.Conversation{{Role: agenteval.RoleUser, Content: "hi"}}})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%d %s:\n err = %v\nwant %q", tc.status, tc.body, err, tc.want)
		}
	}
}
