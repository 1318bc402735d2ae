package fakellm

import (
	"encoding/json"
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
