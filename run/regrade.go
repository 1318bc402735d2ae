package run

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/grade"
	"github.com/agenteval/agenteval/suite"
)

// Regrading grades a run's recorded transcripts again, with another judge
// or other grader settings, and calls neither the agent nor a simulated
// user. The grading is the live run's (each turn while the conversation
// goes on, the conversation as a whole, the test's own keys, the trials
// combined), fed the recorded replies where the agent's would come.
//
// A transcript keeps what the agent said, not how long it took or what it
// spent per turn: the graders that measure those (latency, token_usage,
// cost, execution_metrics) keep the scores the run gave them.

// RegradeOptions configure RegradeSuite.
type RegradeOptions struct {
	// Options are the run's: Target is the recordings' target; Judge,
	// Concurrency, Threshold, Filter, Select and Graders are used as
	// RunSuite uses them. Agent, Simulator and OpenModel are not: nothing
	// is asked of an agent or a simulated user.
	Options
	// Source names the recorded run in reasons and notes.
	Source string
	// Recorded returns a test's recorded result on Target, or nil when
	// the run has none (the test is then left out).
	Recorded func(t *agenteval.Test) *agenteval.Result
	// Changed says the eval file is not the one the run graded (its
	// content hash differs): each test's graders are compared with the
	// scores it recorded, and Note is told of those that differ.
	Changed bool
	// Note, when set, is told what is worth saying about a test: its
	// graders changed, or a trial is kept as recorded. It may be called
	// from several goroutines at once.
	Note func(t *agenteval.Test, msg string)
}

// liveMeasures are the graders that measure what a transcript does not
// keep: the agent's time, tokens and cost.
var liveMeasures = map[string]bool{"latency": true, "token_usage": true, "cost": true, "execution_metrics": true}

// RegradeSuite grades again the recorded result of each selected test of
// s that opt.Recorded returns, and calls emit once per test as each
// finishes. A trial is graded from its transcript: the eval file's input
// and turns must be the ones the transcript holds, or the test is refused
// (an execution_error that says where they differ) rather than graded
// against turns it never had. A trial that has no whole transcript (the
// agent or the simulated user failed) is kept as recorded. A test that did
// not run (skipped, or its dependency failed) is kept as recorded.
//
// As in RunSuite, a cancelled context stops the grading, and tests not
// finished are not emitted; a FatalError from the judge stops it too and
// is returned.
func RegradeSuite(ctx context.Context, s *suite.Suite, opt RegradeOptions, emit func(*agenteval.Result) error) error {
	if opt.Recorded == nil {
		return fmt.Errorf("regrade: no recorded results to grade")
	}
	if opt.Graders != nil {
		if err := grade.Validate(opt.Graders); err != nil {
			return fmt.Errorf("regrade: %w", err)
		}
	}
	tests, err := Selected(s, opt.Filter)
	if err != nil {
		return err
	}
	type job struct {
		t   *agenteval.Test
		rec *agenteval.Result
	}
	var jobs []job
	for _, t := range tests {
		if opt.Select != nil && !opt.Select(t) {
			continue
		}
		if rec := opt.Recorded(t); rec != nil {
			jobs = append(jobs, job{t, rec})
		}
	}
	conc := opt.Concurrency
	if conc <= 0 {
		conc = 4 * runtime.GOMAXPROCS(0)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r := &suiteRunner{s: s, opt: opt.Options, dir: filepath.Dir(s.File), cancel: cancel, runID: opt.RunID}
	g := &regrader{r: r, opt: &opt}

	queue := make(chan job)
	done := make(chan *agenteval.Result)
	var wg sync.WaitGroup
	for range min(conc, len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range queue {
				res := g.test(ctx, j.t, j.rec)
				if ctx.Err() != nil {
					continue // stopped: a half-graded test is not a result
				}
				done <- res
			}
		}()
	}
	go func() {
		defer close(queue)
		for _, j := range jobs {
			select {
			case queue <- j:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() {
		wg.Wait()
		close(done)
	}()
	var emitErr error
	for res := range done {
		redactResult(res)
		if emitErr == nil {
			if err := emit(res); err != nil {
				emitErr = err
				cancel()
			}
		}
	}
	if fe := r.fatal.Load(); fe != nil {
		return fe
	}
	if emitErr != nil {
		return emitErr
	}
	return context.Cause(ctx)
}

// regrader grades one suite's recordings.
type regrader struct {
	r   *suiteRunner
	opt *RegradeOptions
}

func (g *regrader) note(t *agenteval.Test, format string, a ...any) {
	if g.opt.Note != nil {
		g.opt.Note(t, fmt.Sprintf(format, a...))
	}
}

// notRegraded is the error of a test whose eval file no longer fits its
// transcript.
type notRegraded struct{ why string }

func (e *notRegraded) Error() string { return e.why }

func (g *regrader) refuse(format string, a ...any) error {
	return &notRegraded{why: fmt.Sprintf(format, a...)}
}

// test regrades one test's recorded result.
func (g *regrader) test(ctx context.Context, t *agenteval.Test, rec *agenteval.Result) (res *agenteval.Result) {
	r := g.r
	res = &agenteval.Result{TestID: t.ID, Suite: t.Suite, Target: r.opt.Target, ConversationID: t.ConversationID, Tags: Tags(t), Scores: []agenteval.Score{}}
	defer func() {
		// A grader written in Go may panic; that ends its test, not the
		// regrade.
		if v := recover(); v != nil {
			combineTrials(res, t, []agenteval.Trial{errorTrial(1, fmt.Sprintf("internal error: panic: %v", v))}, r.threshold(t))
		}
	}()
	trials := recordedTrials(rec)
	if t.Skip != "" {
		return r.skipResult(t)
	}
	if !hasTranscript(trials) {
		// Skipped, or failed before any conversation: nothing to grade.
		kept := *rec
		kept.Target, kept.Usage = r.opt.Target, nil
		g.note(t, "kept as recorded: run %s holds no transcript of it", g.opt.Source)
		return &kept
	}
	p, err := r.planTest(t)
	if err != nil {
		combineTrials(res, t, []agenteval.Trial{errorTrial(1, "graders: "+err.Error())}, r.threshold(t))
		return res
	}
	if g.opt.Changed {
		if d := shapeDiff(planShape(p), recordedShape(trials[0])); d != "" {
			g.note(t, "its graders changed since run %s (%s); graded with the eval file's", g.opt.Source, d)
		}
	}
	graded := make([]agenteval.Trial, 0, len(trials))
	for _, tr := range trials {
		nt, err := g.trial(ctx, p, tr)
		var nr *notRegraded
		if errors.As(err, &nr) {
			return g.refused(res, rec, nr.why)
		}
		graded = append(graded, nt)
	}
	combineTrials(res, t, graded, r.threshold(t))
	for _, tr := range graded {
		res.DurationMS = max(res.DurationMS, tr.DurationMS)
	}
	return res
}

// refused is the result of a test whose eval file no longer fits its
// transcript: an execution_error that says where, with the transcript.
func (g *regrader) refused(res, rec *agenteval.Result, why string) *agenteval.Result {
	why = fmt.Sprintf("not regraded: %s; run the test again to grade it", why)
	res.Verdict, res.ExecutionStatus, res.Error = agenteval.VerdictError, agenteval.StatusExecutionError, why
	res.Scores = []agenteval.Score{{Name: "regrade", Type: "regrade", Verdict: agenteval.VerdictError, Weight: 1, Reason: why}}
	res.Output = rec.Output
	return res
}

// recordedTrials are a result's trials: its own, or the result itself
// when it has one.
func recordedTrials(r *agenteval.Result) []agenteval.Trial {
	if len(r.Trials) > 0 {
		return r.Trials
	}
	return []agenteval.Trial{{Trial: 1, Score: r.Score, Verdict: r.Verdict, ExecutionStatus: r.ExecutionStatus, Scores: r.Scores,
		Output: r.Output, Usage: r.Usage, DurationMS: r.DurationMS, Error: r.Error, Simulation: r.Simulation}}
}

func hasTranscript(trials []agenteval.Trial) bool {
	for _, tr := range trials {
		if len(tr.Output) > 0 {
			return true
		}
	}
	return false
}

// incomplete says why a trial's transcript cannot be graded as a whole
// (the agent or the simulated user failed, the run was stopped), or "".
func incomplete(tr agenteval.Trial) string {
	if len(tr.Output) == 0 {
		return "it has no transcript: " + tr.Error
	}
	for _, s := range tr.Scores {
		switch s.Type {
		case "agent":
			return "the agent failed, so its transcript is cut short: " + tr.Error
		case "simulated_user":
			return "its simulated user could not play: " + tr.Error
		}
	}
	if sim := tr.Simulation; sim != nil {
		switch sim.EndReason {
		case agenteval.EndAgentError, agenteval.EndSimulatorError, agenteval.EndJudgeError, agenteval.EndInterrupted:
			return fmt.Sprintf("its simulated conversation ended early (%s): %s", sim.EndReason, tr.Error)
		}
		if sim.Turns == 0 {
			return "its simulated user ended the conversation before its first message"
		}
	}
	return ""
}

// trial regrades one recorded trial. A *notRegraded error says the eval
// file no longer fits the transcript.
func (g *regrader) trial(ctx context.Context, p *grade.Plan, rec agenteval.Trial) (agenteval.Trial, error) {
	t := p.Test
	if why := incomplete(rec); why != "" {
		// This run spent nothing on it.
		rec.Usage = nil
		g.note(t, "trial %d kept as recorded: %s", rec.Trial, why)
		return rec, nil
	}
	switch {
	case (t.User != nil) != (rec.Simulation != nil):
		if t.User != nil {
			return rec, g.refuse("the test has a simulated user now, and run %s recorded scripted turns", g.opt.Source)
		}
		return rec, g.refuse("run %s recorded a simulated user's conversation, and the test has scripted turns now", g.opt.Source)
	case t.Mode != agenteval.ModeConversation:
		return g.single(ctx, p, rec)
	case t.User != nil:
		return g.simulated(ctx, p, rec)
	}
	return g.scripted(ctx, p, rec)
}

// finish is finishTrial for a regraded trial: its usage is this run's
// grading only; the agent's and the simulated user's were spent by the
// recorded run.
func (g *regrader) finish(res agenteval.Trial, t *agenteval.Test, start time.Time) agenteval.Trial {
	sim := res.Simulation
	res.Simulation = nil
	out := g.r.finishTrial(res, t, g.r.threshold(t), agenteval.Usage{}, 0, start)
	out.Simulation = sim
	return out
}

func (g *regrader) single(ctx context.Context, p *grade.Plan, rec agenteval.Trial) (agenteval.Trial, error) {
	r, t := g.r, p.Test
	start := time.Now()
	history := rec.Output
	if err := g.samePrefix(t.Input, history); err != nil {
		return rec, err
	}
	reply := history[len(t.Input):]
	for _, m := range reply {
		if m.Role == agenteval.RoleUser {
			return rec, g.refuse("run %s recorded more than one exchange, and the test is a single exchange now", g.opt.Source)
		}
	}
	agent := agentUsage(rec)
	res := agenteval.Trial{Trial: rec.Trial, Output: history}
	in := r.input(t, history, reply, t.ExpectedOutput, 0, agent, 1, 1)
	s := r.gradeUnit(ctx, "", g.carry(p.Whole, rec, ""), in, r.threshold(t))
	switch {
	case s.Scores != nil:
		res.Scores = s.Scores
	case len(p.Whole.Graders) > 0:
		s.Name = p.Whole.Graders[0].Name
		res.Scores = []agenteval.Score{s}
	default:
		res.Scores = []agenteval.Score{}
	}
	if len(p.Extras) > 0 {
		in := r.input(t, history, withoutSystem(history), "", 0, agent, 0, 1)
		res.Scores = append(res.Scores, r.gradeExtras(ctx, p.Extras, nil, in)...)
	}
	return g.finish(res, t, start), nil
}

func (g *regrader) scripted(ctx context.Context, p *grade.Plan, rec agenteval.Trial) (agenteval.Trial, error) {
	r, t := g.r, p.Test
	start := time.Now()
	threshold := r.threshold(t)
	replies, err := g.splitTurns(t, rec.Output)
	if err != nil {
		return rec, err
	}
	if n := len(replies); n < len(t.Turns) && !(t.StopOnFailure && skippedTurn(rec.Scores, n+1)) {
		return rec, g.refuse("run %s recorded %d turns and the test has %d now", g.opt.Source, n, len(t.Turns))
	}
	history := append(agenteval.Conversation(nil), t.Input...)
	trackers := startTrackers(p.Extras)
	scores := make([]agenteval.Score, len(t.Turns))
	var wg sync.WaitGroup
	stopped, cut := -1, -1
	for k, turn := range t.Turns {
		if k >= len(replies) {
			cut = k
			break
		}
		history = append(history, turn.Input...)
		history = append(history, replies[k]...)
		if len(trackers) > 0 {
			observe(ctx, trackers, r.input(t, history, history[len(t.Input):], "", 0, agenteval.Usage{}, k+1, k+1))
		}
		in := r.input(t, graderView(t, history), replies[k], turn.ExpectedOutput, 0, agenteval.Usage{}, k+1, k+1)
		name := fmt.Sprintf("turn-%d", k+1)
		u := g.carry(p.Turns[k], rec, name)
		if t.StopOnFailure {
			scores[k] = r.gradeUnit(ctx, name, u, in, threshold)
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
	wg.Wait()
	from, why := -1, ""
	switch {
	case stopped >= 0:
		from = stopped + 1
		why = fmt.Sprintf("skipped: turn %d did not pass (on_turn_failure: stop), so a run would have ended the conversation there", stopped+1)
	case cut >= 0:
		from = cut
		why = fmt.Sprintf("skipped: run %s ended the conversation after turn %d (on_turn_failure: stop), so its transcript holds no later turn to grade; run the test again to grade them", g.opt.Source, cut)
	}
	if from >= 0 {
		for k := from; k < len(t.Turns); k++ {
			scores[k] = agenteval.Score{Name: fmt.Sprintf("turn-%d", k+1), Type: "skip", Verdict: agenteval.VerdictSkip, Weight: 1, Reason: why}
		}
	}
	in := r.input(t, history, history[len(t.Input):], "", 0, agentUsage(rec), 0, len(t.Turns))
	if len(p.Whole.Graders) > 0 {
		scores = append(scores, r.gradeUnit(ctx, "conversation", g.carry(p.Whole, rec, "conversation"), in, threshold))
	}
	scores = append(scores, r.gradeExtras(ctx, p.Extras, trackers, in)...)
	return g.finish(agenteval.Trial{Trial: rec.Trial, Output: rec.Output, Scores: scores}, t, start), nil
}

// skippedTurn says whether the recorded scores skip turn k: the run
// stopped the conversation before it (on_turn_failure: stop).
func skippedTurn(scores []agenteval.Score, k int) bool {
	name := fmt.Sprintf("turn-%d", k)
	for _, s := range scores {
		if s.Name == name {
			return s.Verdict == agenteval.VerdictSkip
		}
	}
	return false
}

func (g *regrader) simulated(ctx context.Context, p *grade.Plan, rec agenteval.Trial) (agenteval.Trial, error) {
	r, t := g.r, p.Test
	start := time.Now()
	sim := rec.Simulation
	out := rec.Output
	if err := g.samePrefix(t.Input, out); err != nil {
		return rec, err
	}
	// Each turn ends where the next user message starts.
	var ends []int
	for i := len(t.Input) + 1; i <= len(out); i++ {
		if i == len(out) || out[i].Role == agenteval.RoleUser {
			ends = append(ends, i)
		}
	}
	if len(ends) != sim.Turns {
		return rec, g.refuse("run %s's transcript holds %d turns and its simulated user %d", g.opt.Source, len(ends), sim.Turns)
	}
	trackers := startTrackers(p.Extras)
	if len(trackers) > 0 {
		for k, end := range ends {
			// The simulation as it stood after turn k+1.
			sofar := agenteval.Simulation{Model: sim.Model, Turns: k + 1, TerminatingCondition: sim.TerminatingCondition}
			for _, m := range sim.Messages {
				if m.Turn <= k+1 && m.Sent {
					sofar.Messages = append(sofar.Messages, m)
				}
			}
			observe(ctx, trackers, r.simInput(t, out[:end], &sofar, 0, agenteval.Usage{}, k+1))
		}
	}
	in := r.simInput(t, out, sim, 0, agentUsage(rec), 0)
	scores := []agenteval.Score{}
	if len(p.Whole.Graders) > 0 {
		scores = append(scores, r.gradeUnit(ctx, "conversation", g.carry(p.Whole, rec, "conversation"), in, r.threshold(t)))
	}
	scores = append(scores, r.gradeExtras(ctx, p.Extras, trackers, in)...)
	return g.finish(agenteval.Trial{Trial: rec.Trial, Output: out, Simulation: sim, Scores: scores}, t, start), nil
}

// sameMessage compares what the eval file wrote with what was sent.
func sameMessage(a, b agenteval.Message) bool {
	return a.Role == b.Role && strings.TrimSpace(a.Content) == strings.TrimSpace(b.Content)
}

// samePrefix checks that the transcript opens with the test's input.
func (g *regrader) samePrefix(input, out agenteval.Conversation) error {
	for i, m := range input {
		if i >= len(out) || !sameMessage(m, out[i]) {
			got := "nothing"
			if i < len(out) {
				got = fmt.Sprintf("%s %q", out[i].Role, clip(out[i].Content))
			}
			return g.refuse("its input no longer matches the transcript: message %d is %s %q in the eval file and %s in run %s", i+1, m.Role, clip(m.Content), got, g.opt.Source)
		}
	}
	return nil
}

// splitTurns cuts a scripted conversation's transcript into the replies
// to its turns, checking that each turn's input is the one the run sent.
// It returns fewer replies than turns when the transcript ends early.
func (g *regrader) splitTurns(t *agenteval.Test, out agenteval.Conversation) ([]agenteval.Conversation, error) {
	if err := g.samePrefix(t.Input, out); err != nil {
		return nil, err
	}
	i := len(t.Input)
	var replies []agenteval.Conversation
	for k, turn := range t.Turns {
		if i == len(out) {
			break
		}
		for j, m := range turn.Input {
			if i+j >= len(out) || !sameMessage(m, out[i+j]) {
				got := "nothing"
				if i+j < len(out) {
					got = fmt.Sprintf("%q", clip(out[i+j].Content))
				}
				return nil, g.refuse("turn %d no longer matches the transcript: the eval file says %q and run %s sent %s", k+1, clip(m.Content), g.opt.Source, got)
			}
		}
		i += len(turn.Input)
		end := i
		for end < len(out) && out[end].Role != agenteval.RoleUser {
			end++
		}
		replies = append(replies, out[i:end])
		i = end
	}
	if i < len(out) {
		return nil, g.refuse("run %s recorded more turns than the test's %d", g.opt.Source, len(t.Turns))
	}
	return replies, nil
}

func clip(s string) string {
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > 60 {
		return string(r[:60]) + "…"
	}
	return s
}

// agentUsage is what a recorded trial's agent spent: its usage less its
// graders' and its simulated user's.
func agentUsage(tr agenteval.Trial) agenteval.Usage {
	if tr.Usage == nil {
		return agenteval.Usage{}
	}
	u := *tr.Usage
	sub := func(o *agenteval.Usage) {
		if o == nil {
			return
		}
		u.Calls -= o.Calls
		u.CachedCalls -= o.CachedCalls
		u.InputTokens -= o.InputTokens
		u.OutputTokens -= o.OutputTokens
		u.CachedTokens -= o.CachedTokens
		u.Retries -= o.Retries
		u.WaitedMS -= o.WaitedMS
		if u.CostUSD != nil && o.CostUSD != nil {
			c := *u.CostUSD - *o.CostUSD
			u.CostUSD = &c
		}
	}
	for i := range tr.Scores {
		sub(tr.Scores[i].Usage)
	}
	if tr.Simulation != nil {
		sub(tr.Simulation.Usage)
	}
	u.Calls, u.CachedCalls, u.Retries = max(u.Calls, 0), max(u.CachedCalls, 0), max(u.Retries, 0)
	u.InputTokens, u.OutputTokens, u.CachedTokens = max(u.InputTokens, 0), max(u.OutputTokens, 0), max(u.CachedTokens, 0)
	u.WaitedMS = max(u.WaitedMS, 0)
	if u.CostUSD != nil && *u.CostUSD < 0 {
		c := 0.0
		u.CostUSD = &c
	}
	return u
}

// carry replaces, in a unit, the graders that measure the live run by the
// scores the recorded trial gave them.
func (g *regrader) carry(u grade.Unit, rec agenteval.Trial, unit string) grade.Unit {
	defs := g.r.opt.Graders
	if defs == nil {
		defs = grade.All()
	}
	out := grade.Unit{Graders: slices.Clone(u.Graders)}
	for i, pl := range out.Graders {
		if d, _, ok := grade.Find(defs, pl.Type); ok && liveMeasures[d.Name] {
			out.Graders[i].Grader = g.carried(rec, unit, pl, len(u.Graders) == 1)
		}
	}
	return out
}

// carried is a grader that gives the recorded score of pl.
func (g *regrader) carried(rec agenteval.Trial, unit string, pl grade.Planned, alone bool) agenteval.Grader {
	return agenteval.GraderFunc(func(context.Context, *agenteval.GradeInput) (agenteval.Score, error) {
		s, ok := recordedScore(rec.Scores, unit, pl.Name, alone)
		if !ok {
			return agenteval.Score{}, fmt.Errorf("%s measures the live run (time, tokens or cost), which a transcript does not keep, and run %s has no %s score here to keep", pl.Type, g.opt.Source, pl.Name)
		}
		s.Name, s.Usage, s.DurationMS = pl.Name, nil, 0
		s.Reason = strings.TrimSpace(s.Reason + fmt.Sprintf(" (as run %s measured it: a transcript keeps no times or token counts)", g.opt.Source))
		return s, nil
	})
}

// recordedScore finds the score a grader named name gave in a recorded
// unit ("" for a single exchange's graders, which are the trial's own).
// A unit of one grader is recorded under the unit's name.
func recordedScore(scores []agenteval.Score, unit, name string, alone bool) (agenteval.Score, bool) {
	if unit == "" {
		for _, s := range scores {
			if s.Name == name {
				return s, true
			}
		}
		return agenteval.Score{}, false
	}
	for _, s := range scores {
		if s.Name != unit {
			continue
		}
		if s.Type == "composite" {
			for _, sub := range s.Scores {
				if sub.Name == name {
					return sub, true
				}
			}
			return agenteval.Score{}, false
		}
		if alone && s.Verdict != agenteval.VerdictSkip && s.Type != "agent" {
			return s, true
		}
	}
	return agenteval.Score{}, false
}

// planShape lists a plan's units and their graders, as recordedShape
// reads them from a recorded trial, to tell a test whose graders changed.
func planShape(p *grade.Plan) []string {
	t := p.Test
	var out []string
	unit := func(name string, u grade.Unit) {
		switch len(u.Graders) {
		case 0:
			out = append(out, name+": none")
		case 1:
			out = append(out, name+": "+typeName(u.Graders[0].Type))
		default:
			var names []string
			for _, pl := range u.Graders {
				names = append(names, pl.Name)
			}
			out = append(out, name+": "+strings.Join(names, ", "))
		}
	}
	switch {
	case t.Mode != agenteval.ModeConversation:
		for _, pl := range p.Whole.Graders {
			out = append(out, pl.Name)
		}
	default:
		if t.User == nil {
			for k, u := range p.Turns {
				unit(fmt.Sprintf("turn-%d", k+1), u)
			}
		}
		if len(p.Whole.Graders) > 0 {
			unit("conversation", p.Whole)
		}
	}
	for _, pl := range p.Extras {
		out = append(out, pl.Name)
	}
	slices.Sort(out)
	return out
}

// recordedShape is planShape of a recorded trial; nil when its scores do
// not show it (a turn that was skipped).
func recordedShape(tr agenteval.Trial) []string {
	var out []string
	for _, s := range tr.Scores {
		unit := strings.HasPrefix(s.Name, "turn-") || s.Name == "conversation"
		switch {
		case !unit:
			out = append(out, s.Name)
		case s.Type == "composite":
			var names []string
			for _, sub := range s.Scores {
				names = append(names, sub.Name)
			}
			out = append(out, s.Name+": "+strings.Join(names, ", "))
		case s.Type == "skip" || s.Type == "agent":
			return nil
		default:
			out = append(out, s.Name+": "+typeName(s.Type))
		}
	}
	slices.Sort(out)
	return out
}

// typeName is an assertion type as a score records it, near enough to
// compare: lower case, snake_case, without not_.
func typeName(typ string) string {
	t := strings.ToLower(strings.ReplaceAll(typ, "-", "_"))
	return strings.TrimPrefix(t, "not_")
}

// shapeDiff says how two shapes differ, or "" when they do not (or the
// recorded one is unknown).
func shapeDiff(plan, rec []string) string {
	if rec == nil || slices.Equal(plan, rec) {
		return ""
	}
	var added, gone []string
	for _, s := range plan {
		if !slices.Contains(rec, s) {
			added = append(added, s)
		}
	}
	for _, s := range rec {
		if !slices.Contains(plan, s) {
			gone = append(gone, s)
		}
	}
	var parts []string
	if len(gone) > 0 {
		parts = append(parts, "recorded "+strings.Join(gone, "; "))
	}
	if len(added) > 0 {
		parts = append(parts, "now "+strings.Join(added, "; "))
	}
	return strings.Join(parts, ", ")
}
