package messages

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/jsonpos"
	"github.com/agenteval/agenteval/internal/strictjson"
	"github.com/google/go-cmp/cmp"
)

// decode decodes a JSON list of messages and renders each problem as
// "line:col path: msg", with the place its path points at in the text.
func decode(t *testing.T, opt Options, text string) (agenteval.Conversation, []string) {
	t.Helper()
	var v any
	if err := strictjson.Decode([]byte(text), &v); err != nil {
		t.Fatalf("bad test input: %v", err)
	}
	if opt.KeyOrder == nil {
		opt.KeyOrder = func(p jsonpos.Path) map[string][]string {
			return agenteval.KeyOrderOf([]byte(text)[jsonpos.Offset([]byte(text), p):])
		}
	}
	d := Decoder{Options: opt}
	conv, _ := d.List(nil, v)
	var got []string
	for _, p := range d.Problems {
		line, col := jsonpos.LineCol([]byte(text), jsonpos.Offset([]byte(text), p.Path))
		w := ""
		if p.Warning {
			w = "warning: "
		}
		got = append(got, fmt.Sprintf("%d:%d %s: %s%s", line, col, p.Path, w, p.Msg))
	}
	return conv, got
}

// TestRoleTable: every name of the role table reads as its role, as "role"
// and as Ragas's "type", in any case and with space around it, strictly
// and leniently; a name not in it does not.
func TestRoleTable(t *testing.T) {
	table := []struct {
		role  agenteval.Role
		names []string
	}{
		{agenteval.RoleSystem, []string{"system", "developer"}},
		{agenteval.RoleUser, []string{"user", "human"}},
		{agenteval.RoleAssistant, []string{"assistant", "ai", "model", "agent", "bot"}},
		{agenteval.RoleTool, []string{"tool", "function", "ipython"}},
	}
	for _, row := range table {
		if diff := cmp.Diff(row.names, agenteval.RoleNames(row.role)); diff != "" {
			t.Errorf("names of %s (-this test +the table):\n%s", row.role, diff)
		}
		for _, name := range row.names {
			for _, spelled := range []string{name, strings.ToUpper(name), " " + name + "\t"} {
				for _, key := range []string{"role", "type"} {
					for _, lenient := range []bool{false, true} {
						in := fmt.Sprintf(`[{%q: %q, "content": "x"}]`, key, spelled)
						conv, probs := decode(t, Options{Lenient: lenient}, in)
						if len(probs) > 0 || len(conv) != 1 || conv[0].Role != row.role {
							t.Errorf("%s (lenient %v): %+v, problems %v", in, lenient, conv, probs)
						}
					}
				}
			}
		}
	}
	for _, name := range []string{"robot", "chat", "assistant_", "users", "", "message"} {
		if r, ok := agenteval.ParseRole(name); ok {
			t.Errorf("ParseRole(%q) = %q", name, r)
		}
	}
}

func msg(role agenteval.Role, content string) agenteval.Message {
	return agenteval.Message{Role: role, Content: content}
}

const (
	sys  = agenteval.RoleSystem
	user = agenteval.RoleUser
	asst = agenteval.RoleAssistant
	tool = agenteval.RoleTool
)

func num(s string) json.Number { return json.Number(s) }

// TestDecoder: every shape a message may take, and every problem, at its
// place.
func TestDecoder(t *testing.T) {
	lenient := Options{Lenient: true}
	strictArgs := Options{StrictArgs: true}
	attach := Options{Attach: func(p jsonpos.Path, kind, ref string) (string, agenteval.Part, bool) {
		if ref == "missing.png" {
			return "", agenteval.Part{}, false
		}
		if kind == "image" {
			return "", agenteval.Part{Type: "image", Path: ref, URL: "data:image/png;base64,UE5H"}, true
		}
		return "<file " + ref + ">", agenteval.Part{Type: "file", Path: "/abs/" + ref}, true
	}}
	tests := []struct {
		name  string
		opt   Options
		in    string
		want  agenteval.Conversation
		probs []string
	}{
		// Content.
		{name: "text", in: `[{"role": "user", "content": "hi"}]`, want: agenteval.Conversation{msg(user, "hi")}},
		{name: "null content", in: `[{"role": "assistant", "content": null}]`, want: agenteval.Conversation{msg(asst, "")}},
		{name: "number and boolean content", in: `[{"role": "user", "content": 1.50}, {"role": "user", "content": true}]`,
			want: agenteval.Conversation{msg(user, "1.50"), msg(user, "true")}},
		{name: "structured content", in: `[{"role": "user", "content": {"b": [1.0, "<x>"], "a": null}}]`,
			want: agenteval.Conversation{msg(user, "{\n  \"a\": null,\n  \"b\": [\n    1.0,\n    \"<x>\"\n  ]\n}")}},
		{name: "one block as content", in: `[{"role": "user", "content": {"type": "text", "text": "hi"}}]`, want: agenteval.Conversation{msg(user, "hi")}},
		{name: "text blocks", in: `[{"role": "user", "content": ["a", {"type": "text", "text": "b"}, {"type": "input_text", "text": "c"}, {"type": "output_text", "text": "d"}, {"text": "e"}, {"type": "text", "value": "f"}, {"type": "text", "text": {"value": "g", "annotations": []}}, "", {"type": "text", "content": "h"}]}]`,
			want: agenteval.Conversation{msg(user, "a\nb\nc\nd\ne\nf\ng\nh")}},
		{name: "reasoning", in: `[{"role": "assistant", "metadata": {"k": 1}, "content": [{"type": "thinking", "thinking": "t1", "signature": "s"}, {"type": "reasoning", "text": "t2"}, {"type": "redacted_thinking", "data": "x"}, {"type": "text", "text": "out"}]}]`,
			want: agenteval.Conversation{{Role: asst, Content: "out", Metadata: map[string]any{"k": num("1"), "reasoning": "t1\nt2"}}}},
		{name: "images by URL", in: `[{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "https://x/a.png", "detail": "low"}}, {"type": "input_image", "image_url": "data:image/png;base64,AAA"}, {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "BBB"}}, {"type": "image", "value": "http://x/b.gif"}]}]`,
			want: agenteval.Conversation{{Role: user, Parts: []agenteval.Part{
				{Type: "image", URL: "https://x/a.png"},
				{Type: "image", URL: "data:image/png;base64,AAA", MediaType: "image/png"},
				{Type: "image", URL: "data:image/jpeg;base64,BBB", MediaType: "image/jpeg"},
				{Type: "image", URL: "http://x/b.gif"},
			}}}},
		{name: "paths without Attach", in: `[{"role": "user", "content": [{"type": "image", "value": "pic.png"}, {"type": "file", "value": "a.txt"}, "text"]}]`,
			want: agenteval.Conversation{msg(user, "text")},
			probs: []string{
				`1:31 [0].content[0]: warning: image pic.png is a path, and only eval files read images from disk; left out`,
				`1:70 [0].content[1]: warning: a file block is left out: only eval files read files`,
			}},
		{name: "paths with Attach", opt: attach, in: `[{"role": "user", "content": [{"type": "text", "value": "see"}, {"type": "file", "value": "a.txt"}, {"type": "image", "path": "p.png"}, {"type": "image", "value": "missing.png"}, {"type": "file"}, {"type": "image"}]}]`,
			want: agenteval.Conversation{{Role: user, Content: "see\n\n<file a.txt>", Parts: []agenteval.Part{
				{Type: "file", Path: "/abs/a.txt"},
				{Type: "image", Path: "p.png", URL: "data:image/png;base64,UE5H"},
			}}},
			probs: []string{
				`1:180 [0].content[4]: a file block needs value: the file's path`,
				`1:198 [0].content[5]: an image block needs value: the image's path or URL`,
			}},
		{name: "call blocks", in: `[{"role": "assistant", "content": [{"type": "text", "text": "a"}, {"type": "tool_use", "id": "t", "name": "f", "input": {}}]}]`,
			want:  agenteval.Conversation{msg(asst, "a")},
			probs: []string{`1:67 [0].content[1]: warning: content block type "tool_use" is a tool call; write calls in tool_calls. Left out`}},
		{name: "call blocks, lenient", opt: lenient, in: `[{"role": "assistant", "content": [{"type": "text", "text": "a"}, {"type": "tool_use", "id": "t", "name": "f", "input": {}}]}]`,
			want: agenteval.Conversation{msg(asst, "a")}},
		{name: "unknown block", in: `[{"role": "user", "content": [{"type": "input_audio", "input_audio": {}}, "x"]}]`,
			want:  agenteval.Conversation{msg(user, "x")},
			probs: []string{`1:31 [0].content[0]: warning: content block type "input_audio" is not text, an image or a file; left out`}},
		{name: "bad blocks", in: `[{"role": "user", "content": [3, {"foo": 1}, {"type": 2}, {"type": "text", "text": 5}]}]`,
			want: agenteval.Conversation{msg(user, "")},
			probs: []string{
				`1:31 [0].content[0]: a content part must be an object like {"type": "text", "text": ...}, not a number`,
				`1:34 [0].content[1]: a content block needs a type: text, image or file`,
				`1:55 [0].content[2].type: a content block's type must be a string, not a number`,
				`1:84 [0].content[3].text: a block's text must be a string, not a number`,
			}},
		{name: "bad blocks, lenient", opt: lenient, in: `[{"role": "user", "content": [3, {"type": "text", "text": 5}]}]`,
			want: agenteval.Conversation{msg(user, "5")},
			probs: []string{
				`1:31 [0].content[0]: warning: a content part must be an object like {"type": "text", "text": ...}, not a number`,
				`1:59 [0].content[1].text: warning: a block's text must be a string, not a number`,
			}},
		{name: "input is content", in: `[{"role": "user", "input": "hi"}, {"role": "user", "content": null, "input": "there"}]`,
			want: agenteval.Conversation{msg(user, "hi"), msg(user, "there")}},
		{name: "content and input", in: `[{"role": "user", "content": "a", "input": "b"}]`,
			want:  agenteval.Conversation{msg(user, "a")},
			probs: []string{`1:35 [0].input: a message has both content and input, two names for its text; keep one`}},

		// Roles.
		{name: "responses item", in: `[{"type": "message", "role": "user", "content": "x"}]`, want: agenteval.Conversation{msg(user, "x")}},
		{name: "role and type agree", in: `[{"type": "human", "role": "user", "content": "x"}]`, want: agenteval.Conversation{msg(user, "x")}},
		{name: "role and type disagree", in: `[{"type": "human", "role": "assistant", "content": "x"}]`,
			want:  agenteval.Conversation{msg("", "x")},
			probs: []string{`1:28 [0].role: role "assistant" disagrees with type "user"; keep one of them`}},
		{name: "unknown role and type", in: `[{"role": "robot"}, {"type": "robot"}, {"role": 3}]`,
			want: agenteval.Conversation{msg("", ""), msg("", ""), msg("", "")},
			probs: []string{
				`1:11 [0].role: unknown role "robot"; use user, assistant, tool or system`,
				`1:30 [1].type: unknown message type "robot"; use human, ai or tool`,
				`1:49 [2].role: role must be a string, not a number`,
			}},
		{name: "unknown roles, lenient", opt: lenient, in: `[{"role": "robot"}, {"type": "function_call_output"}, {"content": "x"}, {"role": "user", "type": "anything"}]`,
			want: agenteval.Conversation{msg(user, "")},
			probs: []string{
				`1:11 [0].role: warning: unknown role "robot"; left out`,
				`1:30 [1].type: warning: unknown message type "function_call_output"; left out`,
				`1:55 [2]: warning: the message has no role; left out`,
			}},
		{name: "no role", in: `[{"content": "x"}]`,
			want:  agenteval.Conversation{msg("", "x")},
			probs: []string{`1:2 [0]: message has no type or role; set "type" to human, ai or tool (Ragas) or "role" to user, assistant, tool or system`}},
		{name: "default role", opt: Options{DefaultRole: user}, in: `[{"content": "x"}, {"tool_calls": [{"name": "f"}]}, {"role": "system", "content": "y"}]`,
			want: agenteval.Conversation{msg(user, "x"), {Role: asst, ToolCalls: []agenteval.ToolCall{{Name: "f", Args: map[string]any{}}}}, msg(sys, "y")}},

		// Tool calls.
		{name: "openai calls", in: `[{"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"a\": 1, \"q\": {\"z\": 1, \"b\": 2}}"}}]}, {"role": "tool", "tool_call_id": "c1", "content": "r"}]`,
			want: agenteval.Conversation{
				{Role: asst, ToolCalls: []agenteval.ToolCall{{ID: "c1", Name: "f", Args: map[string]any{"a": num("1"), "q": map[string]any{"z": num("1"), "b": num("2")}}, KeyOrder: map[string][]string{"/q": {"z", "b"}}}}},
				{Role: tool, Content: "r", ToolCallID: "c1"},
			}},
		{name: "ragas calls", in: `[{"type": "ai", "content": "", "tool_calls": [{"name": "f", "args": {"q": {"z": 1, "b": 2}}}]}, {"type": "tool", "content": "r"}]`,
			want: agenteval.Conversation{
				{Role: asst, ToolCalls: []agenteval.ToolCall{{Name: "f", Args: map[string]any{"q": map[string]any{"z": num("1"), "b": num("2")}}, KeyOrder: map[string][]string{"/q": {"z", "b"}}}}},
				{Role: tool, Content: "r"},
			}},
		{name: "agentv calls", in: `[{"role": "assistant", "tool_calls": [{"tool": "book", "input": {"t": "8pm"}, "output": {"ok": true}, "id": "b1", "duration_ms": 12.5, "timestamp": "x"}, {"tool": "search", "input": {}, "output": "found <3>"}]}]`,
			want: agenteval.Conversation{
				{Role: asst, ToolCalls: []agenteval.ToolCall{{ID: "b1", Name: "book", Args: map[string]any{"t": "8pm"}, DurationMS: 12.5}, {ID: "call_2", Name: "search", Args: map[string]any{}}}},
				{Role: tool, ToolCallID: "b1", Name: "book", Content: `{"ok":true}`},
				{Role: tool, ToolCallID: "call_2", Name: "search", Content: "found <3>"},
			}},
		{name: "inspect and responses calls", in: `[{"role": "assistant", "tool_calls": [{"function": "f", "arguments": {"a": 1}, "id": 7}, {"name": "g", "arguments": "", "call_id": "k"}, {"name": "h", "arguments": null}]}]`,
			want: agenteval.Conversation{{Role: asst, ToolCalls: []agenteval.ToolCall{
				{ID: "7", Name: "f", Args: map[string]any{"a": num("1")}},
				{ID: "k", Name: "g", Args: map[string]any{}},
				{Name: "h", Args: map[string]any{}},
			}}}},
		{name: "function_call", in: `[{"role": "assistant", "content": "", "function_call": {"name": "f", "arguments": "{}"}}, {"role": "function", "name": "f", "content": "r"}]`,
			want: agenteval.Conversation{{Role: asst, ToolCalls: []agenteval.ToolCall{{Name: "f", Args: map[string]any{}}}}, {Role: tool, Name: "f", Content: "r"}}},
		{name: "broken arguments", in: `[{"role": "assistant", "tool_calls": [{"name": "f", "arguments": "{\"a\": 1"}, {"name": "g", "arguments": "[1]"}, {"name": "h", "args": [1]}]}]`,
			want: agenteval.Conversation{{Role: asst, ToolCalls: []agenteval.ToolCall{{Name: "f", RawArgs: `{"a": 1`}, {Name: "g", RawArgs: "[1]"}, {Name: "h"}}}},
			probs: []string{
				`1:66 [0].tool_calls[0].arguments: warning: arguments are not valid JSON; kept as raw text, and every check of this call's arguments will fail`,
				`1:107 [0].tool_calls[1].arguments: warning: arguments are JSON list, not an object; kept as raw text, and every check of this call's arguments will fail`,
				`1:137 [0].tool_calls[2].args: arguments must be a JSON object, not a list`,
			}},
		{name: "broken arguments, lenient", opt: lenient, in: `[{"role": "assistant", "tool_calls": [{"name": "h", "args": [1, 2]}]}]`,
			want:  agenteval.Conversation{{Role: asst, ToolCalls: []agenteval.ToolCall{{Name: "h", RawArgs: "[1,2]"}}}},
			probs: []string{`1:61 [0].tool_calls[0].args: warning: arguments are a list, not a JSON object; kept as raw text, and every check of this call's arguments will fail`}},
		{name: "broken arguments, strict", opt: strictArgs, in: `[{"role": "assistant", "tool_calls": [{"name": "f", "arguments": "{\"a\": 1"}, {"name": "g", "arguments": "3", "raw_args": "x"}]}]`,
			want: agenteval.Conversation{{Role: asst, ToolCalls: []agenteval.ToolCall{{Name: "f"}, {Name: "g"}}}},
			probs: []string{
				`1:66 [0].tool_calls[0].arguments: arguments string is not valid JSON; write the arguments as a JSON object`,
				`1:107 [0].tool_calls[1].arguments: arguments string is JSON number, not an object; write the arguments as a JSON object`,
				`1:124 [0].tool_calls[1].raw_args: raw_args keeps arguments a model wrote that did not parse; here write the arguments as a JSON object`,
			}},
		{name: "raw_args", in: `[{"role": "assistant", "tool_calls": [{"name": "f", "args": {}, "raw_args": "{oops"}]}]`,
			want:  agenteval.Conversation{{Role: asst, ToolCalls: []agenteval.ToolCall{{Name: "f", RawArgs: "{oops"}}}},
			probs: []string{`1:77 [0].tool_calls[0].raw_args: warning: arguments were not valid JSON when recorded; kept as raw text, and every check of this call's arguments will fail`}},
		{name: "bad calls", in: `[{"role": "assistant", "tool_calls": [5, {"args": {}}, {"name": "a", "function": {"name": "b"}}, {"name": "a", "args": {}, "input": {}}, {"function": 3, "name": "x"}, {"name": 4}, {"name": "d", "duration_ms": "slow"}]}]`,
			want: agenteval.Conversation{{Role: asst, ToolCalls: []agenteval.ToolCall{
				{Args: map[string]any{}}, {Name: "b", Args: map[string]any{}}, {Name: "a", Args: map[string]any{}},
				{Name: "x", Args: map[string]any{}}, {Args: map[string]any{}}, {Name: "d", Args: map[string]any{}},
			}}},
			probs: []string{
				`1:39 [0].tool_calls[0]: a tool call must be a JSON object like {"name": ..., "args": {...}}, not a number`,
				`1:42 [0].tool_calls[1]: tool call has no name; give "name" (or function.name)`,
				`1:65 [0].tool_calls[2].name: the call's name is given twice (function.name and name); keep one`,
				`1:133 [0].tool_calls[3].input: the call's arguments are given twice (args and input); keep one`,
				`1:151 [0].tool_calls[4].function: function must be an object with name and arguments`,
				`1:177 [0].tool_calls[5].name: a tool's name must be a string, not a number`,
				`1:168 [0].tool_calls[5]: tool call has no name; give "name" (or function.name)`,
				`1:210 [0].tool_calls[6].duration_ms: duration_ms must be a number, not a string`,
			}},
		{name: "bad call, lenient", opt: lenient, in: `[{"role": "assistant", "tool_calls": [5, {"args": {}}]}]`,
			want: agenteval.Conversation{{Role: asst, ToolCalls: []agenteval.ToolCall{{Args: map[string]any{}}}}},
			probs: []string{
				`1:39 [0].tool_calls[0]: warning: a tool call must be a JSON object like {"name": ..., "args": {...}}, not a number; left out`,
				`1:42 [0].tool_calls[1]: warning: tool call has no name; give "name" (or function.name)`,
			}},
		{name: "calls of a user", in: `[{"role": "user", "tool_calls": [{"name": "f"}]}, {"role": "user", "tool_calls": "f"}]`,
			want: agenteval.Conversation{{Role: user, ToolCalls: []agenteval.ToolCall{{Name: "f", Args: map[string]any{}}}}, msg(user, "")},
			probs: []string{
				`1:33 [0].tool_calls: only assistant messages may make tool calls, this one is user`,
				`1:82 [1].tool_calls: tool calls must be a list, not a string`,
			}},
		{name: "calls of a user, lenient", opt: lenient, in: `[{"role": "user", "tool_calls": [{"name": "f"}]}]`,
			want: agenteval.Conversation{{Role: user, ToolCalls: []agenteval.ToolCall{{Name: "f", Args: map[string]any{}}}}}},

		// Other fields.
		{name: "ids, names, metadata", in: `[{"role": "tool", "tool_call_id": 7, "name": "f", "content": "r", "metadata": {"m": "x"}, "id": "msg_1"}]`,
			want: agenteval.Conversation{{Role: tool, ToolCallID: "7", Name: "f", Content: "r", Metadata: map[string]any{"m": "x"}}}},
		{name: "bad fields", in: `[{"role": "tool", "tool_call_id": {}, "name": 3, "metadata": [1]}]`,
			want: agenteval.Conversation{msg(tool, "")},
			probs: []string{
				`1:47 [0].name: name must be a string, not a number`,
				`1:35 [0].tool_call_id: tool_call_id must be a string or a number, not an object`,
				`1:62 [0].metadata: metadata must be a JSON object, not a list`,
			}},
		{name: "not messages", in: `[3, null, "x"]`,
			probs: []string{
				`1:2 [0]: a message must be a JSON object, not a number`,
				`1:5 [1]: a message must be a JSON object, not null`,
				`1:11 [2]: a message must be a JSON object, not a string`,
			}},
		{name: "not messages, lenient", opt: lenient, in: `[3]`,
			probs: []string{`1:2 [0]: warning: a message must be a JSON object, not a number; left out`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, probs := decode(t, tt.opt, tt.in)
			want := tt.want
			if want == nil {
				want = agenteval.Conversation{}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.probs, probs); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUnknownKeys: every key the decoder does not know reaches
// Options.UnknownKey, at the key, with what holds it; keys it knows do not.
func TestUnknownKeys(t *testing.T) {
	in := `[{"role": "assistant", "refusal": null, "content": [{"type": "text", "txt": "a", "text": "b"}], "tool_calls": [{"nme": "f", "name": "f", "function": {"name": "f", "argumnts": "{}"}}], "tool_call_id": "x", "metadata": {}, "id": "1", "type": "ai", "name": "n"}]`
	var got []string
	opt := Options{UnknownKey: func(p jsonpos.Path, what string, known []string) {
		line, col := jsonpos.LineCol([]byte(in), jsonpos.Offset([]byte(in), p))
		got = append(got, fmt.Sprintf("%d:%d %s in %s", line, col, p, what))
	}}
	_, probs := decode(t, opt, in)
	if len(probs) > 0 {
		t.Errorf("problems: %v", probs)
	}
	want := []string{
		"1:70 [0].content[0].txt in a content block",
		"1:164 [0].tool_calls[0].function.argumnts in a tool call's function",
		"1:113 [0].tool_calls[0].nme in a tool call",
		"1:24 [0].refusal in a message",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unknown keys (-want +got):\n%s", diff)
	}
}

// TestListOfSomethingElse: messages must come as a list.
func TestListOfSomethingElse(t *testing.T) {
	d := Decoder{}
	if conv, src := d.List(jsonpos.Path{"messages"}, map[string]any{}); conv != nil || src != nil {
		t.Errorf("decoded %v", conv)
	}
	want := []Problem{{Path: jsonpos.Path{"messages"}, Msg: "must be a list of messages, not an object"}}
	if diff := cmp.Diff(want, d.Problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

// TestValidMessagesAllocate: messages without problems cost no
// allocations for the paths a problem would have: the conversation, its
// sources, each list of calls and text joined from blocks are all a valid
// list allocates, with the callbacks' options set.
func TestValidMessagesAllocate(t *testing.T) {
	in := `[
		{"type": "human", "content": "Book a table for 2 at 8pm"},
		{"type": "ai", "content": "Working on it.", "tool_calls": [{"name": "search", "args": {"party_size": 2, "time": "8pm"}}]},
		{"type": "tool", "content": "ok: Restaurant 0"},
		{"role": "assistant", "content": [{"type": "text", "text": "Booking"}, "it"], "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "book", "arguments": {"name": "Restaurant 0"}}}]},
		{"role": "tool", "tool_call_id": "c1", "content": "booked"},
		{"role": "assistant", "content": "Your table is booked."}]`
	var v any
	if err := strictjson.Decode([]byte(in), &v); err != nil {
		t.Fatal(err)
	}
	d := &Decoder{Options: Options{
		UnknownKey: func(jsonpos.Path, string, []string) { t.Error("unknown key") },
		KeyOrder:   func(jsonpos.Path) map[string][]string { return nil },
	}}
	base := jsonpos.Path{"messages"}
	allocs := testing.AllocsPerRun(100, func() {
		d.List(base, v)
	})
	// The conversation, its sources, two lists of one call and the text
	// of the blocks.
	if allocs > 5 {
		t.Errorf("decoding valid messages made %v allocations, want 5", allocs)
	}
	if len(d.Problems) > 0 {
		t.Errorf("problems: %v", d.Problems)
	}
}
