package target

import (
	"encoding/json"
	"testing"

	"github.com/agenteval/agenteval"
)

// The cases were run through AgentV 4.42.4's cli provider; want is what
// it made of each file.
func TestDecodeOutputFileAsAgentV(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	tests := []struct {
		name, file string
		reply      string // the last message's content
		msgs       int
		usage      *agenteval.Usage // nil: no tokens
		cost, dur  *float64
	}{
		{name: "plain text keeps its newline", file: "hello\r\n", reply: "hello\n", msgs: 1},
		{name: "empty file", file: "", reply: "", msgs: 1},
		{name: "text with metrics", file: `{"text":"hi","token_usage":{"input":5,"output":7},"cost_usd":0.002}`, reply: "hi", msgs: 1,
			usage: &agenteval.Usage{Calls: 1, InputTokens: 5, OutputTokens: 7}, cost: f(0.002)},
		{name: "cached tokens", file: `{"text":"hi","token_usage":{"input":100,"output":50,"cached":20},"duration_ms":4321}`, reply: "hi", msgs: 1,
			usage: &agenteval.Usage{Calls: 1, InputTokens: 100, OutputTokens: 50, CachedTokens: 20}, dur: f(4321)},
		{name: "zero tokens are known", file: `{"text":"hi","token_usage":{"input":0,"output":0}}`, reply: "hi", msgs: 1,
			usage: &agenteval.Usage{Calls: 1}},
		{name: "cost alone", file: `{"text":"cost only","cost_usd":0.03}`, reply: "cost only", msgs: 1, cost: f(0.03)},
		{name: "output wins over text", file: `{"text":"ignored","output":[{"role":"assistant","content":"used"}],"duration_ms":5}`, reply: "used", msgs: 1, dur: f(5)},
		{name: "output_messages, the older name", file: `{"output_messages":[{"role":"assistant","content":"old"}]}`, reply: "old", msgs: 1},
		{name: "empty output falls back to text", file: `{"output":[],"output_messages":[{"role":"assistant","content":"not read"}],"text":"t"}`, reply: "t", msgs: 1},
		{name: "text that is not a string", file: `{"text":42}`, reply: "42", msgs: 1},
		{name: "text null", file: `{"text":null}`, reply: "null", msgs: 1},
		{name: "text object", file: `{"text":{"a":1}}`, reply: "[object Object]", msgs: 1},
		{name: "text list", file: `{"text":[1,"b",null,[2,3]]}`, reply: "1,b,,2,3", msgs: 1},
		// Any field of the wrong type makes the whole file the reply, and
		// its metrics are not read.
		{name: "usage without output tokens", file: `{"text":"bad usage","token_usage":{"input":5},"cost_usd":0.03}`,
			reply: `{"text":"bad usage","token_usage":{"input":5},"cost_usd":0.03}`, msgs: 1},
		{name: "cost as a string", file: `{"text":"x","cost_usd":"0.1"}`, reply: `{"text":"x","cost_usd":"0.1"}`, msgs: 1},
		{name: "null output", file: `{"text":"x","output":null}`, reply: `{"text":"x","output":null}`, msgs: 1},
		{name: "message without a role", file: `{"output":[{"content":"x"}],"text":"y"}`, reply: `{"output":[{"content":"x"}],"text":"y"}`, msgs: 1},
		{name: "unknown tool status", file: `{"output":[{"role":"assistant","content":"x","tool_calls":[{"tool":"a","status":"weird"}]}]}`,
			reply: `{"output":[{"role":"assistant","content":"x","tool_calls":[{"tool":"a","status":"weird"}]}]}`, msgs: 1},
		{name: "name null", file: `{"output":[{"role":"assistant","content":"x","name":null}]}`, reply: `{"output":[{"role":"assistant","content":"x","name":null}]}`, msgs: 1},
		{name: "neither output nor text", file: `{"cost_usd":1}`, reply: `{"cost_usd":1}`, msgs: 1},
		{name: "a JSON list", file: `[1]`, reply: `[1]`, msgs: 1},
		// Negative metrics are dropped, the rest is read.
		{name: "negative cost and duration", file: `{"text":"x","cost_usd":-1,"duration_ms":-5,"token_usage":{"input":1,"output":2}}`, reply: "x", msgs: 1,
			usage: &agenteval.Usage{Calls: 1, InputTokens: 1, OutputTokens: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := decodeOutputFile([]byte(tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Messages) != tt.msgs || r.Messages[len(r.Messages)-1].Content != tt.reply {
				t.Errorf("messages = %+v, want %d ending %q", r.Messages, tt.msgs, tt.reply)
			}
			want := agenteval.Usage{}
			if tt.usage != nil {
				want = *tt.usage
			}
			got := r.Usage
			got.CostUSD = nil
			if got != want {
				t.Errorf("usage = %+v, want %+v", got, want)
			}
			if got.TokensKnown() != (tt.usage != nil) {
				t.Errorf("tokens known = %v", got.TokensKnown())
			}
			if !sameNum(r.Usage.CostUSD, tt.cost) || !sameNum(r.DurationMS, tt.dur) {
				t.Errorf("cost %v, duration %v; want %v, %v", show(r.Usage.CostUSD), show(r.DurationMS), show(tt.cost), show(tt.dur))
			}
		})
	}
}

func sameNum(a, b *float64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func show(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestDecodeOutputFileToolCalls(t *testing.T) {
	file := `{
	  "output": [
	    {"role": "assistant", "content": "Let me look.", "start_time": "2026-01-01T00:00:00.000Z", "tool_calls": [
	      {"tool": "searchDocs", "input": {"queryText": "x", "maxResults": 3}, "output": {"hitCount": 2}, "id": "c1", "duration_ms": 120},
	      {"tool": "Read", "input": {"filePath": "a.txt"}, "status": "error", "start_time": "2026-01-01T00:00:00.000Z", "end_time": "2026-01-01T00:00:00.250Z"},
	      {"tool": "echo", "input": "just text", "output": "said"}
	    ]},
	    {"role": "tool", "content": "tool said", "name": "searchDocs"},
	    {"role": "assistant", "content": [{"type": "text", "text": "Final"}, {"type": "text", "text": "answer."}], "end_time": "2026-01-01T00:00:01.000Z", "metadata": {"someKey": 1}}
	  ],
	  "token_usage": {"input": 100, "output": 50, "cached": 20},
	  "cost_usd": 0.0123,
	  "duration_ms": 4321
	}`
	r, err := decodeOutputFile([]byte(file))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(r.Messages)
	want := `[{"role":"assistant","content":"Let me look.","tool_calls":[` +
		`{"id":"c1","name":"searchDocs","args":{"maxResults":3,"queryText":"x"},"duration_ms":120},` +
		`{"name":"Read","args":{"filePath":"a.txt"},"status":"error","start_time":"2026-01-01T00:00:00.000Z","end_time":"2026-01-01T00:00:00.250Z"},` +
		`{"name":"echo","args":null,"raw_args":"\"just text\""}],"start_time":"2026-01-01T00:00:00.000Z"},` +
		`{"role":"tool","content":"{\"hitCount\":2}","tool_call_id":"c1","name":"searchDocs"},` +
		`{"role":"tool","content":"said","name":"echo"},` +
		`{"role":"tool","content":"tool said","name":"searchDocs"},` +
		`{"role":"assistant","content":"Final\nanswer.","metadata":{"someKey":1},"end_time":"2026-01-01T00:00:01.000Z"}]`
	if string(got) != want {
		t.Errorf("messages\n got %s\nwant %s", got, want)
	}
	if r.Usage.InputTokens != 100 || r.Usage.CachedTokens != 20 || *r.Usage.CostUSD != 0.0123 || *r.DurationMS != 4321 {
		t.Errorf("usage %+v, duration %v", r.Usage, *r.DurationMS)
	}
}

func TestDecodeOutputFileUnknownRole(t *testing.T) {
	_, err := decodeOutputFile([]byte(`{"output":[{"role":"narrator","content":"x"}]}`))
	if err == nil {
		t.Fatal("a role we cannot place is accepted")
	}
}
