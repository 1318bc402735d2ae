package grade

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/fakellm"
	"github.com/agenteval/agenteval/judge"
	"github.com/agenteval/agenteval/provider"
	_ "github.com/agenteval/agenteval/provider/openai"
)

func fakeJudge(t *testing.T) (*judge.Judge, *fakellm.Server) {
	t.Helper()
	s, err := fakellm.Start(fakellm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	m, err := provider.Open(provider.Config{Provider: "openai", Model: "gpt-4o-mini", BaseURL: s.URL, APIKey: "k", RetryWait: time.Millisecond, Timeout: time.Second, MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}
	return &judge.Judge{Model: m, Name: "openai:gpt-4o-mini"}, s
}

func judgeWith(t *testing.T, j *judge.Judge, typ string, params map[string]any, in *agenteval.GradeInput) (agenteval.Score, error) {
	t.Helper()
	g, err := New(Spec{Type: typ, Options: params, Judge: j})
	if err != nil {
		t.Fatalf("New(%s): %v", typ, err)
	}
	return g.Grade(context.Background(), in)
}

func booking() *agenteval.GradeInput {
	c := agenteval.Conversation{
		{Role: agenteval.RoleUser, Content: "Book Golden Dragon at 8pm"},
		{Role: agenteval.RoleAssistant, ToolCalls: []agenteval.ToolCall{{Name: "book", Args: map[string]any{"time": "8pm"}}}},
		{Role: agenteval.RoleTool, Content: "booked"},
		{Role: agenteval.RoleAssistant, Content: "Booked for 8pm."},
		{Role: agenteval.RoleUser, Content: "Thanks. Also, what's the weather?"},
		{Role: agenteval.RoleAssistant, Content: "I can only help with bookings."},
	}
	return &agenteval.GradeInput{Transcript: c, Output: c, Reference: "A table at Golden Dragon is booked for 8pm.",
		Rubrics: map[string]string{"confirms": "The assistant confirms the booking time."}, ReferenceTopics: []string{"restaurant booking"}}
}

func verdicts(passed ...bool) fakellm.Reply {
	m := map[string]any{}
	for i, p := range passed {
		m["c"+string(rune('1'+i))] = map[string]any{"reason": "because " + string(rune('a'+i)), "passed": p}
	}
	return fakellm.Reply{JSON: m}
}

func TestRubrics(t *testing.T) {
	j, s := fakeJudge(t)
	s.Add(&fakellm.Rule{Reply: verdicts(true, false, true)})
	params := map[string]any{"criteria": []any{
		"The assistant is polite.",
		map[string]any{"id": "no-weather", "outcome": "The assistant answers every question.", "weight": 2.0},
	}}
	sc, err := judgeWith(t, j, "rubrics", params, booking())
	if err != nil {
		t.Fatal(err)
	}
	// Weights 1, 2 and 1 (the sample's rubric); the weight-2 criterion failed.
	if !near(sc.Score, 0.5) || sc.Verdict != agenteval.VerdictFail || len(sc.Assertions) != 3 {
		t.Fatalf("score = %+v", sc)
	}
	if sc.Assertions[1].Text != "no-weather: The assistant answers every question." || sc.Assertions[1].Passed || sc.Assertions[1].Evidence != "because b" {
		t.Errorf("assertion = %+v", sc.Assertions[1])
	}
	if sc.Assertions[2].Text != "confirms: The assistant confirms the booking time." {
		t.Errorf("the sample's rubric was not used: %+v", sc.Assertions[2])
	}
	if s.Calls() != 1 || sc.Usage == nil || sc.Usage.Calls != 1 {
		t.Errorf("%d judge calls, usage %+v; want one call for all criteria", s.Calls(), sc.Usage)
	}
	if !quotedRE("", "reference", "A table at Golden Dragon is booked for 8pm.").MatchString(s.Requests()[0].Messages[1].Text()) {
		t.Error("the reference did not reach the judge")
	}

	// A required criterion that fails fails the rubric's verdict; its
	// score stays the weighted share, as in AgentV.
	s.Reset()
	s.Add(&fakellm.Rule{Reply: verdicts(false, true)})
	sc, _ = judgeWith(t, j, "rubrics", map[string]any{"criteria": []any{map[string]any{"outcome": "x", "required": true}}}, booking())
	if sc.Score != 0.5 || sc.Verdict != agenteval.VerdictFail || !strings.Contains(sc.Reason, "required criteria failed: criterion-1") {
		t.Errorf("required: %+v", sc)
	}
	s.Reset()
	s.Add(&fakellm.Rule{Reply: verdicts(false, true, true, true, true)})
	sc, _ = judgeWith(t, j, "rubrics", map[string]any{"criteria": []any{map[string]any{"outcome": "x", "required": true}, "y", "z", "w"}}, booking())
	if sc.Score != 0.8 || sc.Verdict != agenteval.VerdictFail {
		t.Errorf("required, score above the threshold: %+v", sc)
	}
}

func TestRubricsNeedsCriteriaAndJudge(t *testing.T) {
	j, _ := fakeJudge(t)
	in := booking()
	in.Rubrics = nil
	_, err := judgeWith(t, j, "rubrics", nil, in)
	var mf *agenteval.MissingFieldError
	if !errors.As(err, &mf) || !strings.Contains(err.Error(), "needs rubrics (or criteria") {
		t.Errorf("err = %v", err)
	}
	_, err = New(Spec{Type: "rubrics"})
	var nj *NoJudgeError
	if !errors.As(err, &nj) || !strings.Contains(err.Error(), "--judge provider:model") || !strings.Contains(err.Error(), "AGENTEVAL_JUDGE") {
		t.Errorf("err = %v", err)
	}
	if _, err := New(Spec{Type: "rubrics", Judge: j, Options: map[string]any{"samples": 2}}); err == nil || !strings.Contains(err.Error(), "odd") {
		t.Errorf("even samples: %v", err)
	}
}

func TestRubricScale(t *testing.T) {
	j, s := fakeJudge(t)
	s.Add(&fakellm.Rule{Match: fakellm.SchemaNamed("rubric_level"), Reply: fakellm.Reply{JSON: map[string]any{"reason": "mostly right", "level": "4"}}})
	in := booking()
	in.Rubrics = map[string]string{"score1_description": "wrong", "score3_description": "partly", "score5_description": "perfect", "score2_description": "poor", "score4_description": "good"}
	sc, err := judgeWith(t, j, "rubrics", nil, in)
	if err != nil {
		t.Fatal(err)
	}
	if !near(sc.Score, 0.75) || sc.Details["level"] != 4 {
		t.Errorf("score = %+v", sc)
	}
	enum := s.Requests()[0].ResponseFormat.JSONSchema.Schema["properties"].(map[string]any)["level"].(map[string]any)["enum"].([]any)
	if len(enum) != 5 || enum[0] != "1" || enum[4] != "5" {
		t.Errorf("levels = %v", enum)
	}
}

func TestGoalAccuracy(t *testing.T) {
	j, s := fakeJudge(t)
	s.Add(&fakellm.Rule{Match: fakellm.SchemaNamed("goal_and_end_state"), Reply: fakellm.Reply{JSON: map[string]any{"user_goal": "book Golden Dragon at 8pm", "end_state": "booked at 8pm"}}},
		&fakellm.Rule{Match: fakellm.SchemaNamed("criteria_verdicts"), Reply: verdicts(true)})
	sc, err := judgeWith(t, j, "agent_goal_accuracy", nil, booking())
	if err != nil {
		t.Fatal(err)
	}
	if sc.Score != 1 || sc.Details["user_goal"] != "book Golden Dragon at 8pm" || sc.Details["end_state"] != "booked at 8pm" || sc.Details["compared_with"] != "reference" {
		t.Errorf("score = %+v", sc)
	}
	if s.Calls() != 2 || sc.Usage.Calls != 2 {
		t.Errorf("%d calls, want 2", s.Calls())
	}
	cmp := s.Requests()[1].Messages[1].Text()
	if !quotedRE("Desired outcome (the reference):\n", "desired", "A table at Golden Dragon is booked for 8pm.").MatchString(cmp) || !strings.Contains(cmp, "booked at 8pm") {
		t.Errorf("compare prompt = %s", cmp)
	}

	// Without a reference, the inferred goal is the desired outcome.
	s.Reset()
	s.Add(&fakellm.Rule{Match: fakellm.SchemaNamed("goal_and_end_state"), Reply: fakellm.Reply{JSON: map[string]any{"user_goal": "book Golden Dragon at 8pm", "end_state": "nothing booked"}}},
		&fakellm.Rule{Match: fakellm.SchemaNamed("criteria_verdicts"), Reply: verdicts(false)})
	in := booking()
	in.Reference = ""
	sc, _ = judgeWith(t, j, "agent_goal_accuracy", nil, in)
	if sc.Score != 0 || sc.Verdict != agenteval.VerdictFail || !quotedRE("Desired outcome (the user's goal, inferred from the conversation):\n", "desired", "book Golden Dragon at 8pm").MatchString(s.Requests()[1].Messages[1].Text()) {
		t.Errorf("without reference: %+v", sc)
	}
	if _, err := judgeWith(t, j, "agent_goal_accuracy_with_reference", nil, in); err == nil || !strings.Contains(err.Error(), "needs reference") {
		t.Errorf("with_reference, no reference: %v", err)
	}
}

func TestTopicAdherence(t *testing.T) {
	j, s := fakeJudge(t)
	s.Add(&fakellm.Rule{Match: fakellm.SchemaNamed("user_topics"), Reply: fakellm.Reply{JSON: map[string]any{"topics": []any{"table booking", "weather", "menu prices"}}}},
		&fakellm.Rule{Match: fakellm.SchemaNamed("topic_assessments"), Reply: fakellm.Reply{JSON: map[string]any{"assessments": []any{
			map[string]any{"topic": "table booking", "reason": "booked", "refused": false, "in_reference": true},
			map[string]any{"topic": "weather", "reason": "declined", "refused": true, "in_reference": false},
			// menu prices is missing: the list is one short.
		}}}})
	const eps = 1e-10
	// booking: TP; weather: refused and off-topic (neither); menu: padded as answered, off-topic: FP.
	p := 1 / (1 + 1 + eps)
	r := 1 / (1 + 0 + eps)
	for mode, want := range map[string]float64{"precision": p, "recall": r, "f1": 2 * p * r / (p + r + eps)} {
		s.Reset()
		s.Add(&fakellm.Rule{Match: fakellm.SchemaNamed("user_topics"), Reply: fakellm.Reply{JSON: map[string]any{"topics": []any{"table booking", "weather", "menu prices"}}}},
			&fakellm.Rule{Match: fakellm.SchemaNamed("topic_assessments"), Reply: fakellm.Reply{JSON: map[string]any{"assessments": []any{
				map[string]any{"topic": "table booking", "reason": "booked", "refused": false, "in_reference": true},
				map[string]any{"topic": "weather", "reason": "declined", "refused": true, "in_reference": false},
			}}}})
		sc, err := judgeWith(t, j, "topic_adherence", map[string]any{"mode": mode}, booking())
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(sc.Score-want) > 1e-12 {
			t.Errorf("%s = %v, want %v (%s)", mode, sc.Score, want, sc.Reason)
		}
		if !strings.Contains(sc.Reason, "1 topics lacked an assessment and were padded") || s.Calls() != 2 {
			t.Errorf("%s: reason %q after %d calls", mode, sc.Reason, s.Calls())
		}
	}
	in := booking()
	in.ReferenceTopics = nil
	if _, err := judgeWith(t, j, "topic_adherence", nil, in); err == nil || !strings.Contains(err.Error(), "needs reference_topics") {
		t.Errorf("no reference topics: %v", err)
	}
}

func TestConversationGraders(t *testing.T) {
	j, s := fakeJudge(t)
	for _, name := range []string{"instruction_retention", "inference_memory", "self_coherence", "versioned_editing"} {
		s.Reset()
		s.Add(&fakellm.Rule{Reply: verdicts(false)})
		sc, err := judgeWith(t, j, name, nil, booking())
		if err != nil {
			t.Fatal(err)
		}
		if sc.Score != 0 || len(sc.Assertions) != 1 || s.Calls() != 1 {
			t.Errorf("%s: %+v after %d calls", name, sc, s.Calls())
		}
		if !quotedRE("[Turn 2]\n", "user", "Thanks.").MatchString(s.Requests()[0].Messages[1].Text()) {
			t.Errorf("%s: the transcript is not numbered by turn", name)
		}
	}
}

func TestConversationRelevanceWindows(t *testing.T) {
	j, s := fakeJudge(t)
	s.Add(&fakellm.Rule{Reply: verdicts(true, false)})
	sc, err := judgeWith(t, j, "conversation_relevance", map[string]any{"window_size": 1}, booking())
	if err != nil {
		t.Fatal(err)
	}
	if !near(sc.Score, 0.5) || len(sc.Assertions) != 2 || s.Calls() != 1 {
		t.Fatalf("score = %+v", sc)
	}
	if sc.Assertions[1].Text != "The assistant's reply in turn 2 is relevant to the user's messages in turn 2." {
		t.Errorf("window text = %q", sc.Assertions[1].Text)
	}
	s.Reset()
	s.Add(&fakellm.Rule{Reply: verdicts(true, true)})
	sc, _ = judgeWith(t, j, "conversation_relevance", nil, booking())
	if sc.Assertions[1].Text != "The assistant's reply in turn 2 is relevant to the user's messages in turns 1 to 2." {
		t.Errorf("default window text = %q", sc.Assertions[1].Text)
	}
}

func TestJudgeFailuresAreErrors(t *testing.T) {
	j, s := fakeJudge(t)
	s.Add(&fakellm.Rule{Reply: fakellm.Reply{Content: "not json at all"}})
	sc, err := judgeWith(t, j, "instruction_retention", nil, booking())
	if err == nil || sc.Verdict != agenteval.VerdictError || !strings.Contains(sc.Reason, "gave invalid output 3 times") || sc.Usage == nil || sc.Usage.Calls != 3 {
		t.Errorf("score = %+v, err %v", sc, err)
	}
}

func TestToolCallsChecksAreJudgedInOneCall(t *testing.T) {
	j, s := fakeJudge(t)
	// Two checks on the matched calls: the first passes, the second fails.
	s.Add(&fakellm.Rule{Reply: verdicts(true, false)})
	expected := []any{
		map[string]any{"tool": "search", "args": map[string]any{"city": map[string]any{"$check": "a city in France"}, "days": map[string]any{"$text": "2"}}},
		map[string]any{"tool": "book", "output": map[string]any{"check": "the booking succeeded"}},
	}
	g, err := New(Spec{Type: "tool_calls", Judge: j, Options: map[string]any{"expected": expected, "mode": "any_order"}})
	if err != nil {
		t.Fatal(err)
	}
	conv := agenteval.Conversation{
		{Role: agenteval.RoleUser, Content: "go"},
		{Role: agenteval.RoleAssistant, ToolCalls: []agenteval.ToolCall{{Name: "search", Args: map[string]any{"city": "Paris", "days": 2}}, {Name: "book", Args: map[string]any{}}}},
		{Role: agenteval.RoleTool, Content: "results"},
		{Role: agenteval.RoleTool, Content: "error: sold out"},
	}
	sc, err := g.Grade(context.Background(), &agenteval.GradeInput{Transcript: conv, Output: conv})
	if err != nil {
		t.Fatal(err)
	}
	if sc.Score != 0.5 || s.Calls() != 1 {
		t.Fatalf("score %v after %d judge calls: %+v", sc.Score, s.Calls(), sc.Assertions)
	}
	if !strings.Contains(sc.Assertions[1].Evidence, "call 2 book: output check failed: because b") {
		t.Errorf("evidence = %q", sc.Assertions[1].Evidence)
	}
	crit := s.Requests()[0].Messages[1].Text()
	if !strings.Contains(crit, `the argument city = "Paris" satisfies: a city in France`) || !strings.Contains(crit, `which was "error: sold out", satisfies: the booking succeeded`) {
		t.Errorf("criteria = %s", crit)
	}
	if _, err := New(Spec{Type: "tool_calls", Options: map[string]any{"expected": expected}}); err == nil || !strings.Contains(err.Error(), "needs a judge") {
		t.Errorf("$check without a judge: %v", err)
	}
}
