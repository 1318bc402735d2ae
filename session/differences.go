package session

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/words"
	"github.com/agenteval/agenteval/project"
	"github.com/agenteval/agenteval/suite"
)

// What a run says at its start, beside each file's own differences
// (suite.Difference, said when the file loads): what only the run knows,
// because it depends on the target chosen and the project file.

// runNotes are the lines a run says once at its start: where a model
// target runs an AgentV file's tests without the system prompt AgentV
// would send, and which judge AgentV's configuration chose.
func runNotes(p *Plan) []string {
	return append(runDifferences(p), judgeNotes(p)...)
}

// runDifferences are the run's differences from AgentV that depend on the
// targets chosen: said even under -q, as each file's are.
func runDifferences(p *Plan) []string {
	return append(systemPromptDifferences(p), cliConversationDifferences(p)...)
}

// cliConversationDifferences says, once per AgentV cli target, that its
// command gets the conversation so far on each turn of a conversation
// test, where AgentV gives it only the turn's user text (and {EVAL_ID} as
// ID/turn-N), so a command that keeps no history of its own sees none.
func cliConversationDifferences(p *Plan) []string {
	if p.s.opt.Agent != nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, sp := range p.Suites {
		for _, tr := range sp.runs {
			if tr.err != nil || tr.spec.Template == "" && len(tr.spec.TemplateArgv) == 0 || seen[tr.spec.Name] {
				continue
			}
			n := 0
			sp.each(func(i int, t suite.TestInfo) {
				if t.Mode == agenteval.ModeConversation && t.Skip == "" && tr.selectsAt(sp, i, t) {
					n++
				}
			})
			if n == 0 {
				continue
			}
			seen[tr.spec.Name] = true
			out = append(out, located(tr.spec.Pos, fmt.Sprintf("differs from AgentV: cli target %s gets the conversation so far as {PROMPT} on each turn of %s (and the test's id as {EVAL_ID}); AgentV gives its command only the turn's user text, with {EVAL_ID} ID/turn-N, so there it sees no history", tr.spec.Name, words.Counted(n, "conversation test"))))
		}
	}
	return out
}

// agentvSchemas are the Suite.Schema values of files AgentV also reads:
// its v5 keys, its JSONL, and YAML in our keys, which are AgentV v4's
// (an AgentV v4 file reads as SchemaYAML).
var agentvSchemas = map[string]bool{suite.SchemaYAML: true, suite.SchemaAgentV5: true, suite.SchemaAgentVJSONL: true}

// systemPromptFor is the system prompt a model target sends to a
// conversation that has none: the project file's system_prompt, if it
// sets one; nil when it says nothing.
func systemPromptFor(cfg *project.Config) *string {
	if cfg == nil {
		return nil
	}
	return cfg.SystemPrompt
}

// systemPromptDifferences says, once per target, that a model target sends
// no system message to the tests of AgentV files that have none, where
// AgentV's LLM targets send a short instruction of their own. A target
// with a system prompt configured (even "", none on purpose) is not
// mentioned. The line starts at the target's definition when it has one.
func systemPromptDifferences(p *Plan) []string {
	if p.s.opt.Agent != nil {
		return nil // the caller's own agent, not a model target
	}
	type count struct {
		pos        agenteval.Pos
		without, n int
		files      []string
	}
	byTarget := map[string]*count{}
	var order []string
	for _, sp := range p.Suites {
		st := sp.Suite
		if !agentvSchemas[st.Schema] || systemPromptFor(p.s.configs[st]) != nil {
			continue
		}
		for _, tr := range sp.runs {
			if tr.err != nil || tr.spec.Model == "" || tr.spec.Unsupported != "" || tr.spec.SystemPrompt != nil {
				continue
			}
			without, n := 0, 0
			sp.each(func(i int, t suite.TestInfo) {
				if t.Skip != "" || !tr.selectsAt(sp, i, t) {
					return
				}
				n++
				if !t.OpensWithSystem {
					without++
				}
			})
			if without == 0 {
				continue
			}
			c := byTarget[tr.spec.Name]
			if c == nil {
				c = &count{pos: tr.spec.Pos}
				byTarget[tr.spec.Name] = c
				order = append(order, tr.spec.Name)
			}
			c.without += without
			c.n += n
			c.files = append(c.files, filepath.Base(st.File))
		}
	}
	var out []string
	for _, name := range order {
		c := byTarget[name]
		msg := fmt.Sprintf("differs from AgentV: AgentV's LLM targets send a brief built-in system message to a test that has none; target %s sends none to %d of %s (%s). "+
			"To send one, set system_prompt: on the target or in agenteval.yaml (system_prompt: \"\" says none is meant)",
			name, c.without, words.Counted(c.n, "test"), strings.Join(c.files, ", "))
		out = append(out, located(c.pos, msg))
	}
	return out
}

// judgeNotes say the judge of each suite whose judge AgentV's
// configuration chose (a target's grader_target, or defaults.grader in
// .agentv/config.yaml), where it was chosen: nothing else names it.
func judgeNotes(p *Plan) []string {
	if p.s.opt.JudgeModel != nil || p.s.opt.Models.Judge != "" {
		return nil // --judge, or the caller's own judge, grades every suite
	}
	var out []string
	seen := map[agenteval.Pos]bool{}
	for _, sp := range p.Suites {
		j := sp.Suite.Judge
		if j == nil || !j.FromAgentV || j.Pos.File == "" || j.Pos.File == sp.Suite.File || seen[j.Pos] {
			continue
		}
		seen[j.Pos] = true
		out = append(out, located(j.Pos, fmt.Sprintf("note: the judge is %s, chosen here for %s (--judge chooses another)", j.Model, filepath.Base(sp.Suite.File))))
	}
	return out
}

// located is msg at pos, as file:line:col: msg, or with agenteval's name
// when there is no place to name.
func located(pos agenteval.Pos, msg string) string {
	if pos.File == "" {
		return "agenteval: " + msg
	}
	return pos.Errorf(msg).Error()
}
