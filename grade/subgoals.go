package grade

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/judge"
)

func init() {
	registry["subgoals"] = entry{build: newSubgoalsFunc, judged: true, tracker: newSubgoalsTracker,
		help: "agent_inspect progress: each subgoal judged against the conversation up to each turn (majority of samples); score = achieved/total, with AUC and progress per turn"}
}

// Tracker follows one conversation turn by turn, for a grader whose score
// depends on when things happened. The runner calls Observe after each
// turn, in order, while the conversation goes on; Grade then gives the
// score of the whole conversation.
type Tracker interface {
	// Observe starts grading the conversation as it stands after turn
	// in.Turn (in.Output holds it from the first turn on). It does not
	// block; observations run one after another, in turn order.
	Observe(ctx context.Context, in *agenteval.GradeInput)
	// Settled waits for the observation of turn k and reports whether the
	// score can no longer change (every subgoal achieved).
	Settled(k int) bool
	// Err is why the observations stopped (a judge that failed past its
	// retries), or nil.
	Err() error
	// Wait waits for the observations under way and returns what they
	// cost, for a conversation that ends without being graded.
	Wait() agenteval.Usage
	// Grade waits for the observations and scores the whole conversation.
	Grade(ctx context.Context, in *agenteval.GradeInput) (agenteval.Score, error)
}

// Trackable is a grader that can follow a conversation as it happens.
type Trackable interface {
	Track() Tracker
}

type subgoalsConfig struct {
	Subgoals []any `json:"subgoals"`
	Samples  int   `json:"samples"`
}

// subgoalsGrader is agent_inspect's progress metric. Each subgoal is judged
// against the trajectory up to each turn until it is achieved; an achieved
// subgoal stays achieved. All the subgoals still open at a turn are judged
// in one call (per vote sample). A subgoal scoped to turn k is judged once,
// against the conversation through turn k (or through the last turn, if
// the conversation ended sooner).
type subgoalsGrader struct {
	judge *judge.Judge
	goals []agenteval.Subgoal
	scope []int // 0: any turn
}

func newSubgoalsFunc(params map[string]any, e env) (gradeFunc, error) {
	g, err := newSubgoals(params, e)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, in *agenteval.GradeInput) (outcome, error) {
		return g.start().finish(ctx, in)
	}, nil
}

func newSubgoalsTracker(params map[string]any, e env) (func() trackerCore, error) {
	g, err := newSubgoals(params, e)
	if err != nil {
		return nil, err
	}
	return func() trackerCore { return g.start() }, nil
}

func newSubgoals(params map[string]any, e env) (*subgoalsGrader, error) {
	var cfg subgoalsConfig
	if err := decodeParams(params, &cfg, "subgoals", "samples"); err != nil {
		return nil, err
	}
	if len(cfg.Subgoals) == 0 {
		return nil, fmt.Errorf("subgoals is empty; list the milestones the agent should reach")
	}
	j, err := judgeFor(e.judge, cfg.Samples)
	if err != nil {
		return nil, err
	}
	g := &subgoalsGrader{judge: j}
	for i, raw := range cfg.Subgoals {
		var sg agenteval.Subgoal
		switch v := raw.(type) {
		case string:
			sg.Details = v
		case map[string]any:
			sg.Details, _ = v["details"].(string)
			sg.Type, _ = v["type"].(string)
			if t, ok := v["turn"]; ok && t != nil {
				sg.Turn = strings.TrimSpace(fmt.Sprint(t))
			}
		case agenteval.Subgoal:
			sg = v
		}
		if strings.TrimSpace(sg.Details) == "" {
			return nil, fmt.Errorf("subgoals[%d] has no details", i)
		}
		k := 0
		if sg.Turn != "" {
			n, err := strconv.Atoi(sg.Turn)
			if err != nil || n < 1 {
				return nil, fmt.Errorf("subgoals[%d]: turn must be a turn number (1 or more), not %q", i, sg.Turn)
			}
			k = n
		}
		g.goals = append(g.goals, sg)
		g.scope = append(g.scope, k)
	}
	return g, nil
}

// SubgoalParams is the grader's settings for a test's subgoals.
func SubgoalParams(goals []agenteval.Subgoal) map[string]any {
	list := make([]any, len(goals))
	for i, g := range goals {
		list[i] = g
	}
	return map[string]any{"subgoals": list}
}

// subgoalRun is one conversation's progress.
type subgoalRun struct {
	g *subgoalsGrader

	mu         sync.Mutex
	achievedAt []int // turn of achievement; 0 while open
	evidence   []string
	lastTurn   int // the last turn observed
	calls      int
	usage      agenteval.Usage
	err        error
	tail       chan struct{} // closed when the last observation started is done
	done       map[int]chan struct{}
}

func (g *subgoalsGrader) start() *subgoalRun {
	tail := make(chan struct{})
	close(tail)
	return &subgoalRun{g: g, achievedAt: make([]int, len(g.goals)), evidence: make([]string, len(g.goals)), tail: tail, done: map[int]chan struct{}{}}
}

// Observe judges the open subgoals at turn in.Turn once the previous
// observation is done.
func (r *subgoalRun) Observe(ctx context.Context, in *agenteval.GradeInput) {
	r.mu.Lock()
	prev := r.tail
	done := make(chan struct{})
	r.tail = done
	r.done[in.Turn] = done
	r.mu.Unlock()
	conv := append(agenteval.Conversation(nil), in.Output...)
	task := taskOf(in)
	go func() {
		defer close(done)
		<-prev
		r.observe(ctx, conv, task, in.Turn, false)
	}()
}

// taskOf is what the user wants, for the judge: the simulated user's
// instruction, or an agent_inspect sample's user_instruction.
func taskOf(in *agenteval.GradeInput) string {
	if in.User != nil {
		return in.User.Instruction
	}
	if s, ok := in.Metadata["user_instruction"].(string); ok {
		return s
	}
	return ""
}

// observe judges, at turn k, every open subgoal in scope: unscoped ones,
// and those scoped to k (or, when final, to a later turn the conversation
// never reached).
func (r *subgoalRun) observe(ctx context.Context, conv agenteval.Conversation, task string, k int, final bool) {
	r.mu.Lock()
	if r.err != nil {
		r.mu.Unlock()
		return
	}
	var open []int
	for i := range r.g.goals {
		s := r.g.scope[i]
		inScope := s == 0 || s == k
		if final {
			inScope = s > k
		}
		if r.achievedAt[i] == 0 && inScope {
			open = append(open, i)
		}
	}
	r.lastTurn = max(r.lastTurn, k)
	r.mu.Unlock()
	if len(open) == 0 {
		return
	}
	crits := make([]judge.Criterion, len(open))
	for n, i := range open {
		sg := r.g.goals[i]
		text := sg.Details
		if sg.Type != "" {
			text += " (" + sg.Type + ")"
		}
		crits[n] = judge.Criterion{ID: fmt.Sprintf("subgoal-%d", i+1), Text: text}
	}
	ds, usage, err := r.g.judge.Decide(ctx, "subgoals", map[string]any{"Task": task, "Transcript": conv, "Turn": k}, crits)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.usage.Add(&usage)
	r.calls += max(r.g.judge.Samples, 1)
	if err != nil {
		r.err = fmt.Errorf("judge subgoals at turn %d: %w", k, err)
		return
	}
	for n, i := range open {
		d := ds[n]
		why := d.Evidence()
		if d.Passed {
			r.achievedAt[i] = k
			r.evidence[i] = fmt.Sprintf("achieved at turn %d: %s", k, why)
		} else {
			r.evidence[i] = fmt.Sprintf("not achieved by turn %d: %s", k, why)
		}
	}
}

// Settled waits for turn k's observation and reports whether every
// subgoal is achieved.
func (r *subgoalRun) Settled(k int) bool {
	r.mu.Lock()
	done, ok := r.done[k]
	if !ok {
		// Not observed: wait for every observation made so far.
		done = r.tail
	}
	r.mu.Unlock()
	<-done
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return false
	}
	for _, at := range r.achievedAt {
		if at == 0 {
			return false
		}
	}
	return true
}

// Err is the error that stopped the observations, if any.
func (r *subgoalRun) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// Wait waits for the observations under way and returns their cost.
func (r *subgoalRun) Wait() agenteval.Usage {
	r.mu.Lock()
	tail := r.tail
	r.mu.Unlock()
	<-tail
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.usage
}

// finish waits for the observations made, observes any turn the runner did
// not (all of them, for a recorded conversation), and computes the
// metrics.
func (r *subgoalRun) finish(ctx context.Context, in *agenteval.GradeInput) (outcome, error) {
	r.mu.Lock()
	tail := r.tail
	r.mu.Unlock()
	<-tail
	turns := in.Output.Turns()
	n := len(turns)
	task := taskOf(in)
	var upTo agenteval.Conversation
	for k := 1; k <= n; k++ {
		upTo = append(upTo, turns[k-1]...)
		if k > r.lastTurn {
			r.observe(ctx, upTo, task, k, false)
		}
	}
	// Subgoals scoped to turns the conversation never reached are judged
	// on how it ended.
	if n > 0 {
		r.observe(ctx, in.Output, task, n, true)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	o := outcome{}
	if !r.usage.IsZero() {
		u := r.usage
		o.usage = &u
	}
	if r.err != nil {
		return o, r.err
	}
	horizon := n
	if in.User != nil {
		// agent_inspect holds the final progress to the turn limit, so
		// finishing early is worth more area.
		horizon = max(horizon, maxTurns(in.User))
	}
	progress := make([]float64, n)
	for k := 1; k <= n; k++ {
		got := 0
		for _, at := range r.achievedAt {
			if at > 0 && at <= k {
				got++
			}
		}
		progress[k-1] = fraction(got, len(r.g.goals))
	}
	achieved := 0
	achievedAt := map[string]any{}
	for i, sg := range r.g.goals {
		a := agenteval.Assertion{Text: sg.Details, Evidence: r.evidence[i]}
		if r.g.scope[i] > 0 {
			a.Text += fmt.Sprintf(" (by turn %d)", r.g.scope[i])
		}
		if r.achievedAt[i] > 0 {
			achieved++
			a.Passed = true
			achievedAt[fmt.Sprintf("subgoal-%d", i+1)] = r.achievedAt[i]
		}
		if a.Evidence == "" {
			a.Evidence = "not judged: the conversation has no turns"
		}
		o.assertions = append(o.assertions, a)
	}
	final := fraction(achieved, len(r.g.goals))
	if n == 0 {
		final = 0
	}
	o.score = final
	auc, ppt := progressArea(progress, horizon), progressRate(progress)
	o.reason = fmt.Sprintf("%d of %d subgoals achieved over %d turns (AUC %.2f, progress per turn %.2f)", achieved, len(r.g.goals), n, auc, ppt)
	o.details = map[string]any{
		"progress_by_turn":  progress,
		"final_progress":    final,
		"success":           achieved == len(r.g.goals) && n > 0,
		"auc":               auc,
		"progress_per_turn": ppt,
		"achieved_at":       achievedAt,
		"turns":             n,
		"judge_calls":       r.calls,
	}
	return o, nil
}

func maxTurns(u *agenteval.SimulatedUser) int {
	if u.MaxTurns > 0 {
		return u.MaxTurns
	}
	return agenteval.DefaultMaxTurns
}

// progressArea is agent_inspect's AUC, the area under the progress curve
// from (0, 0) through each turn, linearly interpolated, with the last
// progress held to the horizon; divided by the horizon, so it lies in
// [0, 1].
func progressArea(progress []float64, horizon int) float64 {
	if horizon <= 0 {
		return 0
	}
	area, prev := 0.0, 0.0
	for t := 1; t <= horizon; t++ {
		p := prev
		if t <= len(progress) {
			p = progress[t-1]
		}
		area += (prev + p) / 2
		prev = p
	}
	return area / float64(horizon)
}

// progressRate is agent_inspect's progress per turn: the highest progress
// over the first turn that reached it.
func progressRate(progress []float64) float64 {
	best, at := 0.0, 0
	for t, p := range progress {
		if p > best {
			best, at = p, t+1
		}
	}
	if at == 0 {
		return 0
	}
	return best / float64(at)
}

// trackerCore is what a trackable grader implements; the grader's wrapper
// adds the fields every score shares.
type trackerCore interface {
	Observe(ctx context.Context, in *agenteval.GradeInput)
	Settled(k int) bool
	Err() error
	Wait() agenteval.Usage
	finish(ctx context.Context, in *agenteval.GradeInput) (outcome, error)
}

// wrappedTracker scores a trackerCore through its grader's wrapper.
type wrappedTracker struct {
	trackerCore
	g *grader
}

func (t wrappedTracker) Grade(ctx context.Context, in *agenteval.GradeInput) (agenteval.Score, error) {
	return t.g.run(ctx, in, t.finish)
}

// Track starts following a conversation, for a grader that can (subgoals);
// nil for the others.
func (g *grader) Track() Tracker {
	if g.tracker == nil {
		return nil
	}
	return wrappedTracker{g.tracker(), g}
}
