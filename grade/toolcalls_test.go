package grade

import (
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
)

func TestToolCallsModes(t *testing.T) {
	s1 := call("search", `{"q": "chinese", "n": 2}`)
	s1float := call("search", `{"q": "chinese", "n": 2.0}`)
	b1 := call("book", `{"name": "Golden Dragon"}`)
	b9 := call("book", `{"name": "Jade Palace"}`)
	pay := call("pay", `{"amount": 10}`)
	ref := []agenteval.ToolCall{s1, b1}

	tests := []struct {
		name     string
		params   map[string]any
		pred     [][]agenteval.ToolCall
		want     float64
		evidence string // must appear in some failed assertion
	}{
		{"in_order perfect", nil, seq(s1, b1), 1, ""},
		{"2 equals 2.0 in our graders", nil, seq(s1float, b1), 1, ""},
		{"in_order allows extras between", nil, seq(s1, pay, b1), 1, ""},
		{"in_order retried call", nil, seq(s1, s1, b1), 1, ""},
		{"in_order wrong order is half", nil, seq(b1, s1), 0.5, "not in the expected order"},
		{"in_order wrong argument", nil, seq(s1, b9), 0.5, `arg name: want "Golden Dragon", got "Jade Palace"`},
		{"in_order never called", nil, seq(s1), 0.5, "book was never called"},
		{"in_order no calls", nil, nil, 0, "search was never called"},
		{"exact perfect", map[string]any{"mode": "exact"}, seq(s1, b1), 1, ""},
		{"exact extra call", map[string]any{"mode": "exact"}, seq(s1, b1, pay), 2.0 / 3, "unexpected call 3: pay"},
		{"exact retried call shifts everything", map[string]any{"mode": "exact"}, seq(s1, s1, b1), 1.0 / 3, "call 2 search: called search instead"},
		{"any_order swapped", map[string]any{"mode": "any_order"}, seq(b1, s1), 1, ""},
		{"any_order parallel", map[string]any{"mode": "any_order"}, [][]agenteval.ToolCall{{b1, s1}}, 1, ""},
		{"superset with extras", map[string]any{"mode": "superset"}, seq(pay, b1, s1), 1, ""},
		{"any_order missing one", map[string]any{"mode": "any_order"}, seq(b1), 0.5, "search was never called"},
		{"subset all allowed", map[string]any{"mode": "subset"}, seq(s1), 1, ""},
		{"subset with a stray call", map[string]any{"mode": "subset"}, seq(s1, pay), 0.5, "not among the expected calls"},
		{"subset no calls", map[string]any{"mode": "subset"}, nil, 1, ""},
		{"args ignored", map[string]any{"args_match": "ignore"}, seq(call("search", `{}`), b9), 1, ""},
		{"args superset allows extra args", map[string]any{"args_match": "superset"}, seq(call("search", `{"q": "chinese", "n": 2, "limit": 5}`), b1), 1, ""},
		{"args exact rejects extra args", nil, seq(call("search", `{"q": "chinese", "n": 2, "limit": 5}`), b1), 0.5, "unexpected arg limit=5"},
		{"args superset still needs the expected ones", map[string]any{"args_match": "superset"}, seq(call("search", `{"q": "chinese"}`), b1), 0.5, "missing arg n"},
		{"args subset allows missing args", map[string]any{"args_match": "subset"}, seq(call("search", `{"q": "chinese"}`), b1), 1, ""},
		{"args subset rejects extra args", map[string]any{"args_match": "subset"}, seq(call("search", `{"q": "chinese", "x": 1}`), b1), 0.5, "unexpected arg x=1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := gradeConv(t, mustGrader(t, "tool_calls", tt.params), convo(tt.pred...), ref)
			if !near(s.Score, tt.want) {
				t.Errorf("score = %v, want %v (%s; %+v)", s.Score, tt.want, s.Reason, s.Assertions)
			}
			if tt.evidence != "" && !hasFailedEvidence(s, tt.evidence) {
				t.Errorf("no failed assertion says %q: %+v", tt.evidence, s.Assertions)
			}
		})
	}
}

func hasFailedEvidence(s agenteval.Score, want string) bool {
	for _, a := range s.Assertions {
		if !a.Passed && strings.Contains(a.Evidence, want) {
			return true
		}
	}
	return false
}

func TestToolCallsExpectedSettings(t *testing.T) {
	expected := []any{
		map[string]any{"tool": "search", "args": map[string]any{"q": map[string]any{"$regex": "^chin"}, "n": map[string]any{"$any": true}}},
		map[string]any{"tool": "book", "args": "any", "output": map[string]any{"value": "booked"}},
	}
	g := mustGrader(t, "tool_calls", map[string]any{"expected": expected, "mode": "any_order"})
	conv := agenteval.Conversation{
		{Role: agenteval.RoleUser, Content: "go"},
		{Role: agenteval.RoleAssistant, ToolCalls: []agenteval.ToolCall{
			{ID: "1", Name: "book", Args: map[string]any{"name": "x"}},
			{ID: "2", Name: "search", Args: map[string]any{"q": "chinese food", "n": 7}},
		}},
		// Answered out of order: linkage is by ID.
		{Role: agenteval.RoleTool, ToolCallID: "2", Content: "results"},
		{Role: agenteval.RoleTool, ToolCallID: "1", Content: "booked"},
	}
	s := gradeConv(t, g, conv, nil)
	if s.Score != 1 {
		t.Errorf("score = %v, want 1: %+v", s.Score, s.Assertions)
	}
	conv[3].Content = "failed"
	s = gradeConv(t, g, conv, nil)
	if s.Score != 0.5 || !hasFailedEvidence(s, `output: want "booked", got "failed"`) {
		t.Errorf("score = %v, want 0.5 with output evidence: %+v", s.Score, s.Assertions)
	}
}

func TestReferenceArgsAreLiteral(t *testing.T) {
	// Mongo-style arguments in a recorded reference are data, not matchers.
	ref := []agenteval.ToolCall{call("find", `{"filter": {"$gt": 5}, "name": {"$regex": "^a.*"}}`)}
	g := mustGrader(t, "tool_calls", nil)
	if s := gradeConv(t, g, convo(seq(call("find", `{"filter": {"$gt": 5}, "name": {"$regex": "^a.*"}}`))...), ref); s.Score != 1 {
		t.Errorf("identical literal args: score %v: %+v", s.Score, s.Assertions)
	}
	if s := gradeConv(t, g, convo(seq(call("find", `{"filter": {"$gt": 5}, "name": "abc"}`))...), ref); s.Score != 0 {
		t.Errorf("a reference $regex must not act as a pattern: score %v", s.Score)
	}
}

func TestExpectedCallWithoutArgsChecksTheNameOnly(t *testing.T) {
	g := mustGrader(t, "tool_calls", map[string]any{"expected": []any{map[string]any{"tool": "f"}}})
	if s := gradeConv(t, g, convo(seq(call("f", `{"a": 1}`))...), nil); s.Score != 1 {
		t.Errorf("score %v: %+v", s.Score, s.Assertions)
	}
	g = mustGrader(t, "tool_calls", map[string]any{"expected": []any{map[string]any{"tool": "f", "args": map[string]any{}}}})
	if s := gradeConv(t, g, convo(seq(call("f", `{"a": 1}`))...), nil); s.Score != 0 {
		t.Errorf("explicit empty args with args_match exact: score %v", s.Score)
	}
}

func TestOutputMustMatchWhole(t *testing.T) {
	g := mustGrader(t, "tool_calls", map[string]any{"expected": []any{map[string]any{"tool": "f", "output": map[string]any{"value": map[string]any{"ok": true}}}}})
	conv := agenteval.Conversation{
		{Role: agenteval.RoleUser, Content: "go"},
		{Role: agenteval.RoleAssistant, ToolCalls: []agenteval.ToolCall{{Name: "f", Args: map[string]any{}}}},
		{Role: agenteval.RoleTool, Content: `{"ok": true} ... but then ERROR`},
	}
	if s := gradeConv(t, g, conv, nil); s.Score != 0 {
		t.Errorf("a result with trailing text matched: %+v", s.Assertions)
	}
	conv[2].Content = ` {"ok": true} `
	if s := gradeConv(t, g, conv, nil); s.Score != 1 {
		t.Errorf("JSON-equal result did not match: %+v", s.Assertions)
	}
}

func TestResultLinkageFallsBackToFirstUnanswered(t *testing.T) {
	conv := agenteval.Conversation{
		{Role: agenteval.RoleAssistant, ToolCalls: []agenteval.ToolCall{{ID: "1", Name: "a"}, {ID: "2", Name: "b"}}},
		{Role: agenteval.RoleTool, ToolCallID: "2", Content: "rb"},
		{Role: agenteval.RoleTool, Content: "ra"},
	}
	recs := records(conv)
	if recs[0].result == nil || *recs[0].result != "ra" || *recs[1].result != "rb" {
		t.Errorf("results: a=%v b=%v", recs[0].result, recs[1].result)
	}
}

func TestToolCallsMatchingIsMaximal(t *testing.T) {
	// The loose expectation must not take the only call the strict one fits.
	expected := []any{
		map[string]any{"tool": "f", "args": "any"},
		map[string]any{"tool": "f", "args": map[string]any{"a": 1}},
	}
	g := mustGrader(t, "tool_calls", map[string]any{"expected": expected, "mode": "any_order"})
	s := gradeConv(t, g, convo(seq(call("f", `{"a": 1}`), call("f", `{"a": 2}`))...), nil)
	if s.Score != 1 {
		t.Errorf("score = %v, want 1: %+v", s.Score, s.Assertions)
	}
}

func TestToolCallsRawArgs(t *testing.T) {
	bad := agenteval.ToolCall{Name: "search", RawArgs: `{"q": "chin`}
	s := gradeConv(t, mustGrader(t, "tool_calls", nil), convo(seq(bad)...), []agenteval.ToolCall{call("search", `{"q": "chinese"}`)})
	if s.Score != 0 || !hasFailedEvidence(s, "arguments are not valid JSON") {
		t.Errorf("score = %v: %+v", s.Score, s.Assertions)
	}
}

func TestToolCallsMinimums(t *testing.T) {
	g := mustGrader(t, "tool_calls", map[string]any{"mode": "any_order", "minimums": map[string]any{"search": 2, "book": 1}})
	s := gradeConv(t, g, convo(seq(call("search", `{}`), call("book", `{}`))...), nil)
	if s.Score != 0.5 || !hasFailedEvidence(s, "called 1 times") {
		t.Errorf("score = %v: %+v", s.Score, s.Assertions)
	}
}

func TestToolCallsBadSettings(t *testing.T) {
	tests := []struct {
		params map[string]any
		want   string
	}{
		{map[string]any{"mode": "sorted"}, `mode "sorted" is not one of`},
		{map[string]any{"args_match": "fuzzy"}, `args_match "fuzzy" is not one of`},
		{map[string]any{"mod": "exact"}, `did you mean "mode"`},
		{map[string]any{"expected": []any{map[string]any{"args": map[string]any{}}}}, "needs tool"},
		{map[string]any{"expected": []any{map[string]any{"tool": "f", "args": "anything"}}}, `args must be an object or "any"`},
		{map[string]any{"expected": []any{map[string]any{"tool": "f", "args": map[string]any{"a": map[string]any{"$reqex": "x"}}}}}, `unknown matcher "$reqex"`},
		{map[string]any{"expected": []any{map[string]any{"tool": "f", "args": map[string]any{"a": map[string]any{"$regex": "("}}}}}, "bad $regex"},
		{map[string]any{"minimums": map[string]any{"a": 1}}, "minimums works only with mode: any_order"},
		{map[string]any{"mode": 3}, `mode "3" is not one of exact`},
	}
	for _, tt := range tests {
		_, err := New(Spec{Type: "tool_calls", Options: tt.params})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%v) error = %v, want %q", tt.params, err, tt.want)
		}
	}
}
