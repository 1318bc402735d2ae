package suite

import (
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func parse(t *testing.T, src string, opt Options) (*Suite, error) {
	t.Helper()
	if opt.Env == nil {
		opt.Env = func(name string) (string, bool) {
			if name == "MODEL" {
				return "gpt-4o-mini", true
			}
			return "", false
		}
	}
	return Parse("evals.yaml", []byte(strings.TrimLeft(src, "\n")), opt)
}

// TestParseErrors checks each rule's message and its position.
func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string // each must appear in the error
	}{
		{"turns without mode", `
tests:
  - id: a
    input: hi
    turns:
      - hello
`, []string{"evals.yaml:4:5: turns requires mode: conversation"}},
		{"empty turns without mode", `
tests:
  - id: a
    input: hi
    turns: []
`, []string{"evals.yaml:4:5: turns requires mode: conversation"}},
		{"conversation without turns", `
tests:
  - id: a
    mode: conversation
`, []string{"evals.yaml:3:5: mode: conversation needs turns"}},
		{"conversation with empty turns", `
tests:
  - id: a
    mode: conversation
    turns: []
`, []string{"evals.yaml:4:5: mode: conversation needs at least one turn"}},
		{"turn without input", `
tests:
  - id: a
    mode: conversation
    turns:
      - expected_output: ok
`, []string{"evals.yaml:5:9: turn 1 has no input"}},
		{"turns and test expected_output", `
tests:
  - id: a
    mode: conversation
    expected_output: done
    turns: [hi]
`, []string{"evals.yaml:4:5: a test with turns cannot have a test-level expected_output"}},
		{"conversation keys without mode", `
tests:
  - id: a
    input: hi
    window_size: 2
    on_turn_failure: stop
`, []string{"evals.yaml:4:5: window_size only applies with mode: conversation", "evals.yaml:5:5: on_turn_failure only applies"}},
		{"unknown key with hint", `
tests:
  - id: a
    inptu: hi
`, []string{`evals.yaml:3:5: unknown key "inptu" in test 1; did you mean "input"?`}},
		{"duplicate ids", `
tests:
  - id: a
    input: hi
  - id: a
    input: hi
`, []string{`evals.yaml:4:5: test id "a" is used twice (first on line 2)`}},
		{"missing dependency and cycle", `
tests:
  - id: a
    input: hi
    depends_on: [b]
  - id: b
    input: hi
    depends_on: [a, c]
`, []string{`depends_on "c", which is not a test`, "depends_on forms a cycle: a -> b -> a"}},
		{"role-only message", `
tests:
  - id: a
    input: {role: system}
`, []string{"evals.yaml:3:12: input: a message with a role needs content"}},
		{"trials out of range", `
tests:
  - id: a
    input: hi
    trials: 5000
  - id: b
    input: hi
    trials: {count: 0}
`, []string{"evals.yaml:4:13: trials must be between 1 and 1000, not 5000", "evals.yaml:7:21: trials.count must be between 1 and 1000, not 0"}},
		{"string assertion without judge", `
tests:
  - id: a
    input: hi
    assertions:
      - is polite
`, []string{"evals.yaml:5:9: test \"a\" has string assertions", "--judge"}},
		{"check needs a judge", `
tests:
  - id: a
    input: hi
    assertions:
      - type: tool_calls
        expected:
          - tool: search
            args: {q: {$check: about Paris}}
`, []string{"evals.yaml:5:9: test \"a\"", "no judge is configured"}},
		{"unknown assertion type", `
tests:
  - id: a
    input: hi
    assertions:
      - type: contians
        value: x
`, []string{`evals.yaml:5:9: unknown assertion type "contians"; did you mean "contains"?`}},
		{"unset environment variable", `
judge: ${NOPE}
tests:
  - id: a
    input: hi
`, []string{"environment variable NOPE is not set, so it is empty here"}},
		{"user with turns", `
judge: openai:m
tests:
  - id: a
    mode: conversation
    user: You want a refund.
    turns: [hi]
`, []string{"evals.yaml:6:5: test \"a\" has both turns and user"}},
		{"user settings", `
judge: openai:m
tests:
  - id: a
    user:
      persona: expert
      max_turns: 500
      model: gpt-4o
      temperature: 3
      stop_on_success: true
      stop: ""
    on_turn_failure: stop
    expected_output: x
`, []string{"evals.yaml:5:7: user needs an instruction", "evals.yaml:6:18: user.max_turns must be between 1 and 200, not 500",
			`evals.yaml:7:14: user.model "gpt-4o" is not provider:model`, "evals.yaml:8:20: user.temperature must be between 0 and 2",
			"evals.yaml:10:13: user.stop is empty", "evals.yaml:4:5: user.stop_on_success needs subgoals",
			"evals.yaml:11:5: on_turn_failure applies to scripted turns", "evals.yaml:12:5: a simulated conversation has no single reply"}},
		{"simulated user without a model", `
tests:
  - id: a
    user: You want a refund.
`, []string{`evals.yaml:2:5: test "a" has a simulated user (user:) and no model to play it`}},
		{"expected tool calls", `
judge: openai:m
tests:
  - id: a
    user: {instruction: You want a refund., max_turns: 3}
    subgoals:
      - details: The agent refunds.
        turn: 4
      - ""
    expected_tool_calls:
      - tool: refund
        turn: 5
        args:
          amount: {value: 3, check: about 3}
      - tool: lookup
        argz: {}
      - args: {a: 1}
`, []string{"evals.yaml:13:19: argument amount has both value and check", `evals.yaml:15:9: unknown key "argz" in an expected tool call; did you mean "args"?`,
			"evals.yaml:16:9: an expected tool call needs tool", "evals.yaml:8:9: a subgoal is empty",
			`evals.yaml:5:5: subgoal 1 has turn 4; it must be a turn number from 1 to 3`, "evals.yaml:10:9: expected tool call 1 has turn 5, but the conversation has at most 3 turns"}},
		{"simulated conversation rules", `
judge: openai:m
tests:
  - id: a
    input: I bought a lamp.
    user: {instruction: You want a refund., stop: "ok"}
  - id: b
    user: {instruction: You want a refund., initial_message: "Hi ###STOP###"}
    criteria: Helpful.
  - id: c
    mode: conversation
    subgoals: [The agent greets.]
    turns:
      - input: [hi, "are you there?"]
`, []string{"evals.yaml:4:5: a simulated conversation's input may hold only system messages",
			`evals.yaml:3:5: test "a" has a simulated user but nothing grades the conversation`,
			`evals.yaml:5:5: user.stop "ok" is too short`,
			"evals.yaml:7:5: user.initial_message contains the stop marker ###STOP###",
			"evals.yaml:13:9: turn 1 has 2 user messages; with subgoals or expected_tool_calls"}},
		{"merge key of text", `
tests:
  - id: a
    <<: hello
    input: hi
`, []string{"evals.yaml:3:9: a merge key (<<) takes a mapping"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Strict: the warnings (unknown keys, unset variables) are
			// errors too.
			_, err := parse(t, tc.src, Options{Strict: true})
			if err == nil {
				t.Fatalf("no error; want %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error\n%v\nlacks %q", err, w)
				}
			}
		})
	}
}

func TestParseConversation(t *testing.T) {
	s, err := parse(t, `
judge: openai:${MODEL}
tests:
  - id: trip
    mode: conversation
    aggregation: min
    on_turn_failure: stop
    window_size: 2
    trials: {count: 3, strategy: pass_at_k}
    input:
      - role: system
      - input: You plan trips.
    turns:
      - Japan in spring?
      - input: {content: Budget is $$3000}
        expected_output: hostels
        assertions:
          - mentions hostels
          - type: contains
            value: hostel
`, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Judge == nil || s.Judge.Model != "openai:gpt-4o-mini" {
		t.Errorf("judge = %+v, want openai:gpt-4o-mini from ${MODEL}", s.Judge)
	}
	tc := s.Tests[0]
	if tc.Mode != agenteval.ModeConversation || tc.Aggregation != "min" || !tc.StopOnFailure || tc.WindowSize != 2 || tc.Trials != 3 || tc.TrialStrategy != agenteval.ReducePassAtK {
		t.Errorf("test settings = %+v", tc)
	}
	if len(tc.Input) != 1 || tc.Input[0].Role != agenteval.RoleSystem || tc.Input[0].Content != "You plan trips." {
		t.Errorf("input = %+v, want the split system message joined", tc.Input)
	}
	if len(tc.Turns) != 2 || tc.Turns[1].Input[0].Content != "Budget is $3000" || tc.Turns[1].Input[0].Role != agenteval.RoleUser {
		t.Errorf("turns = %+v", tc.Turns)
	}
	if a := tc.Turns[1].Assertions; len(a) != 2 || a[0].Criterion != "mentions hostels" || a[1].Type != "contains" || a[1].Params["value"] != "hostel" {
		t.Errorf("turn 2 assertions = %+v", a)
	}
}

func TestParseMappingInputIsUser(t *testing.T) {
	s, err := parse(t, `
tests:
  - id: a
    input: {content: hi}
    assertions: [{type: contains, value: hello}]
`, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m := s.Tests[0].Input; len(m) != 1 || m[0].Role != agenteval.RoleUser || m[0].Content != "hi" {
		t.Errorf("input = %+v, want one user message", m)
	}
}

// TestMergeKeys: own keys win over merged ones, and the first of a list of
// merged mappings wins over later ones, as YAML defines.
func TestMergeKeys(t *testing.T) {
	s, err := parse(t, `
x-defaults: &d
  criteria: from defaults
  threshold: 0.5
x-more: &m
  criteria: from more
  description: from more
tests:
  - id: a
    <<: [*d, *m]
    criteria: own
    input: hi
  - id: b
    <<: [*d, *m]
    input: hi
`, Options{JudgeAvailable: true})
	if err != nil {
		t.Fatal(err)
	}
	a, b := s.Tests[0], s.Tests[1]
	if a.Criteria != "own" {
		t.Errorf("a.criteria = %q, want its own", a.Criteria)
	}
	if b.Criteria != "from defaults" || b.Description != "from more" {
		t.Errorf("b = criteria %q, description %q; want the first merged mapping to win, and the second to fill in", b.Criteria, b.Description)
	}
	if b.Threshold == nil || *b.Threshold != 0.5 {
		t.Errorf("b.threshold = %v, want 0.5 merged", b.Threshold)
	}
}

func TestParseSimulatedUser(t *testing.T) {
	s, err := parse(t, `
tests:
  - id: refund
    input: [{role: system, content: You are a shop assistant.}]
    user:
      instruction: You want a refund for order A1.
      persona: novice
      initial_message: Hi, about order A1.
      max_turns: 4
      stop: <done>
      model: openai:gpt-4o-mini
      temperature: 0.7
      stop_on_success: true
    subgoals:
      - The agent looks the order up.
      - {details: The agent refunds it., type: action, turn: 3}
    expected_tool_calls:
      - tool: refund
        turn: 2
        args: {order_id: A1, amount: {value: 9.5}, note: {check: polite}, any: {$any: true}}
        output: {value: ok}
      - tool: lookup
        expected_parameters: [{name: order_id, value: A1}, {name: verbose}]
`, Options{JudgeAvailable: true})
	if err != nil {
		t.Fatal(err)
	}
	tc := s.Tests[0]
	u := tc.User
	if tc.Mode != agenteval.ModeConversation || u == nil || u.Persona != "novice" || u.InitialMessage != "Hi, about order A1." || u.MaxTurns != 4 || u.Stop != "<done>" ||
		u.Model != "openai:gpt-4o-mini" || u.Temperature == nil || *u.Temperature != 0.7 || !u.StopOnSuccess {
		t.Errorf("user = %+v", u)
	}
	if len(tc.Subgoals) != 2 || tc.Subgoals[1].Turn != 3 || tc.Subgoals[1].Type != "action" {
		t.Errorf("subgoals = %+v", tc.Subgoals)
	}
	ok := any("ok")
	want := []agenteval.ExpectedCall{
		{Tool: "refund", Turn: 2, Output: &ok, Args: map[string]any{"amount": map[string]any{"$text": 9.5}, "any": map[string]any{"$any": true}, "note": map[string]any{"$check": "polite"}, "order_id": map[string]any{"$text": "A1"}}},
		{Tool: "lookup", Args: map[string]any{"order_id": map[string]any{"$text": "A1"}, "verbose": map[string]any{"$any": true}}},
	}
	if diff := cmp.Diff(want, tc.ExpectedToolCalls, cmpopts.IgnoreFields(agenteval.ExpectedCall{}, "Pos")); diff != "" {
		t.Errorf("expected calls (-want +got):\n%s", diff)
	}
}

// TestInspectNulls: agent_inspect writes unset fields as null (Python's
// None); they mean "not set", not errors.
func TestInspectNulls(t *testing.T) {
	data := []byte(`[{"id": 7,
  "sub_goals": [{"details": "The agent searches", "type": null, "turn": null}, {"details": "It answers", "turn": "all"}],
  "expected_tool_calls": [{"tool": "search", "expected_parameters": [{"name": "q", "value": null, "check": "about lamps"}], "expected_output": null, "turn": null}],
  "conversation": null, "user_instruction": "Find a lamp."}]`)
	s, err := Parse("samples.json", data, Options{JudgeAvailable: true})
	if err != nil {
		t.Fatal(err)
	}
	tc := s.Tests[0]
	if tc.User == nil || tc.User.Instruction != "Find a lamp." || tc.Subgoals[0].Turn != 0 || tc.Subgoals[1].Turn != 0 {
		t.Errorf("test = %+v", tc)
	}
	want := []agenteval.ExpectedCall{{Tool: "search", Args: map[string]any{"q": map[string]any{"$check": "about lamps"}}}}
	if diff := cmp.Diff(want, tc.ExpectedToolCalls, cmpopts.IgnoreFields(agenteval.ExpectedCall{}, "Pos")); diff != "" {
		t.Errorf("expected calls (-want +got):\n%s", diff)
	}
}

// TestTurnScopesAreChecked: a turn beyond what the test can reach is an
// error in every form of test.
func TestTurnScopesAreChecked(t *testing.T) {
	_, err := Parse("s.json", []byte(`{"id": 1, "user_instruction": "Find a lamp.",
 "sub_goals": [{"details": "It searches", "turn": 11}],
 "expected_tool_calls": [{"tool": "search", "turn": 12}]}`), Options{JudgeAvailable: true})
	for _, want := range []string{`s.json:2:2: subgoal 1 has turn 11; agent_inspect counts turns from 0, so it must be from 0 to 9`, "s.json:3:26: expected tool call 1 has turn 12, but the conversation has at most 10 turns (agent_inspect counts them from 0, so 0 to 9)"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("agent_inspect: error %v lacks %q", err, want)
		}
	}
	_, err = parse(t, `
tests:
  - id: once
    input: hi
    expected_tool_calls: [{tool: search, turn: 2}]
`, Options{})
	if err == nil || !strings.Contains(err.Error(), "evals.yaml:4:27: expected tool call 1 has turn 2, but the conversation has at most 1 turn") {
		t.Errorf("single exchange: %v", err)
	}
}
