package grade

import (
	"github.com/agenteval/agenteval/judge"
)

// recordVotes keeps in o's details how the judge's samples voted on each
// decision, when it voted (samples: N): ds are the decisions behind the
// last len(ds) assertions of o, in order.
func recordVotes(o *Outcome, ds []judge.Decision) {
	if len(ds) == 0 || len(ds) > len(o.Assertions) {
		return
	}
	texts := make([]string, len(ds))
	for i, a := range o.Assertions[len(o.Assertions)-len(ds):] {
		texts[i] = a.Text
	}
	votes := judge.VotesOf(texts, ds)
	if votes == nil {
		return
	}
	if o.Details == nil {
		o.Details = map[string]any{}
	}
	o.Details[judge.VotesKey] = votes
}
