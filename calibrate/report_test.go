package calibrate

import (
	"reflect"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/store"
)

func pair(judge, test, crit string, judgePass bool, human agenteval.Verdict) Pair {
	k := store.LabelKey{Suite: "s", TestID: test, Score: "rubrics", Criterion: crit}
	return Pair{Run: "r-" + judge, Judge: judge, Unit: Unit{Key: k, Grader: "rubrics", JudgePass: judgePass},
		Label: store.Label{LabelKey: k, Human: human}}
}

// Criteria are grouped by their text without the position-made id, per
// judge when there are several; a flagged criterion comes first, with the
// labels its judge decided otherwise.
func TestBuild(t *testing.T) {
	pass, fail := agenteval.VerdictPass, agenteval.VerdictFail
	opt := Options{MinKappa: DefaultMinKappa, MaxFalsePass: DefaultMaxFalsePass}
	one := []Pair{
		pair("a", "t1", "criterion-1: Polite.", true, pass),
		pair("a", "t2", "criterion-2: Polite.", true, fail),
		pair("a", "t3", "criterion-1: Polite.", false, fail),
		pair("a", "t1", "criterion-2: Names the time.", true, pass),
		pair("a", "t2", "time: Names the time.", false, fail),
	}
	r := Build([]RunInfo{{ID: "r-a", Judge: "a", Labels: 5}}, one, nil, opt)
	var names []string
	for _, c := range r.ByCriterion {
		names = append(names, c.Criterion+"|"+c.Judge)
	}
	if want := []string{"Polite.|", "Names the time.|", "time: Names the time.|"}; !reflect.DeepEqual(names, want) {
		t.Errorf("criteria %q, want %q", names, want)
	}
	// Polite: PP 1, PF 1, FF 1; κ = (6/9 − 4/9) / (5/9) = 0.4 exactly,
	// not below the bar; the false pass (1 of 2) flags it.
	polite := r.ByCriterion[0]
	if polite.N != 3 || *polite.Kappa != 0.4 || len(polite.Flags) != 1 || len(polite.Disagreements) != 1 || polite.Disagreements[0].TestID != "t2" || r.Flagged != 1 {
		t.Errorf("polite: %+v, flagged %d", polite, r.Flagged)
	}
	if r.Overall.N != 5 || *r.Overall.Agreement != 0.8 || r.Overall.FalsePass.Count != 1 || r.Overall.FalsePass.HumanFail != 3 {
		t.Errorf("overall %+v", r.Overall)
	}
	if r.ByCriterion[1].Disagreements != nil {
		t.Error("an unflagged criterion lists its disagreements")
	}

	two := append(one, pair("b", "t1", "criterion-1: Polite.", true, pass))
	r = Build(nil, two, nil, opt)
	if len(r.ByJudge) != 2 || r.ByJudge[1].Name != "b" || r.ByJudge[1].N != 1 {
		t.Errorf("by judge: %+v", r.ByJudge)
	}
	judges := map[string]int{}
	for _, c := range r.ByCriterion {
		judges[c.Judge]++
	}
	if judges["a"] != 3 || judges["b"] != 1 {
		t.Errorf("criteria per judge: %v", judges)
	}
}
