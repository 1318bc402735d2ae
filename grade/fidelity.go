package grade

import (
	"context"
	"fmt"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/judge"
)

// UserFidelity grades the simulated user, not the agent.
var UserFidelity = judged(Definition{Name: "user_fidelity",
	Doc: "checks the simulated user, not the agent: it kept to its instruction and persona, stayed the user, and ended the conversation fittingly"}, newUserFidelity)

// newUserFidelity grades a simulated user. Up to 30% of failed τ²-bench
// trajectories were the simulator's fault; this score tells such a failure
// apart from the agent's.
func newUserFidelity(o JudgeOptions, env Env) (Func, error) {
	j, err := judgeFor(env.Judge, o.Samples)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, in *agenteval.GradeInput) (Outcome, error) {
		if in.User == nil || in.Simulation == nil {
			return Outcome{}, &agenteval.MissingFieldError{Grader: "user_fidelity", Field: "a simulated user (user: in the test)"}
		}
		return userFidelity(ctx, j, in)
	}, nil
}

func userFidelity(ctx context.Context, j *judge.Judge, in *agenteval.GradeInput) (Outcome, error) {
	sim := in.Simulation
	crits := []judge.Criterion{
		{ID: "goal", Text: "The user pursued the goal its instruction describes, and did not change the goal or ask for things the instruction does not call for."},
		{ID: "facts", Text: "The user did not invent facts about itself or its situation that contradict the instruction or that the instruction gives no ground for."},
		{ID: "role", Text: "The user acted only as the user: it did not answer for the assistant, solve the task itself, or narrate its own actions."},
	}
	persona := in.User.PersonaText()
	if persona != "" {
		crits = append(crits, judge.Criterion{ID: "persona", Text: "Every user message is written in the manner of the persona."})
	}
	var closing string
	for _, m := range sim.Messages {
		if !m.Sent {
			closing = m.Content
		}
	}
	ending := map[string]string{
		agenteval.EndStopMarker:     "the simulated user said it was done",
		agenteval.EndMaxTurns:       fmt.Sprintf("the turn limit (%d) was reached", sim.Turns),
		agenteval.EndSubgoals:       "the run ended it once every milestone was reached",
		agenteval.EndAgentError:     "the assistant failed with an error",
		agenteval.EndSimulatorError: "the simulated user's model failed",
		agenteval.EndInterrupted:    "the run was interrupted",
	}[sim.EndReason]
	if ending == "" {
		ending = "not recorded"
	}
	if len(sim.Messages) > 0 && sim.Messages[0].Initial {
		ending += ". Note: the first user message was written by the test's author, not by the simulated user; judge the simulated user only on the later ones"
	}
	if sim.EndReason == agenteval.EndStopMarker {
		crits = append(crits, judge.Criterion{ID: "ending", Text: "The user ended the conversation at a fitting point: once its goal was met, or once it was clear the assistant could not meet it; not before."})
	}
	ds, usage, err := j.Decide(ctx, "user_fidelity", map[string]any{
		"Instruction": in.User.Instruction, "Persona": persona, "Transcript": in.Output,
		"Closing": closing, "Ending": ending,
	}, crits)
	o := Outcome{Usage: &usage}
	if err != nil {
		return o, err
	}
	passed := 0
	var failed []string
	for _, d := range ds {
		a := agenteval.Assertion{Text: d.Criterion.Text, Passed: d.Passed, Evidence: d.Evidence()}
		if d.Passed {
			passed++
		} else {
			failed = append(failed, d.Criterion.ID)
		}
		o.Assertions = append(o.Assertions, a)
	}
	recordVotes(&o, ds)
	o.Score = fraction(passed, len(ds))
	if len(failed) == 0 {
		o.Reason = "the simulated user kept to its instruction and persona"
	} else {
		o.Reason = "the simulated user strayed (" + strings.Join(failed, ", ") + "); a failure of this test may be the simulator's, not the agent's"
	}
	return o, nil
}
