package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/golden"
	"github.com/agenteval/agenteval/results"
)

// conversation is a three-turn test whose third turn failed: the agent
// searched instead of moving the booking.
func conversation() *agenteval.Result {
	user := func(s string) agenteval.Message { return agenteval.Message{Role: agenteval.RoleUser, Content: s} }
	agent := func(s string, calls ...agenteval.ToolCall) agenteval.Message {
		return agenteval.Message{Role: agenteval.RoleAssistant, Content: s, ToolCalls: calls}
	}
	tool := func(id, s string) agenteval.Message {
		return agenteval.Message{Role: agenteval.RoleTool, ToolCallID: id, Content: s}
	}
	turn := func(k int, v agenteval.Verdict, score float64, reason string, as ...agenteval.Assertion) agenteval.Score {
		return agenteval.Score{Name: "turn-" + string(rune('0'+k)), Type: "composite", Score: score, Verdict: v, Weight: 1, Reason: reason,
			Scores: []agenteval.Score{{Name: "tool_calls", Type: "tool_calls", Score: score, Verdict: v, Weight: 1, Reason: reason, Assertions: as}}}
	}
	return &agenteval.Result{TestID: "book-and-move", Suite: "quickstart", Target: "replay", Score: 0.67, Verdict: agenteval.VerdictFail,
		ExecutionStatus: agenteval.StatusQualityFailure, Tags: []string{"booking"}, DurationMS: 1532,
		Usage: &agenteval.Usage{Calls: 4, InputTokens: 900, OutputTokens: 120},
		Scores: []agenteval.Score{
			turn(1, agenteval.VerdictPass, 1, "1 of 1 expected calls found", agenteval.Assertion{Text: "expected call 1: check_availability", Passed: true, Evidence: "matched call 1"}),
			turn(2, agenteval.VerdictPass, 1, "1 of 1 expected calls found", agenteval.Assertion{Text: "expected call 1: book_table", Passed: true, Evidence: "matched call 1"}),
			turn(3, agenteval.VerdictFail, 0, "0 of 1 expected calls found", agenteval.Assertion{Text: "expected call 1: update_booking(time=8pm)", Evidence: "called search_tables instead"}),
			{Name: "conversation", Type: "rubrics", Score: 1, Verdict: agenteval.VerdictPass, Weight: 1, Reason: "1 of 1 criteria met",
				Assertions: []agenteval.Assertion{{Text: "The agent stays polite.", Passed: true, Evidence: "It thanks the user each turn."}}},
		},
		Output: agenteval.Conversation{
			{Role: agenteval.RoleSystem, Content: "You are the booking assistant.\nUse the tools."},
			user("Can I book a table for two at 7pm?"),
			agent("", agenteval.ToolCall{ID: "c1", Name: "check_availability", Args: map[string]any{"time": "7pm", "party_size": 2.0}}),
			tool("c1", `{"available": true}`),
			agent("7pm is free. Shall I book it?"),
			user("Yes, under Ada."),
			agent("", agenteval.ToolCall{ID: "c2", Name: "book_table", Args: map[string]any{"name": "Ada"}}),
			tool("c2", `{"confirmation": "QS-72"}`),
			agent("Booked: QS-72.\nSee you then."),
			user("Actually, make it 8pm."),
			agent("", agenteval.ToolCall{ID: "c3", Name: "search_tables", Args: map[string]any{"time": "8pm"}}),
			tool("c3", `[]`),
			agent("<script>alert(1)</script> Sorry, 8pm is full."),
		}}
}

func TestTranscriptGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteTranscript(&buf, conversation(), TranscriptOptions{}); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/transcript.golden", buf.Bytes())
}

func TestTranscriptTrialsAndSkips(t *testing.T) {
	r := conversation()
	// Turn 3 skipped after turn 2 failed: the transcript ends at turn 2.
	r.Scores[2] = agenteval.Score{Name: "turn-3", Type: "skip", Verdict: agenteval.VerdictSkip, Weight: 1, Reason: "skipped: turn 2 did not pass"}
	r.Output = r.Output[:9]
	tr := agenteval.Trial{Trial: 2, Verdict: agenteval.VerdictPass, Score: 1, Output: r.Output[:5], Scores: r.Scores[:1]}
	r.Trials = []agenteval.Trial{{Trial: 1, Verdict: agenteval.VerdictFail, Output: r.Output, Scores: r.Scores}, tr}
	var buf bytes.Buffer
	if err := WriteTranscript(&buf, r, TranscriptOptions{Full: true}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"1 of 2 trials passed", "── Turn 3 ", "skipped: turn 2 did not pass", "Use the tools."} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	buf.Reset()
	if err := WriteTranscript(&buf, r, TranscriptOptions{Trial: 2}); err != nil {
		t.Fatal(err)
	}
	if out := buf.String(); !strings.Contains(out, "showing trial 2: pass 1.00") || strings.Contains(out, "Yes, under Ada.") {
		t.Errorf("trial 2:\n%s", out)
	}
	if err := WriteTranscript(&buf, r, TranscriptOptions{Trial: 3}); err == nil || !strings.Contains(err.Error(), "there is no trial 3") {
		t.Errorf("trial 3: %v", err)
	}
}

func TestTurnStarts(t *testing.T) {
	r := conversation()
	if got := TurnStarts(r.Output, r.Scores); len(got) != 3 || got[0] != 1 || got[1] != 5 || got[2] != 9 {
		t.Errorf("TurnStarts = %v, want [1 5 9]", got)
	}
	// An earlier exchange in the test's input comes before turn 1.
	out := append(agenteval.Conversation{{Role: agenteval.RoleUser, Content: "earlier"}, {Role: agenteval.RoleAssistant, Content: "ok"}}, r.Output...)
	if got := TurnStarts(out, r.Scores); len(got) != 3 || got[0] != 3 {
		t.Errorf("with input exchange: %v", got)
	}
	if got := TurnStarts(r.Output, nil); got != nil {
		t.Errorf("single exchange: %v", got)
	}
	// A turn with nothing to grade ran (a skip of weight 0); a turn cut
	// off did not (a skip that would have counted).
	ungraded := append([]agenteval.Score(nil), r.Scores...)
	for i := range ungraded {
		if ungraded[i].Name == "turn-2" {
			ungraded[i].Verdict, ungraded[i].Weight = agenteval.VerdictSkip, 0
		}
	}
	if got := TurnStarts(r.Output, ungraded); len(got) != 3 || got[1] != 5 {
		t.Errorf("with an ungraded middle turn: %v, want [1 5 9]", got)
	}
}

func TestMarkdownGolden(t *testing.T) {
	var buf bytes.Buffer
	w := NewMarkdown(&buf)
	w.(Starter).Start(&results.Header{RunID: "3f9a2b1c0d4e", Suites: []results.SuiteFile{{Path: "s.yaml", Name: "quickstart"}}, Target: "replay"})
	var sum results.Summary
	for _, r := range append(sample(), conversation()) {
		sum.Add(r)
		w.Write(r)
	}
	sum.DurationMS = 2500
	if err := w.Close(&sum); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/run.md.golden", buf.Bytes())
}
