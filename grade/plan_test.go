package grade

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/google/go-cmp/cmp"
)

func pos(line int) agenteval.Pos { return agenteval.Pos{File: "t.yaml", Line: line, Col: 5} }

func plannedNames(u Unit) []string {
	var out []string
	for _, g := range u.Graders {
		out = append(out, g.Name+":"+g.Type)
	}
	return out
}

func TestNewPlan(t *testing.T) {
	user := agenteval.Conversation{{Role: agenteval.RoleUser, Content: "hi"}}
	tests := []struct {
		name   string
		test   agenteval.Test
		turns  [][]string
		whole  []string
		extras []string
		judged []string
	}{
		{
			name:  "single exchange: strings, reference and a typed check",
			test:  agenteval.Test{Input: user, ExpectedOutput: "hello", Assertions: []agenteval.AssertionSpec{{Criterion: "polite", Pos: pos(3)}, {Type: "contains", Params: map[string]any{"value": "x"}, Pos: pos(4)}}, Pos: pos(1)},
			whole: []string{"rubrics:rubrics", "contains:contains"},
			// Beside assertions, a single exchange's expected_output is only
			// the graders' reference (AgentV's rule), and its criteria is
			// not judged either.
			judged: []string{"string assertions@3"},
		},
		{
			name:   "single exchange: expected_output alone is judged",
			test:   agenteval.Test{Input: user, ExpectedOutput: "hello", Pos: pos(1)},
			whole:  []string{"llm_grader:llm_grader"},
			judged: []string{"expected_output@1"},
		},
		{
			name:   "criteria is the fallback",
			test:   agenteval.Test{Input: user, Criteria: "answers", Pos: pos(1)},
			whole:  []string{"llm_grader:llm_grader"},
			judged: []string{"criteria@1"},
		},
		{
			name: "conversation: turns, test level, extras",
			test: agenteval.Test{Mode: agenteval.ModeConversation, Criteria: "ignored beside assertions", Pos: pos(1),
				Turns: []agenteval.Turn{
					{Input: user, ExpectedOutput: "hello", Pos: pos(5)},
					{Input: user, Assertions: []agenteval.AssertionSpec{{Type: "not-contains", Name: "no_x", Params: map[string]any{"value": "x"}, Pos: pos(8)}}, Pos: pos(7)},
					{Input: user, Pos: pos(9)},
				},
				Assertions:        []agenteval.AssertionSpec{{Type: "tool_calls", Params: map[string]any{"expected": []any{map[string]any{"tool": "a", "args": map[string]any{"x": map[string]any{"$check": "big"}}}}}, Pos: pos(11)}},
				Subgoals:          []agenteval.Subgoal{{Details: "books"}},
				ExpectedToolCalls: []agenteval.ExpectedCall{{Tool: "book", Turn: 1, Pos: pos(14)}},
			},
			turns:  [][]string{{"llm_grader:llm_grader"}, {"no_x:not-contains"}, nil},
			whole:  []string{"tool_calls:tool_calls"},
			extras: []string{"subgoals:subgoals", "expected_tool_calls:expected_tool_calls"},
			judged: []string{"expected_output@5", "a tool_calls assertion@11", "subgoals@1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, errs := NewPlan(&tt.test, PlanOptions{Threshold: 0.5})
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			var turns [][]string
			for _, u := range p.Turns {
				turns = append(turns, plannedNames(u))
			}
			var extras, judged []string
			for _, g := range p.Extras {
				extras = append(extras, g.Name+":"+g.Type)
			}
			for _, u := range p.Judged {
				judged = append(judged, fmt.Sprintf("%s@%d", u.What, u.Pos.Line))
			}
			got := []any{turns, plannedNames(p.Whole), extras, judged}
			want := []any{tt.turns, tt.whole, tt.extras, tt.judged}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewPlanErrors(t *testing.T) {
	test := agenteval.Test{Input: agenteval.Conversation{{Role: agenteval.RoleUser, Content: "hi"}}, Pos: pos(1),
		Assertions: []agenteval.AssertionSpec{
			{Type: "contans", Params: map[string]any{"value": "x"}, Pos: pos(3)},
			{Type: "regex", Params: map[string]any{"value": "("}, Pos: pos(4)},
			{Type: "contains", Params: map[string]any{"value": "x"}, Pos: pos(5)},
		},
		ExpectedToolCalls: []agenteval.ExpectedCall{{Tool: "a", Args: map[string]any{"x": map[string]any{"$reqex": "y"}}, Pos: pos(7)}},
	}
	p, errs := NewPlan(&test, PlanOptions{})
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	want := []string{
		`t.yaml:3:5: unknown assertion type "contans"; did you mean "contains"?; see agenteval score --help for the list`,
		"t.yaml:4:5: regex: value is not a valid regular expression (RE2 syntax: no lookaround or backreferences): error parsing regexp: missing closing ): `(`",
		`t.yaml:7:5: expected_tool_calls: calls[0]: args.x: unknown matcher "$reqex"; use $any, $text, $regex or $check`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	// What is good is still planned.
	if len(p.Whole.Graders) != 1 || p.Whole.Graders[0].Name != "contains" {
		t.Errorf("whole = %v", plannedNames(p.Whole))
	}
	if use, ok := p.NeedsJudge(); ok {
		t.Errorf("needs a judge: %+v", use)
	}
}

// TestNewPlanNothingToGrade: a test that checks nothing would pass
// whatever the agent said, so its plan is an error; the loader and the
// runner both refuse it. A test that will not run needs nothing.
func TestNewPlanNothingToGrade(t *testing.T) {
	user := agenteval.Conversation{{Role: agenteval.RoleUser, Content: "hi"}}
	test := agenteval.Test{ID: "t", Mode: agenteval.ModeConversation, Pos: pos(2),
		Turns: []agenteval.Turn{{Input: user, Pos: pos(4)}, {Input: user, Pos: pos(5)}}}
	_, errs := NewPlan(&test, PlanOptions{})
	if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), `t.yaml:2:5: test "t" has nothing to grade`) {
		t.Errorf("errors = %v", errs)
	}
	test.Turns[1].ExpectedOutput = "bye"
	if _, errs := NewPlan(&test, PlanOptions{}); len(errs) != 0 {
		t.Errorf("one turn's expected_output is something to grade: %v", errs)
	}
	skipped := agenteval.Test{ID: "s", Input: user, Skip: "a coding-agent workspace"}
	if _, errs := NewPlan(&skipped, PlanOptions{}); len(errs) != 0 {
		t.Errorf("a test that will not run needs nothing to grade: %v", errs)
	}
}
