package run

import (
	"context"
	"sync"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/grade"
)

// Extras are the graders a test's own keys ask for, beside its assertions:
// subgoals, expected_tool_calls and, for a simulated user, user_fidelity
// (grade.Plan lists them). Each gives a score of its own in scores[],
// named after it.

// startTrackers starts, for one conversation, the trackers of the extras
// that follow a conversation as it happens (nil for the others).
func startTrackers(extras []grade.Planned) []grade.Tracker {
	var out []grade.Tracker
	for _, g := range extras {
		var tr grade.Tracker
		if tg, ok := g.Grader.(grade.Trackable); ok {
			tr = tg.Track()
		}
		out = append(out, tr)
	}
	return out
}

// observe tells the trackers that turn in.Turn is over.
func observe(ctx context.Context, trackers []grade.Tracker, in *agenteval.GradeInput) {
	for _, tr := range trackers {
		if tr != nil {
			tr.Observe(ctx, in)
		}
	}
}

// gradeExtras scores the extras side by side.
func (r *suiteRunner) gradeExtras(ctx context.Context, extras []grade.Planned, trackers []grade.Tracker, in *agenteval.GradeInput) []agenteval.Score {
	out := make([]agenteval.Score, len(extras))
	var wg sync.WaitGroup
	for i, g := range extras {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var gr agenteval.Grader = g.Grader
			if i < len(trackers) && trackers[i] != nil {
				gr = trackers[i]
			}
			s, err := grade.Run(ctx, gr, g.Name, g.Type, in)
			r.fatalFrom(err)
			out[i] = s
		}()
	}
	wg.Wait()
	return out
}
