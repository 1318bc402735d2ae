package run

import (
	"context"
	"sync"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/grade"
)

// Extras are the graders a test's own keys ask for, beside its assertions:
// subgoals, expected_tool_calls and, for a simulated user, user_fidelity.
// Each gives a score of its own in scores[], named after it.

func (r *suiteRunner) planExtras(t *agenteval.Test) ([]namedGrader, error) {
	var specs []grade.Spec
	if len(t.Subgoals) > 0 {
		specs = append(specs, grade.Spec{Type: "subgoals", Name: "subgoals", Params: grade.SubgoalParams(t.Subgoals)})
	}
	if len(t.ExpectedToolCalls) > 0 {
		calls := make([]any, len(t.ExpectedToolCalls))
		for i, c := range t.ExpectedToolCalls {
			calls[i] = c
		}
		specs = append(specs, grade.Spec{Type: "expected_tool_calls", Name: "expected_tool_calls", Params: map[string]any{"calls": calls}})
	}
	if t.User != nil && r.opt.Judge != nil {
		// It grades the simulator, not the agent: shown, never counted.
		zero := 0.0
		specs = append(specs, grade.Spec{Type: "user_fidelity", Name: "user_fidelity", Weight: &zero})
	}
	var out []namedGrader
	for _, spec := range specs {
		spec.Judge, spec.Dir = r.opt.Judge, r.dir
		th := r.threshold(t)
		spec.Threshold = &th
		g, err := grade.New(spec)
		if err != nil {
			return nil, t.Pos.Errorf(err.Error())
		}
		out = append(out, namedGrader{spec.Name, spec.Type, g})
	}
	return out, nil
}

// startTrackers starts, for one conversation, the trackers of the extras
// that follow a conversation as it happens (nil for the others).
func startTrackers(extras []namedGrader) []grade.Tracker {
	var out []grade.Tracker
	for _, g := range extras {
		var tr grade.Tracker
		if tg, ok := g.grader.(grade.Trackable); ok {
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
func (r *suiteRunner) gradeExtras(ctx context.Context, extras []namedGrader, trackers []grade.Tracker, in *agenteval.GradeInput) []agenteval.Score {
	out := make([]agenteval.Score, len(extras))
	var wg sync.WaitGroup
	for i, g := range extras {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var s agenteval.Score
			var err error
			if i < len(trackers) && trackers[i] != nil {
				s, err = trackers[i].Grade(ctx, in)
			} else {
				s, err = g.grader.Grade(ctx, in)
			}
			if err != nil && s.Verdict != agenteval.VerdictError {
				s = grade.ErrorScore(g.grader, err)
			}
			if s.Name == "" {
				s.Name, s.Type = g.name, g.typ
			}
			r.fatalFrom(err)
			out[i] = s
		}()
	}
	wg.Wait()
	return out
}
