package grade

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/judge"
)

// Subgoals is agent_inspect's progress metric, for a test's subgoals.
var Subgoals = tracked(Definition{Name: "subgoals",
	Doc: "agent_inspect progress: each subgoal judged against the conversation up to each turn (majority of samples); score = achieved/total, with AUC and progress per turn"},
	newSubgoals)

// SubgoalsOptions is the options of subgoals.
type SubgoalsOptions struct {
	Subgoals SubgoalList `json:"subgoals" doc:"the milestones: text, or {details, type, turn}"`
	Samples  int         `json:"samples" doc:"judge votes per decision, an odd number (default 1)"`
}

// SubgoalList is a list of subgoals as eval files write them: text, or
// {details, type, turn}, where turn is a number or "all".
type SubgoalList []agenteval.Subgoal

// ParamTypes says a list.
func (SubgoalList) ParamTypes() []string { return []string{"array"} }

// UnmarshalJSON reads the written forms of a list of subgoals.
func (l *SubgoalList) UnmarshalJSON(b []byte) error {
	var raw []any
	if err := decodeValue(json.RawMessage(b), &raw); err != nil {
		return notA(b, l)
	}
	out := make(SubgoalList, 0, len(raw))
	for i, r := range raw {
		var sg agenteval.Subgoal
		switch v := r.(type) {
		case string:
			sg.Details = v
		case map[string]any:
			sg.Details, _ = v["details"].(string)
			sg.Type, _ = v["type"].(string)
			if t, ok := v["turn"]; ok && t != nil {
				k, err := turnNumber(t)
				if err != nil {
					return fmt.Errorf("[%d]: %w", i, err)
				}
				sg.Turn = k
			}
		default:
			return fmt.Errorf("[%d] must be text or {details, type, turn}", i)
		}
		out = append(out, sg)
	}
	*l = out
	return nil
}

// turnNumber reads a turn scope: a number from 1, or all (0).
func turnNumber(v any) (int, error) {
	written := pyStrJSON(v)
	if s, ok := v.(string); ok {
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "", "all", "any", "*":
			return 0, nil
		}
		v = json.Number(strings.TrimSpace(s))
	}
	n, ok := number(v)
	if !ok || n < 1 || n != float64(int(n)) {
		return 0, fmt.Errorf("turn must be a turn number (1 or more), not %q", written)
	}
	return int(n), nil
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
}

func newSubgoals(o SubgoalsOptions, env Env) (func() Tracking, error) {
	if len(o.Subgoals) == 0 {
		return nil, fmt.Errorf("subgoals is empty; list the milestones the agent should reach")
	}
	j, err := judgeFor(env.Judge, o.Samples)
	if err != nil {
		return nil, err
	}
	g := &subgoalsGrader{judge: j}
	for i, sg := range o.Subgoals {
		if strings.TrimSpace(sg.Details) == "" {
			return nil, fmt.Errorf("subgoals[%d] has no details", i)
		}
		if sg.Turn < 0 {
			return nil, fmt.Errorf("subgoals[%d]: turn must be a turn number (1 or more), not %d", i, sg.Turn)
		}
		g.goals = append(g.goals, sg)
	}
	return func() Tracking { return g.start() }, nil
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
		s := r.g.goals[i].Turn
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

// Finish waits for the observations made, observes any turn the runner did
// not (all of them, for a recorded conversation), and computes the
// metrics.
func (r *subgoalRun) Finish(ctx context.Context, in *agenteval.GradeInput) (Outcome, error) {
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
	o := Outcome{}
	if !r.usage.IsZero() {
		u := r.usage
		o.Usage = &u
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
		if r.g.goals[i].Turn > 0 {
			a.Text += fmt.Sprintf(" (by turn %d)", r.g.goals[i].Turn)
		}
		if r.achievedAt[i] > 0 {
			achieved++
			a.Passed = true
			achievedAt[fmt.Sprintf("subgoal-%d", i+1)] = r.achievedAt[i]
		}
		if a.Evidence == "" {
			a.Evidence = "not judged: the conversation has no turns"
		}
		o.Assertions = append(o.Assertions, a)
	}
	final := fraction(achieved, len(r.g.goals))
	if n == 0 {
		final = 0
	}
	o.Score = final
	auc, ppt := progressArea(progress, horizon), progressRate(progress)
	o.Reason = fmt.Sprintf("%d of %d subgoals achieved over %d turns (AUC %.2f, progress per turn %.2f)", achieved, len(r.g.goals), n, auc, ppt)
	o.Details = map[string]any{
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
