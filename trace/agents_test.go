package trace

import (
	"testing"
)

// A generation's output in each form the SDKs write it gives the same
// assistant message.
func TestGenerationOutputForms(t *testing.T) {
	cases := []struct{ name, output, respID string }{
		{"python message", `[{"content": null, "role": "assistant", "tool_calls": [{"id": "c1", "function": {"arguments": "{\"b\":1,\"a\":{\"y\":1,\"x\":2}}", "name": "f"}, "type": "function"}]}]`, ""},
		{"js chat completion", `[{"id": "chatcmpl-1", "object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant", "content": null,
			"tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"b\":1,\"a\":{\"y\":1,\"x\":2}}"}}]}}], "usage": {"prompt_tokens": 3, "completion_tokens": 2}}]`, "chatcmpl-1"},
		{"python streamed response", `[{"id": "resp_1", "object": "response", "output": [{"type": "function_call", "call_id": "c1", "name": "f",
			"arguments": "{\"b\":1,\"a\":{\"y\":1,\"x\":2}}"}], "usage": {"input_tokens": 3, "output_tokens": 2}}]`, "resp_1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var ad argDecoder
			v, err := ad.decode(c.output)
			if err != nil {
				t.Fatal(err)
			}
			out, respID, _ := completionOutput(v)
			var probs []problem
			msgs := ad.openAIMessages(out, Pos{}, "output", &probs)
			if len(probs) > 0 || len(msgs) != 1 || respID != c.respID {
				t.Fatalf("%d messages, response id %q, problems %v", len(msgs), respID, probs)
			}
			m := msgs[0].message()
			if len(m.ToolCalls) != 1 || m.ToolCalls[0].ID != "c1" || m.ToolCalls[0].Name != "f" {
				t.Fatalf("calls = %+v", m.ToolCalls)
			}
			if got := string(messageJSON(m)); got != `{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"f","args":{"a":{"y":1,"x":2},"b":1}}]}` {
				t.Errorf("message = %s", got)
			}
		})
	}
}
