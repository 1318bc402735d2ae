package run

import (
	"context"
	"fmt"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/grade"
	"github.com/agenteval/agenteval/simulate"
)

// simulatedUser builds the user that drives a test: its own user.model,
// else the run's simulator, else the judge's model.
func (r *suiteRunner) simulatedUser(t *agenteval.Test) (*simulate.User, error) {
	u := &simulate.User{Spec: *t.User}
	switch {
	case t.User.Model != "":
		m, err := r.openModel(t.User.Model)
		if err != nil {
			return nil, err
		}
		u.Model, u.Name = m, t.User.Model
	case r.opt.Simulator != nil:
		u.Model, u.Name = r.opt.Simulator, r.opt.SimulatorName
	case r.opt.Judge != nil:
		u.Model, u.Name = r.opt.Judge.Model, r.opt.Judge.Name
	default:
		return nil, fmt.Errorf("test %q has a simulated user (user:) and no model to play it; pass --simulator provider:model or --judge, or set user.model", t.ID)
	}
	if u.Name == "" {
		u.Name = fmt.Sprintf("unnamed %T", u.Model)
	}
	return u, nil
}

// openModel opens a user.model once per spec; a spec that fails to open
// fails every test that names it with the same error.
func (r *suiteRunner) openModel(spec string) (agenteval.Model, error) {
	if r.opt.OpenModel == nil {
		return nil, fmt.Errorf("user.model %s: this run cannot open models (set Options.OpenModel)", spec)
	}
	r.modelsMu.Lock()
	defer r.modelsMu.Unlock()
	if o, ok := r.models[spec]; ok {
		return o.model, o.err
	}
	m, err := r.opt.OpenModel(spec)
	if r.models == nil {
		r.models = map[string]openedModel{}
	}
	r.models[spec] = openedModel{m, err}
	return m, err
}

type openedModel struct {
	model agenteval.Model
	err   error
}

// runSimulated runs one conversation driven by a simulated user. Each turn
// the user writes a message (or ends the conversation with its stop
// marker), the agent answers with the whole history, and the subgoal
// tracker judges the turn while the conversation goes on. The conversation
// is graded as a whole at the end: its assertions, subgoals, expected tool
// calls, and the simulated user's own fidelity.
func (r *suiteRunner) runSimulated(ctx context.Context, p *grade.Plan, sess *session, release func()) agenteval.Trial {
	t, trial := p.Test, sess.trial
	start := time.Now()
	threshold := r.threshold(t)
	res := agenteval.Trial{Trial: trial}
	user, err := r.simulatedUser(t)
	if err != nil {
		release()
		res.Error = "simulated user: " + err.Error()
		res.Scores = []agenteval.Score{{Name: "simulated_user", Type: "simulated_user", Verdict: agenteval.VerdictError, Weight: 1, Reason: err.Error()}}
		return r.finishTrial(res, t, threshold, sess.usage, sess.ms, start)
	}
	sim := &agenteval.Simulation{Model: user.Name, Messages: []agenteval.SimulatedMessage{}, TerminatingCondition: t.User.TerminatingCondition}
	var simUsage agenteval.Usage
	trackers := startTrackers(p.Extras)
	limit := t.User.MaxTurns
	if limit <= 0 {
		limit = agenteval.DefaultMaxTurns
	}
	// interrupted ends the conversation once the run is stopped.
	interrupted := func() bool {
		if ctx.Err() == nil {
			return false
		}
		sim.EndReason, sim.Detail = agenteval.EndInterrupted, context.Cause(ctx).Error()
		return true
	}
	for k := 1; ; k++ {
		if k > limit {
			sim.EndReason = agenteval.EndMaxTurns
			break
		}
		if interrupted() {
			break
		}
		msg := agenteval.SimulatedMessage{Turn: k, Sent: true}
		if k == 1 && t.User.InitialMessage != "" {
			msg.Content, msg.Initial = t.User.InitialMessage, true
		} else {
			reply, err := user.Next(ctx, sess.history[len(t.Input):], trial)
			simUsage.Add(&reply.Usage)
			if interrupted() {
				break
			}
			if err != nil {
				sim.EndReason, sim.Detail = agenteval.EndSimulatorError, err.Error()
				res.Error = fmt.Sprintf("turn %d: %v", k, err)
				break
			}
			msg.Content = reply.Content
			if reply.Stop {
				msg.Sent = false
				sim.Messages = append(sim.Messages, msg)
				sim.EndReason = agenteval.EndStopMarker
				if reply.Content != "" {
					sim.Detail = "closing message: " + reply.Content
				}
				break
			}
		}
		sim.Messages = append(sim.Messages, msg)
		sess.history = append(sess.history, agenteval.Message{Role: agenteval.RoleUser, Content: msg.Content})
		_, ms, err := sess.call(k)
		if interrupted() {
			break
		}
		if err != nil {
			sim.EndReason, sim.Detail = agenteval.EndAgentError, err.Error()
			res.Error = fmt.Sprintf("turn %d: agent: %v", k, err)
			break
		}
		sim.Turns = k
		observe(ctx, trackers, r.simInput(t, sess.history, sim, ms, sess.usage, k))
		if t.User.StopOnSuccess {
			done, err := settled(trackers, k)
			if err != nil {
				r.fatalFrom(err)
				sim.EndReason, sim.Detail = agenteval.EndJudgeError, err.Error()
				res.Error = fmt.Sprintf("turn %d: subgoals: %v", k, err)
				break
			}
			if done {
				sim.EndReason = agenteval.EndSubgoals
				break
			}
		}
	}
	if sim.EndReason == agenteval.EndStopMarker && sim.Turns == 0 && res.Error == "" {
		res.Error = "the simulated user ended the conversation before its first message, so the agent was never tested; check its instruction, or give user.initial_message"
	}
	sess.close()
	release()
	if !simUsage.IsZero() {
		u := simUsage
		sim.Usage = &u
	}
	res.Output, res.Simulation = sess.history, sim
	res.Scores = []agenteval.Score{}
	usage := sess.usage
	if res.Error == "" {
		in := r.simInput(t, sess.history, sim, sess.ms, sess.usage, 0)
		if len(p.Whole.Graders) > 0 {
			res.Scores = append(res.Scores, r.gradeUnit(ctx, "conversation", p.Whole, in, threshold))
		}
		res.Scores = append(res.Scores, r.gradeExtras(ctx, p.Extras, trackers, in)...)
	} else {
		r.drain(trackers, &usage)
	}
	return r.finishTrial(res, t, threshold, usage, sess.ms, start)
}

// drain waits for the trackers of a conversation that ended in an error,
// and adds what their judge calls cost to usage.
func (r *suiteRunner) drain(trackers []grade.Tracker, usage *agenteval.Usage) {
	for _, tr := range trackers {
		if tr != nil {
			u := tr.Wait()
			usage.Add(&u)
			r.fatalFrom(tr.Err())
		}
	}
}

// simInput is the graders' view of a simulated conversation after turn k
// (0: the whole conversation).
func (r *suiteRunner) simInput(t *agenteval.Test, history agenteval.Conversation, sim *agenteval.Simulation, ms float64, usage agenteval.Usage, k int) *agenteval.GradeInput {
	turns := k
	if k == 0 {
		turns = sim.Turns
	}
	in := r.input(t, history, history[len(t.Input):], "", ms, usage, k, turns)
	s := *sim
	s.Messages = append([]agenteval.SimulatedMessage(nil), sim.Messages...)
	in.Simulation = &s
	return in
}

// settled reports whether the trackers can no longer change (every subgoal
// achieved), waiting for their verdict on turn k; or why they stopped.
func settled(trackers []grade.Tracker, k int) (bool, error) {
	tracked := false
	for _, tr := range trackers {
		if tr == nil {
			continue
		}
		tracked = true
		if !tr.Settled(k) {
			return false, tr.Err()
		}
	}
	return tracked, nil
}
