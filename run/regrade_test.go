package run

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/suite"
)

const regradeSuite = `name: s
tests:
  - id: one
    input: hello
    assertions: [{type: contains, value: hello}, {type: token_usage, max: 100}]
  - id: conv
    mode: conversation
    turns:
      - input: first
        assertions: [{type: contains, value: first}]
      - input: second
        assertions: [{type: contains, value: nope}, {type: latency, max: 60000}]
    assertions: [{type: max_turns, max: 1}]
  - id: twice
    trials: 2
    input: again
    assertions: [{type: icontains, value: AGAIN}]
  - id: judged
    mode: conversation
    turns:
      - input: question
        assertions: [Answers the question]
      - input: thanks
`

// regradeAll regrades recorded results, keyed by test id.
func regradeAll(t *testing.T, s *suite.Suite, opt RegradeOptions, rec map[string]*agenteval.Result) (map[string]*agenteval.Result, []string) {
	t.Helper()
	out := map[string]*agenteval.Result{}
	var notes []string
	var mu sync.Mutex
	opt.Source = "r1"
	opt.Recorded = func(t *agenteval.Test) *agenteval.Result { return rec[t.ID] }
	opt.Note = func(t *agenteval.Test, msg string) {
		mu.Lock()
		defer mu.Unlock()
		notes = append(notes, t.ID+": "+msg)
	}
	err := RegradeSuite(context.Background(), s, opt, func(r *agenteval.Result) error {
		mu.Lock()
		defer mu.Unlock()
		out[r.TestID] = r
		return nil
	})
	if err != nil {
		t.Fatalf("RegradeSuite: %v", err)
	}
	return out, notes
}

// verdicts lists a result's scores as name, verdict and score, nested
// ones indented, and each trial's.
func verdicts(r *agenteval.Result) string {
	var b strings.Builder
	var walk func(indent string, ss []agenteval.Score)
	walk = func(indent string, ss []agenteval.Score) {
		for _, s := range ss {
			fmt.Fprintf(&b, "%s%s %s %.3f\n", indent, s.Name, s.Verdict, s.Score)
			walk(indent+"  ", s.Scores)
		}
	}
	fmt.Fprintf(&b, "%s %s %.3f\n", r.TestID, r.Verdict, r.Score)
	walk("  ", r.Scores)
	for _, tr := range r.Trials {
		fmt.Fprintf(&b, "  trial %d %s %.3f\n", tr.Trial, tr.Verdict, tr.Score)
		walk("    ", tr.Scores)
	}
	return b.String()
}

// A regrade with the same settings gives every deterministic score the
// run gave, without calling the agent; the judge is called once per judged
// unit.
func TestRegradeSameVerdictsNoAgent(t *testing.T) {
	s := loadSuite(t, regradeSuite)
	j, srv := fakeJudge(t)
	agent := &echo{}
	first := runAll(t, s, Options{Agent: agent, Target: "t", Judge: j})
	agentCalls, judgeCalls := len(agent.calls), srv.Calls()
	again, notes := regradeAll(t, s, RegradeOptions{Options: Options{Target: "t", Judge: j}}, first)
	if len(agent.calls) != agentCalls {
		t.Errorf("the regrade called the agent %d times", len(agent.calls)-agentCalls)
	}
	if got := srv.Calls() - judgeCalls; got != 1 {
		t.Errorf("the regrade made %d judge calls, want 1 (the judged turn)", got)
	}
	if len(notes) > 0 {
		t.Errorf("notes: %q", notes)
	}
	for id, r := range first {
		if got, want := verdicts(again[id]), verdicts(r); got != want {
			t.Errorf("%s regraded:\n%s\nwant:\n%s", id, got, want)
		}
		if again[id].Target != "t" {
			t.Errorf("%s: target %q", id, again[id].Target)
		}
	}
	// The graders that measure the live run keep its scores, saying so.
	var carried []string
	for _, id := range []string{"one", "conv"} {
		for _, sc := range again[id].Scores {
			for _, x := range append([]agenteval.Score{sc}, sc.Scores...) {
				if strings.Contains(x.Reason, "as run r1 measured it") {
					carried = append(carried, id+"/"+x.Name)
				}
			}
		}
	}
	if strings.Join(carried, " ") != "one/token_usage conv/latency" {
		t.Errorf("carried over: %q", carried)
	}
	// This run spent only what the judge did.
	if u := again["one"].Usage; u != nil {
		t.Errorf("a deterministic regrade spent %+v", *u)
	}
}

// A test whose eval file no longer fits its transcript is refused, saying
// where; a trial whose agent failed is kept as recorded.
func TestRegradeRefuses(t *testing.T) {
	s := loadSuite(t, regradeSuite)
	j, _ := fakeJudge(t)
	first := runAll(t, s, Options{Agent: &echo{}, Target: "t", Judge: j})
	tests := []struct {
		name, from, to string
		test, want     string
	}{
		{"a turn's input changed", "      - input: second\n", "      - input: third\n", "conv",
			`not regraded: turn 2 no longer matches the transcript: the eval file says "third" and run r1 sent "second"; run the test again to grade it`},
		{"a turn was added", "    assertions: [{type: max_turns, max: 1}]\n", "      - input: more\n        assertions: [{type: contains, value: x}]\n    assertions: [{type: max_turns, max: 1}]\n", "conv",
			"not regraded: run r1 recorded 2 turns and the test has 3 now; run the test again to grade it"},
		{"a turn was dropped", "      - input: thanks\n", "", "judged",
			"not regraded: run r1 recorded more turns than the test's 1; run the test again to grade it"},
		{"the input changed", "    input: hello\n", "    input: goodbye\n", "one",
			`not regraded: its input no longer matches the transcript: message 1 is user "goodbye" in the eval file and user "hello" in run r1; run the test again to grade it`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(regradeSuite, tc.from) {
				t.Fatalf("the suite lacks %q", tc.from)
			}
			changed := loadSuite(t, strings.Replace(regradeSuite, tc.from, tc.to, 1))
			got, _ := regradeAll(t, changed, RegradeOptions{Options: Options{Target: "t", Judge: j}, Changed: true}, first)
			r := got[tc.test]
			if r.Verdict != agenteval.VerdictError || r.Error != tc.want {
				t.Errorf("verdict %s, error:\n%s\nwant:\n%s", r.Verdict, r.Error, tc.want)
			}
		})
	}

	// The agent failed on turn 2: that trial has no whole transcript.
	failed := runAll(t, s, Options{Agent: &echo{fail: map[int]error{2: context.DeadlineExceeded}}, Target: "t", Judge: j})
	got, notes := regradeAll(t, s, RegradeOptions{Options: Options{Target: "t", Judge: j}}, failed)
	if got["conv"].Verdict != agenteval.VerdictError || !strings.Contains(got["conv"].Error, "turn 2: agent:") {
		t.Errorf("conv: %s %q", got["conv"].Verdict, got["conv"].Error)
	}
	if !strings.Contains(strings.Join(notes, "\n"), "conv: trial 1 kept as recorded: the agent failed, so its transcript is cut short") {
		t.Errorf("notes: %q", notes)
	}
}

// A test whose graders changed is graded with the file's, and said.
func TestRegradeNotesChangedGraders(t *testing.T) {
	s := loadSuite(t, regradeSuite)
	j, _ := fakeJudge(t)
	first := runAll(t, s, Options{Agent: &echo{}, Target: "t", Judge: j})
	changed := loadSuite(t, strings.Replace(regradeSuite, "{type: contains, value: nope}", "{type: contains, value: reply}", 1))
	got, notes := regradeAll(t, changed, RegradeOptions{Options: Options{Target: "t", Judge: j}, Changed: true}, first)
	if len(notes) != 0 {
		t.Errorf("a changed value is not a changed grader: %q", notes)
	}
	// The new value is checked against the recorded reply.
	if sc := got["conv"].Scores[1]; sc.Name != "turn-2" || sc.Verdict != agenteval.VerdictPass {
		t.Errorf("turn-2: %+v", sc)
	}
	changed = loadSuite(t, strings.Replace(regradeSuite, "[{type: icontains, value: AGAIN}]", "[{type: icontains, value: AGAIN}, {type: regex, value: again}]", 1))
	_, notes = regradeAll(t, changed, RegradeOptions{Options: Options{Target: "t", Judge: j}, Changed: true}, first)
	if strings.Join(notes, "\n") != "twice: its graders changed since run r1 (now regex); graded with the eval file's" {
		t.Errorf("notes: %q", notes)
	}
}

func TestAgentUsage(t *testing.T) {
	cost := func(f float64) *float64 { return &f }
	tr := agenteval.Trial{
		Usage:      &agenteval.Usage{Calls: 5, InputTokens: 100, OutputTokens: 50, CostUSD: cost(0.5)},
		Scores:     []agenteval.Score{{Usage: &agenteval.Usage{Calls: 2, InputTokens: 30, OutputTokens: 10, CostUSD: cost(0.2)}}, {}},
		Simulation: &agenteval.Simulation{Usage: &agenteval.Usage{Calls: 1, InputTokens: 20, OutputTokens: 5, CostUSD: cost(0.1)}},
	}
	u := agentUsage(tr)
	if u.Calls != 2 || u.InputTokens != 50 || u.OutputTokens != 35 || u.CostUSD == nil || *u.CostUSD < 0.199 || *u.CostUSD > 0.201 {
		t.Errorf("agent usage %+v", u)
	}
	if u := agentUsage(agenteval.Trial{}); !u.IsZero() {
		t.Errorf("no usage: %+v", u)
	}
}
