package suite

import (
	"fmt"
	"strings"

	"github.com/agenteval/agenteval"
	"go.yaml.in/yaml/v4"
)

var testKeys = []string{
	// Ours and AgentV v4's.
	"id", "description", "criteria", "input", "expected_output", "assertions",
	"mode", "turns", "aggregation", "on_turn_failure", "window_size", "trials",
	"grader_window_size",
	"depends_on", "on_dependency_failure", "metadata", "vars", "threshold",
	"user", "subgoals", "expected_tool_calls",
	"conversation_id", "input_files", "execution", "workspace", "rubrics",
	"expected_outcome", "evaluators", "evaluator", "suite", "category",
	// AgentV v5's (promptfoo-style).
	"assert", "environment", "provider", "providers", "options", "prompts",
	"assert_scoring_function", "tags",
}

// testCtx is what a test inherits from its suite, and its own variables.
type testCtx struct {
	s *suiteCtx
	// vars replaces the test's {{ name }} placeholders.
	vars *substitution
	// assertVars does the same in assertions, where the grader's own
	// variables ({{ output }}) are left for the grader.
	assertVars *substitution
	// skip collects why the test cannot run here.
	skip []string
	id   string
}

func (c *testCtx) skipFor(why string) {
	for _, s := range c.skip {
		if s == why {
			return
		}
	}
	c.skip = append(c.skip, why)
}

// asserts substitutes variables in an assertion list, where AgentV's v5
// does (assertion values and metrics): only the test's own variables are
// replaced, never the grader's.
func (c *testCtx) asserts(n *yaml.Node) *yaml.Node {
	if c.s != nil && c.s.promptfoo {
		return c.assertVars.apply(n)
	}
	return n
}

// test decodes one entry of tests:, with what it inherits from the suite.
// It returns nil only when the entry is not a mapping at all.
func (d *decoder) test(n *yaml.Node, index int, sc *suiteCtx) *agenteval.Test {
	rn := resolve(n)
	if rn == nil || rn.Kind != yaml.MappingNode {
		d.fail(n, "tests[%d] must be a mapping with id and input, not %s", index, kindName(n))
		return nil
	}
	t := &agenteval.Test{Pos: d.pos(rn)}
	fields := d.fields(rn, fmt.Sprintf("test %d", index+1), testKeys)
	fields = sc.withDefaults(fields)
	at := map[string]*yaml.Node{}
	byKey := map[string]field{}
	for _, f := range fields {
		at[f.key] = f.keyN
		byKey[f.key] = f
	}

	// Variables first: they fill in the other fields.
	vars := map[string]any{}
	var varsNodes []*yaml.Node
	for _, f := range fields {
		if f.key != "vars" {
			continue
		}
		varsNodes = append(varsNodes, f.value)
		m, ok := d.value(f.value).(map[string]any)
		if !ok && !isNull(f.value) {
			d.fail(f.value, "vars must be a mapping of names to values")
		}
		for k, v := range m {
			vars[k] = v
		}
	}
	if len(vars) > 0 {
		t.Vars = vars
	}
	// The template sees the variables in the order written, as
	// AgentV's does (dump, for k, v in ...).
	c := &testCtx{s: sc, vars: d.testVars(vars, varsNodes), assertVars: &substitution{vars: vars, d: d, skip: graderVars}}

	var caseExec *executionOpts
	if f, ok := byKey["execution"]; ok {
		caseExec = d.testExecution(f.value)
	}
	skipDefaults := caseExec != nil && caseExec.skipDefaults

	// input_files (the test's, else the suite's) goes with a text input.
	var filesNode *yaml.Node
	if f, ok := byKey["input_files"]; ok {
		filesNode = f.value
	} else if sc != nil && !skipDefaults {
		filesNode = sc.inputFiles
	}
	inputNode := byKey["input"].value
	if rin := resolve(inputNode); filesNode != nil && rin != nil && rin.Kind != yaml.ScalarNode {
		if _, own := byKey["input_files"]; own {
			d.warn(filesNode, "input_files goes with a text input; with a list of messages it is ignored (put {type: file} blocks in the messages instead)")
		}
		filesNode = nil
	}

	var assertNodes []*yaml.Node
	for _, f := range fields {
		switch f.key {
		case "id":
			t.ID = d.str(f.value, "id")
		case "description":
			t.Description = d.str(f.value, "description")
		case "criteria":
			t.Criteria = d.str(c.vars.apply(f.value), "criteria")
		case "expected_outcome":
			if _, ok := byKey["criteria"]; !ok {
				t.Criteria = d.str(c.vars.apply(f.value), "expected_outcome")
				d.warn(f.keyN, "expected_outcome is AgentV's old name for criteria; it is read as criteria")
			}
		case "input":
			if filesNode == nil {
				t.Input = d.messages(c.vars.apply(f.value), "input")
			}
		case "expected_output":
			t.ExpectedOutput = d.text(c.vars.apply(f.value), "expected_output")
		case "assertions", "assert", "evaluators":
			assertNodes = append(assertNodes, f.value)
		case "evaluator":
			d.warn(f.keyN, "evaluator is AgentV's old way to pick the default grader; it is ignored (a test without assertions is judged on its criteria and expected_output)")
		case "rubrics":
			t.Assertions = append(t.Assertions, d.inlineRubrics(f.value)...)
		case "mode":
			switch m := d.str(f.value, "mode"); m {
			case "conversation":
				t.Mode = agenteval.ModeConversation
			case "", "single", "single_turn":
			default:
				d.fail(f.value, "unknown mode %q; the only mode is conversation (leave mode out for a single exchange)", m)
			}
		case "turns":
			t.Turns = d.turns(f.value, c)
		case "aggregation":
			if r, ok := d.reduction(f.value, "aggregation"); ok {
				t.Aggregation = r
			}
		case "on_turn_failure":
			switch v := d.str(f.value, "on_turn_failure"); v {
			case "continue":
			case "stop":
				t.StopOnFailure = true
			default:
				d.fail(f.value, "on_turn_failure %q is not one of continue, stop", v)
			}
		case "window_size":
			// AgentV's meaning: the agent and the turn's graders see the
			// system messages and the last 2×N other messages.
			if v, ok := d.integer(f.value, "window_size"); ok {
				if v < 1 {
					d.fail(f.value, "window_size must be at least 1 (N exchanges: the last 2×N messages)")
				}
				t.WindowSize = v
			}
		case "grader_window_size":
			// Ours: only the turn's graders are limited, to whole turns;
			// the agent keeps the full history.
			if v, ok := d.integer(f.value, "grader_window_size"); ok {
				if v < 1 {
					d.fail(f.value, "grader_window_size must be at least 1 (whole turns)")
				}
				t.GraderWindow = v
			}
		case "trials":
			d.trials(f.value, t)
		case "depends_on":
			t.DependsOn = d.strList(f.value, "depends_on")
		case "on_dependency_failure":
			switch v := d.str(f.value, "on_dependency_failure"); v {
			case "skip", "fail", "run":
				t.OnDependencyFailure = v
			default:
				d.fail(f.value, "on_dependency_failure %q is not one of skip, fail, run", v)
			}
		case "metadata":
			if m, ok := d.value(f.value).(map[string]any); ok {
				t.Metadata = m
			} else if !isNull(f.value) {
				d.fail(f.value, "metadata must be a mapping")
			}
		case "threshold":
			t.Threshold = d.threshold(f.value)
		case "user":
			t.User = d.user(f.value)
		case "subgoals":
			t.Subgoals = d.subgoals(f.value)
		case "expected_tool_calls":
			t.ExpectedToolCalls = d.expectedCalls(f.value)
		case "conversation_id":
			t.ConversationID = d.str(f.value, "conversation_id")
		case "workspace":
			if why := workspaceSkip(d, f.value); why != "" {
				c.skipFor(why)
			}
		case "environment":
			if !isNull(f.value) {
				c.skipFor("environment (a coding-agent testbed: repositories, setup scripts, docker), which agenteval does not build")
			}
		case "provider", "providers":
			t.Targets = append(t.Targets, d.providerRefs(f.value)...)
		case "options":
			// AgentV v5's options of a test. What applies to its graders
			// is applied on return, once they are read (after this loop).
			defer d.testOptions(f, t, c)()
		case "assert_scoring_function", "prompts":
			d.warn(f.keyN, "%s on a test is not supported by agenteval and is ignored", f.key)
		}
	}
	if filesNode != nil {
		t.Input = d.inputFiles(c.vars.apply(filesNode), c.vars.apply(inputNode))
	}
	if caseExec != nil {
		t.Targets = append(t.Targets, caseExec.targets...)
		if caseExec.threshold != nil && t.Threshold == nil {
			t.Threshold = caseExec.threshold
		}
	}
	if t.ID == "" {
		if sc != nil && sc.promptfoo {
			// A promptfoo row may leave out its id; AgentV gives it one.
			t.ID = fmt.Sprintf("test-%d", index+1)
			if t.Description != "" {
				t.ID = slug(t.Description)
			}
			d.warn(rn, "test %d has no id; it is called %q (give it an id: results, --filter and depends_on use it)", index+1, t.ID)
		} else {
			d.fail(rn, "tests[%d] has no id; give each test a unique id", index)
		}
	}
	c.id = t.ID

	// What the suite gives every test.
	if sc != nil {
		sc.inherit(d, t, c, skipDefaults, at)
	}
	for _, an := range assertNodes {
		t.Assertions = append(t.Assertions, d.assertions(c.asserts(an), c)...)
	}
	if sc != nil && !skipDefaults {
		for _, an := range sc.asserts {
			t.Assertions = append(t.Assertions, sc.d.assertions(c.asserts(an), c)...)
		}
	}
	if len(c.skip) > 0 {
		t.Skip = strings.Join(c.skip, "; ")
	}

	d.checkSimulated(t, at)
	// Conversation mode's rules: turns only in it, and something to say in
	// it, so that a test cannot silently run without its turns.
	if _, ok := at["turns"]; ok && t.Mode != agenteval.ModeConversation {
		d.fail(at["turns"], "turns requires mode: conversation; add it to test %q", t.ID)
	}
	if t.Mode == agenteval.ModeConversation && len(t.Turns) == 0 && t.User == nil {
		if tn, ok := at["turns"]; ok {
			d.fail(tn, "mode: conversation needs at least one turn; turns is empty")
		} else {
			d.fail(at["mode"], "mode: conversation needs turns (a list of {input: ...}), or user: for a simulated user")
		}
	}
	if len(t.Turns) > 0 && t.ExpectedOutput != "" {
		d.fail(at["expected_output"], "a test with turns cannot have a test-level expected_output; give each turn its own expected_output")
	}
	if t.Mode != agenteval.ModeConversation {
		for _, k := range []string{"aggregation", "on_turn_failure", "window_size", "grader_window_size"} {
			if kn, ok := at[k]; ok {
				d.fail(kn, "%s only applies with mode: conversation", k)
			}
		}
	}
	if t.Mode != agenteval.ModeConversation && len(t.Input) == 0 && t.User == nil && t.Skip == "" {
		d.fail(rn, "test %q has no input; give the user's message as input", t.ID)
	}
	trimQuestion(t)
	d.gradingDifferences(t, at)
	return t
}

// inputFiles reads AgentV's input_files shorthand: with a string input,
// one user message of the files' blocks and then the text.
func (d *decoder) inputFiles(files, input *yaml.Node) agenteval.Conversation {
	paths := d.strList(files, "input_files")
	rin := resolve(input)
	text := ""
	if rin != nil {
		text = d.str(rin, "input")
	}
	var blocks []*yaml.Node
	for _, p := range paths {
		blocks = append(blocks, &yaml.Node{Kind: yaml.MappingNode, Line: files.Line, Column: files.Column, Content: []*yaml.Node{
			{Kind: yaml.ScalarNode, Tag: "!!str", Value: "type"}, {Kind: yaml.ScalarNode, Tag: "!!str", Value: "file"},
			{Kind: yaml.ScalarNode, Tag: "!!str", Value: "value"}, {Kind: yaml.ScalarNode, Tag: "!!str", Value: p, Line: files.Line, Column: files.Column},
		}})
	}
	content, parts := d.blocks(blocks, "input_files")
	if text != "" {
		if content != "" {
			content += "\n\n"
		}
		content += text
	}
	return agenteval.Conversation{{Role: agenteval.RoleUser, Content: content, Parts: parts}}
}

// inlineRubrics reads a test's rubrics: key (AgentV's older form): one
// rubrics assertion, first among the test's graders.
func (d *decoder) inlineRubrics(n *yaml.Node) []agenteval.AssertionSpec {
	rn := resolve(n)
	if rn == nil || isNull(rn) {
		return nil
	}
	if rn.Kind != yaml.SequenceNode {
		d.fail(n, "rubrics must be a list of criteria")
		return nil
	}
	return []agenteval.AssertionSpec{{Type: "rubrics", Name: "rubrics", Pos: d.pos(rn), Params: map[string]any{"criteria": d.value(rn)}}}
}

// slug makes an id from a description.
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 60 {
			break
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}
