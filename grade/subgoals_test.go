package grade

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/fakellm"
	"github.com/agenteval/agenteval/judge"
)

const (
	goalSearch  = "The assistant searched for a Chinese restaurant."
	goalBook    = "The assistant booked a table for 8pm."
	goalConfirm = "The assistant sent a confirmation."
	goalPay     = "The assistant took a deposit."
)

var (
	subgoalTurnRE = regexp.MustCompile(`The conversation above ends with turn (\d+)\.`)
	subgoalCritRE = criterionRE
)

// subgoalAsk is one judge request of the subgoals grader, as sent.
type subgoalAsk struct {
	turn  int
	goals []string // criterion texts, in key order
	keys  []string
}

func parseSubgoalAsk(r *fakellm.Request) subgoalAsk {
	p := r.LastUser()
	var a subgoalAsk
	if m := subgoalTurnRE.FindStringSubmatch(p); m != nil {
		a.turn, _ = strconv.Atoi(m[1])
	}
	for _, m := range subgoalCritRE.FindAllStringSubmatch(p, -1) {
		a.keys = append(a.keys, m[1])
		a.goals = append(a.goals, m[2])
	}
	return a
}

// subgoalScript is a judge that passes a subgoal (by criterion text) from
// the given turn on; a subgoal not in the map, or at 0, never passes.
type subgoalScript map[string]int

func (sc subgoalScript) rule() *fakellm.Rule {
	return &fakellm.Rule{Match: fakellm.SchemaNamed("criteria_verdicts"), Reply: fakellm.Reply{Func: func(r *fakellm.Request) fakellm.Reply {
		a := parseSubgoalAsk(r)
		out := map[string]any{}
		for i, g := range a.goals {
			at := sc[g]
			out[a.keys[i]] = map[string]any{"reason": fmt.Sprintf("seen at turn %d", a.turn), "passed": at > 0 && a.turn >= at}
		}
		return fakellm.Reply{JSON: out}
	}}}
}

// asked lists what the judge was asked, request by request.
func asked(s *fakellm.Server) []subgoalAsk {
	var out []subgoalAsk
	for _, r := range s.Requests() {
		out = append(out, parseSubgoalAsk(r))
	}
	return out
}

func newSubgoalsGrader(t *testing.T, j *judge.Judge, params any) agenteval.Grader {
	t.Helper()
	g, err := New(Spec{Type: "subgoals", Options: params, Judge: j})
	if err != nil {
		t.Fatalf("New(subgoals): %v", err)
	}
	return g
}

func threeGoals() map[string]any {
	return map[string]any{"subgoals": []any{goalSearch, goalBook, goalConfirm}}
}

// throughTurn is the conversation up to and including turn k.
func throughTurn(conv agenteval.Conversation, k int) agenteval.Conversation {
	var out agenteval.Conversation
	for _, t := range conv.Turns()[:k] {
		out = append(out, t...)
	}
	return out
}

func TestSubgoalsProgress(t *testing.T) {
	tests := []struct {
		name   string
		script subgoalScript
		// asked[i] is the subgoals asked at turn i+1 (nil: no request).
		asked      [][]string
		progress   []float64
		achievedAt map[string]any
		auc, ppt   float64
	}{
		{
			name:       "one subgoal per turn",
			script:     subgoalScript{goalSearch: 1, goalBook: 2, goalConfirm: 3},
			asked:      [][]string{{goalSearch, goalBook, goalConfirm}, {goalBook, goalConfirm}, {goalConfirm}},
			progress:   []float64{0.3333, 0.6667, 1},
			achievedAt: map[string]any{"subgoal-1": 1, "subgoal-2": 2, "subgoal-3": 3},
			// agent_inspect's curve: 0.3333, 0.6667, then 1 held to 20
			// points (its default max_turns), x from 0 to 1.
			auc: 0.9649,
			// The best progress, 1, was first reached at turn 3.
			ppt: 0.3333,
		},
		{
			name:       "two at once, one never",
			script:     subgoalScript{goalSearch: 1, goalBook: 1},
			asked:      [][]string{{goalSearch, goalBook, goalConfirm}, {goalConfirm}, {goalConfirm}},
			progress:   []float64{0.6667, 0.6667, 0.6667},
			achievedAt: map[string]any{"subgoal-1": 1, "subgoal-2": 1},
			// Flat at 0.6667 (rounded, as agent_inspect rounds progress).
			auc: 0.6667,
			ppt: 0.6667,
		},
		{
			name:       "all at the first turn: no more judge calls",
			script:     subgoalScript{goalSearch: 1, goalBook: 1, goalConfirm: 1},
			asked:      [][]string{{goalSearch, goalBook, goalConfirm}, nil, nil},
			progress:   []float64{1, 1, 1},
			achievedAt: map[string]any{"subgoal-1": 1, "subgoal-2": 1, "subgoal-3": 1},
			auc:        1,
			ppt:        1,
		},
		{
			name:       "none achieved",
			script:     subgoalScript{},
			asked:      [][]string{{goalSearch, goalBook, goalConfirm}, {goalSearch, goalBook, goalConfirm}, {goalSearch, goalBook, goalConfirm}},
			progress:   []float64{0, 0, 0},
			achievedAt: map[string]any{},
			auc:        0,
			ppt:        0,
		},
		{
			name:       "one late",
			script:     subgoalScript{goalBook: 3},
			asked:      [][]string{{goalSearch, goalBook, goalConfirm}, {goalSearch, goalBook, goalConfirm}, {goalSearch, goalBook, goalConfirm}},
			progress:   []float64{0, 0, 0.3333},
			achievedAt: map[string]any{"subgoal-2": 3},
			// 0 for 2 of 19 steps, then a rise to 0.3333 held: 0.307.
			auc: 0.307,
			// 0.3333 first reached at turn 3.
			ppt: 0.1111,
		},
	}
	conv := threeTurnBooking()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j, s := fakeJudge(t)
			s.Add(tt.script.rule())
			sc, err := newSubgoalsGrader(t, j, threeGoals()).Grade(context.Background(), &agenteval.GradeInput{Transcript: conv, Output: conv})
			if err != nil {
				t.Fatal(err)
			}
			achieved := len(tt.achievedAt)
			if !near(sc.Score, float64(achieved)/3) {
				t.Errorf("score = %v, want %v", sc.Score, float64(achieved)/3)
			}
			d := sc.Details
			if !floatsNear(d["progress_by_turn"], tt.progress) {
				t.Errorf("progress_by_turn = %v, want %v", d["progress_by_turn"], tt.progress)
			}
			if !reflect.DeepEqual(d["achieved_at"], tt.achievedAt) {
				t.Errorf("achieved_at = %v, want %v", d["achieved_at"], tt.achievedAt)
			}
			if !near(d["auc"].(float64), tt.auc) || !near(d["progress_per_turn"].(float64), tt.ppt) {
				t.Errorf("auc = %v (want %v), progress_per_turn = %v (want %v)", d["auc"], tt.auc, d["progress_per_turn"], tt.ppt)
			}
			if d["success"] != (achieved == 3) || !near(d["final_progress"].(float64), sc.Score) || d["turns"] != 3 {
				t.Errorf("details = %v", d)
			}
			// One request per turn with open subgoals, asking only those,
			// against the conversation through that turn.
			var want []subgoalAsk
			for i, goals := range tt.asked {
				if goals != nil {
					want = append(want, subgoalAsk{turn: i + 1, goals: goals})
				}
			}
			got := asked(s)
			if len(got) != len(want) || d["judge_calls"] != len(want) || sc.Usage == nil || sc.Usage.Calls != len(want) {
				t.Fatalf("asked %+v (judge_calls %v, usage %+v), want %+v", got, d["judge_calls"], sc.Usage, want)
			}
			for i, w := range want {
				if got[i].turn != w.turn || !reflect.DeepEqual(got[i].goals, w.goals) {
					t.Errorf("request %d asked %v at turn %d, want %v at turn %d", i+1, got[i].goals, got[i].turn, w.goals, w.turn)
				}
				for k, key := range got[i].keys {
					if key != "c"+strconv.Itoa(k+1) {
						t.Errorf("request %d: key %d is %s", i+1, k, key)
					}
				}
				prompt := s.Requests()[i].LastUser()
				if !strings.Contains(prompt, fmt.Sprintf("[Turn %d]", w.turn)) || strings.Contains(prompt, fmt.Sprintf("[Turn %d]", w.turn+1)) {
					t.Errorf("request %d does not show the conversation through turn %d:\n%s", i+1, w.turn, prompt)
				}
			}
			// Assertions: one per subgoal, with the turn it was reached at.
			if len(sc.Assertions) != 3 {
				t.Fatalf("assertions = %+v", sc.Assertions)
			}
			for i, a := range sc.Assertions {
				at, ok := tt.achievedAt[fmt.Sprintf("subgoal-%d", i+1)]
				wantEv := "not achieved by turn 3: seen at turn 3"
				if ok {
					wantEv = fmt.Sprintf("achieved at turn %d: seen at turn %d", at, at)
				}
				if a.Passed != ok || a.Evidence != wantEv || a.Text != []string{goalSearch, goalBook, goalConfirm}[i] {
					t.Errorf("assertion %d = %+v, want passed %v, evidence %q", i, a, ok, wantEv)
				}
			}
		})
	}
}

func floatsNear(v any, want []float64) bool {
	got, ok := v.([]float64)
	if !ok || len(got) != len(want) {
		return false
	}
	for i := range got {
		if !near(got[i], want[i]) {
			return false
		}
	}
	return true
}

func TestSubgoalsMaxTurnsAndTask(t *testing.T) {
	script := subgoalScript{goalSearch: 1, goalBook: 2, goalConfirm: 3}
	simulated := func(limit int) *agenteval.SimulatedUser {
		return &agenteval.SimulatedUser{Instruction: "Book a Chinese dinner for two.", MaxTurns: limit}
	}
	// The progress is 0.3333, 0.6667, 1 over the three turns; the curve
	// agent_inspect measures holds the last value up to max_turns, and
	// AUC and progress per turn are computed on it (values from
	// sklearn.metrics.auc on the same lists).
	tests := []struct {
		name     string
		user     *agenteval.SimulatedUser
		maxTurns int // the grader's option; 0: not set
		limit    int // the max_turns used
		auc      string
	}{
		{"recorded conversation: agent_inspect's default of 20", nil, 0, 20, "AUC 0.9649"},
		{"recorded, max_turns 3", nil, 3, 3, "AUC 0.6667"},
		{"recorded, max_turns 4", nil, 4, 4, "AUC 0.7778"},
		// agent_inspect looks at the first max_turns turns only.
		{"max_turns below the turns made", nil, 2, 2, "AUC 0.5"},
		{"max_turns 1: one point has no area", nil, 1, 1, "no AUC: it needs at least 2 points and max_turns 1 gives one"},
		// Its runner gives the metric the turn limit it ran the
		// conversation with.
		{"simulated user with max_turns 6", simulated(6), 0, 6, "AUC 0.8667"},
		{"simulated user with the default limit of 10", simulated(0), 0, 10, "AUC 0.9259"},
		{"the option over the simulated user's limit", simulated(6), 4, 4, "AUC 0.7778"},
	}
	conv := threeTurnBooking()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j, s := fakeJudge(t)
			s.Add(script.rule())
			opts := threeGoals()
			if tt.maxTurns > 0 {
				opts["max_turns"] = tt.maxTurns
			}
			sc, err := newSubgoalsGrader(t, j, opts).Grade(context.Background(), &agenteval.GradeInput{Transcript: conv, Output: conv, User: tt.user})
			if err != nil {
				t.Fatal(err)
			}
			if sc.Details["max_turns"] != tt.limit || sc.Details["progress_per_turn"] != 0.3333 {
				t.Errorf("details %v, want max_turns %d and progress_per_turn 0.3333", sc.Details, tt.limit)
			}
			if auc, ok := sc.Details["auc"].(float64); ok != strings.HasPrefix(tt.auc, "AUC ") || (ok && "AUC "+fmtNum(auc) != tt.auc) {
				t.Errorf("auc = %v, want %s", sc.Details["auc"], tt.auc)
			}
			if want := fmt.Sprintf("3 of 3 subgoals achieved over 3 turns (%s, progress per turn 0.3333; max_turns %d)", tt.auc, tt.limit); sc.Reason != want {
				t.Errorf("reason = %q, want %q", sc.Reason, want)
			}
			prompt := s.Requests()[0].LastUser()
			if tt.user != nil {
				if !quotedRE("", "task", tt.user.Instruction+"</task").MatchString(prompt) {
					t.Errorf("the instruction is not the task:\n%s", prompt)
				}
			} else if strings.Contains(prompt, "<task ") {
				t.Errorf("a task without a simulated user:\n%s", prompt)
			}
		})
	}
}

func TestSubgoalsScoped(t *testing.T) {
	j, s := fakeJudge(t)
	s.Add(subgoalScript{goalSearch: 1, goalBook: 3, goalConfirm: 1, goalPay: 1}.rule())
	params := (SubgoalsOptions{Subgoals: SubgoalList{
		{Details: goalSearch},
		// Would pass at turn 3, but only turn 2 counts.
		{Details: goalBook, Turn: 2},
		// Would pass at turn 1, but is judged only at turn 3.
		{Details: goalConfirm, Turn: 3},
		// Beyond the conversation: judged once, on how it ended.
		{Details: goalPay, Turn: 5},
	}})
	conv := threeTurnBooking()
	sc, err := newSubgoalsGrader(t, j, params).Grade(context.Background(), &agenteval.GradeInput{Transcript: conv, Output: conv})
	if err != nil {
		t.Fatal(err)
	}
	want := []subgoalAsk{
		{turn: 1, goals: []string{goalSearch}},
		{turn: 2, goals: []string{goalBook}},
		{turn: 3, goals: []string{goalConfirm}},
		{turn: 3, goals: []string{goalPay}},
	}
	got := asked(s)
	if len(got) != len(want) || sc.Details["judge_calls"] != 4 {
		t.Fatalf("asked %+v, want %+v", got, want)
	}
	for i, w := range want {
		if got[i].turn != w.turn || !reflect.DeepEqual(got[i].goals, w.goals) {
			t.Errorf("request %d asked %v at turn %d, want %v at turn %d", i+1, got[i].goals, got[i].turn, w.goals, w.turn)
		}
	}
	// The last request sees the whole conversation.
	if last := s.Requests()[3].LastUser(); !quotedRE("[Turn 3]\n", "user", "Mail me a confirmation.").MatchString(last) || !quotedRE("", "assistant", "Sent.").MatchString(last) {
		t.Errorf("the out-of-range subgoal was not judged on the whole conversation:\n%s", last)
	}
	if !near(sc.Score, 0.75) || !reflect.DeepEqual(sc.Details["achieved_at"], map[string]any{"subgoal-1": 1, "subgoal-3": 3, "subgoal-4": 3}) {
		t.Errorf("score %v, details %v", sc.Score, sc.Details)
	}
	// 1/4 after turn 1, still 1/4 after turn 2, 3/4 after turn 3.
	if !floatsNear(sc.Details["progress_by_turn"], []float64{0.25, 0.25, 0.75}) {
		t.Errorf("progress_by_turn = %v", sc.Details["progress_by_turn"])
	}
	texts := []string{goalSearch, goalBook + " (by turn 2)", goalConfirm + " (by turn 3)", goalPay + " (by turn 5)"}
	for i, a := range sc.Assertions {
		if a.Text != texts[i] || a.Passed != (i != 1) {
			t.Errorf("assertion %d = %+v", i, a)
		}
	}
	if ev := sc.Assertions[1].Evidence; ev != "not achieved by turn 2: seen at turn 2" {
		t.Errorf("scoped evidence = %q", ev)
	}
}

func TestSubgoalsTypeAndForms(t *testing.T) {
	j, s := fakeJudge(t)
	s.Add(subgoalScript{goalSearch + " (tool call)": 1, goalBook: 2}.rule())
	params := map[string]any{"subgoals": []any{
		map[string]any{"details": goalSearch, "type": "tool call"},
		map[string]any{"details": goalBook, "turn": 2},
	}}
	conv := threeTurnBooking()
	sc, err := newSubgoalsGrader(t, j, params).Grade(context.Background(), &agenteval.GradeInput{Transcript: conv, Output: conv})
	if err != nil {
		t.Fatal(err)
	}
	if sc.Score != 1 || sc.Assertions[0].Text != goalSearch || sc.Assertions[1].Text != goalBook+" (by turn 2)" {
		t.Errorf("score = %+v", sc)
	}
	if got := asked(s); len(got) != 2 || got[0].goals[0] != goalSearch+" (tool call)" {
		t.Errorf("asked %+v", got)
	}
}

func TestSubgoalsNoTurns(t *testing.T) {
	j, s := fakeJudge(t)
	sc, err := newSubgoalsGrader(t, j, threeGoals()).Grade(context.Background(), &agenteval.GradeInput{})
	if err != nil {
		t.Fatal(err)
	}
	if sc.Score != 0 || sc.Verdict != agenteval.VerdictFail || s.Calls() != 0 || sc.Details["success"] != false || sc.Details["judge_calls"] != 0 {
		t.Errorf("score = %+v after %d calls", sc, s.Calls())
	}
	for _, a := range sc.Assertions {
		if a.Passed || a.Evidence != "not judged: the conversation has no turns" {
			t.Errorf("assertion = %+v", a)
		}
	}
}

func TestSubgoalsMajorityVote(t *testing.T) {
	conv := agenteval.Conversation{userSays("Find me a Chinese restaurant."), agentSays("Golden Dragon.")}
	tests := []struct {
		name   string
		passes int // of 3 samples
		want   bool
	}{
		{"two of three pass", 2, true},
		{"one of three passes", 1, false},
		{"all pass", 3, true},
		{"none pass", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j, s := fakeJudge(t)
			if tt.passes > 0 {
				s.Add(&fakellm.Rule{Times: tt.passes, Reply: verdicts(true)})
			}
			s.Add(&fakellm.Rule{Reply: verdicts(false)})
			g := newSubgoalsGrader(t, j, map[string]any{"subgoals": []any{goalSearch}, "samples": 3})
			sc, err := g.Grade(context.Background(), &agenteval.GradeInput{Transcript: conv, Output: conv})
			if err != nil {
				t.Fatal(err)
			}
			if sc.Assertions[0].Passed != tt.want || !strings.Contains(sc.Assertions[0].Evidence, fmt.Sprintf("(votes %d/3)", tt.passes)) {
				t.Errorf("assertion = %+v", sc.Assertions[0])
			}
			if s.Calls() != 3 || sc.Details["judge_calls"] != 3 || sc.Usage.Calls != 3 {
				t.Errorf("%d requests, details %v", s.Calls(), sc.Details)
			}
			for _, r := range s.Requests() {
				if r.Temperature == nil || *r.Temperature != 0.7 {
					t.Errorf("vote temperature = %v, want 0.7", r.Temperature)
				}
			}
		})
	}
	// The setting does not change the caller's judge.
	j, _ := fakeJudge(t)
	newSubgoalsGrader(t, j, map[string]any{"subgoals": []any{goalSearch}, "samples": 5})
	if j.Samples != 0 {
		t.Errorf("samples leaked into the shared judge: %d", j.Samples)
	}
}

func TestSubgoalsJudgeFailure(t *testing.T) {
	conv := threeTurnBooking()
	t.Run("invalid output at the first turn", func(t *testing.T) {
		j, s := fakeJudge(t)
		s.Add(&fakellm.Rule{Reply: fakellm.Reply{Content: "Milestone 1: yes"}})
		sc, err := newSubgoalsGrader(t, j, threeGoals()).Grade(context.Background(), &agenteval.GradeInput{Transcript: conv, Output: conv})
		if err == nil || sc.Verdict != agenteval.VerdictError {
			t.Fatalf("score %+v, err %v", sc, err)
		}
		if !strings.Contains(sc.Reason, "judge subgoals at turn 1: ") || !strings.Contains(sc.Reason, "gave invalid output 3 times") {
			t.Errorf("reason = %q", sc.Reason)
		}
		var ioe *judge.InvalidOutputError
		if !errors.As(err, &ioe) {
			t.Errorf("err = %T %v, want an InvalidOutputError", err, err)
		}
		// Three attempts at turn 1, and then no more turns are judged.
		if s.Calls() != 3 || sc.Usage == nil || sc.Usage.Calls != 3 {
			t.Errorf("%d requests, usage %+v", s.Calls(), sc.Usage)
		}
	})
	t.Run("invalid output at a later turn", func(t *testing.T) {
		j, s := fakeJudge(t)
		s.Add(&fakellm.Rule{Times: 1, Reply: verdicts(true, false, false)},
			&fakellm.Rule{Reply: fakellm.Reply{Content: `{"c1": {"passed": "yes"}}`}})
		sc, err := newSubgoalsGrader(t, j, threeGoals()).Grade(context.Background(), &agenteval.GradeInput{Transcript: conv, Output: conv})
		if err == nil || sc.Verdict != agenteval.VerdictError || !strings.Contains(sc.Reason, "judge subgoals at turn 2: ") {
			t.Fatalf("score %+v, err %v", sc, err)
		}
		if s.Calls() != 4 || sc.Usage == nil || sc.Usage.Calls != 4 {
			t.Errorf("%d requests, usage %+v; want 1 + 3", s.Calls(), sc.Usage)
		}
	})
	t.Run("provider failure", func(t *testing.T) {
		j, s := fakeJudge(t)
		s.Add(&fakellm.Rule{Reply: fakellm.Reply{Fault: fakellm.FaultUnauthorized}})
		sc, err := newSubgoalsGrader(t, j, threeGoals()).Grade(context.Background(), &agenteval.GradeInput{Transcript: conv, Output: conv})
		var fe *agenteval.FatalError
		if !errors.As(err, &fe) || sc.Verdict != agenteval.VerdictError || s.Calls() != 1 {
			t.Errorf("score %+v, err %v, after %d requests", sc, err, s.Calls())
		}
	})
}

// observeAll feeds a tracker the conversation turn by turn, as the runner
// does, and returns what Settled said after each turn.
func observeAll(tr Tracker, conv agenteval.Conversation, upTo int) []bool {
	var settled []bool
	for k := 1; k <= upTo; k++ {
		part := throughTurn(conv, k)
		tr.Observe(context.Background(), &agenteval.GradeInput{Transcript: part, Output: part, Turn: k})
		settled = append(settled, tr.Settled(k))
	}
	return settled
}

func TestSubgoalsTrackerMatchesGrade(t *testing.T) {
	conv := threeTurnBooking()
	user := &agenteval.SimulatedUser{Instruction: "Book a Chinese dinner for two.", MaxTurns: 5}
	tests := []struct {
		name    string
		script  subgoalScript
		observe int // turns observed before Grade
		settled []bool
	}{
		{"one per turn", subgoalScript{goalSearch: 1, goalBook: 2, goalConfirm: 3}, 3, []bool{false, false, true}},
		{"all by turn 2", subgoalScript{goalSearch: 1, goalBook: 2, goalConfirm: 2}, 3, []bool{false, true, true}},
		{"never all", subgoalScript{goalSearch: 1}, 3, []bool{false, false, false}},
		{"only the first turn observed", subgoalScript{goalSearch: 1, goalBook: 2, goalConfirm: 3}, 1, []bool{false}},
		{"nothing observed", subgoalScript{goalSearch: 2, goalBook: 2}, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			whole := &agenteval.GradeInput{Transcript: conv, Output: conv, User: user}

			j1, s1 := fakeJudge(t)
			s1.Add(tt.script.rule())
			plain, err := newSubgoalsGrader(t, j1, threeGoals()).Grade(context.Background(), whole)
			if err != nil {
				t.Fatal(err)
			}

			j2, s2 := fakeJudge(t)
			s2.Add(tt.script.rule())
			g := newSubgoalsGrader(t, j2, threeGoals())
			tg, ok := g.(Trackable)
			if !ok {
				t.Fatal("subgoals is not Trackable")
			}
			tr := tg.Track()
			if tr == nil {
				t.Fatal("Track() = nil")
			}
			settled := observeAll(tr, conv, tt.observe)
			if !reflect.DeepEqual(settled, tt.settled) {
				t.Errorf("settled = %v, want %v", settled, tt.settled)
			}
			tracked, err := tr.Grade(context.Background(), whole)
			if err != nil {
				t.Fatal(err)
			}
			if tracked.Score != plain.Score || tracked.Verdict != plain.Verdict || tracked.Reason != plain.Reason || tracked.Name != "subgoals" {
				t.Errorf("tracked %+v\nplain   %+v", tracked, plain)
			}
			if !reflect.DeepEqual(tracked.Details, plain.Details) || !reflect.DeepEqual(tracked.Assertions, plain.Assertions) {
				t.Errorf("tracked details %v %+v\nplain   details %v %+v", tracked.Details, tracked.Assertions, plain.Details, plain.Assertions)
			}
			if s1.Calls() != s2.Calls() || tracked.Usage.Calls != plain.Usage.Calls {
				t.Errorf("tracked made %d requests, plain %d", s2.Calls(), s1.Calls())
			}
			// The same requests, in the same order.
			a1, a2 := asked(s1), asked(s2)
			if !reflect.DeepEqual(a1, a2) {
				t.Errorf("tracked asked %+v\nplain asked %+v", a2, a1)
			}
		})
	}
}

func TestSubgoalsTrackersAreIndependent(t *testing.T) {
	conv := threeTurnBooking()
	j, s := fakeJudge(t)
	s.Add(subgoalScript{goalSearch: 1, goalBook: 1, goalConfirm: 1}.rule())
	tg := newSubgoalsGrader(t, j, threeGoals()).(Trackable)
	first := tg.Track()
	if got := observeAll(first, conv, 1); !got[0] {
		t.Fatalf("settled = %v", got)
	}
	// A second conversation starts from nothing.
	second := tg.Track()
	if second.Settled(1) {
		t.Error("a new tracker is settled before it observed anything")
	}
	observeAll(second, conv, 1)
	if s.Calls() != 2 {
		t.Errorf("%d requests, want one per tracker", s.Calls())
	}
	// Observing goes on asynchronously, concurrently across trackers.
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tr := tg.Track()
			observeAll(tr, conv, 3)
			if sc, err := tr.Grade(context.Background(), &agenteval.GradeInput{Transcript: conv, Output: conv}); err != nil || sc.Score != 1 {
				t.Errorf("score %+v, err %v", sc, err)
			}
		}()
	}
	wg.Wait()
	if s.Calls() != 6 {
		t.Errorf("%d requests, want 6", s.Calls())
	}
}

func TestSubgoalsTrackerError(t *testing.T) {
	conv := threeTurnBooking()
	j, s := fakeJudge(t)
	s.Add(&fakellm.Rule{Times: 1, Reply: verdicts(true, true, false)}, &fakellm.Rule{Reply: fakellm.Reply{Content: "not JSON"}})
	tr := newSubgoalsGrader(t, j, threeGoals()).(Trackable).Track()
	if got := observeAll(tr, conv, 3); !reflect.DeepEqual(got, []bool{false, false, false}) {
		t.Errorf("settled = %v", got)
	}
	sc, err := tr.Grade(context.Background(), &agenteval.GradeInput{Transcript: conv, Output: conv})
	if err == nil || sc.Verdict != agenteval.VerdictError || !strings.Contains(sc.Reason, "judge subgoals at turn 2") {
		t.Errorf("score %+v, err %v", sc, err)
	}
	// After the failure at turn 2, turn 3 is not judged.
	if s.Calls() != 4 {
		t.Errorf("%d requests, want 1 + 3", s.Calls())
	}
}

func TestSubgoalsBadSettings(t *testing.T) {
	j, _ := fakeJudge(t)
	tests := []struct {
		name   string
		params map[string]any
		want   string
	}{
		{"no settings", nil, "subgoals is empty"},
		{"empty list", map[string]any{"subgoals": []any{}}, "subgoals is empty"},
		{"unknown setting", map[string]any{"subgoal": []any{"x"}}, `did you mean "subgoals"?`},
		{"even samples", map[string]any{"subgoals": []any{"x"}, "samples": 2}, "samples must be a positive odd number"},
		{"negative samples", map[string]any{"subgoals": []any{"x"}, "samples": -1}, "samples must be a positive odd number"},
		{"empty details", map[string]any{"subgoals": []any{"x", "  "}}, "subgoals[1] has no details"},
		{"object without details", map[string]any{"subgoals": []any{map[string]any{"type": "tool"}}}, "subgoals[0] has no details"},
		{"not text or object", map[string]any{"subgoals": []any{3}}, "subgoals[0] must be text or {details, type, turn}"},
		{"turn 0", map[string]any{"subgoals": []any{map[string]any{"details": "x", "turn": 0}}}, `subgoals[0]: turn must be a turn number (1 or more), not "0"`},
		{"turn as words", map[string]any{"subgoals": []any{map[string]any{"details": "x", "turn": "soon"}}}, `not "soon"`},
		{"fractional turn", map[string]any{"subgoals": []any{map[string]any{"details": "x", "turn": 1.5}}}, `not "1.5"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(Spec{Type: "subgoals", Options: tt.params, Judge: j})
			if err == nil || !strings.HasPrefix(err.Error(), "subgoals: ") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
	_, err := New(Spec{Type: "subgoals", Options: threeGoals()})
	var nj *NoJudgeError
	if !errors.As(err, &nj) || !(Spec{Type: "subgoals"}).NeedsJudge() {
		t.Errorf("no judge: %v", err)
	}
	// max_turns is a number of turns.
	if _, err := New(Spec{Type: "subgoals", Judge: j, Options: map[string]any{"subgoals": []any{"x"}, "max_turns": -1}}); err == nil || !strings.Contains(err.Error(), "max_turns must be a number of turns (1 or more), not -1") {
		t.Errorf("max_turns -1: %v", err)
	}
	// A turn of null is no turn.
	if _, err := New(Spec{Type: "subgoals", Judge: j, Options: map[string]any{"subgoals": []any{map[string]any{"details": "x", "turn": nil}}}}); err != nil {
		t.Errorf("turn: null: %v", err)
	}
}

// TestInspectAUCAndPPT carries every AUC and PPT value of agent_inspect's
// own tests (tests/test_auc.py, tests/test_ppt.py, tests/test_progress.py,
// tests/test_aggregator.py), then edge cases whose values come from
// sklearn.metrics.auc on the same lists. progress is the per-turn progress
// the judge produced; maxTurns is agent_inspect's MAX_TURNS.
func TestInspectAUCAndPPT(t *testing.T) {
	const (
		noPoints  = "no progress to compute it from (the conversation has no turns)"
		onePoint  = "it needs at least 2 points and max_turns 1 gives one"
		ten, full = 10, 20
	)
	ones := func(n int) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = 1
		}
		return out
	}
	tests := []struct {
		name     string
		progress []float64
		maxTurns int
		// curve is the list AUC and PPT see (nil: check only its length,
		// maxTurns).
		curve          []float64
		auc, ppt       float64
		aucErr, pptErr string
	}{
		// test_auc_score_evaluate_fully_completed,
		// test_ppt_score_evaluate_fully_completed and
		// test_progress_through_turns_fully_completed: 3 turns, every
		// subgoal met at once, the default MAX_TURNS; 20 values.
		{name: "agent_inspect: fully completed", progress: []float64{1, 1, 1}, maxTurns: full, auc: 1, ppt: 1},
		// test_auc_score_evaluate_partially_completed and
		// test_ppt_score_evaluate_partially_completed: one of two subgoals
		// at turn 1, the other at turn 2, MAX_TURNS 10.
		{name: "agent_inspect: partially completed", progress: []float64{0.5, 1, 1}, maxTurns: ten, curve: []float64{0.5, 1, 1, 1, 1, 1, 1, 1, 1, 1}, auc: 0.9722, ppt: 0.5},
		// test_progress_through_turns_partially_completed: first 0.5,
		// last 1, 20 values.
		{name: "agent_inspect: progress through turns, partial", progress: []float64{0.5, 1, 1}, maxTurns: full, auc: 0.9868, ppt: 0.5},
		// test_ppt_score_evaluate_all_incomplete.
		{name: "agent_inspect: all incomplete", progress: []float64{0, 0, 0}, maxTurns: ten, auc: 0, ppt: 0},
		// test_get_auc_score_calculation_multiple_scores: the list as
		// given.
		{name: "agent_inspect: multiple scores", progress: []float64{0, 0.5, 1}, maxTurns: 3, curve: []float64{0, 0.5, 1}, auc: 0.5, ppt: 0.3333},
		// test_get_auc_score_calculation_only_one_score.
		{name: "agent_inspect: only one score", progress: []float64{0.7}, maxTurns: 1, curve: []float64{0.7}, aucErr: onePoint, ppt: 0.7},
		// test_get_auc_score_no_validation_results, test_no_auc_score,
		// test_no_ppt_score, test_no_progress_score_error: nothing to
		// compute from.
		{name: "agent_inspect: no progress scores", progress: nil, maxTurns: full, aucErr: noPoints, pptErr: noPoints},

		// The case: done at every one of 10 turns.
		{name: "done at all 10 turns, default max_turns", progress: ones(10), maxTurns: full, auc: 1, ppt: 1},
		{name: "done at all 10 turns, max_turns 10", progress: ones(10), maxTurns: ten, auc: 1, ppt: 1},
		{name: "one turn, held", progress: []float64{0.5}, maxTurns: 2, curve: []float64{0.5, 0.5}, auc: 0.5, ppt: 0.5},
		{name: "thirds, max_turns 3", progress: []float64{0.3333, 0.6667, 1}, maxTurns: 3, auc: 0.6667, ppt: 0.3333},
		{name: "thirds, held to 20", progress: []float64{0.3333, 0.6667, 1}, maxTurns: full, auc: 0.9649, ppt: 0.3333},
		{name: "a little, late", progress: []float64{0, 0, 0.3333}, maxTurns: full, auc: 0.307, ppt: 0.1111},
		{name: "never all: the best, first reached", progress: []float64{0.25, 0.5, 0.5, 0.75}, maxTurns: 6, curve: []float64{0.25, 0.5, 0.5, 0.75, 0.75, 0.75}, auc: 0.6, ppt: 0.1875},
		{name: "flat at two thirds", progress: []float64{0.6667, 0.6667, 0.6667}, maxTurns: full, auc: 0.6667, ppt: 0.6667},
		// Turns past max_turns are not looked at, though progress rose.
		{name: "longer than max_turns", progress: []float64{0, 0.5, 0.5, 1, 1}, maxTurns: 3, curve: []float64{0, 0.5, 0.5}, auc: 0.375, ppt: 0.25},
		{name: "one turn, max_turns 1", progress: []float64{1}, maxTurns: 1, curve: []float64{1}, aucErr: onePoint, ppt: 1},
		// The exact area is 0.99375, a tie at the fifth decimal; numpy's
		// order of additions gives 0.9937499999999999, so 0.9937 (adding
		// left to right gives 0.99375, which would round to 0.9938).
		{name: "a tie: numpy's sum decides", progress: []float64{0, 1}, maxTurns: 81, auc: 0.9937, ppt: 0.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			curve := progressCurve(tt.progress, tt.maxTurns)
			switch {
			case tt.curve != nil && !reflect.DeepEqual(curve, tt.curve):
				t.Errorf("curve = %v, want %v", curve, tt.curve)
			case tt.curve == nil && tt.progress != nil && len(curve) != tt.maxTurns:
				t.Errorf("curve has %d values, want %d", len(curve), tt.maxTurns)
			}
			auc, err := progressArea(curve)
			if got := errText(err); got != tt.aucErr || (err == nil && auc != tt.auc) {
				t.Errorf("AUC = %v (error %q), want %v (error %q)", auc, got, tt.auc, tt.aucErr)
			}
			ppt, err := progressRate(curve)
			if got := errText(err); got != tt.pptErr || (err == nil && ppt != tt.ppt) {
				t.Errorf("PPT = %v (error %q), want %v (error %q)", ppt, got, tt.ppt, tt.pptErr)
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestPairwiseSum: numpy sums in blocks, so the order of additions (and
// so the last bit) is numpy's.
func TestPairwiseSum(t *testing.T) {
	seq := func(a []float64) float64 {
		s := 0.0
		for _, v := range a {
			s += v
		}
		return s
	}
	tenths := func(n int) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = 0.1
		}
		return out
	}
	// Under 8 values: left to right.
	if a := tenths(7); pairwiseSum(a) != seq(a) {
		t.Errorf("7 values: %v, want %v", pairwiseSum(a), seq(a))
	}
	// 8 to 128: eight running sums, then combined in pairs; for ten 0.1s
	// that is 1, where adding left to right gives 0.9999999999999999.
	if a := tenths(10); pairwiseSum(a) != 1 || seq(a) == 1 {
		t.Errorf("10 values: %v (left to right %v)", pairwiseSum(a), seq(a))
	}
	// Past 128: halves; numpy's np.add.reduce gives this for 300 0.1s.
	if got := pairwiseSum(tenths(300)); got != 29.999999999999996 {
		t.Errorf("300 values: %v, want numpy's 29.999999999999996", got)
	}
	if pairwiseSum(nil) != 0 {
		t.Error("no values: not 0")
	}
}
