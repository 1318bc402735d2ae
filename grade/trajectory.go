package grade

import (
	"context"
	"fmt"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/judge"
)

// The trajectory modes. Each first pairs expected calls with calls made
// (partner[i] is the call for expected call i, or -1), deterministically;
// then the LLM checks ($check) of the paired calls are decided in one judge
// call, and a pair whose check fails comes apart; only then is the score
// computed, so every mode treats checks the same way.

func (g *toolCallsGrader) grade(ctx context.Context, in *agenteval.GradeInput) (Outcome, error) {
	recs := records(in.Output)
	if g.minimums != nil {
		return g.gradeMinimums(recs), nil
	}
	expected := g.expected
	if expected == nil {
		if in.ReferenceToolCalls == nil {
			return Outcome{}, &agenteval.MissingFieldError{Grader: "tool_calls", Field: "reference_tool_calls (or expected: in the grader's settings)"}
		}
		for _, c := range in.ReferenceToolCalls {
			expected = append(expected, agenteval.ExpectedCall{Tool: c.Name, Args: argsOf(c), Literal: true})
		}
	}
	pair := func(ok func(i, j int) bool) []int {
		switch g.mode {
		case ModeExact:
			return pairExact(len(expected), len(recs), ok)
		case ModeInOrder:
			return pairInOrder(len(expected), len(recs), ok)
		}
		return bipartite(len(expected), len(recs), ok)
	}
	fits := func(i, j int) bool { ok, _ := g.match(expected[i], recs[j]); return ok }
	partner, checkFailed, usage, err := g.pairChecked(ctx, in, expected, recs, fits, pair)
	if err != nil {
		return Outcome{Usage: usage}, err
	}
	var scored Outcome
	switch g.mode {
	case ModeExact:
		scored = g.scoreExact(expected, recs, partner, checkFailed)
	case ModeInOrder:
		scored, _ = g.partnerAssertions(expected, recs, partner, nil, checkFailed)
		scored.Reason = fmt.Sprintf("%d of %d expected calls found in order (%d calls made)", countMatched(partner), len(expected), len(recs))
	case ModeSubset:
		scored = g.scoreSubset(expected, recs, partner)
	default:
		scored, _ = g.partnerAssertions(expected, recs, partner, usedBy(partner, len(recs)), checkFailed)
		scored.Reason = fmt.Sprintf("%d of %d expected calls made, in any order (%d calls made)", countMatched(partner), len(expected), len(recs))
	}
	latencyChecks(&scored, expected, recs, partner)
	scored.Usage = usage
	scored.Details = map[string]any{"mode": g.mode, "args_match": g.argsMatch, "calls": len(recs), "expected": len(expected)}
	return scored, nil
}

// latencyChecks adds AgentV's per-call latency checks: a matched call with
// max_duration_ms must have taken no longer, when the agent reported how
// long it took (an unreported duration is no evidence either way). Each
// check is one more assertion, and the score is the share that passed.
func latencyChecks(o *Outcome, expected []agenteval.ExpectedCall, recs []callRecord, partner []int) {
	added := false
	for i, e := range expected {
		j := partner[i]
		if e.MaxDurationMS <= 0 || j < 0 || recs[j].call.DurationMS <= 0 {
			continue
		}
		took := recs[j].call.DurationMS
		o.Assertions = append(o.Assertions, agenteval.Assertion{
			Text:   fmt.Sprintf("%s took at most %s ms", e.Tool, fmtNum(e.MaxDurationMS)),
			Passed: took <= e.MaxDurationMS, Evidence: fmt.Sprintf("call %d took %s ms", j+1, fmtNum(took)),
		})
		added = true
	}
	if !added {
		return
	}
	passed := 0
	for _, a := range o.Assertions {
		if a.Passed {
			passed++
		}
	}
	o.Score = fraction(passed, len(o.Assertions))
}

func countMatched(partner []int) int {
	n := 0
	for _, j := range partner {
		if j >= 0 {
			n++
		}
	}
	return n
}

func usedBy(partner []int, m int) []bool {
	used := make([]bool, m)
	for _, j := range partner {
		if j >= 0 {
			used[j] = true
		}
	}
	return used
}

// maxCheckRounds bounds the judge calls of one grading.
const maxCheckRounds = 3

// pairChecked pairs expected calls with calls made (pair does it for the
// mode, told which pairs may match), then has the judge decide the $checks
// of the pairs in one call. A pair whose check fails is ruled out and the
// pairing is done again, so that another call can take its place; each
// round judges only pairs not judged before, for at most maxCheckRounds
// rounds. checkFailed says, per expected call left without a partner
// because of its checks, which check failed and why.
func (g *toolCallsGrader) pairChecked(ctx context.Context, in *agenteval.GradeInput, exp []agenteval.ExpectedCall, recs []callRecord,
	fits func(i, j int) bool, pair func(ok func(i, j int) bool) []int) (partner []int, checkFailed []string, usage *agenteval.Usage, err error) {
	failed := map[[2]int]string{}
	passed := map[[2]int]bool{}
	ok := func(i, j int) bool {
		_, bad := failed[[2]int{i, j}]
		return !bad && fits(i, j)
	}
	var total agenteval.Usage
	for round := 1; ; round++ {
		partner = pair(ok)
		if g.judge == nil {
			break
		}
		var todo [][2]int
		for i, j := range partner {
			if p := [2]int{i, j}; j >= 0 && !passed[p] && len(g.checksOf(exp[i], recs[j])) > 0 {
				todo = append(todo, p)
			}
		}
		if len(todo) == 0 {
			break
		}
		fails, u, err := g.judgeChecks(ctx, in, exp, recs, todo)
		total.Add(&u)
		if err != nil {
			return partner, nil, &total, fmt.Errorf("check arguments: %w", err)
		}
		for _, p := range todo {
			if why, bad := fails[p]; bad {
				failed[p] = why
			} else {
				passed[p] = true
			}
		}
		if len(fails) == 0 || round == maxCheckRounds {
			break
		}
	}
	if !total.IsZero() {
		usage = &total
	}
	checkFailed = make([]string, len(exp))
	for i, j := range partner {
		if j >= 0 {
			if _, bad := failed[[2]int{i, j}]; bad {
				partner[i] = -1
			}
		}
	}
	for i := range exp {
		if partner[i] >= 0 {
			continue
		}
		var whys []string
		for j := range recs {
			if why, bad := failed[[2]int{i, j}]; bad {
				whys = append(whys, why)
			}
		}
		checkFailed[i] = strings.Join(whys, "; ")
	}
	return partner, checkFailed, usage, nil
}

// check is one LLM-judged condition of an expected call on a call made.
type check struct {
	what, text string
}

// checksOf lists the $checks expected call e puts on call r.
func (g *toolCallsGrader) checksOf(e agenteval.ExpectedCall, r callRecord) []check {
	if e.Literal {
		return nil
	}
	c := r.call
	var out []check
	for _, k := range sortedKeys(e.Args) {
		m, ok := e.Args[k].(map[string]any)
		if !ok || len(m) != 1 {
			continue
		}
		if text, ok := m["$check"].(string); ok {
			out = append(out, check{"arg " + k, fmt.Sprintf("In the call %s, the argument %s = %s satisfies: %s", c.String(), k, show(c.Args[k]), text)})
		}
	}
	if e.Output != nil && isCheck(*e.Output) && r.result != nil {
		text := (*e.Output).(map[string]any)["$check"].(string)
		out = append(out, check{"output", fmt.Sprintf("The result of the call %s, which was %q, satisfies: %s", c.String(), truncate(*r.result, 300), text)})
	}
	return out
}

// judgeChecks asks the judge, in one call, about every check of the given
// pairs (expected call, call made), and says why each failing pair failed.
func (g *toolCallsGrader) judgeChecks(ctx context.Context, in *agenteval.GradeInput, exp []agenteval.ExpectedCall, recs []callRecord, pairs [][2]int) (map[[2]int]string, agenteval.Usage, error) {
	var crits []judge.Criterion
	var owner [][2]int
	var whats []string
	for _, p := range pairs {
		for _, c := range g.checksOf(exp[p[0]], recs[p[1]]) {
			crits = append(crits, judge.Criterion{ID: fmt.Sprintf("call %d %s", p[1]+1, c.what), Text: c.text})
			owner = append(owner, p)
			whats = append(whats, c.what)
		}
	}
	transcript, _ := judgedText(in)
	ds, usage, err := g.judge.Decide(ctx, "rubric", map[string]any{"Transcript": transcript, "Output": agenteval.Conversation(nil), "Reference": ""}, crits)
	if err != nil {
		return nil, usage, err
	}
	fails := map[[2]int]string{}
	for k, d := range ds {
		if d.Passed {
			continue
		}
		p := owner[k]
		why := fmt.Sprintf("call %d %s: %s check failed: %s", p[1]+1, recs[p[1]].call.Name, whats[k], d.Reason)
		if fails[p] != "" {
			why = fails[p] + "; " + why
		}
		fails[p] = why
	}
	return fails, usage, nil
}

func expectedText(i int, e agenteval.ExpectedCall) string {
	return fmt.Sprintf("expected call %d: %s", i+1, expectedString(e))
}

// explain says why expected call e found no partner: the nearest call of the
// same name and its mismatch, or that the tool was never called.
func (g *toolCallsGrader) explain(e agenteval.ExpectedCall, recs []callRecord, used []bool) string {
	sameName := 0
	for i, r := range recs {
		if r.call.Name != e.Tool {
			continue
		}
		sameName++
		if used != nil && used[i] {
			continue
		}
		if _, why := g.match(e, r); why != "" {
			return fmt.Sprintf("call %d %s: %s", i+1, r.call.Name, why)
		}
	}
	switch {
	case sameName == 0:
		return e.Tool + " was never called"
	case used != nil:
		return fmt.Sprintf("every %s call (%d) already matched another expected call", e.Tool, sameName)
	}
	return fmt.Sprintf("%s was called, but not in the expected order", e.Tool)
}

// pairExact pairs the i-th expected call with the i-th call made.
func pairExact(n, m int, ok func(i, j int) bool) []int {
	partner := make([]int, n)
	for i := range partner {
		partner[i] = -1
		if i < m && ok(i, i) {
			partner[i] = i
		}
	}
	return partner
}

func (g *toolCallsGrader) scoreExact(exp []agenteval.ExpectedCall, recs []callRecord, partner []int, checkFailed []string) Outcome {
	var o Outcome
	matched := 0
	for i, e := range exp {
		a := agenteval.Assertion{Text: expectedText(i, e)}
		switch {
		case partner[i] >= 0:
			a.Passed, a.Evidence = true, fmt.Sprintf("call %d matches", i+1)
			matched++
		case checkFailed[i] != "":
			a.Evidence = checkFailed[i]
		case i >= len(recs):
			a.Evidence = fmt.Sprintf("only %d calls were made", len(recs))
		default:
			_, why := g.match(e, recs[i])
			a.Evidence = fmt.Sprintf("call %d %s: %s", i+1, recs[i].call.Name, why)
		}
		o.Assertions = append(o.Assertions, a)
	}
	for i := len(exp); i < len(recs); i++ {
		o.Assertions = append(o.Assertions, agenteval.Assertion{Text: "no calls beyond the expected ones", Evidence: fmt.Sprintf("unexpected call %d: %s", i+1, recs[i].call.String())})
	}
	denom := max(len(exp), len(recs))
	o.Score = fraction(matched, denom)
	o.Reason = fmt.Sprintf("%d of %d calls in the exact expected sequence (%d made, %d expected)", matched, denom, len(recs), len(exp))
	return o
}

// pairInOrder finds the longest run of expected calls that appears in order
// (a longest common subsequence), which gives the best partial credit when
// some calls are missing or swapped.
func pairInOrder(n, m int, match func(i, j int) bool) []int {
	ok := make([][]bool, n)
	for i := range ok {
		ok[i] = make([]bool, m)
		for j := range m {
			ok[i][j] = match(i, j)
		}
	}
	dp := make([][]int, n+1)
	for i := range dp {
		dp[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			best := max(dp[i+1][j], dp[i][j+1])
			if ok[i][j] && dp[i+1][j+1]+1 > best {
				best = dp[i+1][j+1] + 1
			}
			dp[i][j] = best
		}
	}
	partner := make([]int, n)
	for i := range partner {
		partner[i] = -1
	}
	for i, j := 0, 0; i < n && j < m; {
		switch {
		case ok[i][j] && dp[i][j] == dp[i+1][j+1]+1:
			partner[i] = j
			i++
			j++
		case dp[i+1][j] >= dp[i][j+1]:
			i++
		default:
			j++
		}
	}
	return partner
}

// partnerAssertions turns a pairing into one assertion per expected call and
// the fraction matched. used marks calls taken by the pairing, for
// explaining the misses of an unordered match; nil means the order was at
// fault.
func (g *toolCallsGrader) partnerAssertions(exp []agenteval.ExpectedCall, recs []callRecord, partner []int, used []bool, checkFailed []string) (Outcome, int) {
	var o Outcome
	matched := 0
	for i, e := range exp {
		a := agenteval.Assertion{Text: expectedText(i, e)}
		switch {
		case partner[i] >= 0:
			matched++
			a.Passed, a.Evidence = true, fmt.Sprintf("matched call %d", partner[i]+1)
		case checkFailed[i] != "":
			a.Evidence = checkFailed[i]
		default:
			a.Evidence = g.explain(e, recs, used)
		}
		o.Assertions = append(o.Assertions, a)
	}
	o.Score = fraction(matched, len(exp))
	return o, matched
}

// bipartite returns, for each of n items, the index of its partner among m
// in a maximum matching (-1 for none), so that a loose expectation never
// steals the only call a stricter one fits.
func bipartite(n, m int, ok func(i, j int) bool) []int {
	partnerOf := make([]int, n)
	owner := make([]int, m)
	for i := range partnerOf {
		partnerOf[i] = -1
	}
	for j := range owner {
		owner[j] = -1
	}
	var try func(i int, seen []bool) bool
	try = func(i int, seen []bool) bool {
		for j := 0; j < m; j++ {
			if seen[j] || !ok(i, j) {
				continue
			}
			seen[j] = true
			if owner[j] < 0 || try(owner[j], seen) {
				owner[j], partnerOf[i] = i, j
				return true
			}
		}
		return false
	}
	for i := 0; i < n; i++ {
		try(i, make([]bool, m))
	}
	return partnerOf
}

// scoreSubset credits the calls made that an expected call accounts for.
func (g *toolCallsGrader) scoreSubset(exp []agenteval.ExpectedCall, recs []callRecord, partner []int) Outcome {
	owner := make([]int, len(recs))
	for j := range owner {
		owner[j] = -1
	}
	for i, j := range partner {
		if j >= 0 {
			owner[j] = i
		}
	}
	var o Outcome
	allowed := 0
	for j, r := range recs {
		a := agenteval.Assertion{Text: fmt.Sprintf("call %d %s is an expected call", j+1, r.call.String())}
		if owner[j] >= 0 {
			allowed++
			a.Passed, a.Evidence = true, "matches "+expectedText(owner[j], exp[owner[j]])
		} else {
			a.Evidence = "not among the expected calls, or every matching expected call was already used"
		}
		o.Assertions = append(o.Assertions, a)
	}
	o.Score = fraction(allowed, len(recs))
	o.Reason = fmt.Sprintf("%d of %d calls made are expected ones (%d expected)", allowed, len(recs), len(exp))
	return o
}

// gradeMinimums is AgentV's any_order with minimums: each named tool must be
// called at least so many times.
func (g *toolCallsGrader) gradeMinimums(recs []callRecord) Outcome {
	counts := map[string]int{}
	for _, r := range recs {
		counts[r.call.Name]++
	}
	var o Outcome
	met := 0
	for _, tool := range sortedKeys(g.minimums) {
		want := g.minimums[tool]
		a := agenteval.Assertion{Text: fmt.Sprintf("%s called at least %d times", tool, want), Evidence: fmt.Sprintf("called %d times", counts[tool])}
		if counts[tool] >= want {
			met++
			a.Passed = true
		}
		o.Assertions = append(o.Assertions, a)
	}
	o.Score = fraction(met, len(g.minimums))
	o.Reason = fmt.Sprintf("%d of %d tools called at least their minimum number of times", met, len(g.minimums))
	return o
}

func fraction(n, d int) float64 {
	if d == 0 {
		return 1
	}
	return float64(n) / float64(d)
}
