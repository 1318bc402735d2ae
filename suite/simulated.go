package suite

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/agenteval/agenteval"
	"go.yaml.in/yaml/v4"
)

// maxSimulatedTurns bounds user.max_turns: a simulated conversation costs
// three model calls a turn.
const maxSimulatedTurns = 200

var userKeys = []string{"instruction", "persona", "initial_message", "max_turns", "stop", "model", "temperature", "stop_on_success", "terminating_condition"}

// user reads a simulated user: a string (its instruction) or a mapping.
func (d *decoder) user(n *yaml.Node) *agenteval.SimulatedUser {
	u := &agenteval.SimulatedUser{}
	if rn := resolve(n); rn != nil && rn.Kind == yaml.ScalarNode {
		u.Instruction = d.str(rn, "user")
	} else {
		for _, f := range d.fields(n, "user", userKeys) {
			switch f.key {
			case "instruction":
				u.Instruction = d.str(f.value, "user.instruction")
			case "persona":
				u.Persona = d.text(f.value, "user.persona")
				if strings.TrimSpace(u.Persona) == "" {
					d.fail(f.value, "user.persona is empty; use expert, novice, or describe the person")
				}
			case "initial_message":
				u.InitialMessage = d.text(f.value, "user.initial_message")
				if strings.TrimSpace(u.InitialMessage) == "" {
					d.fail(f.value, "user.initial_message is empty; leave it out to let the simulated user open the conversation")
				}
			case "max_turns":
				if v, ok := d.integer(f.value, "user.max_turns"); ok {
					if v < 1 || v > maxSimulatedTurns {
						d.fail(f.value, "user.max_turns must be between 1 and %d, not %d", maxSimulatedTurns, v)
					}
					u.MaxTurns = v
				}
			case "stop":
				u.Stop = d.str(f.value, "user.stop")
				if strings.TrimSpace(u.Stop) == "" {
					d.fail(f.value, "user.stop is empty; it is the marker that ends the conversation (default %s)", agenteval.DefaultStopMarker)
				}
			case "model":
				u.Model = d.str(f.value, "user.model")
				if !strings.Contains(u.Model, ":") {
					d.fail(f.value, "user.model %q is not provider:model (for example openai:gpt-4o-mini)", u.Model)
				}
			case "temperature":
				if v, ok := d.number(f.value, "user.temperature"); ok {
					if v < 0 || v > 2 {
						d.fail(f.value, "user.temperature must be between 0 and 2")
					}
					u.Temperature = &v
				}
			case "stop_on_success":
				u.StopOnSuccess, _ = d.boolean(f.value, "user.stop_on_success")
			case "terminating_condition":
				u.TerminatingCondition = strings.TrimSpace(d.text(f.value, "user.terminating_condition"))
				if u.TerminatingCondition == "" {
					d.fail(f.value, "user.terminating_condition is empty; say when the user should end the conversation, or leave it out")
				}
			}
		}
	}
	if strings.TrimSpace(u.Instruction) == "" {
		d.fail(n, "user needs an instruction: what the simulated user wants, and what it knows")
	}
	return u
}

// checkSimulated applies the rules of a test with a simulated user, once
// the whole test is read. at holds the test's keys.
func (d *decoder) checkSimulated(t *agenteval.Test, at map[string]*yaml.Node) {
	if t.User == nil && len(t.Subgoals) == 0 && len(t.ExpectedToolCalls) == 0 {
		return
	}
	if t.User != nil {
		if kn, ok := at["turns"]; ok {
			d.fail(kn, "test %q has both turns and user; give scripted turns or a simulated user, not both", t.ID)
		}
		if kn, ok := at["expected_output"]; ok {
			d.fail(kn, "a simulated conversation has no single reply to compare with expected_output; use subgoals or assertions")
		}
		for _, k := range []string{"on_turn_failure", "window_size", "grader_window_size"} {
			if kn, ok := at[k]; ok {
				d.fail(kn, "%s applies to scripted turns; a simulated conversation (user:) is graded as a whole", k)
			}
		}
		if t.User.StopOnSuccess && len(t.Subgoals) == 0 {
			d.fail(at["user"], "user.stop_on_success needs subgoals: it ends the conversation once they are all achieved")
		}
		for _, m := range t.Input {
			if m.Role != agenteval.RoleSystem {
				d.fail(at["input"], "a simulated conversation's input may hold only system messages (the agent's instructions); put the user's opening words in user.initial_message")
				break
			}
		}
		marker := t.User.Stop
		if marker == "" {
			marker = agenteval.DefaultStopMarker
		}
		if n := len([]rune(strings.TrimSpace(marker))); n > 0 && n < 3 {
			d.fail(at["user"], "user.stop %q is too short: the marker is found anywhere in the simulated user's text, so use something no message would contain, like %s", marker, agenteval.DefaultStopMarker)
		}
		if strings.Contains(t.User.InitialMessage, marker) {
			d.fail(at["user"], "user.initial_message contains the stop marker %s, which would end the conversation at once", marker)
		}
		t.Mode = agenteval.ModeConversation
	}
	if len(t.Subgoals) > 0 || len(t.ExpectedToolCalls) > 0 {
		// Subgoals and expected calls count a turn per user message.
		for i, tr := range t.Turns {
			users := 0
			for _, m := range tr.Input {
				if m.Role == agenteval.RoleUser {
					users++
				}
			}
			if users != 1 {
				d.errs = append(d.errs, tr.Pos.Errorf(fmt.Sprintf("turn %d has %d user messages; with subgoals or expected_tool_calls, which count a turn per user message, give each turn exactly one", i+1, users)))
			}
		}
	}
	limit := len(t.Turns)
	if t.Mode != agenteval.ModeConversation {
		limit = 1 // a single exchange
	}
	if t.User != nil {
		limit = t.User.MaxTurns
		if limit == 0 {
			limit = agenteval.DefaultMaxTurns
		}
	}
	// agent_inspect's files count turns from 0: messages show their
	// numbers.
	zero := t.Semantics != agenteval.SemanticsAgentEval
	shown := func(turn int) int {
		if zero {
			return turn - 1
		}
		return turn
	}
	for i, sg := range t.Subgoals {
		if sg.Turn < 0 || (limit > 0 && sg.Turn > limit) {
			if zero {
				d.fail(at["subgoals"], "subgoal %d has turn %d; agent_inspect counts turns from 0, so it must be from 0 to %d", i+1, shown(sg.Turn), max(limit, 1)-1)
				continue
			}
			d.fail(at["subgoals"], "subgoal %d has turn %d; it must be a turn number from 1 to %d", i+1, sg.Turn, max(limit, 1))
		}
	}
	for i, c := range t.ExpectedToolCalls {
		if limit > 0 && c.Turn > limit {
			msg := fmt.Sprintf("expected tool call %d has turn %d, but the conversation has at most %s", i+1, c.Turn, turnsText(limit))
			if zero {
				msg = fmt.Sprintf("expected tool call %d has turn %d, but the conversation has at most %s (agent_inspect counts them from 0, so 0 to %d)", i+1, shown(c.Turn), turnsText(limit), limit-1)
			}
			if c.Pos.Line > 0 {
				d.errs = append(d.errs, c.Pos.Errorf(msg))
				continue
			}
			d.fail(at["expected_tool_calls"], "%s", msg)
		}
	}
}

func (d *decoder) subgoals(n *yaml.Node) []agenteval.Subgoal {
	return d.subgoalList(n, false)
}

// subgoalList reads subgoals; zeroBased reads agent_inspect's turns, which
// count from 0.
func (d *decoder) subgoalList(n *yaml.Node, zeroBased bool) []agenteval.Subgoal {
	rn := resolve(n)
	if rn == nil || rn.Kind != yaml.SequenceNode {
		d.fail(n, "subgoals must be a list of milestones (text, or {details, type, turn}), not %s", kindName(n))
		return nil
	}
	var out []agenteval.Subgoal
	for _, item := range rn.Content {
		if it := resolve(item); it != nil && it.Kind == yaml.ScalarNode {
			sg := agenteval.Subgoal{Details: d.str(it, "subgoal")}
			if strings.TrimSpace(sg.Details) == "" {
				d.fail(item, "a subgoal is empty")
				continue
			}
			out = append(out, sg)
			continue
		}
		sg := agenteval.Subgoal{}
		for _, f := range d.fields(item, "a subgoal", []string{"details", "type", "turn"}) {
			if isNull(f.value) {
				continue // agent_inspect writes unset fields as null
			}
			switch f.key {
			case "details":
				sg.Details = d.text(f.value, "details")
			case "type":
				sg.Type = d.str(f.value, "type")
			case "turn":
				if k, ok := d.turn(f.value, "a subgoal's turn", zeroBased); ok {
					sg.Turn = k
				}
			}
		}
		if strings.TrimSpace(sg.Details) == "" {
			d.fail(item, "a subgoal needs details: what the agent must have done")
			continue
		}
		out = append(out, sg)
	}
	return out
}

// expectedCalls reads expected_tool_calls into the form the
// expected_tool_calls grader takes: {tool, args, output, turn}, with each
// argument a matcher ({"$text": v} for an exact value, compared as text as
// agent_inspect does; {"$check": "..."} for an LLM check; {"$any": true}
// when only its presence is expected).
func (d *decoder) expectedCalls(n *yaml.Node) []agenteval.ExpectedCall {
	rn := resolve(n)
	if rn == nil || isNull(rn) {
		return nil
	}
	if rn.Kind != yaml.SequenceNode {
		d.fail(n, "expected_tool_calls must be a list of {tool, args, output, turn}, not %s", kindName(n))
		return nil
	}
	var out []agenteval.ExpectedCall
	for _, item := range rn.Content {
		if c, ok := d.expectedCall(item, false); ok {
			out = append(out, c)
		}
	}
	return out
}

var expectedCallKeys = []string{"tool", "turn", "args", "parameters", "expected_parameters", "output", "expected_output"}

// turn reads a turn scope: all (or any, *, null) for none, else a turn
// number. zeroBased reads agent_inspect's, which counts from 0 (its metrics
// compare turn == index); the result counts from 1 either way, 0 meaning
// no scope.
func (d *decoder) turn(n *yaml.Node, what string, zeroBased bool) (int, bool) {
	s := d.str(n, what)
	if anyTurn(s) {
		return 0, true
	}
	k, err := strconv.Atoi(strings.TrimSpace(s))
	switch {
	case zeroBased && (err != nil || k < 0):
		d.fail(n, "%s must be a turn index (0 is the first turn, as agent_inspect counts), or all; not %q", what, s)
		return 0, false
	case zeroBased:
		return k + 1, true
	case err != nil || k < 1:
		d.fail(n, "%s must be a turn number (1 or more), or all; not %q", what, s)
		return 0, false
	}
	return k, true
}

// expectedCall reads one expected call. zeroBased reads agent_inspect's
// turns, which count from 0.
func (d *decoder) expectedCall(n *yaml.Node, zeroBased bool) (agenteval.ExpectedCall, bool) {
	call := agenteval.ExpectedCall{Pos: d.pos(resolve(n))}
	args := map[string]any{}
	for _, f := range d.fields(n, "an expected tool call", expectedCallKeys) {
		if isNull(f.value) && f.key != "tool" {
			continue // agent_inspect writes unset fields as null
		}
		switch f.key {
		case "tool":
			call.Tool = d.str(f.value, "tool")
		case "turn":
			if k, ok := d.turn(f.value, "an expected call's turn", zeroBased); ok {
				call.Turn = k
			}
		case "args", "parameters":
			for _, a := range d.fields(f.value, f.key, nil) {
				if m := d.paramMatcher(a.value, a.key); m != nil {
					args[a.key] = m
				}
			}
		case "expected_parameters":
			pn := resolve(f.value)
			if pn == nil || isNull(pn) {
				continue
			}
			if pn.Kind != yaml.SequenceNode {
				d.fail(f.value, "expected_parameters must be a list of {name, value | check}")
				continue
			}
			for _, p := range pn.Content {
				name, matcher := d.namedParam(p)
				if name != "" && matcher != nil {
					args[name] = matcher
				}
			}
		case "output", "expected_output":
			if m := d.outputMatcher(f.value); m != nil {
				call.Output = &m
			}
		}
	}
	if call.Tool == "" {
		d.fail(n, "an expected tool call needs tool: the name of the tool")
		return call, false
	}
	call.Args = args
	return call, true
}

// paramMatcher reads one expected argument: {value: v} or {check: "..."}
// (agent_inspect's forms), a {$matcher: ...} object, or a plain value,
// which must be equal as text.
func (d *decoder) paramMatcher(n *yaml.Node, name string) any {
	rn := resolve(n)
	if rn != nil && rn.Kind == yaml.MappingNode && onlyKeys(rn, "value", "check") {
		_, m := d.valueOrCheck(rn, "argument "+name, false)
		return m
	}
	v := d.value(n)
	if m, ok := v.(map[string]any); ok && len(m) == 1 {
		for k := range m {
			if strings.HasPrefix(k, "$") {
				return m
			}
		}
	}
	return map[string]any{"$text": v}
}

// namedParam reads agent_inspect's {name, value | check}.
func (d *decoder) namedParam(n *yaml.Node) (string, any) {
	return d.valueOrCheck(n, "a parameter", true)
}

func (d *decoder) outputMatcher(n *yaml.Node) any {
	rn := resolve(n)
	if rn != nil && rn.Kind == yaml.MappingNode && onlyKeys(rn, "value", "check") {
		_, m := d.valueOrCheck(rn, "expected output", false)
		if mm, ok := m.(map[string]any); ok {
			if v, ok := mm["$text"]; ok {
				// The output compares as text, or as JSON when both parse.
				return v
			}
		}
		return m
	}
	return d.value(n)
}

// onlyKeys reports whether a mapping has keys and all of them are among
// keys.
func onlyKeys(n *yaml.Node, keys ...string) bool {
	if len(n.Content) == 0 {
		return false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		found := false
		for _, k := range keys {
			if n.Content[i].Value == k {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// valueOrCheck reads {name?, value} or {name?, check}: a value is compared
// as text, a check is judged by the LLM. Setting both is an error, as in
// agent_inspect.
func (d *decoder) valueOrCheck(n *yaml.Node, what string, named bool) (string, any) {
	keys := []string{"value", "check"}
	if named {
		keys = append(keys, "name")
	}
	var name string
	var matcher any
	var hasValue, hasCheck bool
	for _, f := range d.fields(n, what, keys) {
		if isNull(f.value) {
			continue // agent_inspect's None: not set
		}
		switch f.key {
		case "name":
			name = d.str(f.value, "name")
		case "value":
			hasValue = true
			matcher = map[string]any{"$text": d.value(f.value)}
		case "check":
			hasCheck = true
			c := d.text(f.value, "check")
			if strings.TrimSpace(c) == "" {
				d.fail(f.value, "%s: check is empty; say what the value must satisfy", what)
			}
			matcher = map[string]any{"$check": c}
		}
	}
	switch {
	case hasValue && hasCheck:
		d.fail(n, "%s has both value and check; give one of them (value is compared exactly, check is judged by the LLM)", what)
		return "", nil
	case !hasValue && !hasCheck:
		if named {
			if name == "" {
				d.fail(n, "a parameter needs a name")
			}
			// Only the parameter's presence is expected.
			return name, map[string]any{"$any": true}
		}
		return "", nil
	case named && name == "":
		d.fail(n, "a parameter needs a name")
	}
	return name, matcher
}

// anyTurn reports a turn scope that means no scope.
func anyTurn(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "all", "any", "*":
		return true
	}
	return false
}

func turnsText(n int) string {
	if n == 1 {
		return "1 turn"
	}
	return fmt.Sprintf("%d turns", n)
}
