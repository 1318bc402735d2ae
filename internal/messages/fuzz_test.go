package messages

import (
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/jsonpos"
	"github.com/agenteval/agenteval/internal/strictjson"
	"github.com/google/go-cmp/cmp"
)

// FuzzLenientAgrees decodes any JSON strictly and leniently. Neither may
// panic; every problem has a message and a path into the input; lenient
// decoding reports no errors; and where strict decoding finds no error,
// lenient decoding reads the same messages: a trace tolerates more than a
// dataset, but never reads a valid message differently.
func FuzzLenientAgrees(f *testing.F) {
	for _, s := range []string{
		`[{"role": "user", "content": "hi"}, {"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "{\"a\": {\"y\": 1, \"x\": 2}}"}}]}, {"role": "tool", "tool_call_id": "c", "content": "r"}]`,
		`[{"type": "human", "content": [{"type": "text", "text": "a"}, "b", {"type": "image_url", "image_url": {"url": "https://x"}}]}, {"type": "ai", "tool_calls": [{"name": "f", "args": [1]}]}]`,
		`[{"role": "model", "content": {"a": 1}}, {"role": "robot"}, {"content": 3}, 5, {"role": "assistant", "function_call": {"name": "g", "arguments": "{"}, "tool_calls": [{"tool": "t", "input": {}, "output": 1, "duration_ms": "x"}]}]`,
		`[{"role": "user", "content": [{"type": "thinking", "thinking": "t"}, {"type": "file", "value": "a"}, {"type": 1}, {"foo": 2}], "input": "x", "metadata": [], "name": 1, "tool_call_id": {}}]`,
		`{}`, `[]`, `[null]`, `"x"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v any
		if strictjson.Decode(data, &v) != nil {
			return
		}
		check := func(d *Decoder) {
			for _, p := range d.Problems {
				if p.Msg == "" {
					t.Fatalf("a problem without a message at %s", p.Path)
				}
				if off := jsonpos.Offset(data, p.Path); off < 0 || off > len(data) {
					t.Fatalf("problem %q at offset %d, outside the input", p.Msg, off)
				}
			}
		}
		strict := &Decoder{}
		strictConv, _ := strict.List(nil, v)
		check(strict)
		lenient := &Decoder{Options: Options{Lenient: true}}
		lenientConv, _ := lenient.List(nil, v)
		check(lenient)
		if n := lenient.Errors(); n > 0 {
			t.Fatalf("lenient decoding reported %d errors: %+v", n, lenient.Problems)
		}
		for _, m := range lenientConv {
			if !m.Role.Valid() {
				t.Fatalf("lenient decoding kept a message without a known role: %+v", m)
			}
		}
		if strict.Errors() == 0 {
			if diff := cmp.Diff(strictConv, lenientConv); diff != "" {
				t.Fatalf("valid messages read differently (-strict +lenient):\n%s", diff)
			}
		}
		_ = agenteval.Conversation(strictConv).Pretty()
	})
}
