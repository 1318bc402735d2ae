package suite

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/google/go-cmp/cmp"
)

// AgentV's eval format, read as AgentV means it. Each test of a semantic
// difference fails on a loader that reads the file the old way.

// writeFiles writes files into a temporary folder and returns its path.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(strings.TrimLeft(body, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func load(t *testing.T, path string, opt Options) *Suite {
	t.Helper()
	if opt.Env == nil {
		opt.Env = func(string) (string, bool) { return "", false }
	}
	s, err := Load(path, opt)
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	return s
}

func roles(c agenteval.Conversation) []string {
	var out []string
	for _, m := range c {
		out = append(out, string(m.Role)+": "+m.Content)
	}
	return out
}

// The suite's input comes before every test's own input (AgentV prepends
// it); before, it was used only by tests without input.
func TestSuiteInputIsPrepended(t *testing.T) {
	s, err := parse(t, `
input:
  - role: system
    content: You are a travel assistant.
tests:
  - id: own
    input: When should I visit Japan?
    criteria: Names a season.
  - id: none
    expected_output: hi
    input: Hello
  - id: opted-out
    execution: {skip_defaults: true}
    input: What currency does Thailand use?
    criteria: Says baht.
`, Options{JudgeAvailable: true})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"system: You are a travel assistant.", "user: When should I visit Japan?"},
		{"system: You are a travel assistant.", "user: Hello"},
		{"user: What currency does Thailand use?"},
	}
	for i, tt := range s.Tests {
		if diff := cmp.Diff(want[i], roles(tt.Input)); diff != "" {
			t.Errorf("test %s input (-want +got):\n%s", tt.ID, diff)
		}
	}
}

// {{ name }} in input, criteria, expected_output and turns takes the
// test's vars; a string that is one placeholder takes the value as it is.
func TestVarsAreSubstituted(t *testing.T) {
	s, err := parse(t, `
input: "Answer clearly: {{question}}"
tests:
  - id: capital
    vars:
      question: What is the capital of France?
      expected: Paris
      user: {name: Ada}
      history:
        - {role: user, content: Hi}
        - {role: assistant, content: Hello}
    criteria: "Answers {{ question }} correctly for {{ user.name }}"
    input: "{{ history }}"
    expected_output: "{{expected}}"
    assertions:
      - type: contains
        value: "{{ expected }}"
  - id: turns
    mode: conversation
    vars: {city: Kyoto}
    turns:
      - input: "Plan a day in {{city}}"
        expected_output: "{{city}} temples"
      - input: "Unknown {{ nope }} stays"
`, Options{JudgeAvailable: true})
	if err != nil {
		t.Fatal(err)
	}
	c := s.Tests[0]
	if diff := cmp.Diff([]string{"user: Answer clearly: What is the capital of France?", "user: Hi", "assistant: Hello"}, roles(c.Input)); diff != "" {
		t.Errorf("input (-want +got):\n%s", diff)
	}
	if c.Criteria != "Answers What is the capital of France? correctly for Ada" || c.ExpectedOutput != "Paris" {
		t.Errorf("criteria %q, expected_output %q", c.Criteria, c.ExpectedOutput)
	}
	// v4 does not substitute in assertions: the grader's {{ }} stay.
	if c.Assertions[0].Params["value"] != "{{ expected }}" {
		t.Errorf("assertion value = %v", c.Assertions[0].Params["value"])
	}
	tr := s.Tests[1].Turns
	if tr[0].Input[0].Content != "Plan a day in Kyoto" || tr[0].ExpectedOutput != "Kyoto temples" || tr[1].Input[0].Content != "Unknown {{ nope }} stays" {
		t.Errorf("turns = %+v", tr)
	}
}

// An unset ${{ VAR }} is empty with a warning; Strict makes it an error.
func TestUnsetVariableIsAWarning(t *testing.T) {
	src := `
tests:
  - id: a
    input: "Evaluate ${{ PROJECT }} now"
    criteria: "${{ PROJECT }} is named"
`
	s, err := parse(t, src, Options{JudgeAvailable: true})
	if err != nil {
		t.Fatal(err)
	}
	if s.Tests[0].Input[0].Content != "Evaluate  now" || len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0].Error(), "evals.yaml:3:12: environment variable PROJECT is not set") {
		t.Errorf("input %q, warnings %v", s.Tests[0].Input[0].Content, s.Warnings)
	}
	if _, err := parse(t, src, Options{JudgeAvailable: true, Strict: true}); err == nil || !strings.Contains(err.Error(), "PROJECT is not set") {
		t.Errorf("strict: %v", err)
	}
}

func TestContentBlocksAndMessageForms(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"evals/e.eval.yaml": `
tests:
  - id: blocks
    input:
      - role: user
        content:
          - {type: text, value: Review this.}
          - {type: file, value: ./snippets/code.py}
          - {type: image, value: ./pic.png}
    expected_output: {risk: low, score: 3}
    criteria: c
  - id: calls
    input:
      - {role: user, content: Book it}
      - role: assistant
        tool_calls:
          - {tool: book, input: {time: 8pm}, output: {ok: true}, id: c1}
      - {role: user, content: Thanks}
    expected_output:
      - {role: assistant, content: "First"}
      - {role: assistant, content: "Booked."}
    criteria: c
    conversation_id: thread-1
`,
		"evals/snippets/code.py": "print('hi')\n",
		"evals/pic.png":          "\x89PNG fake",
	})
	s := load(t, filepath.Join(dir, "evals/e.eval.yaml"), Options{JudgeAvailable: true})
	if len(s.Warnings) > 0 {
		t.Errorf("warnings: %v", s.Warnings)
	}
	m := s.Tests[0].Input[0]
	if m.Content != "Review this.\n\n<file path=\"./snippets/code.py\">\nprint('hi')\n</file>" {
		t.Errorf("content = %q", m.Content)
	}
	if len(m.Parts) != 2 || m.Parts[0].Type != "file" || m.Parts[1].Type != "image" || !strings.HasPrefix(m.Parts[1].URL, "data:image/png;base64,") {
		t.Errorf("parts = %+v", m.Parts)
	}
	if s.Tests[0].ExpectedOutput != "{\n  \"risk\": \"low\",\n  \"score\": 3\n}" {
		t.Errorf("structured expected_output = %q", s.Tests[0].ExpectedOutput)
	}
	c := s.Tests[1]
	if len(c.Input) != 4 || c.Input[1].ToolCalls[0].Name != "book" || c.Input[1].ToolCalls[0].Args["time"] != "8pm" ||
		c.Input[2].Role != agenteval.RoleTool || c.Input[2].ToolCallID != "c1" || c.Input[2].Content != `{"ok":true}` {
		t.Errorf("tool calls in input: %+v", c.Input)
	}
	if c.ExpectedOutput != "Booked." || c.ConversationID != "thread-1" {
		t.Errorf("expected_output %q, conversation_id %q", c.ExpectedOutput, c.ConversationID)
	}
}

// Tests come from files (YAML, JSONL), folders of case.yaml and lists
// mixing them with inline tests; AgentV's JSONL eval format takes its
// suite settings from a sidecar YAML.
func TestTestsFromFiles(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"evals/suite.eval.yaml": `
assertions:
  - type: contains
    value: ok
tests:
  - file://cases/a.yaml
  - ./cases/b.jsonl
  - id: inline
    input: hi
`,
		"evals/cases/a.yaml":                 "- {id: a1, input: one}\n- {id: a2, input: two}\n",
		"evals/cases/b.jsonl":                "{\"id\": \"b1\", \"input\": \"three\"}\n\n{\"id\": \"b2\", \"input\": \"four\"}\n",
		"evals/dir.eval.yaml":                "tests: ./cases/dirs/\n",
		"evals/cases/dirs/fix-bug/case.yaml": "input: Fix it\nassertions: [{type: contains, value: fixed}]\n",
		"evals/cases/dirs/no-case/readme.md": "x",
		"data/set.jsonl":                     "{\"id\": \"j1\", \"input\": \"q\", \"criteria\": \"c\"}\n",
		"data/set.yaml":                      "name: from-sidecar\nexecution: {threshold: 0.5}\n",
	})
	s := load(t, filepath.Join(dir, "evals/suite.eval.yaml"), Options{})
	var ids []string
	for _, tt := range s.Tests {
		ids = append(ids, tt.ID)
		if len(tt.Assertions) != 1 || tt.Assertions[0].Type != "contains" {
			t.Errorf("test %s lacks the suite's assertion: %+v", tt.ID, tt.Assertions)
		}
	}
	if diff := cmp.Diff([]string{"a1", "a2", "b1", "b2", "inline"}, ids); diff != "" {
		t.Errorf("tests (-want +got):\n%s", diff)
	}
	s = load(t, filepath.Join(dir, "evals/dir.eval.yaml"), Options{})
	if len(s.Tests) != 1 || s.Tests[0].ID != "fix-bug" || len(s.Warnings) != 1 {
		t.Errorf("folder of tests: %+v, warnings %v", s.Tests, s.Warnings)
	}
	s = load(t, filepath.Join(dir, "data/set.jsonl"), Options{JudgeAvailable: true})
	if s.Schema != SchemaAgentVJSONL || s.Name != "from-sidecar" || *s.Threshold != 0.5 || s.Tests[0].ID != "j1" || s.Tests[0].Pos.Line != 1 {
		t.Errorf("JSONL with sidecar: %+v", s)
	}
	if SniffJSONL([]byte(`{"id": "x", "user_input": [{"type": "human", "content": "hi"}]}`)) != JSONLSamples ||
		SniffJSONL([]byte(`{"id": "x", "input": "hi", "criteria": "c"}`)) != JSONLTests {
		t.Error("SniffJSONL")
	}
}

// A file of tests that would read itself, directly or through another, is
// an error, not an endless loop.
func TestTestsFileReadsItself(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"self.yaml":   "tests: ./*.yaml\n",
		"a/one.yaml":  "tests: [../a/two.yaml]\n",
		"a/two.yaml":  "tests:\n  - ./one.yaml\n  - {id: x, input: hi}\n",
		"a/main.yaml": "tests: [./one.yaml]\n",
	})
	for _, f := range []string{"self.yaml", "a/main.yaml"} {
		_, err := Load(filepath.Join(dir, f), Options{})
		if err == nil || !strings.Contains(err.Error(), "a file of tests cannot read itself") {
			t.Errorf("%s: error %v", f, err)
		}
	}
}

// Features that cannot run here make only the tests that use them skip,
// with the feature named; the rest of the file loads and runs.
func TestUnrunnableFeaturesSkip(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"e.eval.yaml": `
governance: {owner: sec}
unknown_top: 1
tests:
  - id: plain
    input: hi
    assertions: [{type: contains, value: hi}]
  - id: repo
    input: fix it
    workspace:
      repos: [{path: ./r, repo: org/r}]
  - id: skill
    input: use the skill
    assertions:
      - {type: skill-trigger, skill: deploy}
  - id: custom
    input: hi
    assertions:
      - {type: word-count, min: 3}
`,
		".agentv/assertions/word-count.ts": "export default {}",
	})
	s := load(t, filepath.Join(dir, "e.eval.yaml"), Options{})
	skips := map[string]string{}
	for _, tt := range s.Tests {
		skips[tt.ID] = tt.Skip
	}
	if skips["plain"] != "" || !strings.HasPrefix(skips["repo"], "workspace (repos") || !strings.HasPrefix(skips["skill"], "a skill-trigger grader") ||
		!strings.HasPrefix(skips["custom"], "custom assertion type word-count") {
		t.Errorf("skips = %v", skips)
	}
	if s.Tests[0].Metadata["governance"] == nil {
		t.Errorf("governance is not in the metadata: %v", s.Tests[0].Metadata)
	}
	if line := SkipSummary(s); line != "3 will be skipped (a skill-trigger grader: 1; custom assertion type word-count: 1; workspace: 1)" || len(s.Warnings) != 1 {
		t.Errorf("skip summary = %s, warnings %v", line, s.Warnings)
	}
}

// AgentV's grader spellings become ours, with their settings as AgentV
// reads them.
func TestAgentVAssertions(t *testing.T) {
	s, err := parse(t, `
tests:
  - id: a
    input: hi
    assertions:
      - Mentions the refund
      - {type: code-grader, command: node grader.js, threshold: 0.8, fields: [a], config: {strict: true}}
      - {type: llm-grader, prompt: "Rate {{ output }}", target: grader_gpt}
      - {type: latency, threshold: 2000}
      - {type: cost, budget: 0.1}
      - {type: token-usage, max_total: 100}
      - {type: rubrics, required: 0.6, criteria: [x]}
      - {type: contains, value: ok, id: has-ok, min_score: 0.5}
      - {type: tool-trajectory, mode: in_order, args_match: [query], expected: [{tool: search}]}
      - type: composite
        assertions: [{type: contains, name: c, value: x}, Is polite]
        aggregator: {type: threshold, threshold: 0.5}
`, Options{JudgeAvailable: true})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]agenteval.AssertionSpec{}
	for _, a := range s.Tests[0].Assertions {
		got[a.Type] = a
	}
	if a := got["script"]; !cmp.Equal(a.Params["command"], []any{"node", "grader.js"}) || !cmp.Equal(a.Params["config"], map[string]any{"threshold": 0.8, "fields": []any{"a"}, "strict": true}) {
		t.Errorf("code-grader = %+v", a)
	}
	if a := got["latency"]; a.Params["max"] != int64(2000) || a.Threshold != nil {
		t.Errorf("latency = %+v", a)
	}
	if a := got["cost"]; a.Params["max"] != 0.1 {
		t.Errorf("cost = %+v", a)
	}
	if a := got["token_usage"]; a.Params["max"] != int64(100) {
		t.Errorf("token-usage = %+v", a)
	}
	if a := got["rubrics"]; !a.Required || a.Threshold == nil || *a.Threshold != 0.6 {
		t.Errorf("required: 0.6 = %+v", a)
	}
	if a := got["contains"]; a.Name != "has-ok" || *a.Threshold != 0.5 {
		t.Errorf("id and min_score = %+v", a)
	}
	if a := got["tool_calls"]; !cmp.Equal(a.Params["args_fields"], []any{"query"}) {
		t.Errorf("args_match list = %+v", a)
	}
	if a := got["composite"]; a.Threshold == nil || *a.Threshold != 0.5 || len(a.Params["assertions"].([]any)) != 2 {
		t.Errorf("composite = %+v", a)
	}
	if len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0].Msg, "target on an llm grader is not used") {
		t.Errorf("warnings = %v", s.Warnings)
	}
}

// v5's promptfoo-style keys are read into the same tests as v4's.
func TestPromptfooStyleKeys(t *testing.T) {
	s, err := parse(t, `
providers:
  - openai:gpt-4o-mini
  - id: anthropic:claude-3-5-haiku-latest
    label: haiku
prompts:
  - "{{ input }}"
default_test:
  vars: {tone: formal}
  assert:
    - type: icontains
      value: "{{ tone }}"
evaluate_options: {repeat: 3, max_concurrency: 2}
assert:
  - Answers the question
tests:
  - id: direct
    vars:
      input: What is 2+2?
      expected_output: "4"
    assert:
      - type: llm-rubric
        value: "Matches the reference answer: {{ expected_output }}"
  - description: A chat
    vars:
      input:
        - {role: system, content: Be brief.}
        - {role: user, content: Hi}
  - id: conv
    mode: conversation
    vars: {city: Kyoto}
    turns:
      - input: "Plan {{ city }}"
        assert: [{type: contains, value: "{{ city }}"}]
`, Options{JudgeAvailable: true})
	if err != nil {
		t.Fatal(err)
	}
	if s.Schema != SchemaAgentV5 || !cmp.Equal(s.Matrix, []string{"openai:gpt-4o-mini", "haiku"}) || s.Workers != 2 {
		t.Errorf("suite = %+v", s)
	}
	d := s.Tests[0]
	if diff := cmp.Diff([]string{"user: What is 2+2?"}, roles(d.Input)); diff != "" {
		t.Errorf("vars.input (-want +got):\n%s", diff)
	}
	var types []string
	for _, a := range d.Assertions {
		v, _ := a.Params["value"].(string)
		r, _ := a.Params["rubric"].(string)
		types = append(types, a.Type+":"+v+r+a.Criterion)
	}
	if diff := cmp.Diff([]string{"icontains:formal", "llm_grader:Matches the reference answer: {{ expected_output }}", ":Answers the question"}, types); diff != "" {
		t.Errorf("assertions (-want +got):\n%s", diff)
	}
	if d.Trials != 3 || d.TrialStrategy != agenteval.ReduceMean {
		t.Errorf("repeat: %d %s", d.Trials, d.TrialStrategy)
	}
	if c := s.Tests[1]; c.ID != "a-chat" || len(c.Input) != 2 || len(s.Warnings) != 1 {
		t.Errorf("a row without id: %+v, warnings %v", c, s.Warnings)
	}
	conv := s.Tests[2]
	if conv.Turns[0].Input[0].Content != "Plan Kyoto" || conv.Turns[0].Assertions[0].Params["value"] != "Kyoto" {
		t.Errorf("turns with assert: %+v", conv.Turns[0])
	}
}

// A target the eval file names is found in AgentV's targets.yaml, walking
// up from the eval file; a kind agenteval cannot run is an error only when
// that target is chosen.
func TestAgentVTargetsFile(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		".agentv/targets.yaml": `
targets:
  - name: default
    use_target: ${{ AGENT }}
  - name: gpt
    provider: openai
    model: gpt-4o-mini
    base_url: http://127.0.0.1:9/v1
    api_key: ${{ KEY }}
  - name: local
    provider: cli
    command: python agent.py --prompt {PROMPT} --out {OUTPUT_FILE}
  - name: codex
    provider: codex
`,
		"evals/x/e.eval.yaml": `
execution:
  targets: [gpt, codex, local]
tests:
  - id: a
    input: hi
    assertions: [{type: contains, value: hello}]
`,
	})
	env := func(n string) (string, bool) {
		if n == "AGENT" {
			return "gpt", true
		}
		return "", false
	}
	s := load(t, filepath.Join(dir, "evals/x/e.eval.yaml"), Options{Env: env})
	by := map[string]TargetSpec{}
	for _, tg := range s.Targets {
		by[tg.Name] = tg
	}
	if by["gpt"].Model != "openai:gpt-4o-mini" || by["gpt"].BaseURL != "http://127.0.0.1:9/v1" ||
		by["local"].Template == "" || !strings.Contains(by["codex"].Unsupported, "codex is a coding agent") {
		t.Errorf("targets = %+v", by)
	}
	if !cmp.Equal(s.Matrix, []string{"gpt", "codex", "local"}) {
		t.Errorf("matrix = %v", s.Matrix)
	}
}

// AgentV's config graph names a targets file, and an inline target that
// extends another.
func TestTargetsByReference(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"targets.yaml": "- {id: openai, label: mini, model: gpt-4o-mini}\n",
		"e.eval.yaml": `
targets: file://targets.yaml
target:
  name: baseline
  extends: mini
  hooks: {before_each: {command: [sh, x.sh]}}
tests:
  - {id: a, input: hi, assertions: [{type: contains, value: hello}]}
`,
	})
	s := load(t, filepath.Join(dir, "e.eval.yaml"), Options{})
	by := map[string]TargetSpec{}
	for _, tg := range s.Targets {
		by[tg.Name] = tg
	}
	if s.DefaultTarget != "baseline" || by["mini"].Model != "openai:gpt-4o-mini" || by["baseline"].Model != "openai:gpt-4o-mini" {
		t.Errorf("default %q, targets %+v", s.DefaultTarget, by)
	}
}
