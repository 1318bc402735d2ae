package report

import (
	"encoding/json"
	"math"
	"regexp"
	"sort"

	"github.com/agenteval/agenteval"
)

// votesKey is the key of a score's details under which a judge that voted
// (samples: N) records how its samples voted on each criterion: a list of
// {criterion, pass_votes, samples} (package judge writes it).
const votesKey = "self_consistency"

// Consistency is how often a voting judge's samples agreed over a run, per
// criterion: what the HTML report shows, so that a criterion the judge
// cannot make up its mind about shows before anyone labels it.
type Consistency struct {
	// Agreement is the mean share of samples that voted with the
	// majority, over every voted decision; Split counts the decisions
	// whose samples did not all agree, of Decisions.
	Agreement float64 `json:"agreement"`
	Decisions int     `json:"decisions"`
	Split     int     `json:"split"`
	// Criteria are the criteria, least consistent first.
	Criteria []CriterionConsistency `json:"criteria"`
}

// CriterionConsistency is one criterion's votes over a run, across the
// tests that share it.
type CriterionConsistency struct {
	Criterion string  `json:"criterion"`
	Agreement float64 `json:"agreement"`
	Decisions int     `json:"decisions"`
	Split     int     `json:"split"`
}

// positionalID is the id a rubric gives a criterion from its place, which
// the same criterion has under other numbers in other tests.
var positionalID = regexp.MustCompile(`^criterion-[0-9]+: `)

// consistencyAcc gathers the votes of a run as its results are written.
type consistencyAcc struct {
	sum   float64
	n     int
	split int
	crit  map[string]*CriterionConsistency
	order []string
}

type vote struct {
	Criterion string `json:"criterion"`
	PassVotes int    `json:"pass_votes"`
	Samples   int    `json:"samples"`
}

// add counts the votes of a result's scores, every trial's too.
func (a *consistencyAcc) add(r *agenteval.Result) {
	var walk func([]agenteval.Score)
	walk = func(ss []agenteval.Score) {
		for _, s := range ss {
			if raw, ok := s.Details[votesKey]; ok {
				a.addVotes(raw)
			}
			walk(s.Scores)
		}
	}
	if len(r.Trials) == 0 {
		walk(r.Scores)
	}
	for _, t := range r.Trials {
		walk(t.Scores)
	}
}

func (a *consistencyAcc) addVotes(raw any) {
	b, err := json.Marshal(raw)
	if err != nil {
		return
	}
	var vs []vote
	if json.Unmarshal(b, &vs) != nil {
		return
	}
	for _, v := range vs {
		if v.Samples < 2 {
			continue
		}
		agree := float64(max(v.PassVotes, v.Samples-v.PassVotes)) / float64(v.Samples)
		split := 0
		if v.PassVotes != 0 && v.PassVotes != v.Samples {
			split = 1
		}
		a.sum += agree
		a.n++
		a.split += split
		name := positionalID.ReplaceAllString(v.Criterion, "")
		if a.crit == nil {
			a.crit = map[string]*CriterionConsistency{}
		}
		c := a.crit[name]
		if c == nil {
			c = &CriterionConsistency{Criterion: name}
			a.crit[name] = c
			a.order = append(a.order, name)
		}
		// Agreement holds the running sum until result.
		c.Agreement += agree
		c.Decisions++
		c.Split += split
	}
}

// result is the run's consistency, nil when its judge never voted.
func (a *consistencyAcc) result() *Consistency {
	if a.n == 0 {
		return nil
	}
	c := &Consistency{Agreement: round6(a.sum / float64(a.n)), Decisions: a.n, Split: a.split}
	for _, name := range a.order {
		cc := *a.crit[name]
		cc.Agreement = round6(cc.Agreement / float64(cc.Decisions))
		c.Criteria = append(c.Criteria, cc)
	}
	sort.SliceStable(c.Criteria, func(i, j int) bool { return c.Criteria[i].Agreement < c.Criteria[j].Agreement })
	return c
}

// round6 keeps six decimals, so that 3/4 reads 0.75 in the page's data.
func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }
