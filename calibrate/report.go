package calibrate

import (
	"fmt"
	"math"
	"regexp"
	"sort"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/store"
)

// The default thresholds of a criterion too vague to judge: κ below 0.4
// is at best "fair" agreement on Landis and Koch's scale, and a judge
// that passes more than one in five of what people fail lets regressions
// ship green.
const (
	DefaultMinKappa     = 0.4
	DefaultMaxFalsePass = 0.2
)

// Options set the thresholds that flag a criterion.
type Options struct {
	// MinKappa flags a criterion whose κ is below it.
	MinKappa float64
	// MaxFalsePass flags a criterion whose false-pass rate is above it.
	MaxFalsePass float64
}

// Pair is one label with the verdict the run gave its criterion.
type Pair struct {
	// Run is the id of the run judged; Judge, its judge model.
	Run, Judge string
	Unit       Unit
	Label      store.Label
}

// Stats is how a judge agreed with people over a set of labels.
type Stats struct {
	N int `json:"n"`
	// Agreement is the share decided alike; nil without labels. The
	// shares, κ and the interval are rounded to six decimals.
	Agreement *float64 `json:"agreement"`
	// Kappa is Cohen's κ; nil where it is undefined (see Counts.Kappa).
	Kappa     *float64  `json:"kappa"`
	Confusion Counts    `json:"confusion"`
	FalsePass FalsePass `json:"false_pass"`
	// SelfConsistency is the mean share of the judge's samples that voted
	// with the majority, over the labelled criteria judged by a vote
	// (samples: N); nil when none was.
	SelfConsistency *float64 `json:"self_consistency,omitempty"`
}

// FalsePass is how often the judge passed what the human failed.
type FalsePass struct {
	// Count criteria were passed by the judge of HumanFail the human
	// failed; Rate is Count / HumanFail, nil when HumanFail is 0.
	Count     int      `json:"count"`
	HumanFail int      `json:"human_fail"`
	Rate      *float64 `json:"rate"`
	// CI95 is the rate's 95% Wilson interval.
	CI95 *[2]float64 `json:"ci95"`
}

// Group is the stats of the labels of one judge model or grader type.
type Group struct {
	Name string `json:"name"`
	Stats
}

// Criterion is the stats of one criterion, over the tests that share it.
type Criterion struct {
	// Criterion is its text, without the position-made id
	// ("criterion-2: ") that the same criterion has under other numbers
	// in other tests.
	Criterion string `json:"criterion"`
	Grader    string `json:"grader"`
	// Judge is set when the runs compared had several judges: each
	// criterion is then counted per judge.
	Judge string `json:"judge,omitempty"`
	Stats
	// Flags say why the criterion is too vague to judge; empty when it
	// is not.
	Flags []string `json:"flags,omitempty"`
	// Disagreements are its labels the judge decided otherwise, listed
	// for flagged criteria.
	Disagreements []Example `json:"disagreements,omitempty"`
}

// Example is one criterion where the judge and the human disagreed.
type Example struct {
	Run       string            `json:"run"`
	Suite     string            `json:"suite,omitempty"`
	TestID    string            `json:"test_id"`
	Target    string            `json:"target,omitempty"`
	Trial     int               `json:"trial,omitempty"`
	Score     string            `json:"score"`
	Criterion string            `json:"criterion"`
	Judge     agenteval.Verdict `json:"judge"`
	Human     agenteval.Verdict `json:"human"`
	// Evidence is the judge's reason; Note the labeller's.
	Evidence string `json:"evidence,omitempty"`
	Note     string `json:"note,omitempty"`
	Labeller string `json:"labeller,omitempty"`
}

// RunInfo is one run compared.
type RunInfo struct {
	ID    string `json:"id"`
	Judge string `json:"judge"`
	// Labels is how many labels matched a criterion of the run.
	Labels int `json:"labels"`
	// LabelsFrom is the run whose labels were used, when not its own.
	LabelsFrom string `json:"labels_from,omitempty"`
}

// Report is a calibration: overall, per judge model, per grader type and
// per criterion.
type Report struct {
	Runs        []RunInfo   `json:"runs"`
	Overall     Stats       `json:"overall"`
	ByJudge     []Group     `json:"by_judge"`
	ByGrader    []Group     `json:"by_grader"`
	ByCriterion []Criterion `json:"by_criterion"`
	// Flagged counts the criteria too vague to judge.
	Flagged    int     `json:"flagged"`
	Thresholds Options `json:"thresholds"`
	// Unmatched are labels whose criterion the run does not have (labels
	// of another run, whose tests changed).
	Unmatched []store.Label `json:"unmatched,omitempty"`
}

// MarshalJSON names the thresholds as the flags that set them.
func (o Options) MarshalJSON() ([]byte, error) {
	return fmt.Appendf(nil, `{"min_kappa":%v,"max_false_pass":%v}`, o.MinKappa, o.MaxFalsePass), nil
}

// positional is the id a rubric gives a criterion from its place.
var positional = regexp.MustCompile(`^criterion-[0-9]+: `)

// CriterionName is a criterion as calibrate groups it: its text without a
// position-made id.
func CriterionName(text string) string { return positional.ReplaceAllString(text, "") }

type acc struct {
	c                 Counts
	consSum           float64
	consN             int
	disagree          []Example
	name, kind, judge string
}

func (a *acc) add(p Pair) {
	a.c.Add(p.Unit.JudgePass, p.Label.Human == agenteval.VerdictPass)
	if p.Unit.Samples > 0 {
		a.consSum += p.Unit.Agreement
		a.consN++
	}
}

// round6 keeps six decimals: more than any reader needs, and few enough
// that κ = 1/4 reads 0.25, not 0.24999999999999986.
func round6(v float64) *float64 {
	r := math.Round(v*1e6) / 1e6
	return &r
}

func (a *acc) stats() Stats {
	s := Stats{N: a.c.N(), Confusion: a.c}
	if v, ok := a.c.Agreement(); ok {
		s.Agreement = round6(v)
	}
	if v, ok := a.c.Kappa(); ok {
		s.Kappa = round6(v)
	}
	s.FalsePass = FalsePass{Count: a.c.PassFail, HumanFail: a.c.HumanFail()}
	if v, ok := a.c.FalsePassRate(); ok {
		lo, hi := Wilson(a.c.PassFail, a.c.HumanFail(), Z95)
		s.FalsePass.Rate, s.FalsePass.CI95 = round6(v), &[2]float64{*round6(lo), *round6(hi)}
	}
	if a.consN > 0 {
		s.SelfConsistency = round6(a.consSum / float64(a.consN))
	}
	return s
}

func verdict(pass bool) agenteval.Verdict {
	if pass {
		return agenteval.VerdictPass
	}
	return agenteval.VerdictFail
}

// Build compares the pairs' judge verdicts with their labels.
func Build(runs []RunInfo, pairs []Pair, unmatched []store.Label, opt Options) *Report {
	r := &Report{Runs: runs, Thresholds: opt, Unmatched: unmatched}
	var all acc
	judges, graders, crits := map[string]*acc{}, map[string]*acc{}, map[[3]string]*acc{}
	several := false
	for _, p := range pairs {
		several = several || p.Judge != pairs[0].Judge
	}
	get := func(m map[string]*acc, k string) *acc {
		if m[k] == nil {
			m[k] = &acc{name: k}
		}
		return m[k]
	}
	for _, p := range pairs {
		all.add(p)
		get(judges, p.Judge).add(p)
		get(graders, p.Unit.Grader).add(p)
		ck := [3]string{p.Unit.Grader, CriterionName(p.Unit.Key.Criterion), ""}
		if several {
			ck[2] = p.Judge
		}
		c := crits[ck]
		if c == nil {
			c = &acc{kind: ck[0], name: ck[1], judge: ck[2]}
			crits[ck] = c
		}
		c.add(p)
		if judge, human := verdict(p.Unit.JudgePass), p.Label.Human; judge != human {
			k := p.Unit.Key
			c.disagree = append(c.disagree, Example{Run: p.Run, Suite: k.Suite, TestID: k.TestID, Target: k.Target, Trial: k.Trial,
				Score: k.Score, Criterion: k.Criterion, Judge: judge, Human: human, Evidence: p.Unit.Evidence, Note: p.Label.Note, Labeller: p.Label.Labeller})
		}
	}
	r.Overall = all.stats()
	r.ByJudge = groups(judges)
	r.ByGrader = groups(graders)
	for _, a := range crits {
		c := Criterion{Criterion: a.name, Grader: a.kind, Judge: a.judge, Stats: a.stats()}
		if c.Kappa != nil && *c.Kappa < opt.MinKappa-1e-12 {
			c.Flags = append(c.Flags, fmt.Sprintf("κ %.2f is below %.2f", *c.Kappa, opt.MinKappa))
		}
		if c.FalsePass.Rate != nil && *c.FalsePass.Rate > opt.MaxFalsePass+1e-12 {
			c.Flags = append(c.Flags, fmt.Sprintf("false-pass rate %.2f (%d of %d) is above %.2f", *c.FalsePass.Rate, c.FalsePass.Count, c.FalsePass.HumanFail, opt.MaxFalsePass))
		}
		if len(c.Flags) > 0 {
			r.Flagged++
			c.Disagreements = a.disagree
		}
		r.ByCriterion = append(r.ByCriterion, c)
	}
	sort.SliceStable(r.ByCriterion, func(i, j int) bool {
		a, b := r.ByCriterion[i], r.ByCriterion[j]
		if (len(a.Flags) > 0) != (len(b.Flags) > 0) {
			return len(a.Flags) > 0
		}
		if a.Criterion != b.Criterion {
			return a.Criterion < b.Criterion
		}
		if a.Grader != b.Grader {
			return a.Grader < b.Grader
		}
		return a.Judge < b.Judge
	})
	return r
}

func groups(m map[string]*acc) []Group {
	out := make([]Group, 0, len(m))
	for k, a := range m {
		out = append(out, Group{Name: k, Stats: a.stats()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
