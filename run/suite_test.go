package run

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/fakellm"
	"github.com/agenteval/agenteval/judge"
	"github.com/agenteval/agenteval/provider"
	"github.com/agenteval/agenteval/suite"
	"github.com/google/go-cmp/cmp"
)

func loadSuite(t *testing.T, yaml string) *suite.Suite {
	t.Helper()
	s, err := suite.Parse("t.yaml", []byte(yaml), suite.Options{JudgeAvailable: true})
	if err != nil {
		t.Fatalf("suite: %v", err)
	}
	return s
}

func fakeJudge(t *testing.T) (*judge.Judge, *fakellm.Server) {
	t.Helper()
	s, err := fakellm.Start(fakellm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	m, err := provider.Open(provider.Config{Provider: "openai", Model: "gpt-4o-mini", BaseURL: s.URL, APIKey: "k", RetryWait: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return &judge.Judge{Model: m, Name: "openai:gpt-4o-mini"}, s
}

// echo answers each turn with "reply N to: <user message>" and records
// what it was sent.
type echo struct {
	mu    sync.Mutex
	calls []*agenteval.AgentRequest
	fail  map[int]error
}

func (e *echo) Respond(ctx context.Context, req *agenteval.AgentRequest) (*agenteval.AgentResponse, error) {
	e.mu.Lock()
	e.calls = append(e.calls, req)
	err := e.fail[req.Turn]
	e.mu.Unlock()
	if err != nil {
		return nil, err
	}
	last := req.Messages[len(req.Messages)-1].Content
	return &agenteval.AgentResponse{Messages: agenteval.Conversation{{Role: agenteval.RoleAssistant, Content: fmt.Sprintf("reply %d to: %s", req.Turn, last)}},
		Usage: agenteval.Usage{InputTokens: 10, OutputTokens: 5}}, nil
}

func runAll(t *testing.T, s *suite.Suite, opt Options) map[string]*agenteval.Result {
	t.Helper()
	out := map[string]*agenteval.Result{}
	var mu sync.Mutex
	err := RunSuite(context.Background(), s, opt, func(r *agenteval.Result) error {
		mu.Lock()
		defer mu.Unlock()
		out[r.TestID] = r
		return nil
	})
	if err != nil {
		t.Fatalf("RunSuite: %v", err)
	}
	return out
}

const travel = `
tests:
  - id: travel
    mode: conversation
    criteria: Helpful travel advice
    input:
      - role: system
      - input: You are a helpful travel planning assistant.
    turns:
      - input: Japan in spring?
        expected_output: Kyoto and the Alps.
        assertions:
          - Recommends regions
          - type: contains
            value: "reply 1"
      - input: Culture, not cities.
        assertions:
          - type: icontains
            value: temples
      - input: Budget is $3000.
    assertions:
      - Remembers the budget
`

func TestConversationMode(t *testing.T) {
	j, srv := fakeJudge(t)
	agent := &echo{}
	res := runAll(t, loadSuite(t, travel), Options{Agent: agent, Judge: j, Target: "echo"})["travel"]
	// The agent got the whole history each turn, starting with the system
	// prompt from input and nothing of ours.
	if len(agent.calls) != 3 {
		t.Fatalf("%d agent calls", len(agent.calls))
	}
	third := agent.calls[2].Messages
	want := []string{"system:You are a helpful travel planning assistant.", "user:Japan in spring?", "assistant:reply 1 to: Japan in spring?", "user:Culture, not cities.", "assistant:reply 2 to: Culture, not cities.", "user:Budget is $3000."}
	if len(third) != len(want) {
		t.Fatalf("turn 3 got %d messages: %+v", len(third), third)
	}
	for i, m := range third {
		if got := string(m.Role) + ":" + m.Content; got != want[i] {
			t.Errorf("turn 3 message %d = %q, want %q (the actual reply, not expected_output, carries forward)", i, got, want[i])
		}
	}
	if c := agent.calls[0]; !strings.HasSuffix(c.ConversationID, "/echo/t/travel#1") || c.TestID != "travel" || c.Trial != 1 || agent.calls[2].Turn != 3 {
		t.Errorf("request ids: %+v", agent.calls[0])
	}
	names := []string{}
	for _, s := range res.Scores {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "turn-1,turn-2,turn-3,conversation" {
		t.Fatalf("scores = %v", names)
	}
	t1 := res.Scores[0]
	// Beside assertions, expected_output is the reference the judge sees,
	// not a criterion of its own (AgentV's meaning).
	if t1.Type != "composite" || len(t1.Scores) != 2 || len(t1.Assertions) != 2 {
		t.Errorf("turn 1 = %+v", t1)
	}
	if res.Scores[1].Verdict != agenteval.VerdictFail || res.Scores[2].Reason == "" || res.Scores[2].Verdict != agenteval.VerdictSkip || res.Scores[2].Weight != 0 {
		t.Errorf("turn 2 and 3: %+v / %+v", res.Scores[1], res.Scores[2])
	}
	// mean over 3 scores: 1, 0, 1 (turn 3 has nothing to grade)
	if res.Score != 2.0/3 || res.Verdict != agenteval.VerdictFail || res.ExecutionStatus != agenteval.StatusQualityFailure {
		t.Errorf("result = %v %s %s", res.Score, res.Verdict, res.ExecutionStatus)
	}
	if len(res.Output) != 7 || res.Target != "echo" || res.Usage == nil || res.Usage.InputTokens < 30 {
		t.Errorf("output %d messages, target %q, usage %+v", len(res.Output), res.Target, res.Usage)
	}
	// One judge call per graded turn with strings (turn 1) plus the
	// conversation; turn 1's expected_output reaches its call.
	if srv.Calls() != 2 {
		t.Errorf("%d judge calls, want 2", srv.Calls())
	}
	var turn1 string
	for _, r := range srv.Requests() {
		if strings.Contains(r.Text(), "Recommends regions") {
			turn1 = r.Messages[1].Text()
		}
	}
	if !regexp.MustCompile(`<reference id="[0-9a-f]+">Kyoto and the Alps\.`).MatchString(turn1) ||
		!regexp.MustCompile(`<reply id="[0-9a-f]+">\n<assistant id="[0-9a-f]+">reply 1 to: Japan in spring\?`).MatchString(turn1) || strings.Contains(turn1, "reply 2") {
		t.Errorf("turn 1's judge prompt:\n%s", turn1)
	}
}

func TestAggregationAndStop(t *testing.T) {
	j, _ := fakeJudge(t)
	base := strings.Replace(travel, "    criteria:", "    aggregation: min\n    criteria:", 1)
	res := runAll(t, loadSuite(t, base), Options{Agent: &echo{}, Judge: j})["travel"]
	if res.Score != 0 {
		t.Errorf("min aggregation = %v, want the weakest turn's 0", res.Score)
	}
	stop := strings.Replace(travel, "    criteria:", "    on_turn_failure: stop\n    criteria:", 1)
	agent := &echo{}
	res = runAll(t, loadSuite(t, stop), Options{Agent: agent, Judge: j})["travel"]
	if len(agent.calls) != 2 {
		t.Errorf("the agent was called %d times; after turn 2 failed it must not be called again", len(agent.calls))
	}
	if s := res.Scores[2]; s.Verdict != agenteval.VerdictSkip || s.Score != 0 || !strings.Contains(s.Reason, "on_turn_failure: stop") {
		t.Errorf("turn 3 = %+v", s)
	}
	// mean of 1, 0, 0 (skipped) and the conversation's 1
	if res.Score != 0.5 {
		t.Errorf("score = %v", res.Score)
	}
}

// window_size is AgentV's: the agent and the turn grader get the system
// messages and the last 2×N other messages. grader_window_size is ours:
// the graders see the last N whole turns and the agent everything.
func TestWindows(t *testing.T) {
	cases := []struct {
		key string
		// agent is what the agent got on turn 3, as role:text.
		agent []string
		// judged and hidden must and must not reach the turn-3 judge.
		judged, hidden []string
	}{
		{"window_size: 1",
			[]string{"system:SYSTEM PROMPT", "assistant:reply 2 to: second question", "user:third question"},
			[]string{"SYSTEM PROMPT", "third question"}, []string{"first question", "second question"}},
		{"window_size: 2",
			[]string{"system:SYSTEM PROMPT", "assistant:reply 1 to: first question", "user:second question", "assistant:reply 2 to: second question", "user:third question"},
			[]string{"SYSTEM PROMPT", "second question", "third question"}, []string{"first question"}},
		{"grader_window_size: 1",
			[]string{"system:SYSTEM PROMPT", "user:first question", "assistant:reply 1 to: first question", "user:second question", "assistant:reply 2 to: second question", "user:third question"},
			[]string{"SYSTEM PROMPT", "third question"}, []string{"first question", "second question"}},
	}
	for _, c := range cases {
		t.Run(c.key, func(t *testing.T) {
			j, srv := fakeJudge(t)
			yaml := `
tests:
  - id: w
    mode: conversation
    ` + c.key + `
    input: [{role: system, content: SYSTEM PROMPT}]
    turns:
      - input: first question
      - input: second question
      - input: third question
        assertions: [Answers the third question]
`
			agent := &echo{}
			runAll(t, loadSuite(t, yaml), Options{Agent: agent, Judge: j})
			var got []string
			for _, m := range agent.calls[2].Messages {
				got = append(got, string(m.Role)+":"+m.Content)
			}
			if diff := cmp.Diff(c.agent, got); diff != "" {
				t.Errorf("the agent's messages on turn 3 (-want +got):\n%s", diff)
			}
			p := srv.Requests()[0].Messages[1].Text()
			for _, w := range c.judged {
				if !strings.Contains(p, w) {
					t.Errorf("the judge did not get %q:\n%s", w, p)
				}
			}
			for _, w := range c.hidden {
				if strings.Contains(p, w) {
					t.Errorf("the judge got %q, outside the window:\n%s", w, p)
				}
			}
		})
	}
}

func TestAgentErrorsAreExecutionErrors(t *testing.T) {
	j, _ := fakeJudge(t)
	agent := &echo{fail: map[int]error{2: fmt.Errorf("connection refused")}}
	res := runAll(t, loadSuite(t, travel), Options{Agent: agent, Judge: j})["travel"]
	if res.ExecutionStatus != agenteval.StatusExecutionError || res.Verdict != agenteval.VerdictError || !strings.Contains(res.Error, "turn 2: agent: connection refused") {
		t.Errorf("result = %+v", res)
	}
	if len(agent.calls) != 2 || res.Scores[2].Verdict != agenteval.VerdictSkip {
		t.Errorf("after the agent failed, later turns must be skipped: %d calls, %+v", len(agent.calls), res.Scores[2])
	}
}

func TestSingleTurnTests(t *testing.T) {
	yaml := `
tests:
  - id: plain
    input: What is 2+2?
    assertions:
      - type: contains
        value: "2+2"
      - type: regex
        value: '^reply 1'
`
	agent := &echo{}
	s := loadSuite(t, yaml)
	// A test a Go program builds is not validated by the loader; with
	// nothing to grade it would pass whatever the agent said, so the
	// runner refuses it too.
	s.Tests = append(s.Tests, agenteval.Test{ID: "nothing", Input: agenteval.Conversation{{Role: agenteval.RoleUser, Content: "hi"}}})
	res := runAll(t, s, Options{Agent: agent})
	if r := res["plain"]; r.Score != 1 || r.Verdict != agenteval.VerdictPass || len(r.Scores) != 2 || r.Scores[0].Name != "contains" {
		t.Errorf("plain = %+v", r)
	}
	if r := res["nothing"]; r.Verdict != agenteval.VerdictError || !strings.Contains(r.Error, `test "nothing" has nothing to grade`) {
		t.Errorf("a test with nothing to grade must not pass: %+v", r)
	}
	if len(agent.calls[0].Messages) != 1 {
		t.Errorf("single-turn input: %+v", agent.calls[0].Messages)
	}
}

func TestTrialsAndPassAtK(t *testing.T) {
	var n atomic.Int64
	flaky := agenteval.AgentFunc(func(ctx context.Context, req *agenteval.AgentRequest) (*agenteval.AgentResponse, error) {
		text := "wrong"
		if n.Add(1)%2 == 0 {
			text = "right"
		}
		return &agenteval.AgentResponse{Messages: agenteval.Conversation{{Role: agenteval.RoleAssistant, Content: text}}}, nil
	})
	yaml := `
tests:
  - id: t
    input: q
    trials: {count: 4, strategy: pass_at_k, run_all: true}
    assertions: [{type: equals, value: right}]
`
	res := runAll(t, loadSuite(t, yaml), Options{Agent: flaky, Concurrency: 1})["t"]
	if len(res.Trials) != 4 || res.Score != 1 || res.Verdict != agenteval.VerdictPass {
		t.Fatalf("result = %+v", res)
	}
	// 2 of 4 passed: pass@1 = 0.5, pass@2 = 1 - C(2,2)/C(4,2) = 5/6, pass^2 = 1/6.
	if p := res.PassAtK; len(p) != 4 || p[0].PassAtK != 0.5 || p[1].PassAtK != 1-1.0/6 || p[1].PassHatK != 1.0/6 || p[3].PassAtK != 1 || p[3].PassHatK != 0 {
		t.Errorf("pass@k = %+v", res.PassAtK)
	}
	ids := map[string]bool{}
	for _, tr := range res.Trials {
		ids[fmt.Sprint(tr.Trial)] = true
	}
	if len(ids) != 4 {
		t.Errorf("trials = %+v", res.Trials)
	}
}

// pass_at_k stops at the first passing trial and cost_limit_usd once the
// trials have cost that much, as in AgentV: the agent is not called for
// the trials after, and the result holds the trials that ran.
func TestTrialsStopEarly(t *testing.T) {
	cases := []struct {
		trials string
		// pass lists which calls answer right; calls is how many the
		// agent must get.
		pass  map[int64]bool
		calls int64
		score float64
	}{
		{"{count: 5, strategy: pass_at_k}", map[int64]bool{3: true}, 3, 1},
		{"{count: 5}", map[int64]bool{1: true}, 1, 1}, // suite execution default: pass_at_k
		{"{count: 3, strategy: pass_at_k}", map[int64]bool{}, 3, 0},
		{"{count: 5, strategy: pass_at_k, run_all: true}", map[int64]bool{1: true}, 5, 1},
		{"{count: 5, strategy: mean, cost_limit_usd: 0.025}", map[int64]bool{}, 3, 0},
	}
	for _, c := range cases {
		t.Run(c.trials, func(t *testing.T) {
			var n, others atomic.Int64
			agent := agenteval.AgentFunc(func(ctx context.Context, req *agenteval.AgentRequest) (*agenteval.AgentResponse, error) {
				text := "wrong"
				if req.TestID != "t" {
					others.Add(1)
				} else if c.pass[n.Add(1)] {
					text = "right"
				}
				cost := 0.01
				return &agenteval.AgentResponse{Messages: agenteval.Conversation{{Role: agenteval.RoleAssistant, Content: text}}, Usage: agenteval.Usage{Calls: 1, CostUSD: &cost}}, nil
			})
			yaml := `
execution:
  trials: ` + c.trials + `
tests:
  - id: t
    input: q
    assertions: [{type: equals, value: right}]
  - id: other
    input: q
    trials: 1
    assertions: [{type: contains, value: r}]
`
			res := runAll(t, loadSuite(t, yaml), Options{Agent: agent, Concurrency: 4})
			if got := n.Load(); got != c.calls || others.Load() != 1 {
				t.Errorf("the agent got %d calls, want %d (and %d for the other test, want 1)", got, c.calls, others.Load())
			}
			r := res["t"]
			if want := int(c.calls); want > 1 && len(r.Trials) != want {
				t.Errorf("%d trials in the result, want %d", len(r.Trials), want)
			}
			if r.Score != c.score {
				t.Errorf("score %v, want %v", r.Score, c.score)
			}
		})
	}
}

func TestDependencies(t *testing.T) {
	yaml := `
assertions: [{type: contains, value: reply}]
tests:
  - id: setup
    input: go
  - id: skipped
    input: a
    depends_on: [setup]
  - id: failed
    input: b
    depends_on: setup
    on_dependency_failure: fail
  - id: ran
    input: c
    depends_on: [setup]
    on_dependency_failure: run
  - id: fine
    input: d
    depends_on: [ran]
`
	agent := &echo{fail: map[int]error{}}
	broken := agenteval.AgentFunc(func(ctx context.Context, req *agenteval.AgentRequest) (*agenteval.AgentResponse, error) {
		if req.Messages[0].Content == "go" {
			return nil, fmt.Errorf("setup broke")
		}
		return agent.Respond(ctx, req)
	})
	res := runAll(t, loadSuite(t, yaml), Options{Agent: broken})
	if r := res["setup"]; r.ExecutionStatus != agenteval.StatusExecutionError {
		t.Fatalf("setup = %+v", r)
	}
	if r := res["skipped"]; r.Verdict != agenteval.VerdictSkip || !strings.Contains(r.Error, "dependency [setup] ended in execution_error") {
		t.Errorf("skipped = %+v", r)
	}
	if r := res["failed"]; r.Verdict != agenteval.VerdictFail || r.ExecutionStatus != agenteval.StatusQualityFailure {
		t.Errorf("failed = %+v", r)
	}
	if r := res["ran"]; r.Verdict != agenteval.VerdictPass {
		t.Errorf("ran = %+v", r)
	}
	if r := res["fine"]; r.Verdict != agenteval.VerdictPass {
		t.Errorf("fine = %+v", r)
	}
	if len(agent.calls) != 2 {
		t.Errorf("agent called for %d tests, want 2 (ran, fine)", len(agent.calls))
	}
}

// Grading a turn must not hold up the next agent call: here the judge takes
// 300 ms per call and the agent 10 ms, so a four-turn conversation with
// pipelined grading takes about one judge call, not four.
func TestGradingRunsBesideTheNextTurn(t *testing.T) {
	s, err := fakellm.Start(fakellm.Options{Latency: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m, _ := provider.Open(provider.Config{Provider: "openai", Model: "m", BaseURL: s.URL, APIKey: "k"})
	j := &judge.Judge{Model: m, Name: "m"}
	yaml := `
tests:
  - id: p
    mode: conversation
    turns:
      - {input: a, assertions: [ok]}
      - {input: b, assertions: [ok]}
      - {input: c, assertions: [ok]}
      - {input: d, assertions: [ok]}
`
	slow := agenteval.AgentFunc(func(ctx context.Context, req *agenteval.AgentRequest) (*agenteval.AgentResponse, error) {
		time.Sleep(10 * time.Millisecond)
		return &agenteval.AgentResponse{Messages: agenteval.Conversation{{Role: agenteval.RoleAssistant, Content: "x"}}}, nil
	})
	begin := time.Now()
	runAll(t, loadSuite(t, yaml), Options{Agent: slow, Judge: j})
	if d := time.Since(begin); d > 800*time.Millisecond {
		t.Errorf("took %v; grading is on the critical path", d)
	}
}

func TestFilter(t *testing.T) {
	yaml := "assertions: [{type: contains, value: reply}]\ntests:\n  - {id: alpha-1, input: a}\n  - {id: alpha-2, input: b}\n  - {id: beta, input: c}\n"
	res := runAll(t, loadSuite(t, yaml), Options{Agent: &echo{}, Filter: "alpha-*"})
	if len(res) != 2 || res["beta"] != nil {
		t.Errorf("filtered results: %v", res)
	}
}

// A rubric judge gets the test's criteria as context, as AgentV's does;
// the checks it decides are the listed criteria alone.
func TestRubricJudgeSeesTestCriteria(t *testing.T) {
	j, srv := fakeJudge(t)
	yaml := `
tests:
  - id: c
    criteria: Answers like a patient teacher
    input: Explain loops.
    assertions: [Mentions a for loop]
`
	runAll(t, loadSuite(t, yaml), Options{Agent: &echo{}, Judge: j})
	if len(srv.Requests()) != 1 {
		t.Fatalf("%d judge calls", len(srv.Requests()))
	}
	p := srv.Requests()[0].Text()
	if !regexp.MustCompile(`<criteria id="[0-9a-f]+">Answers like a patient teacher`).MatchString(p) || !strings.Contains(p, "Mentions a for loop") {
		t.Errorf("the judge prompt lacks the test's criteria:\n%s", p)
	}
}
