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

// AgentV's graders and settings, each as AgentV means it.

// A contradiction criterion is a guard: the judge is told it passes unless
// the reply says something incompatible with it. Read as a plain outcome,
// it would be judged as a requirement, the opposite of its meaning.
func TestRubricOperators(t *testing.T) {
	j, s := fakeJudge(t)
	s.Add(&fakellm.Rule{Reply: verdicts(true, true)})
	_, err := judgeWith(t, j, "rubrics", map[string]any{"criteria": []any{
		map[string]any{"id": "no-conflict", "operator": "contradiction", "outcome": "Revenue increased to $10M"},
		map[string]any{"id": "states", "operator": "correctness", "outcome": "States revenue increased to $10M"},
	}}, noRubrics())
	if err != nil {
		t.Fatal(err)
	}
	sent := s.Requests()[0].Messages[1].Text()
	var texts []string
	for _, m := range criterionRE.FindAllStringSubmatch(sent, -1) {
		texts = append(texts, m[2])
	}
	if len(texts) != 2 || !strings.HasPrefix(texts[0], "Contradiction guard: this passes unless the assistant states or does something incompatible with the following; not mentioning it at all passes. Revenue increased to $10M") {
		t.Errorf("contradiction criterion reached the judge as %q", texts)
	}
	if len(texts) == 2 && !strings.Contains(texts[1], "must be positively stated or done") {
		t.Errorf("correctness criterion reached the judge as %q", texts[1])
	}
	if _, err := New(Spec{Type: "rubrics", Judge: j, Options: map[string]any{"criteria": []any{map[string]any{"outcome": "x", "operator": "opposite"}}}}); err == nil || !strings.Contains(err.Error(), "operator") {
		t.Errorf("a bad operator: %v", err)
	}
}

// Score ranges: each criterion scored 0..10, the score their weighted mean
// over 10; below min_score fails the verdict.
func TestRubricScoreRanges(t *testing.T) {
	j, s := fakeJudge(t)
	s.Add(&fakellm.Rule{Match: fakellm.SchemaNamed("rubric_scores"), Reply: fakellm.Reply{JSON: map[string]any{
		"c1": map[string]any{"reason": "accurate", "score": 8},
		"c2": map[string]any{"reason": "thin", "score": 4},
	}}})
	crits := []any{
		map[string]any{"id": "accuracy", "outcome": "Correct answer", "weight": 2.0, "score_ranges": map[string]any{"0": "wrong", "5": "partly", "8": "right"}},
		map[string]any{"id": "depth", "min_score": 0.5, "score_ranges": []any{
			map[string]any{"score_range": []any{0, 4}, "outcome": "shallow"}, map[string]any{"score_range": []any{5, 10}, "outcome": "deep"}}},
	}
	sc, err := judgeWith(t, j, "rubrics", map[string]any{"criteria": crits}, noRubrics())
	if err != nil {
		t.Fatal(err)
	}
	// (2×0.8 + 1×0.4) / 3
	if !near(sc.Score, 2.0/3) || sc.Verdict != agenteval.VerdictFail || !strings.Contains(sc.Reason, "below their min_score: depth") {
		t.Errorf("score = %+v", sc)
	}
	if !strings.Contains(sc.Assertions[0].Text, "8/10 (right)") {
		t.Errorf("assertion = %+v", sc.Assertions[0])
	}
	for _, bad := range []any{
		map[string]any{"0": "a", "3": "b", "2": "c", "12": "x"},
		[]any{map[string]any{"score_range": []any{0, 5}, "outcome": "a"}, map[string]any{"score_range": []any{5, 10}, "outcome": "b"}},
		[]any{map[string]any{"score_range": []any{0, 5}, "outcome": "a"}},
	} {
		if _, err := New(Spec{Type: "rubrics", Judge: j, Options: map[string]any{"criteria": []any{map[string]any{"id": "x", "score_ranges": bad}}}}); err == nil {
			t.Errorf("score_ranges %v: no error", bad)
		}
	}
}

func TestComposite(t *testing.T) {
	in := &agenteval.GradeInput{Output: agenteval.Conversation{{Role: agenteval.RoleAssistant, Content: "Booked at 8pm, status ok"}}}
	members := []any{
		map[string]any{"type": "contains", "name": "time", "value": "8pm"},
		map[string]any{"type": "contains", "name": "place", "value": "Golden"},
		map[string]any{"type": "icontains", "name": "status", "value": "STATUS"},
	}
	g := mustGrader(t, "composite", map[string]any{"assertions": members, "aggregator": map[string]any{"type": "weighted_average", "weights": map[string]any{"time": 3, "place": 1, "status": 0}}})
	sc, err := g.Grade(context.Background(), in)
	if err != nil || !near(sc.Score, 0.75) || len(sc.Scores) != 3 || sc.Assertions[0].Text != `[time] contains "8pm"` {
		t.Errorf("weighted average: %+v, %v", sc, err)
	}
	g = mustGrader(t, "assert-set", map[string]any{"assertions": members, "aggregator": map[string]any{"type": "threshold", "threshold": 0.5}})
	sc, _ = g.Grade(context.Background(), in)
	if !near(sc.Score, 2.0/3) {
		t.Errorf("threshold: %+v", sc)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "gate.sh"), []byte("#!/bin/sh\ngrep -q '\"place\".*\"score\":0' && echo '{\"score\": 0, \"reasoning\": \"place failed\"}' || echo '{\"score\": 1}'\n"), 0o755)
	g, err = New(Spec{Type: "composite", Dir: dir, Options: map[string]any{"assertions": members, "aggregator": map[string]any{"type": "code-grader", "path": "./gate.sh"}}})
	if err != nil {
		t.Fatal(err)
	}
	if sc, err = g.Grade(context.Background(), in); err != nil || sc.Score != 0 || sc.Reason != "place failed" {
		t.Errorf("code aggregator: %+v, %v", sc, err)
	}
	if _, err := New(Spec{Type: "composite", Options: map[string]any{"assertions": []any{map[string]any{"type": "containz"}}}}); err == nil || !strings.Contains(err.Error(), "assertions[0]") {
		t.Errorf("bad member: %v", err)
	}
}

func TestFieldAccuracy(t *testing.T) {
	in := &agenteval.GradeInput{
		Output:    agenteval.Conversation{{Role: agenteval.RoleAssistant, Content: "```json\n{\"invoice\": \"INV-1\", \"total\": 1889.4, \"date\": \"15-JAN-2025\", \"items\": [{\"sku\": \"A\"}]}\n```"}},
		Reference: `{"invoice": "INV-1", "total": 1889, "date": "2025-01-15", "items": [{"sku": "B"}], "note": "x"}`,
	}
	g := mustGrader(t, "field-accuracy", map[string]any{"fields": []any{
		map[string]any{"path": "invoice", "match": "exact", "weight": 2},
		map[string]any{"path": "total", "match": "numeric_tolerance", "tolerance": 1},
		map[string]any{"path": "date", "match": "date"},
		map[string]any{"path": "items[0].sku", "match": "exact"},
		map[string]any{"path": "note", "match": "exact", "required": false},
	}})
	sc, err := g.Grade(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	// invoice (2), total (1), date (1) match; sku (1) does not; note is
	// optional and missing, so it does not count.
	if !near(sc.Score, 4.0/5) || len(sc.Assertions) != 5 || sc.Assertions[3].Passed {
		t.Errorf("score = %+v", sc)
	}
	g = mustGrader(t, "field_accuracy", map[string]any{"aggregation": "all_or_nothing", "fields": []any{map[string]any{"path": "items[0].sku", "match": "exact"}, map[string]any{"path": "invoice", "match": "exact"}}})
	if sc, _ := g.Grade(context.Background(), in); sc.Score != 0 {
		t.Errorf("all_or_nothing: %+v", sc)
	}
}

func TestExecutionMetrics(t *testing.T) {
	conv := agenteval.Conversation{
		{Role: agenteval.RoleUser, Content: "go"},
		{Role: agenteval.RoleAssistant, ToolCalls: []agenteval.ToolCall{{Name: "search"}, {Name: "Read"}, {Name: "write_file"}}},
		{Role: agenteval.RoleAssistant, Content: "done"},
	}
	in := &agenteval.GradeInput{Output: conv, Transcript: conv, Stats: &agenteval.Stats{LatencyMS: 1200, Usage: agenteval.Usage{InputTokens: 900, OutputTokens: 200}}}
	g := mustGrader(t, "execution-metrics", map[string]any{"max_tool_calls": 5, "max_llm_calls": 1, "max_tokens": 2000, "max_duration_ms": 1000, "max_cost_usd": 0.1, "target_exploration_ratio": 0.6})
	sc, err := g.Grade(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	// Met: tool calls, tokens, exploration (2 of 3 explore, within 0.2 of
	// 0.6). Missed: model calls (2), duration, cost (not recorded).
	if !near(sc.Score, 3.0/6) || len(sc.Assertions) != 6 {
		t.Errorf("score = %+v", sc)
	}
	// Exploring tools are AgentV's names, exactly: read_file is not one,
	// and an agent that reported no tokens has none to count.
	conv[1].ToolCalls[1].Name = "read_file"
	in.Stats.Usage = agenteval.Usage{CostUSD: new(float64)}
	sc, _ = g.Grade(context.Background(), in)
	if !near(sc.Score, 2.0/6) || sc.Assertions[2].Passed || sc.Assertions[2].Evidence != "not recorded for this run" || !sc.Assertions[3].Passed || sc.Assertions[5].Passed {
		t.Errorf("score = %+v", sc)
	}
	if _, err := New(Spec{Type: "execution_metrics"}); err == nil {
		t.Error("no limits: no error")
	}
}

func TestToolCallsPerCallSettings(t *testing.T) {
	conv := agenteval.Conversation{
		{Role: agenteval.RoleUser, Content: "go"},
		{Role: agenteval.RoleAssistant, ToolCalls: []agenteval.ToolCall{
			{Name: "search", Args: map[string]any{"q": "ml", "limit": 5.0, "filter": map[string]any{"lang": "en"}}, DurationMS: 80},
			{Name: "fetch", Args: map[string]any{"url": "x"}, DurationMS: 900},
		}},
		{Role: agenteval.RoleAssistant, Content: "done"},
	}
	g := mustGrader(t, "tool-trajectory", map[string]any{"mode": "in_order", "expected": []any{
		map[string]any{"tool": "search", "args": map[string]any{"q": "ml"}, "args_match": "superset", "max_duration_ms": 100},
		map[string]any{"tool": "fetch", "max_duration_ms": 500},
	}})
	sc := gradeConv(t, g, conv, nil)
	// Both calls match; one latency check passes, one does not: 3 of 4.
	if !near(sc.Score, 0.75) || len(sc.Assertions) != 4 || sc.Assertions[3].Passed {
		t.Errorf("score = %+v", sc)
	}
	g = mustGrader(t, "tool_calls", map[string]any{"mode": "in_order", "args_fields": []any{"filter.lang"}, "expected": []any{
		map[string]any{"tool": "search", "args": map[string]any{"q": "something else", "filter": map[string]any{"lang": "en"}}},
	}})
	if sc := gradeConv(t, g, conv, nil); sc.Score != 1 {
		t.Errorf("args_fields: %+v", sc)
	}
}

// A command written as one string is split into words as a shell would,
// and never runs through a shell: one that uses the shell's syntax is
// refused when the grader is built, saying how to write it instead.
func TestScriptStringCommand(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "grade.sh"), []byte("#!/bin/sh\necho \"{\\\"score\\\": 1, \\\"reason\\\": \\\"args: $*\\\"}\"\n"), 0o755)
	g, err := New(Spec{Type: "code-grader", Dir: dir, Options: map[string]any{"command": "sh grade.sh --mode 'two words'"}})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := g.Grade(context.Background(), turnInput())
	if err != nil || sc.Score != 1 || sc.Reason != "args: --mode two words" {
		t.Fatalf("string command: %+v, %v", sc, err)
	}
	for _, line := range []string{"cat | grep -q hostels && echo ok", "grade.py > out", "grade.py $HOME", "grade.py $(id)", "grade.py `id`", "grade.py; id"} {
		_, err := New(Spec{Type: "script", Dir: dir, Options: map[string]any{"command": line}})
		if err == nil || !strings.Contains(err.Error(), "needs a shell") || !strings.Contains(err.Error(), "[sh, -c") {
			t.Errorf("%s: %v", line, err)
		}
	}
	// A shell the author asks for runs, as a list.
	g, _ = New(Spec{Type: "script", Dir: dir, Options: map[string]any{"command": []any{"sh", "-c", "cat | grep -q hostels && echo ok"}}})
	if sc, err := g.Grade(context.Background(), turnInput()); err != nil || sc.Score != 1 {
		t.Errorf("shell syntax: %+v, %v", sc, err)
	}
	g, _ = New(Spec{Type: "script", Dir: dir, Options: map[string]any{"command": "no-such-program-xyz grade.py"}})
	if _, err := g.Grade(context.Background(), turnInput()); err == nil || !strings.Contains(err.Error(), "no-such-program-xyz is not installed") {
		t.Errorf("missing program: %v", err)
	}
	g, _ = New(Spec{Type: "script", Dir: dir, Options: map[string]any{"command": []any{"sh", "-c", "no-such-program-xyz x && echo ok"}}})
	if _, err := g.Grade(context.Background(), turnInput()); err == nil || !strings.Contains(err.Error(), "no-such-program-xyz is not installed") {
		t.Errorf("missing program behind a shell: %v", err)
	}
}

// A script gets AgentV's payload: input and expected_output as messages,
// output as text, and its config.
func TestScriptPayload(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "echo.sh"), []byte("#!/bin/sh\ncat > \"$1\"\necho '{\"score\": 1}'\n"), 0o755)
	out := filepath.Join(dir, "payload.json")
	g, err := New(Spec{Type: "script", Dir: dir, Options: map[string]any{"command": []any{"./echo.sh", out}, "config": map[string]any{"min": 3}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Grade(context.Background(), turnInput()); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(out)
	for _, want := range []string{`"output":"Stay in hostels."`, `"expected_output":[{"role":"assistant","content":"Hostels and rail pass."}]`, `"config":{"min":3}`, `"input":[{"role":"system"`, `"criteria":"helpful travel advice"`, `"trace_summary":{`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("payload lacks %s:\n%s", want, b)
		}
	}
}

func noRubrics() *agenteval.GradeInput {
	in := booking()
	in.Rubrics = nil
	return in
}
