package calibrate

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/suggest"
	"github.com/agenteval/agenteval/store"
)

// A Unit is one graded criterion of a result: what a label labels. Its
// key has no run id.
type Unit struct {
	Key store.LabelKey
	// Grader is the type of the score that holds the criterion.
	Grader string
	// JudgePass is the verdict the run gave the criterion.
	JudgePass bool
	// Evidence is the reason the run gave.
	Evidence string
	// Agreement is the share of the judge's samples that voted with the
	// majority, when it voted (samples: N); Samples is N, 0 without a
	// vote.
	Agreement float64
	Samples   int
}

// Units lists the graded criteria of a result: every assertion of every
// score, nested ones too, per trial when the result has trials.
func Units(r *agenteval.Result) []Unit {
	var out []Unit
	add := func(trial int, scores []agenteval.Score) {
		var walk func(prefix string, ss []agenteval.Score)
		walk = func(prefix string, ss []agenteval.Score) {
			for _, s := range ss {
				name := prefix + s.Name
				votes := Votes(s.Details)
				for _, a := range s.Assertions {
					u := Unit{Key: store.LabelKey{Suite: r.Suite, TestID: r.TestID, Target: r.Target, Trial: trial, Score: name, Criterion: a.Text},
						Grader: s.Type, JudgePass: a.Passed, Evidence: a.Evidence}
					if v, ok := votes[a.Text]; ok && v.Samples > 0 {
						u.Samples, u.Agreement = v.Samples, v.Agreement()
					}
					out = append(out, u)
				}
				walk(name+"/", s.Scores)
			}
		}
		walk("", scores)
	}
	if len(r.Trials) == 0 {
		add(0, r.Scores)
	}
	for _, t := range r.Trials {
		add(t.Trial, t.Scores)
	}
	return out
}

// Row is a label as a file gives it: the result's keys, with trial and
// suite optional, and the criterion by its id or its text.
type Row struct {
	Suite     string
	TestID    string
	Target    string
	Trial     int
	Score     string
	Criterion string
}

// Index finds the graded criteria of one run, for labels.
type Index struct {
	units   map[store.LabelKey]*Unit
	results []*resultUnits
	byTest  map[string][]*resultUnits
}

type resultUnits struct {
	suite, test, target string
	trials              int
	units               []Unit
}

// NewIndex makes an empty index; Add fills it.
func NewIndex() *Index {
	return &Index{units: map[store.LabelKey]*Unit{}, byTest: map[string][]*resultUnits{}}
}

// Add indexes a result's criteria.
func (x *Index) Add(r *agenteval.Result) {
	ru := &resultUnits{suite: r.Suite, test: r.TestID, target: r.Target, trials: len(r.Trials), units: Units(r)}
	x.results = append(x.results, ru)
	x.byTest[r.TestID] = append(x.byTest[r.TestID], ru)
	for i := range ru.units {
		u := &ru.units[i]
		if _, dup := x.units[u.Key]; !dup {
			x.units[u.Key] = u
		}
	}
}

// Unit is the criterion with exactly this key (its RunID is ignored).
func (x *Index) Unit(k store.LabelKey) (*Unit, bool) {
	k.RunID = ""
	u, ok := x.units[k]
	return u, ok
}

// Resolve finds the criterion a row names, or says what in the row is
// wrong, with the nearest name where one is near. The criterion may be
// given as the assertion's whole text, as its id (the part before ": "
// of a rubric's "id: outcome"), or as the text after the id.
func (x *Index) Resolve(row Row) (*Unit, error) {
	cands := x.byTest[row.TestID]
	if len(cands) == 0 {
		return nil, fmt.Errorf("no test %q in the run%s", row.TestID, didYouMean(row.TestID, x.testIDs()))
	}
	if row.Suite != "" {
		var in []*resultUnits
		for _, c := range cands {
			if c.suite == row.Suite {
				in = append(in, c)
			}
		}
		if len(in) == 0 {
			suites := uniq(cands, func(c *resultUnits) string { return c.suite })
			hint := didYouMean(row.Suite, suites)
			if hint == "" {
				hint = "; it is in " + strings.Join(quoteAll(suites), ", ")
			}
			return nil, fmt.Errorf("test %q is not in suite %q%s", row.TestID, row.Suite, hint)
		}
		cands = in
	}
	if row.Target != "" || len(uniq(cands, func(c *resultUnits) string { return c.target })) > 1 {
		var in []*resultUnits
		for _, c := range cands {
			if c.target == row.Target {
				in = append(in, c)
			}
		}
		if len(in) == 0 {
			targets := uniq(cands, func(c *resultUnits) string { return c.target })
			if row.Target == "" {
				return nil, fmt.Errorf("test %q ran against %s: give the target", row.TestID, strings.Join(quoteAll(targets), ", "))
			}
			return nil, fmt.Errorf("test %q did not run against target %q%s", row.TestID, row.Target, didYouMean(row.Target, targets))
		}
		cands = in
	}
	if len(cands) > 1 {
		return nil, fmt.Errorf("test %q is in suites %s: give the suite", row.TestID, strings.Join(quoteAll(uniq(cands, func(c *resultUnits) string { return c.suite })), ", "))
	}
	ru := cands[0]
	switch {
	case ru.trials > 0 && row.Trial == 0:
		return nil, fmt.Errorf("test %q ran %d trials: give the trial (1 to %d)", row.TestID, ru.trials, ru.trials)
	case ru.trials == 0 && row.Trial != 0:
		return nil, fmt.Errorf("test %q ran no trials: leave trial out", row.TestID)
	case row.Trial < 0 || row.Trial > ru.trials:
		return nil, fmt.Errorf("test %q has no trial %d (it ran %d)", row.TestID, row.Trial, ru.trials)
	}
	var inTrial []*Unit
	for i := range ru.units {
		if ru.units[i].Key.Trial == row.Trial {
			inTrial = append(inTrial, &ru.units[i])
		}
	}
	// The score: its full name, or a nested score's own name when no
	// other score has it.
	score := ""
	var names []string
	leaf := map[string][]string{}
	for _, u := range inTrial {
		if n := u.Key.Score; !contains(names, n) {
			names = append(names, n)
			l := n[strings.LastIndexByte(n, '/')+1:]
			leaf[l] = append(leaf[l], n)
		}
	}
	switch {
	case contains(names, row.Score):
		score = row.Score
	case len(leaf[row.Score]) == 1:
		score = leaf[row.Score][0]
	case len(leaf[row.Score]) > 1:
		return nil, fmt.Errorf("test %q has several scores named %q: give the whole name, one of %s", row.TestID, row.Score, strings.Join(quoteAll(leaf[row.Score]), ", "))
	case len(names) == 0:
		return nil, fmt.Errorf("test %q has no graded criteria to label", row.TestID)
	default:
		return nil, fmt.Errorf("test %q has no score %q with criteria; its scores are %s%s", row.TestID, row.Score, strings.Join(quoteAll(names), ", "), didYouMean(row.Score, names))
	}
	var exact, byID, byText []*Unit
	var texts []string
	for _, u := range inTrial {
		if u.Key.Score != score {
			continue
		}
		t := u.Key.Criterion
		texts = append(texts, t)
		id, rest, hasID := strings.Cut(t, ": ")
		switch {
		case t == row.Criterion:
			exact = append(exact, u)
		case hasID && id == row.Criterion:
			byID = append(byID, u)
		case hasID && rest == row.Criterion:
			byText = append(byText, u)
		}
	}
	for _, found := range [][]*Unit{exact, byID, byText} {
		switch len(found) {
		case 0:
			continue
		case 1:
			return found[0], nil
		}
		return nil, fmt.Errorf("criterion %q names %d criteria of score %q of test %q: give its whole text", row.Criterion, len(found), score, row.TestID)
	}
	var ids []string
	for _, t := range texts {
		if id, _, ok := strings.Cut(t, ": "); ok {
			ids = append(ids, id)
		}
	}
	hint := didYouMean(row.Criterion, append(ids, texts...))
	if hint == "" {
		hint = "; its criteria are " + strings.Join(quoteAll(clip(texts, 5)), ", ")
	}
	return nil, fmt.Errorf("score %q of test %q has no criterion %q%s", score, row.TestID, row.Criterion, hint)
}

func (x *Index) testIDs() []string {
	out := make([]string, 0, len(x.byTest))
	for id := range x.byTest {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

func didYouMean(word string, known []string) string {
	if c := suggest.Closest(word, known); c != "" {
		return fmt.Sprintf("; did you mean %q?", c)
	}
	return ""
}

func uniq(cs []*resultUnits, f func(*resultUnits) string) []string {
	var out []string
	for _, c := range cs {
		if v := f(c); !contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

func clip(ss []string, n int) []string {
	if len(ss) <= n {
		return ss
	}
	return append(ss[:n:n], "…")
}
