package suite

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agenteval/agenteval"
	"go.yaml.in/yaml/v4"
)

var testKeys = []string{
	"id", "description", "criteria", "input", "expected_output", "assertions",
	"mode", "turns", "aggregation", "on_turn_failure", "window_size", "trials",
	"depends_on", "on_dependency_failure", "metadata", "vars", "threshold",
	"user", "subgoals", "expected_tool_calls",
}

// test decodes one entry of tests:. It returns nil only when the entry is
// not a mapping at all.
func (d *decoder) test(n *yaml.Node, index int) *agenteval.Test {
	rn := resolve(n)
	if rn == nil || rn.Kind != yaml.MappingNode {
		d.fail(n, "tests[%d] must be a mapping with id and input, not %s", index, kindName(n))
		return nil
	}
	t := &agenteval.Test{Pos: d.pos(rn)}
	at := map[string]*yaml.Node{}
	for _, f := range d.fields(rn, fmt.Sprintf("test %d", index+1), testKeys) {
		at[f.key] = f.keyN
		switch f.key {
		case "id":
			t.ID = d.str(f.value, "id")
		case "description":
			t.Description = d.str(f.value, "description")
		case "criteria":
			t.Criteria = d.str(f.value, "criteria")
		case "input":
			t.Input = d.messages(f.value, "input")
		case "expected_output":
			t.ExpectedOutput = d.text(f.value, "expected_output")
		case "assertions":
			t.Assertions = d.assertions(f.value)
		case "mode":
			switch m := d.str(f.value, "mode"); m {
			case "conversation":
				t.Mode = agenteval.ModeConversation
			case "", "single", "single_turn":
			default:
				d.fail(f.value, "unknown mode %q; the only mode is conversation (leave mode out for a single exchange)", m)
			}
		case "turns":
			t.Turns = d.turns(f.value)
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
			if v, ok := d.integer(f.value, "window_size"); ok {
				if v < 1 {
					d.fail(f.value, "window_size must be at least 1 (whole turns)")
				}
				t.WindowSize = v
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
			} else {
				d.fail(f.value, "metadata must be a mapping")
			}
		case "vars":
			if m, ok := d.value(f.value).(map[string]any); ok {
				t.Vars = m
			} else {
				d.fail(f.value, "vars must be a mapping")
			}
		case "threshold":
			t.Threshold = d.threshold(f.value)
		case "user":
			t.User = d.user(f.value)
		case "subgoals":
			t.Subgoals = d.subgoals(f.value)
		case "expected_tool_calls":
			t.ExpectedToolCalls = d.expectedCalls(f.value)
		}
	}
	if t.ID == "" {
		d.fail(rn, "tests[%d] has no id; give each test a unique id", index)
	}
	d.checkSimulated(t, at)
	// The seed's rules on conversation mode.
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
		for _, k := range []string{"aggregation", "on_turn_failure", "window_size"} {
			if kn, ok := at[k]; ok {
				d.fail(kn, "%s only applies with mode: conversation", k)
			}
		}
	}
	if t.Mode != agenteval.ModeConversation && len(t.Input) == 0 && t.User == nil {
		d.fail(rn, "test %q has no input; give the user's message as input", t.ID)
	}
	return t
}

// reduction reads one of the reductions: mean, min, max, pass_at_k.
func (d *decoder) reduction(n *yaml.Node, what string) (agenteval.Reduction, bool) {
	v := agenteval.Reduction(d.str(n, what))
	if slices.Contains([]agenteval.Reduction{agenteval.ReduceMean, agenteval.ReduceMin, agenteval.ReduceMax, agenteval.ReducePassAtK}, v) {
		return v, true
	}
	d.fail(n, "%s %q is not one of mean, min, max, pass_at_k", what, v)
	return "", false
}

func (d *decoder) trials(n *yaml.Node, t *agenteval.Test) {
	rn := resolve(n)
	if rn != nil && rn.Kind == yaml.ScalarNode {
		if v, ok := d.integer(rn, "trials"); ok {
			checkTrials(d, rn, "trials", v)
			t.Trials = v
		}
		return
	}
	for _, f := range d.fields(n, "trials", []string{"count", "strategy"}) {
		switch f.key {
		case "count":
			if v, ok := d.integer(f.value, "trials.count"); ok {
				checkTrials(d, f.value, "trials.count", v)
				t.Trials = v
			}
		case "strategy":
			if d.str(f.value, "trials.strategy") == "confidence_interval" {
				d.fail(f.value, "trials.strategy confidence_interval is not supported; use mean, min, max or pass_at_k (results always report pass@k and pass^k)")
			} else if r, ok := d.reduction(f.value, "trials.strategy"); ok {
				t.TrialStrategy = r
			}
		}
	}
	if t.Trials == 0 {
		d.fail(n, "trials needs count")
	}
}

// MaxTrials bounds trials: more is almost always a typo, and each trial
// is a full run of the conversation.
const MaxTrials = 1000

func checkTrials(d *decoder, n *yaml.Node, what string, v int) {
	if v < 1 || v > MaxTrials {
		d.fail(n, "%s must be between 1 and %d, not %d", what, MaxTrials, v)
	}
}

func (d *decoder) turns(n *yaml.Node) []agenteval.Turn {
	rn := resolve(n)
	if rn == nil || isNull(rn) {
		return nil
	}
	if rn.Kind != yaml.SequenceNode {
		d.fail(n, "turns must be a list of {input: ...}, not %s", kindName(n))
		return nil
	}
	var out []agenteval.Turn
	for i, item := range rn.Content {
		tr := agenteval.Turn{Pos: d.pos(item)}
		if it := resolve(item); it != nil && it.Kind == yaml.ScalarNode {
			// A bare string is the turn's user message.
			tr.Input = agenteval.Conversation{{Role: agenteval.RoleUser, Content: d.str(it, "turn")}}
		} else {
			for _, f := range d.fields(item, fmt.Sprintf("turn %d", i+1), []string{"input", "expected_output", "assertions"}) {
				switch f.key {
				case "input":
					tr.Input = d.messages(f.value, "turn input")
				case "expected_output":
					tr.ExpectedOutput = d.text(f.value, "expected_output")
				case "assertions":
					tr.Assertions = d.assertions(f.value)
				}
			}
		}
		if strings.TrimSpace(tr.Input.Pretty()) == "" || !hasContent(tr.Input) {
			d.fail(item, "turn %d has no input; every turn needs the user's message as input", i+1)
		}
		out = append(out, tr)
	}
	return out
}

func hasContent(c agenteval.Conversation) bool {
	for _, m := range c {
		if strings.TrimSpace(m.Content) != "" {
			return true
		}
	}
	return false
}

// text reads a string, or structured content whose text parts are joined.
func (d *decoder) text(n *yaml.Node, what string) string {
	rn := resolve(n)
	if rn == nil || rn.Kind == yaml.ScalarNode {
		return d.str(rn, what)
	}
	var parts []string
	for _, m := range d.messages(rn, what) {
		parts = append(parts, m.Content)
	}
	return strings.Join(parts, "\n")
}

// messages reads input in any of the forms AgentV accepts: a string (one
// user message), one {role, content} mapping, or a list of messages and
// strings. The seed's travel example writes a system prompt as
// [{role: system}, {input: "..."}]; a role-only entry followed by an
// entry with only input or content is read as one message.
func (d *decoder) messages(n *yaml.Node, what string) agenteval.Conversation {
	rn := resolve(n)
	if rn == nil || isNull(rn) {
		return nil
	}
	switch rn.Kind {
	case yaml.ScalarNode:
		return agenteval.Conversation{{Role: agenteval.RoleUser, Content: d.str(rn, what)}}
	case yaml.MappingNode:
		m, roleOnly := d.message(rn, what)
		if roleOnly {
			d.fail(rn, "%s: a message with a role needs content", what)
		}
		if m.Role == "" {
			m.Role = agenteval.RoleUser
		}
		return agenteval.Conversation{m}
	case yaml.SequenceNode:
	default:
		d.fail(n, "%s must be text or a list of messages, not %s", what, kindName(n))
		return nil
	}
	var out agenteval.Conversation
	pendingRole := false
	for _, item := range rn.Content {
		it := resolve(item)
		if it != nil && it.Kind == yaml.ScalarNode {
			out = append(out, agenteval.Message{Role: agenteval.RoleUser, Content: d.str(it, what)})
			pendingRole = false
			continue
		}
		m, roleOnly := d.message(it, what)
		if pendingRole && m.Role == "" {
			out[len(out)-1].Content = m.Content
			pendingRole = false
			continue
		}
		if m.Role == "" {
			m.Role = agenteval.RoleUser
		}
		out = append(out, m)
		pendingRole = roleOnly
	}
	if pendingRole {
		d.fail(rn.Content[len(rn.Content)-1], "%s: a message with a role needs content", what)
	}
	return out
}

// message reads one {role, content} mapping. roleOnly reports a mapping
// with a role and nothing else (the seed's split form).
func (d *decoder) message(n *yaml.Node, what string) (m agenteval.Message, roleOnly bool) {
	hasContent := false
	for _, f := range d.fields(n, "a message", []string{"role", "content", "input", "name", "tool_call_id", "tool_calls"}) {
		switch f.key {
		case "role":
			r := d.str(f.value, "role")
			role, ok := agenteval.ParseRole(r)
			if !ok {
				d.fail(f.value, "unknown role %q; use system, user, assistant or tool", r)
			}
			m.Role = role
		case "content", "input":
			m.Content = d.text(f.value, what)
			hasContent = true
		case "name":
			m.Name = d.str(f.value, "name")
		case "tool_call_id":
			m.ToolCallID = d.str(f.value, "tool_call_id")
		case "tool_calls":
			d.fail(f.value, "tool calls in an eval file's input are not supported; give the conversation as text")
		}
	}
	return m, m.Role != "" && !hasContent
}

var assertionKeys = []string{"type", "name", "weight", "required", "negate", "threshold"}

// assertions reads a list of assertions: plain strings are rubric criteria;
// mappings have a type and that grader's settings.
func (d *decoder) assertions(n *yaml.Node) []agenteval.AssertionSpec {
	rn := resolve(n)
	if rn == nil || isNull(rn) {
		return nil
	}
	if rn.Kind != yaml.SequenceNode {
		d.fail(n, "assertions must be a list (strings are rubric criteria, mappings have a type), not %s", kindName(n))
		return nil
	}
	var out []agenteval.AssertionSpec
	for _, item := range rn.Content {
		a := agenteval.AssertionSpec{Pos: d.pos(item)}
		it := resolve(item)
		if it != nil && it.Kind == yaml.ScalarNode {
			a.Criterion = d.str(it, "assertion")
			if strings.TrimSpace(a.Criterion) == "" {
				d.fail(it, "an assertion is empty")
			}
			out = append(out, a)
			continue
		}
		for _, f := range d.fields(it, "an assertion", nil) {
			switch f.key {
			case "type":
				a.Type = d.str(f.value, "type")
			case "name":
				a.Name = d.str(f.value, "name")
			case "weight":
				if v, ok := d.number(f.value, "weight"); ok {
					if v < 0 {
						d.fail(f.value, "weight must not be negative")
					}
					a.Weight = &v
				}
			case "required":
				a.Required, _ = d.boolean(f.value, "required")
			case "negate":
				a.Negate, _ = d.boolean(f.value, "negate")
			case "threshold":
				a.Threshold = d.threshold(f.value)
			default:
				if a.Params == nil {
					a.Params = map[string]any{}
				}
				a.Params[f.key] = d.value(f.value)
			}
		}
		if a.Type == "" {
			d.fail(it, "an assertion mapping needs type (for example contains, regex, tool_calls, rubrics, llm_grader); a plain string is a rubric criterion")
		}
		out = append(out, a)
	}
	return out
}
