package suite

import (
	"github.com/agenteval/agenteval"
	"go.yaml.in/yaml/v4"
)

// gradingDifferences records where a finished test is graded otherwise
// than AgentV grades the same keys. Each is a choice made on purpose (a
// test must not pass on what nobody checked), so it is said, not changed.
func (d *decoder) gradingDifferences(t *agenteval.Test, at map[string]*yaml.Node) {
	if t.Mode != agenteval.ModeConversation || t.User != nil || t.Skip != "" {
		return
	}
	own := len(t.Assertions) > 0
	turnJudgesCriteria := false
	for _, tr := range t.Turns {
		own = own || len(tr.Assertions) > 0
		turnJudgesCriteria = turnJudgesCriteria || len(tr.Assertions) == 0 && tr.ExpectedOutput != ""
	}
	if t.Criteria != "" && !own && !turnJudgesCriteria {
		pos := t.Pos
		if kn := at["criteria"]; kn != nil {
			pos = d.pos(kn)
		}
		d.differAt("AgentV", pos, "conversation-criteria",
			"a conversation's criteria, with no assertions and no turn expected_output, is judged here over the whole conversation; AgentV grades nothing then, and passes the test whatever the agent says")
	}
	graded := own || turnJudgesCriteria || t.Criteria != ""
	for _, tr := range t.Turns {
		if graded && len(tr.Assertions) == 0 && tr.ExpectedOutput == "" {
			d.differAt("AgentV", tr.Pos, "ungraded-turn",
				"a turn with no assertions and no expected_output is left out of the test's score here (shown as skip); AgentV scores it 1 and counts it, which lifts a failing test's mean")
		}
	}
}
