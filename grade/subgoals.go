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
	Doc: "agent_inspect progress: each subgoal judged against the conversation up to each turn (majority of samples); score = achieved/total, with agent_inspect's AUC and progress per turn over max_turns turns"},
	newSubgoals)

// SubgoalsOptions is the options of subgoals.
type SubgoalsOptions struct {
	Subgoals SubgoalList `json:"subgoals" doc:"the milestones: text, or {details, type, turn}"`
	Samples  int         `json:"samples" doc:"judge votes per decision, an odd number (default 1)"`
	// MaxTurns is agent_inspect's MAX_TURNS for AUC and progress per turn.
	MaxTurns int `json:"max_turns" doc:"agent_inspect's MAX_TURNS: AUC and progress per turn look at the first max_turns turns, a shorter conversation's last progress held to it (default: the simulated user's max_turns, else 20, agent_inspect's default)"`
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
	judge    *judge.Judge
	goals    []agenteval.Subgoal
	maxTurns int // 0: the default, decided per conversation
}

func newSubgoals(o SubgoalsOptions, env Env) (func() Tracking, error) {
	if len(o.Subgoals) == 0 {
		return nil, fmt.Errorf("subgoals is empty; list the milestones the agent should reach")
	}
	j, err := judgeFor(env.Judge, o.Samples)
	if err != nil {
		return nil, err
	}
	if o.MaxTurns < 0 {
		return nil, fmt.Errorf("max_turns must be a number of turns (1 or more), not %d", o.MaxTurns)
	}
	g := &subgoalsGrader{judge: j, maxTurns: o.MaxTurns}
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
	progress := make([]float64, n)
	for k := 1; k <= n; k++ {
		got := 0
		for _, at := range r.achievedAt {
			if at > 0 && at <= k {
				got++
			}
		}
		// agent_inspect rounds each turn's progress to 4 decimals, and
		// its AUC and progress per turn are computed from those.
		progress[k-1] = roundPy(fraction(got, len(r.g.goals)), 4)
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
	limit := r.g.maxTurns
	if limit == 0 {
		limit = inspectMaxTurns
		if in.User != nil {
			// agent_inspect's runner gives the metric its own turn limit.
			limit = maxTurns(in.User)
		}
	}
	curve := progressCurve(progress, limit)
	o.Details = map[string]any{
		"progress_by_turn": progress,
		"final_progress":   final,
		"success":          achieved == len(r.g.goals) && n > 0,
		"achieved_at":      achievedAt,
		"turns":            n,
		"max_turns":        limit,
		"judge_calls":      r.calls,
	}
	var metrics []string
	notComputed := map[string]any{}
	if auc, err := progressArea(curve); err != nil {
		notComputed["auc"] = err.Error()
		metrics = append(metrics, "no AUC: "+err.Error())
	} else {
		o.Details["auc"] = auc
		metrics = append(metrics, "AUC "+fmtNum(auc))
	}
	if ppt, err := progressRate(curve); err != nil {
		notComputed["progress_per_turn"] = err.Error()
		metrics = append(metrics, "no progress per turn: "+err.Error())
	} else {
		o.Details["progress_per_turn"] = ppt
		metrics = append(metrics, "progress per turn "+fmtNum(ppt))
	}
	if len(notComputed) > 0 {
		o.Details["not_computed"] = notComputed
	}
	o.Reason = fmt.Sprintf("%d of %d subgoals achieved over %s (%s; max_turns %d)", achieved, len(r.g.goals), turnsText(n), strings.Join(metrics, ", "), limit)
	return o, nil
}

func maxTurns(u *agenteval.SimulatedUser) int {
	if u.MaxTurns > 0 {
		return u.MaxTurns
	}
	return agenteval.DefaultMaxTurns
}

// inspectMaxTurns is agent_inspect's MAX_TURNS_DEFAULT, the turns its
// AUC and progress per turn look at when not told.
const inspectMaxTurns = 20

// progressCurve is the progress list agent_inspect's
// ProgressScoresThroughTurns gives AUC and PPT: the progress of the first
// maxTurns turns only, and, when the conversation was shorter, its last
// progress repeated until there are maxTurns values. A conversation with
// no turns has no curve (agent_inspect fails on it).
func progressCurve(progress []float64, maxTurns int) []float64 {
	run := min(maxTurns, len(progress))
	if run <= 0 {
		return nil
	}
	curve := append([]float64(nil), progress[:run]...)
	for len(curve) < maxTurns {
		curve = append(curve, progress[run-1])
	}
	return curve
}

// progressArea is agent_inspect's AUC: the area under the curve through
// the points (i/(n-1), curve[i]), the first turn at 0 and the last at 1,
// by the trapezoid rule (sklearn.metrics.auc), rounded to 4 decimals. So a
// curve at 1 throughout has area 1, and one that starts at 0.5 and is 1
// from the second of 10 points has 0.9722. Fewer than two points have no
// area: agent_inspect raises an error there, and so does this.
func progressArea(curve []float64) (float64, error) {
	n := len(curve)
	if n == 0 {
		return 0, fmt.Errorf("no progress to compute it from (the conversation has no turns)")
	}
	if n < 2 {
		return 0, fmt.Errorf("it needs at least 2 points and max_turns 1 gives one")
	}
	x := make([]float64, n)
	for i := range x {
		x[i] = float64(i) / float64(n-1)
	}
	// numpy's trapezoid: each term is dx*(y[i+1]+y[i])/2, in that order
	// of operations, and the terms are summed as numpy sums; rounding to 4
	// decimals then sees the same float as agent_inspect does.
	terms := make([]float64, n-1)
	for i := range terms {
		terms[i] = (x[i+1] - x[i]) * (curve[i+1] + curve[i]) / 2.0
	}
	// agent_inspect pins scikit-learn 1.7.1, whose auc returns a Python
	// float: Python's round, correctly rounded, as roundPy is.
	return roundPy(pairwiseSum(terms), 4), nil
}

// pairwiseSum adds as numpy's add.reduce does on a contiguous float64
// array (its pairwise summation: eight running sums per block of up to
// 128 values, larger arrays split in halves), starting from 0.
func pairwiseSum(a []float64) float64 {
	n := len(a)
	switch {
	case n < 8:
		res := 0.0
		for _, v := range a {
			res += v
		}
		return res
	case n <= 128:
		var r [8]float64
		copy(r[:], a[:8])
		i := 8
		for ; i < n-n%8; i += 8 {
			for j := range r {
				r[j] += a[i+j]
			}
		}
		res := ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
		for ; i < n; i++ {
			res += a[i]
		}
		return res
	default:
		n2 := n / 2
		n2 -= n2 % 8
		return pairwiseSum(a[:n2]) + pairwiseSum(a[n2:])
	}
}

// progressRate is agent_inspect's progress per turn (PPT): the highest
// progress over the number of the first turn that reached it, rounded to
// 4 decimals as its PPT metric does. No progress at all is 0 (0 reached
// at turn 1).
func progressRate(curve []float64) (float64, error) {
	if len(curve) == 0 {
		return 0, fmt.Errorf("no progress to compute it from (the conversation has no turns)")
	}
	best, at := curve[0], 0
	for i, p := range curve {
		if p > best {
			best, at = p, i
		}
	}
	return roundPy(best/float64(at+1), 4), nil
}
