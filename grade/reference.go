package grade

import (
	"context"
	"errors"

	"github.com/agenteval/agenteval"
)

// MatchesReference is the strict comparison with a reference answer: one
// pass/fail decision that the reply gives the same facts, recommendations
// and decisions as expected_output, and a second that it meets the test's
// criteria when it has any; the score is the share that pass. It was how
// agenteval judged expected_output before it took AgentV's holistic
// default (see holisticGrader), and it stays for suites that want
// agreement in substance rather than a score with the reference as a
// guide.
var MatchesReference = judged(Definition{Name: "matches_reference", Aliases: []string{"reference_match"},
	Doc: "the judge decides, pass or fail, that the reply gives the same facts, recommendations and decisions as expected_output, and that it meets the test's criteria if any; score = share passed"}, newMatchesReference)

// MatchesReferenceOptions configures matches_reference.
type MatchesReferenceOptions struct {
	Samples int `json:"samples" doc:"judge votes per decision, an odd number (default 1)"`
}

// referenceCriterion is how matches_reference judges a reference answer.
const referenceCriterion = "The reply agrees in substance with the reference answer: it gives the same facts, recommendations and decisions (wording may differ)."

func newMatchesReference(o MatchesReferenceOptions, env Env) (Func, error) {
	ref := Criterion{ID: "expected_output", Outcome: referenceCriterion}
	alone, err := newRubrics(RubricsOptions{Criteria: Criteria{ref}, Samples: o.Samples}, env)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, in *agenteval.GradeInput) (Outcome, error) {
		if in.Reference == "" {
			return Outcome{}, errors.New("matches_reference needs a reference answer: give the test (or the turn) an expected_output")
		}
		if in.Criteria == "" {
			return alone(ctx, in)
		}
		// The criteria are the test's, known only now: one judge call
		// decides both.
		both, err := newRubrics(RubricsOptions{Criteria: Criteria{ref, {ID: "criteria", Outcome: in.Criteria}}, Samples: o.Samples}, env)
		if err != nil {
			return Outcome{}, err
		}
		return both(ctx, in)
	}, nil
}
