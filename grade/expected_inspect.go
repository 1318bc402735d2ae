package grade

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	"github.com/agenteval/agenteval"
)

// gradeInspect scores expected calls as agent_inspect's ToolCorrectnessMetric
// does (src/agent_inspect/metrics/scorer/tool_correctness.py):
//
//   - for each turn of the conversation, each expected call whose turn is
//     that turn is validated on its own against the calls made in that turn
//     (ToolCallCompletionValidator looks at the latest turn only), so one
//     call may meet every identical expectation;
//   - an expected call whose turn is not a turn of the conversation (none,
//     or one the conversation never reached) is not validated at all;
//     under SemanticsAgentInspectDataset, one without a turn is validated
//     against every turn's calls instead, since that schema has no turns;
//   - the score is the share of validated calls met, rounded to 4
//     decimals, and with nothing validated there is no score: the metric
//     raises "No validation results present to aggregate for tool
//     correctness score.", and this grader errors the same way.
//
// Turns are 1-based here: the loader moved agent_inspect's 0-based turns
// up by one.
func (g *expectedToolCalls) gradeInspect(ctx context.Context, in *agenteval.GradeInput) (Outcome, error) {
	recs, turns := turnRecords(in.Output)
	n := conversationTurns(in.Output)
	anyTurn := g.semantics == agenteval.SemanticsAgentInspectDataset
	evaluated := make([]bool, len(g.calls))
	var skipped []string
	count := 0
	for i, e := range g.calls {
		switch {
		case e.Turn == 0 && anyTurn, e.Turn >= 1 && e.Turn <= n:
			evaluated[i] = true
			count++
		case e.Turn == 0:
			skipped = append(skipped, describeInspect(e)+": no turn")
		default:
			skipped = append(skipped, fmt.Sprintf("%s: the conversation has %s", describeInspect(e), turnsText(n)))
		}
	}
	o := Outcome{}
	if count == 0 {
		return o, fmt.Errorf("no validation results present to aggregate for tool correctness score (agent_inspect's error): it validates only expected calls whose turn is a turn of the conversation, counted from 0, and none of these %d is (%s); give each a turn", len(g.calls), strings.Join(skipped, "; "))
	}
	fits := func(i, j int) bool {
		if !evaluated[i] || (g.calls[i].Turn != 0 && turns[j] != g.calls[i].Turn) {
			return false
		}
		ok, _ := g.tc.match(g.calls[i], recs[j])
		return ok
	}
	// Each expected call takes the first call that meets it, whether or
	// not another expected call took it too.
	shared := func(ok func(i, j int) bool) []int {
		partner := make([]int, len(g.calls))
		for i := range partner {
			partner[i] = -1
			for j := range recs {
				if ok(i, j) {
					partner[i] = j
					break
				}
			}
		}
		return partner
	}
	partner, checkFailed, usage, err := g.tc.pairChecked(ctx, in, g.calls, recs, fits, shared)
	o.Usage = usage
	if err != nil {
		return o, err
	}
	unused := make([]bool, len(recs))
	matched := 0
	for i, e := range g.calls {
		if !evaluated[i] {
			continue
		}
		a := agenteval.Assertion{Text: "expected call " + describeInspect(e)}
		switch j := partner[i]; {
		case j >= 0:
			matched++
			a.Passed, a.Evidence = true, fmt.Sprintf("met by call %d %s in turn %d", j+1, recs[j].call.String(), turns[j]-1)
		case checkFailed[i] != "":
			a.Evidence = checkFailed[i]
		default:
			a.Evidence = g.explain(i, recs, turns, unused)
		}
		o.Assertions = append(o.Assertions, a)
	}
	o.Score = roundPy(fraction(matched, count), 4)
	o.Reason = fmt.Sprintf("%d of %d expected tool calls met (agent_inspect's rules: each checked on its own, in its turn counted from 0; %d calls in all)", matched, count, len(recs))
	o.Details = map[string]any{"matched": matched, "expected": count, "calls": len(recs)}
	if len(skipped) > 0 {
		o.Reason += fmt.Sprintf("; %d not validated, as in agent_inspect", len(skipped))
		o.Details["not_validated"] = skipped
	}
	return o, nil
}

// conversationTurns counts a conversation's turns as turnRecords numbers
// them: one per user message, at least one when anything happened.
func conversationTurns(conv agenteval.Conversation) int {
	n := 0
	for _, m := range conv {
		if m.Role == agenteval.RoleUser {
			n++
		}
	}
	if n == 0 && len(conv) > 0 {
		n = 1
	}
	return n
}

// describeInspect renders an expected call with its turn as agent_inspect
// numbers it, from 0.
func describeInspect(e agenteval.ExpectedCall) string {
	turn := e.Turn
	e.Turn = 0
	s := describeExpected(e)
	if turn > 0 {
		s += fmt.Sprintf(" in turn %d", turn-1)
	}
	return s
}

func turnsText(n int) string {
	if n == 1 {
		return "1 turn"
	}
	return fmt.Sprintf("%d turns", n)
}

// shareIdentical wraps pair, a pairing of expected calls with calls made
// (a maximum matching, where each call made meets one expectation), so
// that identical expected calls are met together by one call, as
// agent_inspect's ToolCorrectnessMetric meets them: it checks each
// expectation on its own against every call of its turn, so a file that
// lists the same call twice scores 1 when it was made once. The pairing
// runs over the first of each group of identical expectations only; the
// others take that one's call, or none. Distinct expectations still need a
// call each.
func shareIdentical(calls []agenteval.ExpectedCall, pair func(ok func(i, j int) bool) []int) func(ok func(i, j int) bool) []int {
	first := firstIdentical(calls)
	return func(ok func(i, j int) bool) []int {
		partner := pair(func(i, j int) bool { return first[i] == i && ok(i, j) })
		for i, f := range first {
			if f != i {
				partner[i] = partner[f]
			}
		}
		return partner
	}
}

// firstIdentical gives, for each expected call, the index of the first one
// identical to it: the same tool, arguments, output, turn and matching
// options. Where it is written does not count.
func firstIdentical(calls []agenteval.ExpectedCall) []int {
	first := make([]int, len(calls))
	for i := range calls {
		first[i] = i
		a := calls[i]
		a.Pos = agenteval.Pos{}
		for k := 0; k < i; k++ {
			b := calls[k]
			b.Pos = agenteval.Pos{}
			if first[k] == k && reflect.DeepEqual(a, b) {
				first[i] = k
				break
			}
		}
	}
	return first
}
