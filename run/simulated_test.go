package run

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/fakellm"
)

// simRequest reports whether a request is the simulated user's: it carries
// the role-play prompt and no schema.
func simRequest(r *fakellm.Request) bool {
	return r.SchemaName() == "" && strings.Contains(r.Text(), "role-playing a person")
}

// simSays scripts the simulated user's messages, in order.
func simSays(s *fakellm.Server, msgs ...string) {
	for _, m := range msgs {
		s.Add(&fakellm.Rule{Match: simRequest, Times: 1, Reply: fakellm.Reply{Content: m}})
	}
}

func countRequests(s *fakellm.Server, match func(*fakellm.Request) bool) int {
	n := 0
	for _, r := range s.Requests() {
		if match(r) {
			n++
		}
	}
	return n
}

const simulated = `
tests:
  - id: sim
    input:
      - role: system
        content: You are a shop assistant.
    user:
      instruction: You want to return a lamp.
      persona: novice
      max_turns: 3
    assertions: [{type: icontains, value: reply}]
`

func TestSimulatedConversationEnds(t *testing.T) {
	tests := []struct {
		name     string
		yaml     string
		says     []string
		agent    *echo
		reason   string
		turns    int
		messages []agenteval.SimulatedMessage
		status   agenteval.ExecutionStatus
		errLike  string
	}{
		{
			name: "max turns", yaml: simulated, says: []string{"one", "two", "three", "four"}, agent: &echo{},
			reason: agenteval.EndMaxTurns, turns: 3,
			messages: []agenteval.SimulatedMessage{{Turn: 1, Content: "one", Sent: true}, {Turn: 2, Content: "two", Sent: true}, {Turn: 3, Content: "three", Sent: true}},
			status:   agenteval.StatusOK,
		},
		{
			name: "stop marker with a closing remark", yaml: simulated, says: []string{"one", "Thanks! ###STOP### (ignored)"}, agent: &echo{},
			reason: agenteval.EndStopMarker, turns: 1,
			messages: []agenteval.SimulatedMessage{{Turn: 1, Content: "one", Sent: true}, {Turn: 2, Content: "Thanks!", Sent: false}},
			status:   agenteval.StatusOK,
		},
		{
			name: "custom marker", yaml: strings.Replace(simulated, "max_turns: 3", "max_turns: 3\n      stop: <done>", 1), says: []string{"one", "<done>"}, agent: &echo{},
			reason: agenteval.EndStopMarker, turns: 1,
			messages: []agenteval.SimulatedMessage{{Turn: 1, Content: "one", Sent: true}, {Turn: 2, Content: "", Sent: false}},
			status:   agenteval.StatusOK,
		},
		{
			name: "agent error", yaml: simulated, says: []string{"one", "two"}, agent: &echo{fail: map[int]error{2: fmt.Errorf("connection refused")}},
			reason: agenteval.EndAgentError, turns: 1,
			messages: []agenteval.SimulatedMessage{{Turn: 1, Content: "one", Sent: true}, {Turn: 2, Content: "two", Sent: true}},
			status:   agenteval.StatusExecutionError, errLike: "turn 2: agent: connection refused",
		},
		{
			name: "initial message", yaml: strings.Replace(simulated, "max_turns: 3", "max_turns: 2\n      initial_message: Hello, I bought a lamp.", 1), says: []string{"It flickers."}, agent: &echo{},
			reason: agenteval.EndMaxTurns, turns: 2,
			messages: []agenteval.SimulatedMessage{{Turn: 1, Content: "Hello, I bought a lamp.", Sent: true, Initial: true}, {Turn: 2, Content: "It flickers.", Sent: true}},
			status:   agenteval.StatusOK,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j, srv := fakeJudge(t)
			simSays(srv, tc.says...)
			res := runAll(t, loadSuite(t, tc.yaml), Options{Agent: tc.agent, Judge: j})["sim"]
			sim := res.Simulation
			if sim == nil {
				t.Fatalf("no simulation recorded: %+v", res)
			}
			if sim.EndReason != tc.reason || sim.Turns != tc.turns || sim.Model != "openai:gpt-4o-mini" {
				t.Errorf("simulation = %+v, want end %s after %d turns", sim, tc.reason, tc.turns)
			}
			if fmt.Sprint(sim.Messages) != fmt.Sprint(tc.messages) {
				t.Errorf("messages = %+v\nwant       %+v", sim.Messages, tc.messages)
			}
			if res.ExecutionStatus != tc.status || !strings.Contains(res.Error, tc.errLike) {
				t.Errorf("status %s error %q, want %s with %q", res.ExecutionStatus, res.Error, tc.status, tc.errLike)
			}
			// The agent got every sent message, and never the marker.
			var sent []string
			for _, m := range sim.Messages {
				if m.Sent {
					sent = append(sent, m.Content)
				}
			}
			for i, call := range tc.agent.calls {
				if got := call.Messages[len(call.Messages)-1].Content; got != sent[i] {
					t.Errorf("agent call %d got %q, want %q", i+1, got, sent[i])
				}
				if call.Messages[0].Role != agenteval.RoleSystem || call.Turn != i+1 {
					t.Errorf("agent call %d: turn %d, messages %+v", i+1, call.Turn, call.Messages)
				}
			}
			for _, m := range res.Output {
				if strings.Contains(m.Content, "###STOP###") || strings.Contains(m.Content, "<done>") {
					t.Errorf("the stop marker reached the transcript: %q", m.Content)
				}
			}
			// The simulated user sees the agent's replies as the user's
			// words, and its own as the assistant's.
			reqs := srv.Requests()
			for _, r := range reqs {
				if !simRequest(r) || len(r.Messages) < 4 {
					continue
				}
				if r.Messages[2].Role != "assistant" || r.Messages[3].Role != "user" || !strings.Contains(r.Messages[3].Text(), "reply 1 to:") {
					t.Errorf("flipped view = %+v", r.Messages)
				}
			}
		})
	}
}

func TestSimulatorFailureIsAnExecutionError(t *testing.T) {
	j, srv := fakeJudge(t)
	simSays(srv, "one")
	srv.Add(&fakellm.Rule{Match: simRequest, Reply: fakellm.Reply{Fault: fakellm.FaultServer}})
	res := runAll(t, loadSuite(t, simulated), Options{Agent: &echo{}, Judge: j})["sim"]
	if res.ExecutionStatus != agenteval.StatusExecutionError || !strings.Contains(res.Error, "turn 2: simulated user openai:gpt-4o-mini") {
		t.Fatalf("result = %+v", res)
	}
	if res.Simulation.EndReason != agenteval.EndSimulatorError || res.Simulation.Turns != 1 || len(res.Output) != 3 {
		t.Errorf("the finished turn must be kept: %+v, output %+v", res.Simulation, res.Output)
	}
}

func TestSimulatedUserNeedsAModel(t *testing.T) {
	s := loadSuite(t, simulated)
	res := runAll(t, s, Options{Agent: &echo{}})["sim"]
	if res.ExecutionStatus != agenteval.StatusExecutionError || !strings.Contains(res.Error, "--simulator") {
		t.Errorf("result = %+v", res)
	}
}

// TestSimulatorOverridesJudge: --simulator plays the user, user.model plays
// it for its own test.
func TestSimulatorChoice(t *testing.T) {
	j, judgeSrv := fakeJudge(t)
	sim, simSrv := fakeJudge(t)
	simSrv.Add(&fakellm.Rule{Match: func(r *fakellm.Request) bool { return simRequest(r) && strings.Contains(r.Text(), "return a lamp") },
		Reply: fakellm.Reply{Content: "from the simulator ###STOP###"}})
	opened := []string{}
	yaml := simulated + `
  - id: own
    user: {instruction: You want a refund., model: "openai:own-model", max_turns: 1}
    criteria: Helpful.
`
	res := runAll(t, loadSuite(t, yaml), Options{Agent: &echo{}, Judge: j, Simulator: sim.Model, SimulatorName: "openai:sim",
		OpenModel: func(spec string) (agenteval.Model, error) {
			opened = append(opened, spec)
			return sim.Model, nil
		}})
	if got := res["sim"].Simulation; got.Model != "openai:sim" || got.Messages[0].Content != "from the simulator" {
		t.Errorf("simulator not used: %+v", got)
	}
	if got := res["own"].Simulation; got.Model != "openai:own-model" || fmt.Sprint(opened) != "[openai:own-model]" {
		t.Errorf("user.model not used: %+v, opened %v", got, opened)
	}
	if n := countRequests(judgeSrv, simRequest); n != 0 {
		t.Errorf("the judge played the user %d times", n)
	}
}

const withSubgoals = `
tests:
  - id: sim
    user:
      instruction: You want to return a lamp.
      max_turns: 6
      stop_on_success: true
    subgoals:
      - The agent asks for the order number.
      - The agent starts the return.
    expected_tool_calls:
      - tool: start_return
`

func subgoalRequest(r *fakellm.Request) bool {
	return r.SchemaName() == "criteria_verdicts" && strings.Contains(r.Text(), "milestones")
}

// TestStopOnSuccess: the conversation ends at the turn where the last
// subgoal is reached, and each turn costs one judge call for the open
// subgoals.
func TestStopOnSuccess(t *testing.T) {
	j, srv := fakeJudge(t)
	simSays(srv, "one", "two", "three", "four")
	verdict := func(passed ...bool) map[string]any {
		out := map[string]any{}
		for i, p := range passed {
			out[fmt.Sprintf("c%d", i+1)] = map[string]any{"reason": "r", "passed": p}
		}
		return out
	}
	srv.Add(
		&fakellm.Rule{Match: subgoalRequest, Times: 1, Reply: fakellm.Reply{JSON: verdict(false, false)}},
		&fakellm.Rule{Match: subgoalRequest, Times: 1, Reply: fakellm.Reply{JSON: verdict(true, false)}},
		&fakellm.Rule{Match: subgoalRequest, Times: 1, Reply: fakellm.Reply{JSON: verdict(true)}},
	)
	res := runAll(t, loadSuite(t, withSubgoals), Options{Agent: &echo{}, Judge: j})["sim"]
	if res.Simulation.EndReason != agenteval.EndSubgoals || res.Simulation.Turns != 3 {
		t.Fatalf("simulation = %+v", res.Simulation)
	}
	if n := countRequests(srv, subgoalRequest); n != 3 {
		t.Errorf("%d subgoal judge calls for 3 turns, want 3", n)
	}
	var sg *agenteval.Score
	for i := range res.Scores {
		if res.Scores[i].Name == "subgoals" {
			sg = &res.Scores[i]
		}
	}
	if sg == nil || sg.Score != 1 || fmt.Sprint(sg.Details["progress_by_turn"]) != "[0 0.5 1]" {
		t.Fatalf("subgoals = %+v", sg)
	}
	if !strings.Contains(sg.Assertions[1].Evidence, "achieved at turn 3") {
		t.Errorf("evidence = %q", sg.Assertions[1].Evidence)
	}
	// The echo agent never calls start_return: the expected call fails, and
	// the test score is the mean of subgoals (1) and expected_tool_calls (0);
	// user_fidelity is shown but weighs nothing.
	names := []string{}
	for _, s := range res.Scores {
		names = append(names, fmt.Sprintf("%s:%v:%v", s.Name, s.Score, s.Weight))
	}
	if fmt.Sprint(names) != "[subgoals:1:1 expected_tool_calls:0:1 user_fidelity:1:0]" || res.Score != 0.5 {
		t.Errorf("scores %v, test score %v", names, res.Score)
	}
}

func TestSimulatedTrials(t *testing.T) {
	j, srv := fakeJudge(t)
	srv.Add(&fakellm.Rule{Match: simRequest, Reply: fakellm.Reply{Content: "hello ###STOP###"}})
	yaml := strings.Replace(simulated, "max_turns: 3", "max_turns: 3\n    trials: 3", 1)
	res := runAll(t, loadSuite(t, yaml), Options{Agent: &echo{}, Judge: j})["sim"]
	if len(res.Trials) != 3 || res.Simulation == nil {
		t.Fatalf("result = %+v", res)
	}
	for _, tr := range res.Trials {
		if tr.Simulation == nil || tr.Simulation.EndReason != agenteval.EndStopMarker || tr.Simulation.Turns != 0 {
			t.Errorf("trial %d simulation = %+v", tr.Trial, tr.Simulation)
		}
	}
	if len(res.PassAtK) != 3 {
		t.Errorf("pass@k = %+v", res.PassAtK)
	}
}

// TestSimulatedUsageCounts: the simulated user's tokens are part of the
// test's usage, and recorded on their own.
func TestSimulatedUsageCounts(t *testing.T) {
	j, srv := fakeJudge(t)
	simSays(srv, "one", "###STOP###")
	res := runAll(t, loadSuite(t, simulated), Options{Agent: &echo{}, Judge: j})["sim"]
	su := res.Simulation.Usage
	if su == nil || su.Calls != 2 || su.InputTokens == 0 {
		t.Fatalf("simulation usage = %+v", su)
	}
	if res.Usage.Calls < su.Calls+1 || res.Usage.InputTokens <= su.InputTokens {
		t.Errorf("test usage %+v does not include the simulator's %+v", res.Usage, su)
	}
}

// TestSimulatedRunFaults: faults end a simulated conversation with their
// cause, and never the run.
func TestSimulatedRunFaults(t *testing.T) {
	t.Run("the simulated user says nothing before the marker", func(t *testing.T) {
		j, srv := fakeJudge(t)
		simSays(srv, "###STOP###")
		res := runAll(t, loadSuite(t, simulated), Options{Agent: &echo{}, Judge: j})["sim"]
		if res.ExecutionStatus != agenteval.StatusExecutionError || !strings.Contains(res.Error, "before its first message") {
			t.Errorf("result = %+v", res)
		}
	})
	t.Run("an agent that panics", func(t *testing.T) {
		j, srv := fakeJudge(t)
		simSays(srv, "one")
		boom := agenteval.AgentFunc(func(context.Context, *agenteval.AgentRequest) (*agenteval.AgentResponse, error) { panic("boom") })
		res := runAll(t, loadSuite(t, simulated), Options{Agent: boom, Judge: j})["sim"]
		if res.ExecutionStatus != agenteval.StatusExecutionError || !strings.Contains(res.Error, "panic: boom") {
			t.Errorf("result = %+v", res)
		}
	})
	t.Run("stop_on_success with a failing subgoal judge", func(t *testing.T) {
		j, srv := fakeJudge(t)
		simSays(srv, "one", "two", "three")
		srv.Add(&fakellm.Rule{Match: subgoalRequest, Reply: fakellm.Reply{Fault: fakellm.FaultUnauthorized}})
		err := RunSuite(context.Background(), loadSuite(t, withSubgoals), Options{Agent: &echo{}, Judge: j}, func(r *agenteval.Result) error {
			if r.Simulation.EndReason != agenteval.EndJudgeError || r.Simulation.Turns != 1 || r.ExecutionStatus != agenteval.StatusExecutionError {
				t.Errorf("result = %+v, simulation %+v", r, r.Simulation)
			}
			return nil
		})
		// Rejected credentials stop the run, as for any judge call.
		var fe *agenteval.FatalError
		if !errors.As(err, &fe) {
			t.Errorf("err = %v, want the fatal provider error", err)
		}
	})
	t.Run("subgoal judge calls made before an agent failure are counted", func(t *testing.T) {
		j, srv := fakeJudge(t)
		simSays(srv, "one", "two", "three")
		yaml := strings.Replace(withSubgoals, "stop_on_success: true", "stop_on_success: false", 1)
		res := runAll(t, loadSuite(t, yaml), Options{Agent: &echo{fail: map[int]error{3: fmt.Errorf("down")}}, Judge: j})["sim"]
		judged := countRequests(srv, subgoalRequest)
		// The echo agent reports tokens but no calls: 3 simulator calls,
		// and the subgoal judge's.
		if judged == 0 || res.Usage == nil || res.Usage.Calls != 3+judged {
			t.Errorf("usage %+v misses some of %d subgoal calls (3 simulator calls made)", res.Usage, judged)
		}
	})
}

// TestUnnamedSimulator: a Go simulator without a name is recorded as
// unnamed, with its type.
func TestUnnamedSimulator(t *testing.T) {
	j, srv := fakeJudge(t)
	simSays(srv, "one", "###STOP###")
	res := runAll(t, loadSuite(t, simulated), Options{Agent: &echo{}, Judge: j, Simulator: j.Model})["sim"]
	if !strings.HasPrefix(res.Simulation.Model, "unnamed ") {
		t.Errorf("model = %q", res.Simulation.Model)
	}
}

// TestFidelityErrorIsNotTheAgents: user_fidelity is shown, never counted,
// so its judge failing leaves the agent's verdict alone.
func TestFidelityErrorIsNotTheAgents(t *testing.T) {
	j, srv := fakeJudge(t)
	simSays(srv, "one reply please", "###STOP###")
	srv.Add(&fakellm.Rule{Match: fakellm.Contains("You review the behaviour of a simulated user"), Reply: fakellm.Reply{Status: 400, ErrorMessage: "bad request"}})
	res := runAll(t, loadSuite(t, simulated), Options{Agent: &echo{}, Judge: j})["sim"]
	if res.ExecutionStatus != agenteval.StatusOK || res.Verdict != agenteval.VerdictPass {
		t.Fatalf("result %s %s: %s", res.Verdict, res.ExecutionStatus, res.Error)
	}
	var fid *agenteval.Score
	for i := range res.Scores {
		if res.Scores[i].Name == "user_fidelity" {
			fid = &res.Scores[i]
		}
	}
	if fid == nil || fid.Verdict != agenteval.VerdictError || fid.Weight != 0 || fid.Reason == "" {
		t.Errorf("user_fidelity = %+v", fid)
	}
}
