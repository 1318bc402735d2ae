package grade

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
)

func reply(text string) *agenteval.GradeInput {
	c := agenteval.Conversation{
		{Role: agenteval.RoleUser, Content: "q"},
		{Role: agenteval.RoleAssistant, Content: text},
		{Role: agenteval.RoleAssistant, ToolCalls: []agenteval.ToolCall{{Name: "noop", Args: map[string]any{}}}},
	}
	return &agenteval.GradeInput{Transcript: c, Output: c}
}

func TestTextChecks(t *testing.T) {
	schema := filepath.Join(t.TempDir(), "s.json")
	os.WriteFile(schema, []byte(`{"type": "object", "required": ["ok"]}`), 0o644)
	tests := []struct {
		typ    string
		params map[string]any
		out    string
		pass   bool
	}{
		{"contains", map[string]any{"value": "Dragon"}, "Golden Dragon at 8pm", true},
		{"contains", map[string]any{"value": "dragon"}, "Golden Dragon at 8pm", false},
		{"icontains", map[string]any{"value": "dragon"}, "Golden Dragon at 8pm", true},
		{"not_contains", map[string]any{"value": "sorry"}, "Golden Dragon", true},
		{"not-contains", map[string]any{"value": "Golden"}, "Golden Dragon", false},
		{"contains_any", map[string]any{"value": []any{"x", "Dragon"}}, "Golden Dragon", true},
		{"contains_any", map[string]any{"value": []any{"x", "y"}}, "Golden Dragon", false},
		{"icontains_any", map[string]any{"value": []any{"GOLDEN"}}, "Golden Dragon", true},
		{"contains_all", map[string]any{"value": []any{"Golden", "Dragon"}}, "Golden Dragon", true},
		{"contains-all", map[string]any{"value": []any{"Golden", "8pm"}}, "Golden Dragon", false},
		{"icontains_all", map[string]any{"value": []any{"golden", "DRAGON"}}, "Golden Dragon", true},
		{"equals", map[string]any{"value": "yes"}, "yes", true},
		{"equals", map[string]any{"value": "yes"}, "yes \n", true}, // trimmed, as AgentV compares
		{"equals", map[string]any{"value": "yes"}, "yes!", false},
		{"regex", map[string]any{"value": "^BOOKED", "flags": "i"}, "booked: 8pm", true},
		{"regex", map[string]any{"value": "^BOOKED"}, "booked: 8pm", false},
		{"starts_with", map[string]any{"value": "Your table"}, "Your table is booked", true},
		{"ends_with", map[string]any{"value": "booked"}, "Your table is booked", true},
		{"ends_with", map[string]any{"value": "booked!"}, "Your table is booked", false},
		{"regex", map[string]any{"value": `\b\d{1,2}(:\d\d)?\s?pm\b`}, "booked for 8pm", true},
		{"regex", map[string]any{"value": `(?i)^YOUR`}, "your table", true},
		{"regex", map[string]any{"value": `^\d+$`}, "abc", false},
		{"is_json", nil, ` {"a": 1} `, true},
		{"is_json", nil, `{"a": 1} trailing`, false},
		{"is_json", nil, "Sure! {\"a\": 1}", false},
		{"json_schema", map[string]any{"schema": map[string]any{"type": "object", "required": []any{"ok"}, "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}}}, `{"ok": true}`, true},
		{"json_schema", map[string]any{"schema": map[string]any{"type": "object", "required": []any{"ok"}}}, `{"nope": 1}`, false},
		{"json_schema", map[string]any{"value": schema}, `{"ok": 1}`, true},
		{"json_schema", map[string]any{"value": schema}, `not json`, false},
		{"levenshtein", map[string]any{"value": "hello world", "max_distance": 2}, "helo world!", true},
		{"levenshtein", map[string]any{"value": "hello world", "max_distance": 1}, "helo world!", false},
		{"is_json", nil, `{"a": 1}}]]`, false},
	}
	for _, tt := range tests {
		t.Run(tt.typ+"/"+tt.out, func(t *testing.T) {
			g := mustGrader(t, tt.typ, tt.params)
			s, err := g.Grade(context.Background(), reply(tt.out))
			if err != nil {
				t.Fatal(err)
			}
			if (s.Verdict == agenteval.VerdictPass) != tt.pass {
				t.Errorf("verdict = %s (score %v, %s), want pass=%v", s.Verdict, s.Score, s.Reason, tt.pass)
			}
			if len(s.Assertions) != 1 || s.Assertions[0].Passed != tt.pass {
				t.Errorf("assertions = %+v, want one with passed=%v", s.Assertions, tt.pass)
			}
		})
	}
}

func TestTextCheckBadSettings(t *testing.T) {
	tests := []struct {
		typ    string
		params map[string]any
		want   string
	}{
		{"contains", nil, "needs value"},
		{"contains", map[string]any{"value": []any{"a"}}, "use contains_any or contains_all for a list"},
		{"icontains", map[string]any{"value": []any{"a"}}, "use icontains_any or icontains_all for a list"},
		{"not-contains", map[string]any{"value": []any{"a"}}, "use contains_any or contains_all for a list"},
		{"contains_any", map[string]any{"value": []any{}}, "empty list"},
		{"regex", map[string]any{"value": "("}, "not a valid regular expression"},
		{"json_schema", nil, "needs schema"},
		{"json_schema", map[string]any{"schema": "/no/such/file.json"}, "read schema"},
		{"json_schema", map[string]any{"schema": map[string]any{"type": 5}}, "is not a JSON Schema"},
		{"contains", map[string]any{"valeu": "x"}, `did you mean "value"`},
		{"is_json", map[string]any{"value": "x"}, "has no settings of its own"},
		{"containz", nil, `unknown metric "containz"; did you mean "contains"?`},
	}
	for _, tt := range tests {
		_, err := New(Spec{Type: tt.typ, Options: tt.params})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%s, %v) error = %v, want %q", tt.typ, tt.params, err, tt.want)
		}
	}
	// The definition's own New says the same, and a list checked by
	// other means (an equals) gets no such hint.
	if _, err := Contains.New(map[string]any{"value": []any{"a"}}, Env{}); err == nil || !strings.Contains(err.Error(), "use contains_any or contains_all for a list") {
		t.Errorf("Contains.New with a list: %v", err)
	}
	if _, err := New(Spec{Type: "equals", Options: map[string]any{"value": []any{"a"}}}); err == nil || strings.Contains(err.Error(), "for a list") {
		t.Errorf("equals with a list: %v", err)
	}
}

func TestSpecCommonFields(t *testing.T) {
	w, th := 2.0, 0.5
	g, err := New(Spec{Type: "tool_calls", Name: "traj", Weight: &w, Threshold: &th, Required: true})
	if err != nil {
		t.Fatal(err)
	}
	s := gradeConv(t, g, convo(seq(call("a", `{}`))...), []agenteval.ToolCall{call("a", `{}`), call("b", `{}`)})
	if s.Name != "traj" || s.Type != "tool_calls" || s.Weight != 2 || !s.Required || s.Score != 0.5 || s.Verdict != agenteval.VerdictPass {
		t.Errorf("score = %+v", s)
	}
	if _, err := New(Spec{Type: "contains", Options: map[string]any{"value": "x"}, Threshold: ptr(1.5)}); err == nil {
		t.Error("threshold 1.5 accepted")
	}
}

func TestLength(t *testing.T) {
	tests := []struct {
		settings map[string]any
		reply    string
		want     float64
		err      string
	}{
		{map[string]any{"max": 10}, "Booked.", 1, ""},
		{map[string]any{"max": 5}, "Booked.", 0, ""},
		{map[string]any{"min": 3, "max": 7}, "Réservé", 1, ""}, // characters, not bytes
		{map[string]any{"min": 8}, "Réservé", 0, ""},
		{nil, "", 0, "needs min, max or both"},
		{map[string]any{"min": 5, "max": 2}, "", 0, "min 5 is more than max 2"},
		{map[string]any{"mac": 2}, "", 0, `did you mean "max"?`},
	}
	for _, tt := range tests {
		g, err := New(Spec{Type: "length", Options: tt.settings})
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("New(%v) = %v, want %q", tt.settings, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		in := &agenteval.GradeInput{Output: agenteval.Conversation{{Role: agenteval.RoleAssistant, Content: tt.reply}}}
		if s, _ := g.Grade(context.Background(), in); s.Score != tt.want {
			t.Errorf("length %v on %q = %v (%s), want %v", tt.settings, tt.reply, s.Score, s.Reason, tt.want)
		}
	}
}
