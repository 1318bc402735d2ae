package grade

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/fakellm"
	"github.com/agenteval/agenteval/judge"
)

// Conversation builders shared by the expected_tool_calls, subgoals and
// user_fidelity tests.

func userSays(s string) agenteval.Message {
	return agenteval.Message{Role: agenteval.RoleUser, Content: s}
}

func agentSays(s string) agenteval.Message {
	return agenteval.Message{Role: agenteval.RoleAssistant, Content: s}
}

func agentCalls(calls ...agenteval.ToolCall) agenteval.Message {
	return agenteval.Message{Role: agenteval.RoleAssistant, ToolCalls: calls}
}

func toolSays(s string) agenteval.Message {
	return agenteval.Message{Role: agenteval.RoleTool, Content: s}
}

// threeTurnBooking is a booking in three turns: a search in turn 1, the
// booking in turn 2, a confirmation mail in turn 3.
func threeTurnBooking() agenteval.Conversation {
	return agenteval.Conversation{
		userSays("Find me a Chinese restaurant for 2."),
		agentCalls(call("search", `{"cuisine": "chinese", "party": 2}`)),
		toolSays(`{"name": "Golden Dragon"}`),
		agentSays("Golden Dragon has room. What time?"),
		userSays("8pm, please."),
		agentCalls(call("book", `{"name": "Golden Dragon", "time": "20:00", "party": 2}`)),
		toolSays("booked"),
		agentSays("Booked for 8pm."),
		userSays("Mail me a confirmation."),
		agentCalls(call("email", `{"to": "me", "subject": "Booking"}`)),
		toolSays(`{"sent": true}`),
		agentSays("Sent."),
	}
}

func gradeExpected(t *testing.T, j *judge.Judge, calls []any, conv agenteval.Conversation) (agenteval.Score, error) {
	t.Helper()
	g, err := New(Spec{Type: "expected_tool_calls", Options: map[string]any{"calls": calls}, Judge: j})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return g.Grade(context.Background(), &agenteval.GradeInput{Transcript: conv, Output: conv})
}

func TestExpectedToolCallsDeterministic(t *testing.T) {
	conv := threeTurnBooking()
	tests := []struct {
		name  string
		calls []any
		conv  agenteval.Conversation // nil: threeTurnBooking
		want  float64
		// failed must appear in the evidence of the assertion at index bad
		// (ignored when empty); passed in the evidence of a passed one.
		bad    int
		failed string
		passed string
	}{
		{
			name:   "$text compares as text: 2 matches the number 2 and \"2\" matches it too",
			calls:  []any{map[string]any{"tool": "search", "args": map[string]any{"party": map[string]any{"$text": "2"}, "cuisine": map[string]any{"$text": "chinese"}}}},
			want:   1,
			passed: `matched call 1 search({"cuisine":"chinese","party":2}) in turn 1`,
		},
		{
			name:  "$text: the number 1 matches the string \"1\"",
			calls: []any{map[string]any{"tool": "pick", "args": map[string]any{"n": map[string]any{"$text": 1}}}},
			conv:  agenteval.Conversation{userSays("pick"), agentCalls(call("pick", `{"n": "1"}`))},
			want:  1,
		},
		{
			name:  "$text follows Python str(): True matches true",
			calls: []any{map[string]any{"tool": "pick", "args": map[string]any{"flag": map[string]any{"$text": "True"}}}},
			conv:  agenteval.Conversation{userSays("pick"), agentCalls(call("pick", `{"flag": true}`))},
			want:  1,
		},
		{
			name:   "$text follows Python str(): 2 does not match 2.0",
			calls:  []any{map[string]any{"tool": "pick", "args": map[string]any{"n": map[string]any{"$text": 2}}}},
			conv:   agenteval.Conversation{userSays("pick"), agentCalls(call("pick", `{"n": 2.0}`))},
			want:   0,
			failed: `call 1 pick in turn 1: arg n: want {"$text":2}, got 2.0`,
		},
		{
			name:  "a plain value compares as JSON: 2 matches 2.0",
			calls: []any{map[string]any{"tool": "pick", "args": map[string]any{"n": 2}}},
			conv:  agenteval.Conversation{userSays("pick"), agentCalls(call("pick", `{"n": 2.0}`))},
			want:  1,
		},
		{
			name:   "a plain value compares as JSON: 1 does not match \"1\"",
			calls:  []any{map[string]any{"tool": "pick", "args": map[string]any{"n": 1}}},
			conv:   agenteval.Conversation{userSays("pick"), agentCalls(call("pick", `{"n": "1"}`))},
			want:   0,
			failed: `arg n: want 1, got "1"`,
		},
		{
			name: "a wrong argument names the argument",
			calls: []any{
				map[string]any{"tool": "search", "args": map[string]any{"cuisine": map[string]any{"$text": "chinese"}}},
				map[string]any{"tool": "book", "args": map[string]any{"time": map[string]any{"$text": "19:00"}, "party": 2}},
			},
			want:   0.5,
			bad:    1,
			failed: `call 2 book in turn 2: arg time: want {"$text":"19:00"}, got "20:00"`,
		},
		{
			name:   "a missing argument is named",
			calls:  []any{map[string]any{"tool": "book", "args": map[string]any{"date": map[string]any{"$any": true}}}},
			want:   0,
			failed: "call 2 book in turn 2: missing arg date",
		},
		{
			name:  "extra arguments of the call are allowed",
			calls: []any{map[string]any{"tool": "book", "args": map[string]any{"name": "Golden Dragon"}}},
			want:  1,
		},
		{
			name:  "$any and $regex",
			calls: []any{map[string]any{"tool": "book", "args": map[string]any{"name": map[string]any{"$any": true}, "time": map[string]any{"$regex": "^20:"}}}},
			want:  1,
		},
		{
			name:   "$regex that does not match",
			calls:  []any{map[string]any{"tool": "book", "args": map[string]any{"time": map[string]any{"$regex": "^19:"}}}},
			want:   0,
			failed: `arg time: want {"$regex":"^19:"}, got "20:00"`,
		},
		{
			name:  "no args, or args: any, checks the name only",
			calls: []any{map[string]any{"tool": "email"}, map[string]any{"tool": "search", "args": "any"}},
			want:  1,
		},
		{
			name:  "args: null means no expected arguments",
			calls: []any{map[string]any{"tool": "email", "args": nil}},
			want:  1,
		},
		{
			name: "any order",
			calls: []any{
				map[string]any{"tool": "email"},
				map[string]any{"tool": "book"},
				map[string]any{"tool": "search"},
			},
			want: 1,
		},
		{
			name:   "a tool never called",
			calls:  []any{map[string]any{"tool": "search"}, map[string]any{"tool": "cancel"}},
			want:   0.5,
			bad:    1,
			failed: "cancel was never called",
		},
		{
			name:   "a scoped tool never called",
			calls:  []any{map[string]any{"tool": "cancel", "turn": 2}},
			want:   0,
			failed: "cancel was never called (expected in turn 2)",
		},
		{
			name:   "a scoped call made in the right turn",
			calls:  []any{map[string]any{"tool": "book", "turn": 2}, map[string]any{"tool": "email", "turn": 3}},
			want:   1,
			passed: "in turn 3",
		},
		{
			name:   "a scoped call made in another turn names where it was made",
			calls:  []any{map[string]any{"tool": "book", "turn": 1}},
			want:   0,
			failed: "book was not called in turn 1 (it was called in turn 2)",
		},
		{
			name:  "a scoped call made in several other turns lists them",
			calls: []any{map[string]any{"tool": "search", "turn": 2}},
			conv: agenteval.Conversation{
				userSays("a"), agentCalls(call("search", `{}`)), toolSays("x"),
				userSays("b"), agentSays("hm"),
				userSays("c"), agentCalls(call("search", `{}`)), toolSays("y"),
			},
			want:   0,
			failed: "search was not called in turn 2 (it was called in turn 1, 3)",
		},
		{
			name:  "turns count user messages, not assistant replies",
			calls: []any{map[string]any{"tool": "search", "turn": 2}},
			conv: agenteval.Conversation{
				userSays("a"), agentSays("one"), agentSays("two"),
				userSays("b"), agentCalls(call("search", `{}`)), agentCalls(call("other", `{}`)),
			},
			want: 1,
		},
		{
			name:   "one call cannot satisfy two expectations",
			calls:  []any{map[string]any{"tool": "book"}, map[string]any{"tool": "book", "args": map[string]any{"time": "20:00"}}},
			want:   0.5,
			bad:    1,
			failed: "every book call in scope (1) already matched another expected call",
		},
		{
			name: "matching is maximal: a loose expectation does not steal the call a strict one needs",
			calls: []any{
				map[string]any{"tool": "pick", "args": map[string]any{"n": map[string]any{"$any": true}}},
				map[string]any{"tool": "pick", "args": map[string]any{"n": 1}},
			},
			conv: agenteval.Conversation{userSays("pick"), agentCalls(call("pick", `{"n": 1}`), call("pick", `{"n": 2}`))},
			want: 1,
		},
		{
			name:   "expected output by value",
			calls:  []any{map[string]any{"tool": "book", "output": "booked"}, map[string]any{"tool": "email", "output": map[string]any{"value": map[string]any{"sent": true}}}},
			want:   1,
			passed: "matched call 3 email",
		},
		{
			name:   "expected output that differs",
			calls:  []any{map[string]any{"tool": "book", "output": "sold out"}},
			want:   0,
			failed: `call 2 book in turn 2: output: want "sold out", got "booked"`,
		},
		{
			name:   "expected output of a call without a result",
			calls:  []any{map[string]any{"tool": "pick", "output": "ok"}},
			conv:   agenteval.Conversation{userSays("pick"), agentCalls(call("pick", `{}`))},
			want:   0,
			failed: "no tool result to compare with the expected output",
		},
		{
			name:   "no calls at all",
			calls:  []any{map[string]any{"tool": "search"}},
			conv:   agenteval.Conversation{userSays("hi"), agentSays("hello")},
			want:   0,
			failed: "search was never called",
		},
		{
			name:   "arguments that are not JSON",
			calls:  []any{map[string]any{"tool": "pick", "args": map[string]any{"n": 1}}},
			conv:   agenteval.Conversation{userSays("pick"), agentCalls(agenteval.ToolCall{Name: "pick", RawArgs: "{n: 1"})},
			want:   0,
			failed: "arguments are not valid JSON: {n: 1",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.conv
			if c == nil {
				c = conv
			}
			s, err := gradeExpected(t, nil, tt.calls, c)
			if err != nil {
				t.Fatal(err)
			}
			if !near(s.Score, tt.want) || len(s.Assertions) != len(tt.calls) {
				t.Fatalf("score = %v, want %v (%s; %+v)", s.Score, tt.want, s.Reason, s.Assertions)
			}
			if s.Type != "expected_tool_calls" || s.Usage != nil {
				t.Errorf("type %q, usage %+v", s.Type, s.Usage)
			}
			matched := 0
			for _, a := range s.Assertions {
				if a.Passed {
					matched++
				}
			}
			if s.Details["matched"] != matched || s.Details["expected"] != len(tt.calls) || s.Details["calls"] != len(c.ToolCalls()) {
				t.Errorf("details = %v, %d assertions passed", s.Details, matched)
			}
			if tt.failed != "" {
				a := s.Assertions[tt.bad]
				if a.Passed || !strings.Contains(a.Evidence, tt.failed) {
					t.Errorf("assertion %d = %+v; want a failure saying %q", tt.bad, a, tt.failed)
				}
			}
			if tt.passed != "" && !hasPassedEvidence(s, tt.passed) {
				t.Errorf("no passed assertion says %q: %+v", tt.passed, s.Assertions)
			}
		})
	}
}

func hasPassedEvidence(s agenteval.Score, want string) bool {
	for _, a := range s.Assertions {
		if a.Passed && strings.Contains(a.Evidence, want) {
			return true
		}
	}
	return false
}

func TestExpectedToolCallsReportAndVerdict(t *testing.T) {
	calls := []any{
		map[string]any{"tool": "search", "args": map[string]any{"party": map[string]any{"$text": "2"}, "cuisine": map[string]any{"$regex": "^chin"}}},
		map[string]any{"tool": "book", "args": map[string]any{"name": map[string]any{"$any": true}}, "output": "booked", "turn": 2},
		map[string]any{"tool": "cancel", "args": map[string]any{"why": map[string]any{"$check": "a polite reason"}}},
		map[string]any{"tool": "pay", "args": map[string]any{"amount": 10}},
	}
	j, s := fakeJudge(t)
	sc, err := gradeExpected(t, j, calls, threeTurnBooking())
	if err != nil {
		t.Fatal(err)
	}
	if sc.Score != 0.5 || sc.Verdict != agenteval.VerdictFail || sc.Reason != "2 of 4 expected tool calls made (3 calls in all)" {
		t.Errorf("score = %+v", sc)
	}
	want := []string{
		`expected call search(cuisine=/^chin/, party="2")`,
		`expected call book(name=*) -> "booked" in turn 2`,
		`expected call cancel(why=<check: a polite reason>)`,
		`expected call pay(amount=10)`,
	}
	for i, w := range want {
		if sc.Assertions[i].Text != w {
			t.Errorf("assertion %d text = %q, want %q", i, sc.Assertions[i].Text, w)
		}
	}
	// No call was paired with the check, so the judge is not asked.
	if s.Calls() != 0 || sc.Usage != nil {
		t.Errorf("%d judge calls, usage %+v; want none", s.Calls(), sc.Usage)
	}
}

func TestExpectedToolCallsChecks(t *testing.T) {
	conv := agenteval.Conversation{
		userSays("Find flights to Paris and book the cheapest."),
		agentCalls(call("search", `{"city": "Paris", "days": 2}`)),
		toolSays(`[{"id": 7, "price": 99}]`),
		userSays("Go ahead."),
		agentCalls(call("book", `{"flight": 7}`)),
		toolSays("error: sold out"),
		agentSays("Sorry, it sold out."),
	}
	cityCheck := map[string]any{"tool": "search", "args": map[string]any{"city": map[string]any{"$check": "a city in France"}, "days": map[string]any{"$text": "2"}}}
	outputCheck := map[string]any{"tool": "book", "output": map[string]any{"$check": "the booking succeeded"}, "turn": 2}

	t.Run("passing checks are judged in one call", func(t *testing.T) {
		j, s := fakeJudge(t)
		s.Add(&fakellm.Rule{Match: fakellm.SchemaNamed("criteria_verdicts"), Reply: verdicts(true, true)})
		sc, err := gradeExpected(t, j, []any{cityCheck, outputCheck}, conv)
		if err != nil {
			t.Fatal(err)
		}
		if sc.Score != 1 || s.Calls() != 1 || sc.Usage == nil || sc.Usage.Calls != 1 {
			t.Fatalf("score %+v after %d judge calls", sc, s.Calls())
		}
		prompt := s.Requests()[0].LastUser()
		for _, w := range []string{
			`In the call search({"city":"Paris","days":2}), the argument city = "Paris" satisfies: a city in France`,
			`The result of the call book({"flight":7}), which was "error: sold out", satisfies: the booking succeeded`,
		} {
			if !strings.Contains(prompt, w) {
				t.Errorf("judge prompt lacks %q:\n%s", w, prompt)
			}
		}
	})

	t.Run("a failed argument check unpairs the call", func(t *testing.T) {
		j, s := fakeJudge(t)
		s.Add(&fakellm.Rule{Reply: verdicts(false)})
		sc, err := gradeExpected(t, j, []any{cityCheck, map[string]any{"tool": "book"}}, conv)
		if err != nil {
			t.Fatal(err)
		}
		if sc.Score != 0.5 || s.Calls() != 1 {
			t.Fatalf("score %+v after %d judge calls", sc, s.Calls())
		}
		a := sc.Assertions[0]
		if a.Passed || a.Evidence != "call 1 search: arg city check failed: because a" {
			t.Errorf("assertion = %+v", a)
		}
		if sc.Details["matched"] != 1 {
			t.Errorf("details = %v", sc.Details)
		}
	})

	t.Run("a failed output check unpairs the call", func(t *testing.T) {
		j, s := fakeJudge(t)
		s.Add(&fakellm.Rule{Reply: verdicts(true, false)})
		sc, err := gradeExpected(t, j, []any{cityCheck, outputCheck}, conv)
		if err != nil {
			t.Fatal(err)
		}
		if sc.Score != 0.5 || !sc.Assertions[0].Passed || sc.Assertions[1].Passed {
			t.Fatalf("score = %+v", sc)
		}
		if ev := sc.Assertions[1].Evidence; ev != "call 2 book: output check failed: because b" {
			t.Errorf("evidence = %q", ev)
		}
	})

	t.Run("two failed checks of one call are both reported", func(t *testing.T) {
		j, s := fakeJudge(t)
		s.Add(&fakellm.Rule{Reply: verdicts(false, false)})
		both := map[string]any{"tool": "search", "args": map[string]any{"city": map[string]any{"$check": "a city in Spain"}, "days": map[string]any{"$check": "a week or more"}}}
		sc, err := gradeExpected(t, j, []any{both}, conv)
		if err != nil {
			t.Fatal(err)
		}
		if ev := sc.Assertions[0].Evidence; sc.Score != 0 || ev != "call 1 search: arg city check failed: because a; call 1 search: arg days check failed: because b" {
			t.Errorf("score %v, evidence %q", sc.Score, ev)
		}
	})

	t.Run("a check on a call in the wrong turn is not judged", func(t *testing.T) {
		j, s := fakeJudge(t)
		scoped := map[string]any{"tool": "search", "turn": 2, "args": map[string]any{"city": map[string]any{"$check": "a city in France"}}}
		sc, err := gradeExpected(t, j, []any{scoped}, conv)
		if err != nil {
			t.Fatal(err)
		}
		if sc.Score != 0 || s.Calls() != 0 || !strings.Contains(sc.Assertions[0].Evidence, "search was not called in turn 2 (it was called in turn 1)") {
			t.Errorf("score %+v after %d judge calls", sc, s.Calls())
		}
	})

	t.Run("a judge that fails makes an error score", func(t *testing.T) {
		j, s := fakeJudge(t)
		s.Add(&fakellm.Rule{Reply: fakellm.Reply{Content: "I think it is fine."}})
		sc, err := gradeExpected(t, j, []any{cityCheck}, conv)
		if err == nil || sc.Verdict != agenteval.VerdictError || !strings.Contains(sc.Reason, "check arguments: ") || !strings.Contains(sc.Reason, "invalid output 3 times") {
			t.Errorf("score %+v, err %v", sc, err)
		}
		if s.Calls() != 3 || sc.Usage == nil || sc.Usage.Calls != 3 {
			t.Errorf("%d judge calls, usage %+v", s.Calls(), sc.Usage)
		}
	})
}

// The output check form {"check": "..."} is documented by parseExpectedCall
// next to {"value": ...}; it must be judged like {"$check": "..."}.
func TestExpectedToolCallsOutputCheckShorthand(t *testing.T) {
	calls := []any{map[string]any{"tool": "book", "output": map[string]any{"check": "the booking succeeded"}}}
	if _, err := New(Spec{Type: "expected_tool_calls", Options: map[string]any{"calls": calls}}); err == nil {
		t.Error("an output check without a judge was accepted")
	}
	j, s := fakeJudge(t)
	s.Add(&fakellm.Rule{Reply: verdicts(false)})
	conv := agenteval.Conversation{userSays("book"), agentCalls(call("book", `{}`)), toolSays("error: sold out")}
	sc, err := gradeExpected(t, j, calls, conv)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Score != 0 || s.Calls() != 1 {
		t.Errorf("score %v after %d judge calls; want 0 after 1", sc.Score, s.Calls())
	}
}

// Any order means the order of the calls made must not change the score:
// an expected call with a check that the first call of its tool fails but
// the second passes is made.
func TestExpectedToolCallsCheckTriesOtherCalls(t *testing.T) {
	expected := []any{map[string]any{"tool": "search", "args": map[string]any{"city": map[string]any{"$check": "a city in France"}}}}
	j, s := fakeJudge(t)
	// The judge passes exactly the criteria about Paris.
	crit := criterionRE
	s.Add(&fakellm.Rule{Reply: fakellm.Reply{Func: func(r *fakellm.Request) fakellm.Reply {
		out := map[string]any{}
		for _, m := range crit.FindAllStringSubmatch(r.LastUser(), -1) {
			out[m[1]] = map[string]any{"reason": m[2], "passed": strings.Contains(m[2], "Paris")}
		}
		return fakellm.Reply{JSON: out}
	}}})
	for _, order := range [][]string{{"Paris", "Berlin"}, {"Berlin", "Paris"}} {
		conv := agenteval.Conversation{userSays("search"),
			agentCalls(call("search", `{"city": "`+order[0]+`"}`), call("search", `{"city": "`+order[1]+`"}`))}
		sc, err := gradeExpected(t, j, expected, conv)
		if err != nil {
			t.Fatal(err)
		}
		if sc.Score != 1 {
			t.Errorf("calls in order %v: score %v (%+v)", order, sc.Score, sc.Assertions)
		}
	}

	// The same cause: the only search call went to the checked expectation,
	// whose check then failed; the looser expectation, which the call
	// satisfies, is left unmatched and told "search was never called".
	loose := []any{expected[0], map[string]any{"tool": "search"}}
	conv := agenteval.Conversation{userSays("search"), agentCalls(call("search", `{"city": "Berlin"}`))}
	sc, err := gradeExpected(t, j, loose, conv)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Score != 0.5 || !sc.Assertions[1].Passed {
		t.Errorf("a failed check starved another expectation: score %v (%+v)", sc.Score, sc.Assertions)
	}
}

func TestExpectedToolCallsBadSettings(t *testing.T) {
	j, _ := fakeJudge(t)
	check := map[string]any{"tool": "search", "args": map[string]any{"city": map[string]any{"$check": "in France"}}}
	tests := []struct {
		name   string
		params map[string]any
		judge  *judge.Judge
		want   string
	}{
		{"no settings", nil, nil, "calls is empty"},
		{"empty calls", map[string]any{"calls": []any{}}, nil, "calls is empty"},
		{"unknown setting", map[string]any{"call": []any{}}, nil, `unknown setting "call"; did you mean "calls"?`},
		{"calls not a list", map[string]any{"calls": "search"}, nil, `setting "calls" must be a list`},
		{"no tool", map[string]any{"calls": []any{map[string]any{"args": map[string]any{}}}}, nil, "calls[0]: an expected call needs tool"},
		{"unknown key", map[string]any{"calls": []any{map[string]any{"tool": "a", "when": 1}}}, nil, `calls[0]: unknown key "when"`},
		{"turn 0", map[string]any{"calls": []any{map[string]any{"tool": "a"}, map[string]any{"tool": "b", "turn": 0}}}, nil, "calls[1]: turn must be a turn number (1 or more), not 0"},
		{"negative turn", map[string]any{"calls": []any{map[string]any{"tool": "a", "turn": -1}}}, nil, "turn must be a turn number (1 or more), not -1"},
		{"fractional turn", map[string]any{"calls": []any{map[string]any{"tool": "a", "turn": 1.5}}}, nil, "turn must be a turn number (1 or more), not 1.5"},
		{"turn as text", map[string]any{"calls": []any{map[string]any{"tool": "a", "turn": "two"}}}, nil, `turn must be a turn number (1 or more), not "two"`},
		{"unknown matcher", map[string]any{"calls": []any{map[string]any{"tool": "a", "args": map[string]any{"x": map[string]any{"$reqex": "y"}}}}}, nil, `unknown matcher "$reqex"`},
		{"bad regex", map[string]any{"calls": []any{map[string]any{"tool": "a", "args": map[string]any{"x": map[string]any{"$regex": "("}}}}}, nil, "bad $regex"},
		{"empty check", map[string]any{"calls": []any{map[string]any{"tool": "a", "args": map[string]any{"x": map[string]any{"$check": " "}}}}}, j, "$check needs the statement"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := New(Spec{Type: "expected_tool_calls", Options: tt.params, Judge: tt.judge})
			if err == nil || g != nil {
				t.Fatalf("New = %v, nil; want an error saying %q", g, tt.want)
			}
			if !strings.HasPrefix(err.Error(), "expected_tool_calls: ") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}

	// A check needs a judge; without one the error says how to give one.
	_, err := New(Spec{Type: "expected_tool_calls", Options: map[string]any{"calls": []any{check}}})
	var nj *NoJudgeError
	if !errors.As(err, &nj) || nj.Type != "expected_tool_calls with a $check" {
		t.Errorf("$check without a judge: %v", err)
	}
	// Deterministic expectations need no judge, and one with a judge builds too.
	if _, err := New(Spec{Type: "expected_tool_calls", Options: map[string]any{"calls": []any{map[string]any{"tool": "a", "turn": 2}}}}); err != nil {
		t.Errorf("no check, no judge: %v", err)
	}
	if _, err := New(Spec{Type: "expected_tool_calls", Judge: j, Options: map[string]any{"calls": []any{check}}}); err != nil {
		t.Errorf("check with a judge: %v", err)
	}
	if (Spec{Type: "expected_tool_calls"}).NeedsJudge() || !(Spec{Type: "expected_tool_calls", Options: map[string]any{"calls": []any{check}}}).NeedsJudge() {
		t.Error("expected_tool_calls needs a judge only for checks")
	}
}

func TestExpectedToolCallsNotTrackable(t *testing.T) {
	g := mustGrader(t, "expected_tool_calls", map[string]any{"calls": []any{map[string]any{"tool": "a"}}})
	tg, ok := g.(Trackable)
	if !ok {
		t.Fatal("graders built by New implement Trackable")
	}
	if tr := tg.Track(); tr != nil {
		t.Errorf("Track() = %v, want nil for a grader that does not follow a conversation", tr)
	}
}

// TestExpectedToolCallsBeforeTheFirstUserMessage: calls an agent makes
// before the first user message (an opening lookup) belong to turn 1, as
// Conversation.Turns counts.
func TestExpectedToolCallsBeforeTheFirstUserMessage(t *testing.T) {
	conv := agenteval.Conversation{agentCalls(call("load_profile", `{}`)), toolSays("{}"), agentSays("Hi!"), userSays("Book it."), agentCalls(call("book", `{}`)), toolSays("ok")}
	sc, err := gradeExpected(t, nil, []any{map[string]any{"tool": "load_profile", "turn": 1}, map[string]any{"tool": "book", "turn": 1}}, conv)
	if err != nil || sc.Score != 1 {
		t.Errorf("score %v, err %v: %+v", sc.Score, err, sc.Assertions)
	}
}
