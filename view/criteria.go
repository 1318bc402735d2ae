package view

import (
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/store"
)

// criterion is one judged criterion of a result, as a person labels it:
// its key (without the run) and what the judge decided.
type criterion struct {
	store.LabelKey
	// Path is the score's names from the top; Index is the assertion's
	// position in that score. The page finds the criterion's line by them
	// (and checks the text).
	Path  []string `json:"path"`
	Index int      `json:"index"`
	// Type is the grader's type (rubrics, llm_grader, …).
	Type string `json:"type,omitempty"`
	// Judge is the judge's verdict on the criterion: pass or fail.
	Judge    agenteval.Verdict `json:"judge"`
	Evidence string            `json:"evidence,omitempty"`
}

// scoreSep joins a nested score's names, as store.LabelKey.Score does.
const scoreSep = "/"

// judgedCriteria lists the criteria of a result that a judge decided: the
// assertions of each score that used judge calls (cached or not) and
// holds no nested scores, with a verdict of pass or fail (a judge that
// failed to answer decided nothing). A result of several trials lists each
// trial's, by trial number; otherwise the trial is 0.
func judgedCriteria(r *agenteval.Result) []criterion {
	var out []criterion
	base := store.LabelKey{Suite: r.Suite, TestID: r.TestID, Target: r.Target}
	var walk func(key store.LabelKey, path []string, ss []agenteval.Score)
	walk = func(key store.LabelKey, path []string, ss []agenteval.Score) {
		for _, s := range ss {
			p := append(append([]string(nil), path...), s.Name)
			if len(s.Scores) > 0 {
				walk(key, p, s.Scores)
				continue
			}
			if !judgedScore(&s) {
				continue
			}
			for i, a := range s.Assertions {
				k := key
				k.Score = strings.Join(p, scoreSep)
				k.Criterion = a.Text
				judge := agenteval.VerdictFail
				if a.Passed {
					judge = agenteval.VerdictPass
				}
				out = append(out, criterion{LabelKey: k, Path: p, Index: i, Type: s.Type, Judge: judge, Evidence: a.Evidence})
			}
		}
	}
	if len(r.Trials) > 1 {
		for _, t := range r.Trials {
			k := base
			k.Trial = t.Trial
			walk(k, nil, t.Scores)
		}
		return out
	}
	walk(base, nil, r.Scores)
	return out
}

// judgedScore reports whether a judge made the score: it used judge
// calls, cached or not, and came to a verdict.
func judgedScore(s *agenteval.Score) bool {
	if s.Usage == nil || s.Usage.Calls+s.Usage.CachedCalls == 0 {
		return false
	}
	return s.Verdict == agenteval.VerdictPass || s.Verdict == agenteval.VerdictFail
}

// testKey names a result within a run.
type testKey struct{ suite, test, target string }

func keyOf(k store.LabelKey) testKey { return testKey{k.Suite, k.TestID, k.Target} }

// critKey names a criterion within a run.
type critKey struct {
	testKey
	trial            int
	score, criterion string
}

func critKeyOf(k store.LabelKey) critKey {
	return critKey{keyOf(k), k.Trial, k.Score, k.Criterion}
}
