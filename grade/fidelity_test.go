package grade

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/fakellm"
)

const (
	critGoal    = "The user pursued the goal its instruction describes"
	critFacts   = "The user did not invent facts"
	critRole    = "The user acted only as the user"
	critPersona = "Every user message is written in the manner of the persona."
	critEnding  = "The user ended the conversation at a fitting point"
)

// simulatedBooking is a simulated conversation of two turns that the user
// ended with the stop marker and a closing remark.
func simulatedBooking(persona, end string) *agenteval.GradeInput {
	conv := agenteval.Conversation{
		userSays("Hi, I'd like a table for two tonight."),
		agentCalls(call("search", `{"party": 2}`)),
		toolSays(`{"free": ["20:00"]}`),
		agentSays("There is a table at 8pm. Shall I book it?"),
		userSays("Yes please."),
		agentSays("Booked for 8pm."),
	}
	sim := &agenteval.Simulation{
		Model: "openai:gpt-4o-mini",
		Messages: []agenteval.SimulatedMessage{
			{Turn: 1, Content: "Hi, I'd like a table for two tonight.", Sent: true},
			{Turn: 2, Content: "Yes please.", Sent: true},
		},
		Turns:     2,
		EndReason: end,
	}
	if end == agenteval.EndStopMarker {
		sim.Messages = append(sim.Messages, agenteval.SimulatedMessage{Turn: 3, Content: "Perfect, thanks!", Sent: false})
	}
	return &agenteval.GradeInput{
		Transcript: conv, Output: conv,
		User:       &agenteval.SimulatedUser{Instruction: "You want a table for two tonight at 8pm.", Persona: persona, MaxTurns: 2},
		Simulation: sim,
	}
}

func TestUserFidelityNeedsASimulation(t *testing.T) {
	j, s := fakeJudge(t)
	g, err := New(Spec{Type: "user_fidelity", Judge: j})
	if err != nil {
		t.Fatal(err)
	}
	full := simulatedBooking("", agenteval.EndStopMarker)
	tests := []struct {
		name string
		in   *agenteval.GradeInput
	}{
		{"recorded sample", &agenteval.GradeInput{Transcript: full.Transcript, Output: full.Output}},
		{"user without simulation", &agenteval.GradeInput{Transcript: full.Transcript, Output: full.Output, User: full.User}},
		{"simulation without user", &agenteval.GradeInput{Transcript: full.Transcript, Output: full.Output, Simulation: full.Simulation}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc, err := g.Grade(context.Background(), tt.in)
			var mf *agenteval.MissingFieldError
			if !errors.As(err, &mf) || mf.Grader != "user_fidelity" || !strings.Contains(err.Error(), "needs a simulated user (user: in the test)") {
				t.Errorf("err = %v, want a MissingFieldError", err)
			}
			if sc.Verdict != agenteval.VerdictError || sc.Name != "user_fidelity" {
				t.Errorf("score = %+v", sc)
			}
		})
	}
	if s.Calls() != 0 {
		t.Errorf("%d judge calls without a simulation", s.Calls())
	}
}

func TestUserFidelityCriteria(t *testing.T) {
	tests := []struct {
		name    string
		persona string
		end     string
		want    []string // criteria, in key order
		ending  string   // "How the conversation ended: ..."
		closing bool     // the closing message is shown
	}{
		{
			name: "stop marker, no persona", end: agenteval.EndStopMarker,
			want:   []string{critGoal, critFacts, critRole, critEnding},
			ending: "the simulated user said it was done", closing: true,
		},
		{
			name: "stop marker and persona", persona: "expert", end: agenteval.EndStopMarker,
			want:   []string{critGoal, critFacts, critRole, critPersona, critEnding},
			ending: "the simulated user said it was done", closing: true,
		},
		{
			name: "turn limit, free-text persona", persona: "a hurried parent", end: agenteval.EndMaxTurns,
			want:   []string{critGoal, critFacts, critRole, critPersona},
			ending: "the turn limit (2) was reached",
		},
		{
			name: "subgoals achieved, blank persona", persona: "   ", end: agenteval.EndSubgoals,
			want:   []string{critGoal, critFacts, critRole},
			ending: "the run ended it once every milestone was reached",
		},
		{
			name: "agent error", end: agenteval.EndAgentError,
			want:   []string{critGoal, critFacts, critRole},
			ending: "the assistant failed with an error",
		},
		{
			name: "interrupted", persona: "novice", end: agenteval.EndInterrupted,
			want:   []string{critGoal, critFacts, critRole, critPersona},
			ending: "the run was interrupted",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j, s := fakeJudge(t)
			in := simulatedBooking(tt.persona, tt.end)
			sc, err := judgeWith(t, j, "user_fidelity", nil, in)
			if err != nil {
				t.Fatal(err)
			}
			// fakellm passes every criterion by default.
			if sc.Score != 1 || sc.Verdict != agenteval.VerdictPass || sc.Reason != "the simulated user kept to its instruction and persona" {
				t.Errorf("score = %+v", sc)
			}
			if s.Calls() != 1 || sc.Usage == nil || sc.Usage.Calls != 1 {
				t.Fatalf("%d judge calls", s.Calls())
			}
			req := s.Requests()[0]
			if req.SchemaName() != "criteria_verdicts" {
				t.Errorf("schema = %q", req.SchemaName())
			}
			// The schema has one required key per criterion.
			required, _ := req.ResponseFormat.JSONSchema.Schema["required"].([]any)
			if len(required) != len(tt.want) {
				t.Errorf("schema requires %v, want %d criteria", required, len(tt.want))
			}
			// The prompt lists the criteria under their keys.
			got := parseSubgoalAsk(req) // same "cN: text" lines as every criteria prompt
			if len(got.goals) != len(tt.want) {
				t.Fatalf("criteria in the prompt = %q, want %d", got.goals, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.HasPrefix(got.goals[i], w) || got.keys[i] != required[i] {
					t.Errorf("criterion %s = %q, want %q... under %v", got.keys[i], got.goals[i], w, required[i])
				}
			}
			if len(sc.Assertions) != len(tt.want) {
				t.Errorf("assertions = %+v", sc.Assertions)
			}
			prompt := req.LastUser()
			if !quotedRE("", "instruction", "You want a table for two tonight at 8pm.</instruction").MatchString(prompt) {
				t.Errorf("no instruction in the prompt:\n%s", prompt)
			}
			if !strings.Contains(prompt, "How the conversation ended: "+tt.ending+"\n") {
				t.Errorf("ending %q not in the prompt:\n%s", tt.ending, prompt)
			}
			hasClosing := quotedRE("", "closing", "Perfect, thanks!</closing").MatchString(prompt)
			if hasClosing != tt.closing {
				t.Errorf("closing shown = %v, want %v:\n%s", hasClosing, tt.closing, prompt)
			}
			persona := (&agenteval.SimulatedUser{Persona: tt.persona}).PersonaText()
			if hasPersona := strings.Contains(prompt, "<persona "); hasPersona != (persona != "") {
				t.Errorf("persona shown = %v for persona %q", hasPersona, tt.persona)
			}
			if persona != "" && !quotedRE("", "persona", persona+"</persona").MatchString(prompt) {
				t.Errorf("the persona is not expanded in the prompt:\n%s", prompt)
			}
			if !quotedRE("[Turn 2]\n", "user", "Yes please.").MatchString(prompt) {
				t.Errorf("the transcript is not numbered by turn:\n%s", prompt)
			}
		})
	}
}

func TestUserFidelityFailures(t *testing.T) {
	tests := []struct {
		name    string
		verdict fakellm.Reply
		score   float64
		failed  string
	}{
		{"one of five fails", verdicts(true, false, true, true, true), 0.8, "(facts)"},
		{"two of five fail", verdicts(true, true, false, true, false), 0.6, "(role, ending)"},
		{"all fail", verdicts(false, false, false, false, false), 0, "(goal, facts, role, persona, ending)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j, s := fakeJudge(t)
			s.Add(&fakellm.Rule{Match: fakellm.SchemaNamed("criteria_verdicts"), Reply: tt.verdict})
			sc, err := judgeWith(t, j, "user_fidelity", nil, simulatedBooking("expert", agenteval.EndStopMarker))
			if err != nil {
				t.Fatal(err)
			}
			if !near(sc.Score, tt.score) {
				t.Errorf("score = %v, want %v", sc.Score, tt.score)
			}
			want := "the simulated user strayed " + tt.failed + "; a failure of this test may be the simulator's, not the agent's"
			if sc.Reason != want {
				t.Errorf("reason = %q, want %q", sc.Reason, want)
			}
			for i, a := range sc.Assertions {
				if a.Evidence != "because "+string(rune('a'+i)) {
					t.Errorf("assertion %d evidence = %q", i, a.Evidence)
				}
			}
		})
	}
}

func TestUserFidelityVotesAndErrors(t *testing.T) {
	j, s := fakeJudge(t)
	s.Add(&fakellm.Rule{Times: 2, Reply: verdicts(true, true, true, false)}, &fakellm.Rule{Reply: verdicts(false, true, true, false)})
	sc, err := judgeWith(t, j, "user_fidelity", map[string]any{"samples": 3}, simulatedBooking("", agenteval.EndStopMarker))
	if err != nil {
		t.Fatal(err)
	}
	if s.Calls() != 3 || !near(sc.Score, 0.75) || !strings.HasSuffix(sc.Assertions[0].Evidence, "(votes 2/3)") || !strings.HasSuffix(sc.Assertions[3].Evidence, "(votes 0/3)") {
		t.Errorf("score %+v after %d calls", sc, s.Calls())
	}

	s.Reset()
	s.Add(&fakellm.Rule{Reply: fakellm.Reply{Content: "The user was fine."}})
	sc, err = judgeWith(t, j, "user_fidelity", nil, simulatedBooking("", agenteval.EndStopMarker))
	if err == nil || sc.Verdict != agenteval.VerdictError || !strings.Contains(sc.Reason, "invalid output") {
		t.Errorf("invalid judge output: score %+v, err %v", sc, err)
	}

	if _, err := New(Spec{Type: "user_fidelity"}); !errors.As(err, new(*NoJudgeError)) {
		t.Errorf("no judge: %v", err)
	}
	if _, err := New(Spec{Type: "user_fidelity", Judge: j, Options: map[string]any{"samples": 2}}); err == nil || !strings.Contains(err.Error(), "odd") {
		t.Errorf("even samples: %v", err)
	}
	if _, err := New(Spec{Type: "user_fidelity", Judge: j, Options: map[string]any{"persona": "x"}}); err == nil || !strings.Contains(err.Error(), `unknown setting "persona"`) {
		t.Errorf("unknown setting: %v", err)
	}
}

// TestUserFidelitySparesTheInitialMessage: an initial_message is the test
// author's words, and the judge is told not to hold it against the
// simulated user.
func TestUserFidelitySparesTheInitialMessage(t *testing.T) {
	j, s := fakeJudge(t)
	in := simulatedBooking("", agenteval.EndMaxTurns)
	in.Simulation.Messages[0].Initial = true
	g, err := New(Spec{Type: "user_fidelity", Judge: j})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Grade(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	reqs := s.Requests()
	if len(reqs) != 1 || !strings.Contains(reqs[0].Text(), "the first user message was written by the test's author") {
		t.Errorf("the judge was not told about the initial message: %d requests", len(reqs))
	}
}
