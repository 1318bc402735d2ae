package run

import (
	"testing"

	"github.com/agenteval/agenteval"
)

// TestUngradedTurnsDoNotCount: a turn with nothing to grade is shown as
// ungraded (verdict skip, weight 0, the reason) and left out of the test's
// score. Counted as 1, four such turns carried a test whose one real check
// found none of the five expected tool calls to 0.8, and a pass.
func TestUngradedTurnsDoNotCount(t *testing.T) {
	yaml := `
tests:
  - id: booking
    mode: conversation
    turns: [hi, a table for two, at 8pm, thanks]
    expected_tool_calls:
      - {tool: search}
      - {tool: check_availability}
      - {tool: book}
      - {tool: confirm}
      - {tool: notify}
`
	res := runAll(t, loadSuite(t, yaml), Options{Agent: &echo{}})["booking"]
	if res.Score != 0 || res.Verdict != agenteval.VerdictFail {
		t.Errorf("score %v, verdict %s; want 0 and fail: the only check failed", res.Score, res.Verdict)
	}
	if len(res.Scores) != 5 {
		t.Fatalf("scores = %+v", res.Scores)
	}
	for _, s := range res.Scores[:4] {
		if s.Verdict != agenteval.VerdictSkip || s.Weight != 0 || s.Type != "none" || s.Reason != nothingToGrade {
			t.Errorf("%s = %+v, want it shown as ungraded", s.Name, s)
		}
	}
}

// TestUngradedTurnsBesideGradedOnes: the mean is over the graded turns
// only; on_turn_failure: stop does not stop at an ungraded turn, which did
// not fail; and every aggregation leaves ungraded turns out.
func TestUngradedTurnsBesideGradedOnes(t *testing.T) {
	yaml := `
tests:
  - id: mean
    mode: conversation
    turns:
      - hi
      - {input: a, assertions: [{type: contains, value: reply}]}
      - {input: b, assertions: [{type: contains, value: nowhere}]}
  - id: stop
    mode: conversation
    on_turn_failure: stop
    turns:
      - hi
      - {input: a, assertions: [{type: contains, value: reply}]}
  - id: min
    mode: conversation
    aggregation: min
    turns:
      - hi
      - {input: a, assertions: [{type: contains, value: reply}]}
`
	agent := &echo{}
	res := runAll(t, loadSuite(t, yaml), Options{Agent: agent})
	if r := res["mean"]; r.Score != 0.5 {
		t.Errorf("mean = %v, want 0.5 (turns 2 and 3; turn 1 is ungraded)", r.Score)
	}
	if r := res["stop"]; r.Score != 1 || r.Verdict != agenteval.VerdictPass || r.Scores[1].Verdict != agenteval.VerdictPass {
		t.Errorf("stop = %+v; an ungraded turn must not stop the conversation", r)
	}
	if r := res["min"]; r.Score != 1 {
		t.Errorf("min = %v, want 1", r.Score)
	}
	if n := len(agent.calls); n != 7 {
		t.Errorf("the agent was called %d times, want 7", n)
	}
}
