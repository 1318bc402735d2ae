package suite

import (
	"reflect"
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
)

// TestParseToolString: each want is what agent_inspect's
// paper_experiments/convert_to_data_sample.py (parse_tool_call_string)
// returns for the string, as run with Python 3.11: JSON first, then
// ast.literal_eval, then a regular expression that finds the name only.
func TestParseToolString(t *testing.T) {
	tests := []struct {
		in       string
		tool     string
		args     map[string]string
		nameOnly bool
	}{
		{`[{'tool_code': 'get_user_details(user_id=ivan_rossi_8555)', 'output': '$AnyValue'}]`, "get_user_details", map[string]string{"user_id": "ivan_rossi_8555"}, false},
		{`[{'tool_code': 'search_direct_flight(origin=EWR, destination=LAX, date=2024-05-21)', 'output': '$AnyValue'}]`, "search_direct_flight", map[string]string{"origin": "EWR", "destination": "LAX", "date": "2024-05-21"}, false},
		// Nested quotes: not a Python literal, so only the name is read.
		{`[{'tool_code': 'update_reservation_flights(reservation_id=OWZ4XL, cabin=economy, flights=[{'flight_number': 'HAT202', 'date': '2024-05-21'}], payment_id=credit_card_9659780)', 'output': '$AnyValue'}]`, "update_reservation_flights", map[string]string{}, true},
		{`[{'tool_code': "book(name='Golden Dragon', time=8pm, party=4)"}]`, "book", map[string]string{"name": "Golden Dragon", "time": "8pm", "party": "4"}, false},
		{`[{"tool_code": "send_certificate(user_id=x, amount=150)", "output": "$AnyValue"}]`, "send_certificate", map[string]string{"user_id": "x", "amount": "150"}, false},
		{`[{'tool_code': 'calculate(expression=(2 + 3) * 4)'}]`, "calculate", map[string]string{"expression": "(2 + 3) * 4"}, false},
		{`[{'tool_code': 'f(note=No Remarks, x=[1, 2])'}]`, "f", map[string]string{"note": "No Remarks", "x": "[1"}, false},
		{`[{'tool_code': 'get_time()'}]`, "get_time", map[string]string{}, false},
		{`[{'tool_code': 'get_time'}]`, "get_time", map[string]string{}, false},
		{`[{'tool_code': 'a(x=1)' 'b'}]`, "a", map[string]string{"x": "1"}, false},
		{`[{'tool_code': 'f(q="it''s", r= spaced value )'}]`, "f", map[string]string{"q": "its", "r": "spaced value"}, false},
		{`[{'tool_code': 'f(x=1)trailing'}]`, "f", map[string]string{"x": "1"}, false},
		{`[{'tool_code': 'f(x=a=b, y==c)'}]`, "f", map[string]string{"x": "a=b", "y": "=c"}, false},
	}
	for _, tt := range tests {
		got := parseToolString(tt.in)
		if got.tool != tt.tool || !reflect.DeepEqual(got.args, tt.args) || got.nameOnly != tt.nameOnly || got.unknown {
			t.Errorf("parseToolString(%s) = %+v, want %s %v (name only %v)", tt.in, got, tt.tool, tt.args, tt.nameOnly)
		}
	}
	for _, bad := range []string{"nonsense", "[]", "[{'tool': 'x'}]"} {
		if got := parseToolString(bad); !got.unknown {
			t.Errorf("parseToolString(%s) = %+v, want the converter's unknown tool", bad, got)
		}
	}
}

// TestDatasetSchema reads a sample of agent_inspect's README schema: the
// instruction and its stop rule, 0-based subgoal turns, tool strings with
// the converter's checks, and the other keys as metadata.
func TestDatasetSchema(t *testing.T) {
	data := []byte(`[{"id": "m31",
  "input": [{"role": "user", "content": "Change your flight; it costs $100 at most.", "terminating_condition": "You are done when transferred."}],
  "metadata": {"subgoals": [{"type": "gradingNotes", "details": "Agent does not book.", "turn": "all"}, {"type": "gradingNotes", "details": "Agent greets.", "turn": 0}],
    "expectedTools": ["[{'tool_code': 'f(a=1, b=$AnyValue, note=No Remarks)', 'output': '$AnyValue'}]", {"tool_code": "g()", "turn": 2}, {"tool": "h", "expected_parameters": [{"name": "x", "value": 3}]}],
    "trace_type": "tau2bench"},
  "target": "", "domain": "airline", "filtered_scenarios": []}]`)
	s, err := Parse("d.json", data, Options{JudgeAvailable: true})
	if err != nil {
		t.Fatal(err)
	}
	if s.Schema != SchemaInspectDataset {
		t.Errorf("schema = %q", s.Schema)
	}
	tc := s.Tests[0]
	if tc.ID != "m31" || tc.User == nil || tc.User.Instruction != "Change your flight; it costs $100 at most." || tc.User.TerminatingCondition != "You are done when transferred." {
		t.Errorf("test = %+v, user %+v", tc, tc.User)
	}
	if tc.Semantics != agenteval.SemanticsAgentInspectDataset || tc.Subgoals[0].Turn != 0 || tc.Subgoals[1].Turn != 1 {
		t.Errorf("semantics %q, subgoals %+v", tc.Semantics, tc.Subgoals)
	}
	want := []agenteval.ExpectedCall{
		{Tool: "f", Args: map[string]any{"a": map[string]any{"$text": "1"}, "b": map[string]any{"$any": true}, "note": map[string]any{"$check": "No Remarks"}}},
		{Tool: "g", Args: map[string]any{}, Turn: 3},
		{Tool: "h", Args: map[string]any{"x": map[string]any{"$text": int64(3)}}},
	}
	for i := range want {
		got := tc.ExpectedToolCalls[i]
		got.Pos = agenteval.Pos{}
		if !reflect.DeepEqual(got, want[i]) {
			t.Errorf("expected call %d = %+v, want %+v", i, got, want[i])
		}
	}
	if tc.Metadata["domain"] != "airline" || tc.Metadata["trace_type"] != "tau2bench" || tc.Metadata["filtered_scenarios"] == nil {
		t.Errorf("metadata = %v", tc.Metadata)
	}
	// Errors name their place.
	_, err = Parse("d.json", []byte(`[{"id": "x", "input": [{"role": "user", "content": ""}], "metadata": {"subgols": [], "expected_tools": ["huh"]}, "targt": ""}]`), Options{JudgeAvailable: true})
	for _, w := range []string{`d.json:1:24: input[0] has no content`, `d.json:1:71: unknown key "subgols" in metadata; did you mean "subgoals"?`, `d.json:1:105: agent_inspect cannot read this expected tool`, `d.json:1:114: unknown key "targt" in a sample; did you mean "target"?`} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q:\n%v", w, err)
		}
	}
}

func FuzzParseToolString(f *testing.F) {
	for _, s := range []string{`[{'tool_code': 'f(a=1)'}]`, `[{"tool_code": "g(x=[1, 2])"}]`, `[{'tool_code': 'h(q='x')'}]`, `'\x41\u00e9' "b"`, `(1, -2.5e3, {1}, True, None)`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tc := parseToolString(s)
		if !tc.unknown && tc.tool == "" && s != "" && !strings.Contains(s, "tool_code") {
			t.Errorf("no tool from %q", s)
		}
		_, _ = pyLiteral(s)
	})
}
