package judge

// VotesKey is the key of a score's details under which a grader whose
// judge voted (samples: N) records how the samples voted on each
// criterion: a list of Vote. The reports and agenteval calibrate read it
// to show how often the samples agreed, so that a criterion the judge
// cannot decide shows before anyone labels it.
const VotesKey = "self_consistency"

// Vote is how the samples voted on one criterion.
type Vote struct {
	// Criterion is the text of the criterion's assertion in the result.
	Criterion string `json:"criterion"`
	PassVotes int    `json:"pass_votes"`
	Samples   int    `json:"samples"`
}

// VotesOf lists the votes behind decisions, each under the assertion text
// the result shows for it (texts[i] for ds[i]); nil when no decision was
// voted on by more than one sample.
func VotesOf(texts []string, ds []Decision) []Vote {
	voted := false
	for _, d := range ds {
		voted = voted || d.Samples > 1
	}
	if !voted || len(texts) != len(ds) {
		return nil
	}
	out := make([]Vote, len(ds))
	for i, d := range ds {
		out[i] = Vote{Criterion: texts[i], PassVotes: d.PassVotes, Samples: d.Samples}
	}
	return out
}
