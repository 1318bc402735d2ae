package grade

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agenteval/agenteval"
)

// ExpectedToolCalls is agent_inspect's tool correctness, for a test's
// expected_tool_calls.
var ExpectedToolCalls = define(Definition{Name: "expected_tool_calls",
	Doc: "agent_inspect tool correctness: the fraction of expected calls made (any order), each in its turn when it names one; args by value or LLM check"},
	func(o ExpectedToolCallsOptions) bool { return callsNeedJudge(o.Calls) }, newExpectedToolCalls)

// ExpectedToolCallsOptions is the options of expected_tool_calls.
type ExpectedToolCallsOptions struct {
	Calls ExpectedCalls `json:"calls" doc:"the calls the agent should make: {tool, args, output, turn}"`
	// Semantics is agenteval.Semantics: whose pairing rules apply.
	Semantics string `json:"semantics" enum:"agenteval,agent_inspect,agent_inspect_dataset" doc:"pairing rules: agenteval (default: each call made meets one expected call, or several identical ones), agent_inspect (ToolCorrectnessMetric: each expected call on its own, only those with a turn), agent_inspect_dataset (the same, and a call without a turn may be met in any turn)"`
}

// expectedToolCalls is agent_inspect's ToolCorrectness: an expected call is
// matched by a call of the same tool whose every expected argument passes
// (an exact value, compared as text, or an LLM check) and whose result
// passes the expected output, if any. Order does not matter, each call made
// matches at most one expected call (identical expected calls count as
// one, as in agent_inspect), and a call scoped to a turn must be
// made in that turn. The score is the fraction of expected calls matched.
type expectedToolCalls struct {
	tc        *toolCallsGrader
	calls     []agenteval.ExpectedCall
	semantics agenteval.Semantics
}

func newExpectedToolCalls(o ExpectedToolCallsOptions, env Env) (Func, error) {
	if len(o.Calls) == 0 {
		return nil, fmt.Errorf("calls is empty; list the tool calls the agent should make")
	}
	g := &expectedToolCalls{tc: &toolCallsGrader{mode: ModeAnyOrder, argsMatch: ArgsSuperset}}
	switch sem := agenteval.Semantics(o.Semantics); sem {
	case "agenteval", agenteval.SemanticsAgentEval:
	case agenteval.SemanticsAgentInspect, agenteval.SemanticsAgentInspectDataset:
		g.semantics = sem
	default:
		return nil, fmt.Errorf("semantics %q is not one of agenteval, agent_inspect, agent_inspect_dataset", o.Semantics)
	}
	for i, e := range o.Calls {
		if e.Turn < 0 {
			return nil, fmt.Errorf("calls[%d]: turn must be a turn number (1 or more), not %d", i, e.Turn)
		}
		if err := checkExpected(e); err != nil {
			return nil, fmt.Errorf("calls[%d]: %w", i, err)
		}
		g.calls = append(g.calls, e)
	}
	if callsNeedJudge(g.calls) {
		g.tc.judge = env.Judge
	}
	return g.grade, nil
}

// turnRecords pairs calls with their results, as records does, and gives
// each call its turn: the number of user messages up to it (a turn starts
// at each user message, as Conversation.Turns has it).
func turnRecords(conv agenteval.Conversation) ([]callRecord, []int) {
	recs := records(conv)
	turns := make([]int, 0, len(recs))
	turn := 0
	for _, m := range conv {
		switch {
		case m.Role == agenteval.RoleUser:
			turn++
		case m.Role == agenteval.RoleAssistant:
			for range m.ToolCalls {
				// Calls before the first user message belong to turn 1,
				// as Conversation.Turns counts.
				turns = append(turns, max(turn, 1))
			}
		}
	}
	return recs, turns
}

func (g *expectedToolCalls) grade(ctx context.Context, in *agenteval.GradeInput) (Outcome, error) {
	if g.semantics != agenteval.SemanticsAgentEval {
		return g.gradeInspect(ctx, in)
	}
	recs, turns := turnRecords(in.Output)
	inScope := func(i, j int) bool { return g.calls[i].Turn == 0 || turns[j] == g.calls[i].Turn }
	fits := func(i, j int) bool {
		if !inScope(i, j) {
			return false
		}
		ok, _ := g.tc.match(g.calls[i], recs[j])
		return ok
	}
	pair := shareIdentical(g.calls, func(ok func(i, j int) bool) []int { return bipartite(len(g.calls), len(recs), ok) })
	partner, checkFailed, usage, err := g.tc.pairChecked(ctx, in, g.calls, recs, fits, pair)
	o := Outcome{Usage: usage}
	if err != nil {
		return o, err
	}
	used := usedBy(partner, len(recs))
	matched := 0
	for i, e := range g.calls {
		a := agenteval.Assertion{Text: "expected call " + describeExpected(e)}
		switch j := partner[i]; {
		case j >= 0:
			matched++
			a.Passed, a.Evidence = true, fmt.Sprintf("matched call %d %s in turn %d", j+1, recs[j].call.String(), turns[j])
		case checkFailed[i] != "":
			a.Evidence = checkFailed[i]
		default:
			a.Evidence = g.explain(i, recs, turns, used)
		}
		o.Assertions = append(o.Assertions, a)
	}
	o.Score = fraction(matched, len(g.calls))
	o.Reason = fmt.Sprintf("%d of %d expected tool calls made (%d calls in all)", matched, len(g.calls), len(recs))
	o.Details = map[string]any{"matched": matched, "expected": len(g.calls), "calls": len(recs)}
	return o, nil
}

// explain says why expected call i found no call: the mismatch of the
// nearest call of the same tool in scope (which argument failed), or where
// the tool was called instead.
func (g *expectedToolCalls) explain(i int, recs []callRecord, turns []int, used []bool) string {
	e, scope := g.calls[i], g.calls[i].Turn
	var elsewhere []string
	taken := 0
	for j, r := range recs {
		if r.call.Name != e.Tool {
			continue
		}
		if scope != 0 && turns[j] != scope {
			elsewhere = append(elsewhere, fmt.Sprint(g.shown(turns[j])))
			continue
		}
		if used[j] {
			taken++
			continue
		}
		if _, why := g.tc.match(e, r); why != "" {
			return fmt.Sprintf("call %d %s in turn %d: %s", j+1, r.call.Name, g.shown(turns[j]), why)
		}
	}
	switch {
	case taken > 0:
		return fmt.Sprintf("every %s call in scope (%d) already matched another expected call", e.Tool, taken)
	case len(elsewhere) > 0:
		return fmt.Sprintf("%s was not called in turn %d (it was called in turn %s)", e.Tool, g.shown(scope), strings.Join(elsewhere, ", "))
	case scope != 0:
		return fmt.Sprintf("%s was never called (expected in turn %d)", e.Tool, g.shown(scope))
	}
	return e.Tool + " was never called"
}

// shown is a turn number as the test's file writes it: agent_inspect's
// count from 0.
func (g *expectedToolCalls) shown(turn int) int {
	if g.semantics != agenteval.SemanticsAgentEval {
		return turn - 1
	}
	return turn
}

// describeExpected renders an expected call for people:
// tool(a="x", b=<check: ...>) in turn 2.
func describeExpected(e agenteval.ExpectedCall) string {
	var b strings.Builder
	b.WriteString(e.Tool)
	b.WriteByte('(')
	if e.AnyArgs {
		b.WriteString("any")
	}
	for i, k := range sortedKeys(e.Args) {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(describeMatcher(e.Args[k]))
	}
	b.WriteByte(')')
	if e.Output != nil {
		b.WriteString(" -> ")
		b.WriteString(describeMatcher(*e.Output))
	}
	if e.Turn > 0 {
		fmt.Fprintf(&b, " in turn %d", e.Turn)
	}
	return b.String()
}

func describeMatcher(v any) string {
	if m, ok := v.(map[string]any); ok && len(m) == 1 {
		for op, arg := range m {
			switch op {
			case "$any":
				return "*"
			case "$text":
				return jsonText(arg)
			case "$check":
				return fmt.Sprintf("<check: %v>", arg)
			case "$regex":
				return fmt.Sprintf("/%v/", arg)
			}
		}
	}
	return jsonText(v)
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
