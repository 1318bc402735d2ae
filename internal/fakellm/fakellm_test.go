package fakellm

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestCallNextTool: a tool-calling fake calls each offered tool once, in
// order, with arguments made from its schema, and answers in text after a
// tool result or once every tool was called.
func TestCallNextTool(t *testing.T) {
	var req Request
	if err := json.Unmarshal([]byte(`{"messages": [{"role": "user", "content": "hi"}],
	 "tools": [{"type": "function", "function": {"name": "get_time"}},
	           {"type": "function", "function": {"name": "search", "parameters": {"type": "object", "properties": {"order": {"type": "string", "enum": ["oldest", "newest"]}, "limit": {"type": "integer", "minimum": 1}}}}}]}`), &req); err != nil {
		t.Fatal(err)
	}
	c, ok := CallNextTool(&req)
	if !ok || c.Name != "get_time" || c.Arguments != "{}" {
		t.Fatalf("first call = %+v, %v", c, ok)
	}
	req.Messages = append(req.Messages, Message{Role: "assistant", ToolCalls: []wireToolCall{{ID: "1"}}}, Message{Role: "tool", Content: json.RawMessage(`"12:00"`)})
	req.Messages[1].ToolCalls[0].Function.Name = "get_time"
	if _, ok := CallNextTool(&req); ok {
		t.Error("called a tool after a tool result")
	}
	req.Messages = append(req.Messages, Message{Role: "assistant", Content: json.RawMessage(`"It is noon."`)}, Message{Role: "user", Content: json.RawMessage(`"and?"`)})
	c, ok = CallNextTool(&req)
	if !ok || c.Name != "search" || c.Arguments != `{"limit":1,"order":"oldest"}` {
		t.Errorf("second call = %+v, %v", c, ok)
	}
}

// With NoLog the fake answers and counts requests, and keeps none; a rule
// that matches on the API key still sees the header.
func TestNoLog(t *testing.T) {
	for _, noLog := range []bool{false, true} {
		s, err := Start(Options{NoLog: noLog, APIKey: "k"})
		if err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{"k", "wrong"} {
			req, _ := http.NewRequest("POST", s.URL+"/chat/completions", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
			req.Header.Set("Authorization", "Bearer "+key)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if want := map[string]int{"k": 200, "wrong": 401}[key]; resp.StatusCode != want {
				t.Errorf("NoLog %v, key %s: status %d, want %d", noLog, key, resp.StatusCode, want)
			}
		}
		if s.Calls() != 2 {
			t.Errorf("NoLog %v: %d calls counted", noLog, s.Calls())
		}
		if got, want := len(s.Requests()), map[bool]int{false: 2, true: 0}[noLog]; got != want {
			t.Errorf("NoLog %v: %d requests logged, want %d", noLog, got, want)
		}
		s.Close()
	}
}
