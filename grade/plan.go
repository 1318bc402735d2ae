package grade

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/judge"
)

// Plan is how one test is graded: the graders of each scripted turn and of
// the test as a whole, the graders of the test's own keys, and what in it
// calls the judge. Validation and the runner both make it with NewPlan, so
// each rule about a test's graders lives here, once.
type Plan struct {
	Test *agenteval.Test
	// Turns holds the graders of each scripted turn, in order.
	Turns []Unit
	// Whole holds the graders of the test as a whole: a single exchange's,
	// or a conversation's test-level assertions.
	Whole Unit
	// Extras are the graders of the test's own keys (subgoals,
	// expected_tool_calls, the simulated user's fidelity); each gives a
	// score of its own.
	Extras []Planned
	// Judged lists what in the test needs the judge, where it is written.
	Judged []JudgeUse
}

// Unit is the graders of one graded unit; its score is their weighted
// mean.
type Unit struct {
	Graders []Planned
}

// Planned is one grader of a plan.
type Planned struct {
	Name, Type string
	Grader     agenteval.Grader
}

// JudgeUse is something in a test that the judge grades.
type JudgeUse struct {
	What string
	Pos  agenteval.Pos
}

// PlanOptions configure NewPlan. Judge may be nil: options are still
// checked, and Judged says what would need one.
type PlanOptions struct {
	Judge *judge.Judge
	// Dir is the eval file's directory, where relative paths start.
	Dir string
	// Threshold is the test's pass mark, the default of its graders.
	Threshold float64
	// Graders are the definitions the test's typed assertions are looked
	// up in: the caller's choice, such as All with graders of its own
	// appended. Nil means All. What the test's own keys ask for (string
	// assertions and expected_output, subgoals, expected_tool_calls, a
	// simulated user) is graded by the built-in graders whatever the
	// list.
	Graders []*Definition
}

// NewPlan builds a test's graders. A unit's string assertions, its
// expected_output and (when the test has no assertions of its own) the
// test's criteria become one rubrics grader, one judge call; typed
// assertions become their own graders. Every problem is returned, each at
// its place in the eval file. A list of graders that does not pass
// Validate is the one error.
func NewPlan(t *agenteval.Test, opt PlanOptions) (*Plan, []error) {
	b := &planner{t: t, opt: opt, p: &Plan{Test: t}}
	if opt.Graders != nil {
		if err := Validate(opt.Graders); err != nil {
			return b.p, []error{err}
		}
	}
	hasOwn := len(t.Assertions) > 0
	for _, tr := range t.Turns {
		hasOwn = hasOwn || len(tr.Assertions) > 0
	}
	criteria := ""
	if t.Criteria != "" && !hasOwn {
		criteria = t.Criteria
	}
	// As in AgentV, a unit with no assertions of its own is graded by one
	// holistic judge score from the test's criteria and the unit's
	// expected_output; beside assertions, expected_output is only the
	// reference the graders see ({{ expected_output }}).
	switch {
	case t.Mode != agenteval.ModeConversation:
		if len(t.Assertions) == 0 && (t.ExpectedOutput != "" || criteria != "") {
			what := "expected_output"
			if t.ExpectedOutput == "" {
				what = "criteria"
			}
			b.p.Whole = b.holistic(what, t.Pos)
		} else {
			b.p.Whole = b.unit(t.Assertions, t.Pos, "")
		}
	default:
		turnsJudgeCriteria := false
		for _, tr := range t.Turns {
			if len(tr.Assertions) == 0 && tr.ExpectedOutput != "" {
				// The turn's judge also gets the test's criteria.
				b.p.Turns = append(b.p.Turns, b.holistic("expected_output", tr.Pos))
				turnsJudgeCriteria = true
				continue
			}
			b.p.Turns = append(b.p.Turns, b.unit(tr.Assertions, tr.Pos, ""))
		}
		if turnsJudgeCriteria {
			criteria = ""
		}
		b.p.Whole = b.unit(t.Assertions, t.Pos, criteria)
	}
	if len(t.Subgoals) > 0 {
		b.use("subgoals", t.Pos)
		b.extra(Subgoals, SubgoalsOptions{Subgoals: SubgoalList(t.Subgoals)}, nil, t.Pos)
	}
	if len(t.ExpectedToolCalls) > 0 {
		pos := t.ExpectedToolCalls[0].Pos
		if pos.Line == 0 {
			pos = t.Pos
		}
		opts := ExpectedToolCallsOptions{Calls: ExpectedCalls(t.ExpectedToolCalls), Semantics: string(t.Semantics)}
		if callsNeedJudge(t.ExpectedToolCalls) {
			b.use("expected_tool_calls with a check", pos)
		}
		b.extra(ExpectedToolCalls, opts, nil, pos)
	}
	if t.User != nil && opt.Judge != nil {
		// It grades the simulator, not the agent: shown, never counted.
		zero := 0.0
		b.extra(UserFidelity, nil, &zero, t.Pos)
	}
	if t.Skip == "" && !gradesAnything(t) {
		b.errs = append(b.errs, t.Pos.Errorf(nothingToGrade(t)))
	}
	return b.p, b.errs
}

// gradesAnything says whether the test asks for anything to be checked,
// at any level: a test with nothing would pass whatever the agent said, so
// it is refused rather than run. (A test that will not run, Test.Skip,
// needs nothing.) It reads the test, not the plan, so that an assertion
// that failed to build is reported as that, not as nothing to grade.
func gradesAnything(t *agenteval.Test) bool {
	if len(t.Assertions) > 0 || t.ExpectedOutput != "" || t.Criteria != "" || len(t.Subgoals) > 0 || len(t.ExpectedToolCalls) > 0 {
		return true
	}
	for _, tr := range t.Turns {
		if len(tr.Assertions) > 0 || tr.ExpectedOutput != "" {
			return true
		}
	}
	return false
}

// nothingToGrade says what a test with nothing to grade can add.
func nothingToGrade(t *agenteval.Test) string {
	switch {
	case t.User != nil:
		return fmt.Sprintf("test %q has a simulated user but nothing grades the conversation; add subgoals, expected_tool_calls, assertions or criteria", t.ID)
	case t.Mode == agenteval.ModeConversation:
		return fmt.Sprintf("test %q has nothing to grade, so it would pass whatever the agent says; add assertions or expected_output to a turn, or assertions, criteria, subgoals or expected_tool_calls to the test", t.ID)
	}
	return fmt.Sprintf("test %q has nothing to grade, so it would pass whatever the agent says; add assertions, expected_output or criteria (or subgoals, expected_tool_calls)", t.ID)
}

type planner struct {
	t    *agenteval.Test
	opt  PlanOptions
	p    *Plan
	errs []error
}

func (b *planner) use(what string, pos agenteval.Pos) {
	b.p.Judged = append(b.p.Judged, JudgeUse{What: what, Pos: pos})
}

func (b *planner) fail(pos agenteval.Pos, err error) {
	var ue *UnknownGraderError
	if errors.As(err, &ue) {
		msg := fmt.Sprintf("unknown assertion type %q", ue.Type)
		if ue.Suggest != "" {
			msg += fmt.Sprintf("; did you mean %q?", ue.Suggest)
		}
		if b.opt.Graders == nil {
			msg += "; see agenteval score --help for the list"
		} else {
			// The caller's own graders are not in the CLI's help.
			known := slices.Clone(ue.Known)
			slices.Sort(known)
			msg += "; known types: " + strings.Join(known, ", ")
		}
		err = errors.New(msg)
	}
	b.errs = append(b.errs, pos.Errorf(err.Error()))
}

// add builds spec at pos, with the test's threshold unless it has its
// own. d, when set, is the definition to use; otherwise spec.Type is
// looked up in the caller's graders.
func (b *planner) add(spec Spec, d *Definition, pos agenteval.Pos) (Planned, bool) {
	spec.Judge, spec.Dir, spec.Graders = b.opt.Judge, b.opt.Dir, b.opt.Graders
	if spec.Threshold == nil {
		th := b.opt.Threshold
		spec.Threshold = &th
	}
	var g *grader
	var err error
	if d != nil {
		g, err = buildFrom(d, false, spec)
	} else {
		g, err = build(spec)
	}
	if err != nil {
		b.fail(pos, err)
		return Planned{}, false
	}
	name := spec.Name
	if name == "" {
		name = defaultName(spec)
	}
	return Planned{Name: name, Type: spec.Type, Grader: g}, true
}

func (b *planner) extra(d *Definition, options any, weight *float64, pos agenteval.Pos) {
	if pl, ok := b.add(Spec{Type: d.Name, Name: d.Name, Options: options, Weight: weight}, d, pos); ok {
		b.p.Extras = append(b.p.Extras, pl)
	}
}

// holistic is the grader of a unit with no assertions: AgentV's default,
// one judge score from 0 to 1 for how well the reply meets the test's
// criteria, with the unit's expected_output as a guide (llm_grader with
// no prompt of its own). matches_reference is the strict pass/fail
// comparison.
// what names the key that asked for it, for messages about the judge.
func (b *planner) holistic(what string, pos agenteval.Pos) Unit {
	b.use(what, pos)
	var u Unit
	if pl, ok := b.add(Spec{Type: LLMGrader.Name, Name: LLMGrader.Name, Options: LLMGraderOptions{}}, LLMGrader, pos); ok {
		u.Graders = append(u.Graders, pl)
	}
	return u
}

// unit builds the graders of one unit: its string assertions (and the
// criteria, for a conversation as a whole) as one rubrics grader, then
// each typed assertion.
func (b *planner) unit(list []agenteval.AssertionSpec, pos agenteval.Pos, criteria string) Unit {
	var u Unit
	var crits Criteria
	strings := 0
	for _, a := range list {
		if a.Type == "" {
			crits = append(crits, Criterion{Outcome: a.Criterion})
			b.use("string assertions", a.Pos)
			strings++
		}
	}
	if criteria != "" {
		crits = append(crits, Criterion{ID: "criteria", Outcome: criteria})
		b.use("criteria", pos)
	}
	if len(crits) > 0 {
		// The rubric's own threshold is the default: the unit's score, not
		// this grader's verdict, decides the unit.
		// Each string counts as much as a typed assertion beside it, as in
		// AgentV: the rubric weighs as many as it has strings.
		var weight *float64
		if strings > 1 {
			w := float64(strings)
			weight = &w
		}
		g, err := buildFrom(Rubrics, false, Spec{Type: Rubrics.Name, Name: Rubrics.Name, Judge: b.opt.Judge, Dir: b.opt.Dir, Graders: b.opt.Graders, Options: RubricsOptions{Criteria: crits}, Weight: weight})
		if err != nil {
			b.fail(pos, err)
		} else {
			u.Graders = append(u.Graders, Planned{Name: Rubrics.Name, Type: Rubrics.Name, Grader: g})
		}
	}
	for _, a := range list {
		if a.Type == "" {
			continue
		}
		spec := fromAssertion(a)
		pl, ok := b.add(spec, nil, a.Pos)
		if !ok {
			continue
		}
		if pl.Grader.(*grader).needsJudge {
			b.use("a "+a.Type+" assertion", a.Pos)
		}
		u.Graders = append(u.Graders, pl)
	}
	return u
}

// NeedsJudge says what in the plan needs the judge, the first in the
// file; ok is false when nothing does.
func (p *Plan) NeedsJudge() (first JudgeUse, ok bool) {
	for i, u := range p.Judged {
		if i == 0 || u.Pos.Line < first.Pos.Line || (u.Pos.Line == first.Pos.Line && u.Pos.Col < first.Pos.Col) {
			first = u
		}
	}
	return first, len(p.Judged) > 0
}
