package grade

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
)

func gradeWith(t *testing.T, semantics string, calls []any, conv agenteval.Conversation) (agenteval.Score, error) {
	t.Helper()
	g, err := New(Spec{Type: "expected_tool_calls", Options: map[string]any{"calls": calls, "semantics": semantics}})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return g.Grade(context.Background(), &agenteval.GradeInput{Transcript: conv, Output: conv})
}

// TestOneCallMeetsIdenticalExpectations: agent_inspect validates each
// expected call on its own (ToolCorrectnessMetric calls the validator once
// per expectation, and the validator looks at every call of the turn), so
// one update_reservation_flights call meets two identical expectations and
// scores 1.0, as the paper's sample multiturnmessage_32 has them. Our rules
// pair each call made with one expectation, but identical expectations
// count as one: 1.0 as well.
func TestOneCallMeetsIdenticalExpectations(t *testing.T) {
	conv := agenteval.Conversation{
		userSays("Move my flight."),
		agentCalls(call("update_reservation_flights", `{"reservation_id": "OWZ4XL", "cabin": "economy"}`)),
		toolSays("ok"),
		agentSays("Done."),
	}
	same := map[string]any{"tool": "update_reservation_flights"}
	// With a turn (agent_inspect's 0, our 1), every rule set looks at that
	// turn only.
	inTurn := map[string]any{"tool": "update_reservation_flights", "turn": 1}
	other := map[string]any{"tool": "update_reservation_flights", "args": map[string]any{"cabin": "business"}}
	for _, tt := range []struct {
		name, semantics string
		calls           []any
		want            float64
	}{
		{"agent_inspect dataset", "agent_inspect_dataset", []any{same, same}, 1},
		{"agenteval", "agenteval", []any{same, same}, 1},
		{"the default", "", []any{same, same}, 1},
		{"agent_inspect, in turn", "agent_inspect", []any{inTurn, inTurn}, 1},
		{"agenteval, in turn", "agenteval", []any{inTurn, inTurn}, 1},
		// One met, one not: half, either way.
		{"agent_inspect dataset, one other", "agent_inspect_dataset", []any{same, same, other, other}, 0.5},
		{"agenteval, one other", "agenteval", []any{same, same, other, other}, 0.5},
	} {
		s, err := gradeWith(t, tt.semantics, tt.calls, conv)
		if err != nil {
			t.Fatal(err)
		}
		if s.Score != tt.want {
			t.Errorf("%s: score = %v, want %v (%s)", tt.name, s.Score, tt.want, s.Reason)
		}
	}
}

// TestInspectSkipsCallsWithoutATurn follows ToolCorrectnessMetric.evaluate:
// an expected call is validated only when its turn equals a turn's index,
// so one without a turn, or past the conversation's end, is not counted;
// with none left the metric raises EMPTY_VALIDATION_RESULT.
func TestInspectSkipsCallsWithoutATurn(t *testing.T) {
	conv := threeTurnBooking()
	search := map[string]any{"tool": "search", "turn": 1}
	book := map[string]any{"tool": "book", "turn": 1} // booked in turn 2: a miss
	loose := map[string]any{"tool": "email"}          // no turn: not validated
	late := map[string]any{"tool": "email", "turn": 4}
	s, err := gradeWith(t, "agent_inspect", []any{search, book, loose, late}, conv)
	if err != nil {
		t.Fatal(err)
	}
	if s.Score != 0.5 || len(s.Assertions) != 2 {
		t.Errorf("score = %v with %d assertions, want 0.5 over the 2 validated (%s)", s.Score, len(s.Assertions), s.Reason)
	}
	if ev := s.Assertions[1].Evidence; !strings.Contains(ev, "book was not called in turn 0 (it was called in turn 1)") {
		t.Errorf("evidence %q does not count turns from 0", ev)
	}
	if nv, _ := s.Details["not_validated"].([]string); len(nv) != 2 || !strings.Contains(nv[0], "no turn") || !strings.Contains(nv[1], "the conversation has 3 turns") {
		t.Errorf("not_validated = %v", s.Details["not_validated"])
	}
	// Two of three, rounded to 4 decimals as agent_inspect rounds.
	s, err = gradeWith(t, "agent_inspect", []any{search, book, map[string]any{"tool": "email", "turn": 3}}, conv)
	if err != nil || s.Score != 0.6667 {
		t.Errorf("score = %v (%v), want 0.6667", s.Score, err)
	}
	// Nothing left to validate: agent_inspect's error.
	_, err = gradeWith(t, "agent_inspect", []any{loose, late}, conv)
	if err == nil || !strings.Contains(err.Error(), "no validation results present to aggregate for tool correctness score") || !strings.Contains(err.Error(), "email(any): no turn; email(any) in turn 3: the conversation has 3 turns") {
		t.Errorf("err = %v, want agent_inspect's empty-validation error naming both calls", err)
	}
	// Its dataset schema has no turns: there, a call without one is
	// looked for in every turn.
	s, err = gradeWith(t, "agent_inspect_dataset", []any{loose, late}, conv)
	if err != nil || s.Score != 1 {
		t.Errorf("dataset semantics: score = %v (%v), want 1 (email met in any turn; the late one not validated)", s.Score, err)
	}
}

func TestExpectedSemanticsSetting(t *testing.T) {
	_, err := New(Spec{Type: "expected_tool_calls", Options: map[string]any{"calls": []any{map[string]any{"tool": "x"}}, "semantics": "ragas"}})
	if err == nil || !strings.Contains(err.Error(), `semantics "ragas" is not one of agenteval, agent_inspect, agent_inspect_dataset`) {
		t.Errorf("err = %v", err)
	}
}

// TestShareIdentical: identical expected calls share the call the first of
// them is paired with; distinct ones are still matched one call each.
func TestShareIdentical(t *testing.T) {
	search := agenteval.ExpectedCall{Tool: "search", Args: map[string]any{"q": map[string]any{"$text": "lamp"}}}
	searchElsewhere := search
	searchElsewhere.Pos = agenteval.Pos{File: "s.yaml", Line: 9, Col: 7}
	searchTurn2 := search
	searchTurn2.Turn = 2
	book := agenteval.ExpectedCall{Tool: "book"}
	anySearch := agenteval.ExpectedCall{Tool: "search"}
	tests := []struct {
		name  string
		calls []agenteval.ExpectedCall
		// fits[i][j]: expected call i fits call made j.
		fits [][]bool
		want []int
	}{
		{"the same call twice, made once", []agenteval.ExpectedCall{search, search}, [][]bool{{true}, {true}}, []int{0, 0}},
		{"written in two places, still the same", []agenteval.ExpectedCall{search, searchElsewhere}, [][]bool{{true}, {true}}, []int{0, 0}},
		{"the same call twice, never made", []agenteval.ExpectedCall{search, search}, [][]bool{{false}, {false}}, []int{-1, -1}},
		{"another turn is another expectation", []agenteval.ExpectedCall{search, searchTurn2}, [][]bool{{true}, {true}}, []int{0, -1}},
		{"a looser expectation is another expectation", []agenteval.ExpectedCall{anySearch, search}, [][]bool{{true}, {true}}, []int{0, -1}},
		// The matching still gives the strict one the call it needs.
		{"identical ones beside a distinct one", []agenteval.ExpectedCall{anySearch, search, anySearch}, [][]bool{{true, true}, {false, true}, {true, true}}, []int{0, 1, 0}},
		{"three identical, one other", []agenteval.ExpectedCall{book, search, book, book}, [][]bool{{true, false}, {false, true}, {true, false}, {true, false}}, []int{0, 1, 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := len(tt.fits[0])
			pair := shareIdentical(tt.calls, func(ok func(i, j int) bool) []int { return bipartite(len(tt.calls), m, ok) })
			got := pair(func(i, j int) bool { return tt.fits[i][j] })
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("partners = %v, want %v", got, tt.want)
			}
		})
	}
}
