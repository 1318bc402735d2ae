package fakellm

import (
	"encoding/json"
	"testing"
)

// TestTextVerdict: a plain-text judge gets a passing verdict in the shape
// its prompt names, every listed item included, and nothing else gets one.
func TestTextVerdict(t *testing.T) {
	tests := []struct {
		name, system, user, want string
	}{
		{
			name:   "score",
			system: `Answer with JSON: {"score": <0 to 1>, "assertions": [...]}`,
			user:   "The answer: hello",
			want:   `{"assertions":[{"evidence":"The fake judge passes every check.","passed":true,"text":"fake check"}],"score":1}`,
		},
		{
			name:   "checklist",
			system: `Return {"checks": [{"id": "...", "satisfied": true, "reasoning": "..."}]}`,
			user:   "Items:\n- [greets] (REQUIRED): says hello\n- [polite]: is polite\n- [greets]: again\nSee [the docs](x).",
			want:   `{"checks":[{"id":"greets","reasoning":"The fake judge passes every item.","satisfied":true},{"id":"polite","reasoning":"The fake judge passes every item.","satisfied":true}],"overall_reasoning":"The fake judge passes every item."}`,
		},
		{
			name:   "checklist as JSON",
			system: `Return {"checks": [{"id": "...", "satisfied": true}]}`,
			user:   "[[ ## rubric ## ]]\n[\n  {\"id\": \"rubric-1\", \"outcome\": \"Is right\"}\n]",
			want:   `{"checks":[{"id":"rubric-1","reasoning":"The fake judge passes every item.","satisfied":true}],"overall_reasoning":"The fake judge passes every item."}`,
		},
		{
			name:   "score ranges",
			system: `Return {"checks": [{"id": "...", "score": 0-10}]}`,
			user:   "### Criterion: accuracy (weight: 2)\nScore ranges: ...\n### Criterion: tone",
			want:   `{"checks":[{"id":"accuracy","reasoning":"The fake judge passes every item.","score":10},{"id":"tone","reasoning":"The fake judge passes every item.","score":10}],"overall_reasoning":"The fake judge passes every item."}`,
		},
		{name: "not a judge", system: "You are helpful.", user: "Hi", want: ""},
	}
	for _, tt := range tests {
		req := &Request{Messages: []Message{
			{Role: "system", Content: mustJSON(tt.system)},
			{Role: "user", Content: mustJSON(tt.user)},
		}}
		r := TextVerdict(req)
		got := ""
		if r.JSON != nil {
			b, _ := json.Marshal(r.JSON)
			got = string(b)
		}
		if got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
	judge := IsTextJudge("fake-judge")
	for _, tt := range []struct {
		model      string
		structured bool
		want       bool
	}{{"fake-judge", false, true}, {"fake-judge", true, false}, {"fake-agent", false, false}} {
		req := &Request{Model: tt.model}
		if tt.structured {
			req.ResponseFormat = &ResponseFormat{Type: "json_object"}
		}
		if got := judge(req); got != tt.want {
			t.Errorf("IsTextJudge(%s, structured %v) = %v", tt.model, tt.structured, got)
		}
	}
}

func mustJSON(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// TestPassingVerdict: a structured judge request gets the passing answer
// from its schema (an unbounded score is 1), a plain-text one TextVerdict's.
func TestPassingVerdict(t *testing.T) {
	tests := []struct{ name, body, want string }{
		{"unbounded score", `{"response_format":{"type":"json_schema","json_schema":{"name":"s","schema":{"type":"object","properties":{"score":{"type":"number","minimum":0}}}}}}`, `{"score":1}`},
		{"bounded score", `{"response_format":{"type":"json_schema","json_schema":{"name":"s","schema":{"type":"object","properties":{"score":{"type":"integer","minimum":0,"maximum":10}}}}}}`, `{"score":10}`},
		{"plain text", `{"messages":[{"role":"system","content":"Reply {\"score\": 0-1}"}]}`, `{"assertions":[{"evidence":"The fake judge passes every check.","passed":true,"text":"fake check"}],"score":1}`},
	}
	for _, tt := range tests {
		var req Request
		if err := json.Unmarshal([]byte(tt.body), &req); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(PassingVerdict(&req).JSON)
		if string(b) != tt.want {
			t.Errorf("%s: got %s, want %s", tt.name, b, tt.want)
		}
	}
}
