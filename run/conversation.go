package run

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/grade"
)

// planTest builds a test's graders with the judge and the test's
// threshold. The suite loader has built the same plan once to check the
// file; a Go caller's hand-made test that does not plan gets an
// execution_error.
func (r *suiteRunner) planTest(t *agenteval.Test) (*grade.Plan, error) {
	p, errs := grade.NewPlan(t, grade.PlanOptions{Judge: r.opt.Judge, Dir: r.dir, Threshold: r.threshold(t), Graders: r.opt.Graders})
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if use, needs := p.NeedsJudge(); needs && r.opt.Judge == nil {
		return nil, use.Pos.Errorf(fmt.Sprintf("test %q has %s, which an LLM judge grades, and no judge is configured", t.ID, use.What))
	}
	return p, nil
}

// gradeUnit runs a unit's graders and combines them into one score. A unit
// with nothing to grade (a turn that only moves the conversation along) is
// shown as ungraded: verdict skip and weight 0, which leaves it out of the
// test's score. AgentV scores such a turn 1 and counts it, so that a test
// whose only real check failed could still pass on its unchecked turns.
func (r *suiteRunner) gradeUnit(ctx context.Context, name string, u grade.Unit, in *agenteval.GradeInput, threshold float64) agenteval.Score {
	start := time.Now()
	if len(u.Graders) == 0 {
		return ungradedScore(name)
	}
	scores := make([]agenteval.Score, len(u.Graders))
	for i, g := range u.Graders {
		s, err := grade.Run(ctx, g.Grader, g.Name, g.Type, in)
		r.fatalFrom(err)
		scores[i] = s
	}
	out := agenteval.Score{Name: name, Weight: 1}
	out.Score, out.Verdict = agenteval.Combine(scores, threshold)
	var reasons []string
	for _, s := range scores {
		out.Assertions = append(out.Assertions, s.Assertions...)
		if !s.Usage.IsZero() {
			if out.Usage == nil {
				out.Usage = &agenteval.Usage{}
			}
			out.Usage.Add(s.Usage)
		}
		if s.Verdict != agenteval.VerdictPass {
			reasons = append(reasons, s.Name+": "+s.Reason)
		}
	}
	if len(scores) == 1 {
		out.Type, out.Reason, out.Details = scores[0].Type, scores[0].Reason, scores[0].Details
	} else {
		out.Type, out.Scores = "composite", scores
		out.Reason = strings.Join(reasons, "; ")
		if out.Reason == "" {
			out.Reason = fmt.Sprintf("all %d graders passed", len(scores))
		}
	}
	out.DurationMS = float64(time.Since(start).Microseconds()) / 1000
	return out
}

// nothingToGrade is the reason of an ungraded turn's score.
const nothingToGrade = "nothing to grade: the turn has no assertions and no expected_output, so it does not count in the test's score"

// ungradedScore is the score of a unit with nothing to grade.
func ungradedScore(name string) agenteval.Score {
	return agenteval.Score{Name: name, Type: "none", Verdict: agenteval.VerdictSkip, Weight: 0, Reason: nothingToGrade}
}

// ungraded says whether s is the score of a unit with nothing to grade.
func ungraded(s agenteval.Score) bool {
	return s.Verdict == agenteval.VerdictSkip && s.Weight == 0
}

// exchangeWindow is AgentV's window_size: every system message, then the
// last 2×n other messages. A user message counts as one; a reply counts as
// one however many messages it takes (its tool calls and their results
// belong to it), which is what AgentV's history of plain text replies
// counts. For the agent's call the window ends on the user's message, so
// with n = 1 the agent sees its previous reply and the new message.
func exchangeWindow(c agenteval.Conversation, n int) agenteval.Conversation {
	if n <= 0 {
		return c
	}
	// Walk back over the non-system messages, counting units.
	units, from := 0, len(c)
	for i := len(c) - 1; i >= 0 && units < 2*n; i-- {
		m := c[i]
		if m.Role == agenteval.RoleSystem {
			continue
		}
		from = i
		// A reply's messages (assistant and tool) make one unit: count
		// it at its first message.
		if m.Role == agenteval.RoleUser || i == 0 || c[i-1].Role == agenteval.RoleUser || c[i-1].Role == agenteval.RoleSystem {
			units++
		}
	}
	if from == 0 {
		return c
	}
	var out agenteval.Conversation
	for i, m := range c {
		if m.Role == agenteval.RoleSystem || i >= from {
			out = append(out, m)
		}
	}
	return out
}

// graderView is what a turn's graders see of the history: AgentV's
// window_size when set, or else our grader_window_size (whole turns).
func graderView(t *agenteval.Test, history agenteval.Conversation) agenteval.Conversation {
	if t.GraderWindow > 0 {
		return window(history, t.GraderWindow)
	}
	return exchangeWindow(history, t.WindowSize)
}

// window keeps the graders' view to the last n whole turns, plus the system
// messages that open the conversation (grader_window_size). The agent gets
// everything.
func window(c agenteval.Conversation, n int) agenteval.Conversation {
	if n <= 0 {
		return c
	}
	turns := c.Turns()
	if len(turns) <= n {
		return c
	}
	var out agenteval.Conversation
	for _, m := range c {
		if m.Role != agenteval.RoleSystem {
			break
		}
		out = append(out, m)
	}
	// The first turn, which holds those system messages, is never among
	// the kept ones here, so nothing is repeated.
	for _, t := range turns[len(turns)-n:] {
		out = append(out, t...)
	}
	return out
}

// runTrial runs one conversation (or single exchange) of a test and grades
// it. Grading a turn runs while the agent answers the next turn, unless
// on_turn_failure: stop needs the verdict first.
func (r *suiteRunner) runTrial(ctx context.Context, p *grade.Plan, trial int, release func()) agenteval.Trial {
	t := p.Test
	start := time.Now()
	threshold := r.threshold(t)
	sess := r.newSession(ctx, t, trial)
	// Closed after the last agent call below; closed here too when a Go
	// agent or grader panics, so its process does not outlive the trial.
	defer sess.close()
	res := agenteval.Trial{Trial: trial}

	if t.Mode != agenteval.ModeConversation {
		reply, ms, err := sess.call(1)
		sess.close()
		release()
		history := sess.history
		res.Output = history
		if err != nil {
			res.Error = "agent: " + err.Error()
			res.Scores = []agenteval.Score{{Name: "agent", Type: "agent", Verdict: agenteval.VerdictError, Weight: 1, Reason: err.Error()}}
		} else {
			in := r.input(t, history, reply, t.ExpectedOutput, ms, sess.usage, 1, 1)
			s := r.gradeUnit(ctx, "", p.Whole, in, threshold)
			if s.Scores != nil {
				res.Scores = s.Scores
			} else if len(p.Whole.Graders) > 0 {
				s.Name = p.Whole.Graders[0].Name
				res.Scores = []agenteval.Score{s}
			} else {
				res.Scores = []agenteval.Score{}
			}
			if len(p.Extras) > 0 {
				// The exchange as one turn: the user's message and the reply.
				in := r.input(t, history, withoutSystem(history), "", ms, sess.usage, 0, 1)
				res.Scores = append(res.Scores, r.gradeExtras(ctx, p.Extras, nil, in)...)
			}
		}
		return r.finishTrial(res, t, threshold, sess.usage, sess.ms, start)
	}

	if t.User != nil {
		return r.runSimulated(ctx, p, sess, release)
	}
	trackers := startTrackers(p.Extras)
	scores := make([]agenteval.Score, len(t.Turns))
	var wg sync.WaitGroup
	stopped := -1
	for k, turn := range t.Turns {
		sess.history = append(sess.history, turn.Input...)
		reply, ms, err := sess.call(k + 1)
		history := sess.history
		if err != nil {
			scores[k] = agenteval.Score{Name: fmt.Sprintf("turn-%d", k+1), Type: "agent", Verdict: agenteval.VerdictError, Weight: 1, Reason: "agent: " + err.Error()}
			res.Error = fmt.Sprintf("turn %d: agent: %v", k+1, err)
			stopped = k
			break
		}
		if len(trackers) > 0 { // the input copies the transcript: only for trackers
			observe(ctx, trackers, r.input(t, history, history[len(t.Input):], "", ms, sess.usage, k+1, k+1))
		}
		in := r.input(t, graderView(t, history), reply, turn.ExpectedOutput, ms, sess.usage, k+1, k+1)
		name := fmt.Sprintf("turn-%d", k+1)
		u := p.Turns[k]
		if t.StopOnFailure {
			scores[k] = r.gradeUnit(ctx, name, u, in, threshold)
			// An ungraded turn did not fail: the conversation goes on.
			if scores[k].Verdict != agenteval.VerdictPass && !ungraded(scores[k]) {
				stopped = k
				break
			}
			continue
		}
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			scores[k] = r.gradeUnit(ctx, name, u, in, threshold)
		}(k)
	}
	sess.close()
	release()
	wg.Wait()
	if stopped >= 0 {
		why := fmt.Sprintf("skipped: turn %d did not pass (on_turn_failure: stop), so the agent was not called", stopped+1)
		if res.Error != "" {
			why = fmt.Sprintf("skipped: the agent failed on turn %d, so the conversation could not go on", stopped+1)
		}
		for k := stopped + 1; k < len(t.Turns); k++ {
			scores[k] = agenteval.Score{Name: fmt.Sprintf("turn-%d", k+1), Type: "skip", Verdict: agenteval.VerdictSkip, Score: 0, Weight: 1, Reason: why}
		}
	}
	history := sess.history
	res.Output = history
	usage := sess.usage
	if res.Error != "" {
		r.drain(trackers, &usage)
	}
	if res.Error == "" {
		whole := history[len(t.Input):]
		in := r.input(t, history, whole, "", sess.ms, sess.usage, 0, len(t.Turns))
		if len(p.Whole.Graders) > 0 {
			scores = append(scores, r.gradeUnit(ctx, "conversation", p.Whole, in, threshold))
		}
		scores = append(scores, r.gradeExtras(ctx, p.Extras, trackers, in)...)
	}
	res.Scores = scores
	return r.finishTrial(res, t, threshold, usage, sess.ms, start)
}

// session is one conversation with the agent: its history, and what the
// agent's calls took.
type session struct {
	r       *suiteRunner
	ctx     context.Context
	test    *agenteval.Test
	trial   int
	id      string
	history agenteval.Conversation
	usage   agenteval.Usage
	ms      float64
	closed  bool
}

func (r *suiteRunner) newSession(ctx context.Context, t *agenteval.Test, trial int) *session {
	return &session{r: r, ctx: ctx, test: t, trial: trial, id: r.conversationID(t, trial),
		history: append(agenteval.Conversation(nil), t.Input...)}
}

// call sends the history to the agent for turn k, adds its reply to the
// history, and returns the reply and how long it took.
func (s *session) call(k int) (agenteval.Conversation, float64, error) {
	t0 := time.Now()
	// window_size limits what the agent is sent, as in AgentV; the
	// history keeps every message for the graders and the results.
	resp, err := s.r.opt.Agent.Respond(s.ctx, &agenteval.AgentRequest{ConversationID: s.id, TestID: s.test.ID, Trial: s.trial, Turn: k,
		Messages: append(agenteval.Conversation(nil), exchangeWindow(s.history, s.test.WindowSize)...)})
	ms := float64(time.Since(t0).Microseconds()) / 1000
	if resp != nil && resp.DurationMS != nil {
		// The time the agent reports (a cli target's duration_ms), as
		// AgentV takes it.
		ms = *resp.DurationMS
	}
	s.ms += ms
	// A model target whose credentials are rejected, or whose server is
	// not there, would fail every test the same way: stop the run.
	s.r.fatalFrom(err)
	if resp == nil {
		return nil, ms, err
	}
	s.usage.Add(&resp.Usage)
	s.history = append(s.history, resp.Messages...)
	return resp.Messages, ms, err
}

// close tells an agent that keeps state per conversation that it is over;
// once.
func (s *session) close() {
	if s.closed {
		return
	}
	s.closed = true
	if c, ok := s.r.opt.Agent.(agenteval.Closer); ok {
		c.CloseConversation(s.id)
	}
}

// withoutSystem drops the system messages that open a conversation.
func withoutSystem(c agenteval.Conversation) agenteval.Conversation {
	for i, m := range c {
		if m.Role != agenteval.RoleSystem {
			return c[i:]
		}
	}
	return nil
}

func (r *suiteRunner) input(t *agenteval.Test, transcript, output agenteval.Conversation, reference string, latencyMS float64, usage agenteval.Usage, turn, turns int) *agenteval.GradeInput {
	var refCalls []agenteval.ToolCall
	return &agenteval.GradeInput{
		Transcript:         append(agenteval.Conversation(nil), transcript...),
		Output:             append(agenteval.Conversation(nil), output...),
		Turn:               turn,
		Reference:          reference,
		ReferenceToolCalls: refCalls,
		Criteria:           t.Criteria,
		TestID:             t.ID,
		Target:             r.opt.Target,
		Metadata:           t.Metadata,
		Vars:               t.Vars,
		Stats:              &agenteval.Stats{LatencyMS: latencyMS, Usage: usage, Turns: turns},
		User:               t.User,
	}
}

// finishTrial aggregates a trial's scores: the test's aggregation over the
// turn scores and the conversation score, skipped turns counting 0 so that
// a conversation cut short cannot pass on the turns it reached, and
// ungraded turns not counting at all; a score that could not be computed
// makes the trial an error.
//
// spent is what the conversation cost besides its scores: the agent's
// calls, and the judge calls of trackers left ungraded by an error.
func (r *suiteRunner) finishTrial(res agenteval.Trial, t *agenteval.Test, threshold float64, spent agenteval.Usage, agentMS float64, start time.Time) agenteval.Trial {
	var usage agenteval.Usage
	usage.Add(&spent)
	if res.Simulation != nil {
		usage.Add(res.Simulation.Usage)
	}
	var vals []float64
	errored := res.Error != ""
	var errs []string
	for _, s := range res.Scores {
		usage.Add(s.Usage)
		switch s.Verdict {
		case agenteval.VerdictError:
			if s.Weight == 0 && s.Type != "agent" {
				// Shown, never counted (user_fidelity): its failure to
				// run does not make the test an error.
				continue
			}
			errored = true
			if !strings.HasPrefix(s.Reason, "agent: ") || res.Error == "" {
				errs = append(errs, s.Name+": "+s.Reason)
			}
			continue
		case agenteval.VerdictSkip:
			if !ungraded(s) {
				vals = append(vals, 0)
			}
			continue
		}
		if t.Mode != agenteval.ModeConversation || s.Weight == 0 {
			continue
		}
		vals = append(vals, s.Score)
	}
	if t.Mode != agenteval.ModeConversation {
		res.Score, res.Verdict = agenteval.Combine(res.Scores, threshold)
		if len(res.Scores) == 0 && !errored {
			res.Score, res.Verdict = 1, agenteval.VerdictPass
		}
	} else {
		res.Score = t.Aggregation.Reduce(vals)
		res.Verdict = agenteval.VerdictFor(res.Score, threshold)
	}
	if res.Error == "" && len(errs) > 0 {
		res.Error = strings.Join(errs, "\n")
	}
	if errored {
		res.Verdict = agenteval.VerdictError
	}
	res.ExecutionStatus = agenteval.StatusOf(res.Verdict)
	if !usage.IsZero() {
		res.Usage = &usage
	}
	res.DurationMS = float64(time.Since(start).Microseconds()) / 1000
	return res
}
