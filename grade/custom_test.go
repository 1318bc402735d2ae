package grade

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/fakellm"
)

func turnInput() *agenteval.GradeInput {
	full := agenteval.Conversation{
		{Role: agenteval.RoleSystem, Content: "travel agent"},
		{Role: agenteval.RoleUser, Content: "Japan in spring?"},
		{Role: agenteval.RoleAssistant, Content: "Kyoto and the Alps."},
		{Role: agenteval.RoleUser, Content: "Budget is $3000."},
		{Role: agenteval.RoleAssistant, Content: "Stay in hostels."},
	}
	return &agenteval.GradeInput{Transcript: full, Output: full[4:], Turn: 2, Reference: "Hostels and rail pass.", Criteria: "helpful travel advice",
		Vars: map[string]any{"city": "Kyoto"}, Stats: &agenteval.Stats{LatencyMS: 1200, Usage: agenteval.Usage{InputTokens: 900, OutputTokens: 200}, Turns: 2}}
}

func TestTemplateVars(t *testing.T) {
	v := templateVars(turnInput())
	if !strings.HasSuffix(v["input"], "Human: Budget is $3000.") || strings.Contains(v["input"], "hostels") {
		t.Errorf("input = %q: it must end with this turn's user message", v["input"])
	}
	if v["output"] != "Stay in hostels." || v["expected_output"] != "Hostels and rail pass." || v["criteria"] != "helpful travel advice" || v["city"] != "Kyoto" {
		t.Errorf("vars = %v", v)
	}
	if _, err := fill("{{ nope }}", turnInput(), nil); err == nil || !strings.Contains(err.Error(), "{{ nope }}") {
		t.Errorf("unknown variable: %v", err)
	}
}

func TestLLMGrader(t *testing.T) {
	j, s := fakeJudge(t)
	s.Add(&fakellm.Rule{Match: fakellm.SchemaNamed("criteria_verdicts"), Reply: verdicts(false)},
		&fakellm.Rule{Match: fakellm.SchemaNamed("llm_grader_score"), Reply: fakellm.Reply{JSON: map[string]any{"reason": "partly", "score": 0.6}}})
	sc, err := judgeWith(t, j, "llm_grader", map[string]any{"prompt": "Does {{ output }} respect the budget in {{ input }}? Reference: {{expected_output}}", "output": "pass"}, turnInput())
	if err != nil {
		t.Fatal(err)
	}
	if sc.Score != 0 || sc.Assertions[0].Evidence != "because a" {
		t.Errorf("score = %+v", sc)
	}
	sent := s.Requests()[0].Messages[1].Text()
	// The author's words pass as written; every variable is quoted.
	if !quotedRE("Does ", "output", "Stay in hostels.</output").MatchString(sent) || !quotedRE(" respect the budget in ", "input", "<system id=").MatchString(sent) ||
		!quotedRE("? Reference: ", "expected_output", "Hostels and rail pass.</expected_output").MatchString(sent) || strings.Contains(sent, "hostels.</user") {
		t.Errorf("prompt = %s", sent)
	}
	sc, err = judgeWith(t, j, "llm-grader", map[string]any{"prompt": "Rate {{ output }}", "output": "score"}, turnInput())
	if err != nil || sc.Score != 0.6 || sc.Verdict != agenteval.VerdictFail {
		t.Errorf("score mode: %+v, %v", sc, err)
	}
}

// An llm grader scores from 0 to 1 unless the file asks for pass or fail,
// as AgentV's llm-grader does; without a prompt it grades against the
// test's criteria and reference (and the grader's rubric).
func TestLLMGraderScoresByDefault(t *testing.T) {
	j, s := fakeJudge(t)
	s.Add(&fakellm.Rule{Match: fakellm.SchemaNamed("llm_grader_score"), Reply: fakellm.Reply{JSON: map[string]any{"reason": "mostly", "score": 0.7}}})
	sc, err := judgeWith(t, j, "llm-grader", map[string]any{"prompt": "Rate {{ output }}"}, turnInput())
	if err != nil || sc.Score != 0.7 {
		t.Fatalf("score = %+v, %v; want the judge's 0.7", sc, err)
	}
	sc, err = judgeWith(t, j, "llm_grader", map[string]any{"value": "Mentions a rail pass."}, turnInput())
	if err != nil || sc.Score != 0.7 {
		t.Fatalf("default prompt: %+v, %v", sc, err)
	}
	sent := s.Requests()[1].Messages[1].Text()
	for _, want := range []string{"helpful travel advice", "Mentions a rail pass.", "Hostels and rail pass.", "Stay in hostels."} {
		if !strings.Contains(sent, want) {
			t.Errorf("the default prompt lacks %q:\n%s", want, sent)
		}
	}
	// A prompt with no variables is what to check, in the default prompt,
	// as AgentV has it: the judge still sees the task, reference and reply.
	if _, err = judgeWith(t, j, "llm_grader", map[string]any{"prompt": "Check that the advice is frugal."}, turnInput()); err != nil {
		t.Fatal(err)
	}
	sent = s.Requests()[2].Messages[1].Text()
	for _, want := range []string{"Check that the advice is frugal.", "Hostels and rail pass.", "Stay in hostels."} {
		if !strings.Contains(sent, want) {
			t.Errorf("a prompt without variables: the judge lacks %q:\n%s", want, sent)
		}
	}
}

func TestScriptGrader(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "grade.sh")
	os.WriteFile(script, []byte("#!/bin/sh\nread -r line\ncase \"$line\" in *hostels*) echo '{\"score\": 0.75, \"assertions\": [{\"text\": \"mentions hostels\", \"passed\": true}]}';; *) echo '{\"pass\": false}';; esac\n"), 0o755)
	g, err := New(Spec{Type: "code-grader", Dir: dir, Options: map[string]any{"command": []any{"./grade.sh"}}})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := g.Grade(context.Background(), turnInput())
	if err != nil || sc.Score != 0.75 || len(sc.Assertions) != 1 || !sc.Assertions[0].Passed {
		t.Fatalf("score = %+v, %v", sc, err)
	}
	bad := filepath.Join(dir, "bad.sh")
	os.WriteFile(bad, []byte("#!/bin/sh\necho '{not json'\n"), 0o755)
	g, _ = New(Spec{Type: "script", Options: map[string]any{"command": []any{bad}}})
	if _, err := g.Grade(context.Background(), turnInput()); err == nil || !strings.Contains(err.Error(), "not a JSON object") {
		t.Errorf("garbage output: %v", err)
	}
	// Plain text: the exit status is the verdict, as in AgentV.
	for _, tc := range []struct {
		body  string
		score float64
	}{{"echo 'all good'", 1}, {"echo 'too short'; exit 1", 0}} {
		p := filepath.Join(dir, "plain.sh")
		os.WriteFile(p, []byte("#!/bin/sh\n"+tc.body+"\n"), 0o755)
		g, _ = New(Spec{Type: "script", Options: map[string]any{"command": []any{p}}})
		sc, err := g.Grade(context.Background(), turnInput())
		if err != nil || sc.Score != tc.score || len(sc.Assertions) != 1 {
			t.Errorf("plain text %q: %+v, %v", tc.body, sc, err)
		}
	}
	fails := filepath.Join(dir, "fails.sh")
	os.WriteFile(fails, []byte("#!/bin/sh\necho 'boom' >&2\nexit 3\n"), 0o755)
	g, _ = New(Spec{Type: "script", Options: map[string]any{"command": []any{fails}}})
	if _, err := g.Grade(context.Background(), turnInput()); err == nil || !strings.Contains(err.Error(), "stderr: boom") {
		t.Errorf("failing script: %v", err)
	}
}

func TestBudgets(t *testing.T) {
	in := turnInput()
	c := 0.002
	in.Stats.Usage.CostUSD = &c
	tests := []struct {
		typ    string
		params map[string]any
		pass   bool
	}{
		{"latency", map[string]any{"max": 2000}, true},
		{"latency", map[string]any{"threshold_ms": 1000}, false},
		{"token_usage", map[string]any{"max": 1100}, true},
		{"token_usage", map[string]any{"max": 1000}, false},
		{"cost", map[string]any{"max": 0.001}, false},
		{"max_turns", map[string]any{"max": 2}, true},
		{"tool_call_count", map[string]any{"max": 0}, true},
		{"tool_call_count", map[string]any{"min": 1}, false},
	}
	for _, tt := range tests {
		g := mustGrader(t, tt.typ, tt.params)
		sc, err := g.Grade(context.Background(), in)
		if err != nil || (sc.Verdict == agenteval.VerdictPass) != tt.pass {
			t.Errorf("%s %v: %+v, %v", tt.typ, tt.params, sc, err)
		}
	}
	if _, err := New(Spec{Type: "latency"}); err == nil || !strings.Contains(err.Error(), "needs max") {
		t.Errorf("latency without max: %v", err)
	}
	g := mustGrader(t, "latency", map[string]any{"max": 10})
	if _, err := g.Grade(context.Background(), &agenteval.GradeInput{}); err == nil {
		t.Error("latency on a recorded sample should not be measurable")
	}
	// A live agent that reports no usage (a command agent) fails a cost
	// budget with the reason, rather than ending in an execution error.
	cost := mustGrader(t, "cost", map[string]any{"max": 0.01})
	sc, err := cost.Grade(context.Background(), &agenteval.GradeInput{Stats: &agenteval.Stats{}})
	if err != nil || sc.Verdict != agenteval.VerdictFail || !strings.Contains(sc.Reason, "the agent reported neither cost nor token usage") {
		t.Errorf("cost without usage: %+v, %v", sc, err)
	}
	sc, _ = cost.Grade(context.Background(), &agenteval.GradeInput{Stats: &agenteval.Stats{Usage: agenteval.Usage{Calls: 1, InputTokens: 10}}})
	if sc.Verdict != agenteval.VerdictFail || !strings.Contains(sc.Reason, "no price") {
		t.Errorf("cost without a price: %+v", sc)
	}
	// A cost reported alone is the cost (a cli target's cost_usd).
	sc, _ = cost.Grade(context.Background(), &agenteval.GradeInput{Stats: &agenteval.Stats{Usage: agenteval.Usage{CostUSD: &c}}})
	if sc.Verdict != agenteval.VerdictPass {
		t.Errorf("cost alone: %+v", sc)
	}
	// token_usage as AgentV's: the total counts cached tokens, and an
	// agent that reported no usage fails, as it does there (AgentV 4.42.4:
	// "Total tokens 170 > 165" for input 100, output 50, cached 20).
	tokens := mustGrader(t, "token_usage", map[string]any{"max_total": 165})
	sc, _ = tokens.Grade(context.Background(), &agenteval.GradeInput{Stats: &agenteval.Stats{Usage: agenteval.Usage{Calls: 1, InputTokens: 100, OutputTokens: 50, CachedTokens: 20}}})
	if sc.Verdict != agenteval.VerdictFail || sc.Assertions[0].Evidence != "170 tokens" {
		t.Errorf("cached tokens: %+v", sc)
	}
	for _, u := range []agenteval.Usage{{}, {CostUSD: &c}} {
		sc, err = tokens.Grade(context.Background(), &agenteval.GradeInput{Stats: &agenteval.Stats{Usage: u}})
		if err != nil || sc.Verdict != agenteval.VerdictFail || !strings.Contains(sc.Reason, "reported no token usage") {
			t.Errorf("no tokens reported (%+v): %+v, %v", u, sc, err)
		}
	}
	sc, _ = tokens.Grade(context.Background(), &agenteval.GradeInput{Stats: &agenteval.Stats{Usage: agenteval.Usage{Calls: 1}}})
	if sc.Verdict != agenteval.VerdictPass {
		t.Errorf("0 tokens reported: %+v", sc)
	}
}

func TestJudgedTextTurnOrWhole(t *testing.T) {
	in := turnInput()
	if _, out := judgedText(in); !strings.Contains(out.Pretty(), "Stay in hostels.") {
		t.Errorf("turn 2: judge output = %v, want the turn's reply", out)
	}
	in.Turn = 0 // the whole conversation, though Output is only its tail
	if _, out := judgedText(in); len(out) != 0 {
		t.Errorf("whole conversation: judge output = %v, want none (the transcript is graded)", out)
	}
	if v := templateVars(in); !strings.Contains(v["input"], "Stay in hostels.") {
		t.Errorf("whole conversation: input = %q, want the full transcript", v["input"])
	}
}
