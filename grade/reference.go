package grade

import (
	"context"
	"errors"

	"github.com/agenteval/agenteval"
)

// MatchesReference is the strict comparison with a reference answer: one
// pass/fail decision that the reply gives the same facts, recommendations
// and decisions as expected_output. It was how agenteval judged
// expected_output before it took AgentV's holistic default (an
// llm_grader score with the reference as a guide), and it stays for
// suites that want agreement in substance rather than a score. The test's
// criteria are not part of it: add them as string assertions beside it,
// which the same judge call decides.
var MatchesReference = judged(Definition{Name: "matches_reference", Aliases: []string{"reference_match"},
	Doc: "the judge decides, pass or fail, that the reply gives the same facts, recommendations and decisions as expected_output (wording may differ)"}, newMatchesReference)

// MatchesReferenceOptions configures matches_reference.
type MatchesReferenceOptions struct {
	Samples int `json:"samples" doc:"judge votes per decision, an odd number (default 1)"`
}

// referenceCriterion is how matches_reference judges a reference answer.
const referenceCriterion = "The reply agrees in substance with the reference answer: it gives the same facts, recommendations and decisions (wording may differ)."

func newMatchesReference(o MatchesReferenceOptions, env Env) (Func, error) {
	rubric, err := newRubrics(RubricsOptions{Criteria: Criteria{{ID: "expected_output", Outcome: referenceCriterion}}, Samples: o.Samples}, env)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, in *agenteval.GradeInput) (Outcome, error) {
		if in.Reference == "" {
			return Outcome{}, errors.New("matches_reference needs a reference answer: give the test (or the turn) an expected_output")
		}
		return rubric(ctx, in)
	}, nil
}
