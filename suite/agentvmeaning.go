package suite

import (
	"strings"

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

// trimQuestion trims the text of a single exchange's one message, as
// AgentV does when it sends a lone message as the question: only a test
// whose input has no assistant or tool message and one message with
// anything to say (AgentV's flat form; with more, it keeps each message as
// written). A YAML block's final line break then reaches the model as it
// does from AgentV.
func trimQuestion(t *agenteval.Test) {
	if t.Mode == agenteval.ModeConversation {
		return
	}
	lone := -1
	for i, m := range t.Input {
		if m.Role == agenteval.RoleAssistant || m.Role == agenteval.RoleTool {
			return
		}
		if strings.TrimSpace(m.Content) == "" && len(m.Parts) == 0 {
			continue
		}
		if lone >= 0 {
			return
		}
		lone = i
	}
	if lone >= 0 && t.Input[lone].Role == agenteval.RoleUser {
		t.Input[lone].Content = strings.TrimSpace(t.Input[lone].Content)
	}
}
