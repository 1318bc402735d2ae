package suite

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
)

// AgentV v5's configuration: a provider's settings under config:, the
// project's .agentv/config.yaml, grader_target and
// default_test.options.rubric_prompt, read as AgentV means them.

func targetsByName(s *Suite) map[string]TargetSpec {
	by := map[string]TargetSpec{}
	for _, tg := range s.Targets {
		by[tg.Name] = tg
	}
	return by
}

func differenceKeys(s *Suite) map[string]Difference {
	out := map[string]Difference{}
	for _, d := range s.Differences {
		out[d.Key] = d
	}
	return out
}

// A provider's settings under config: read as if written on the entry:
// its own keys win, and config's model wins over the id's.
func TestProviderConfigSettings(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		".agentv/providers.yaml": `
- id: openai:gpt-4o
  label: mini
  temperature: 0.5
  config:
    model: gpt-4.1
    base_url: http://127.0.0.1:9/v1
    api_key: "{{ env.KEY }}"
    temperature: 0
    max_output_tokens: 50
    max_tokens: 99
- id: azure
  label: az
  config: {endpoint: https://res.openai.azure.com, deployment: dep, version: 2024-10-01}
- id: openai
  label: nomodel
- openai:gpt-4o-mini
`,
		"evals/e.eval.yaml": `
providers: [mini, az, nomodel, openai:gpt-4o-mini]
tests:
  - id: a
    vars: {input: hi}
    assert: [{type: contains, value: hello}]
`,
	})
	env := func(n string) (string, bool) {
		if n == "KEY" {
			return "k", true
		}
		return "", false
	}
	s := load(t, filepath.Join(dir, "evals/e.eval.yaml"), Options{Env: env})
	by := targetsByName(s)
	mini := by["mini"]
	if mini.Model != "openai:gpt-4.1" || mini.BaseURL != "http://127.0.0.1:9/v1" || mini.APIKey != "k" ||
		mini.Temperature == nil || *mini.Temperature != 0.5 || mini.MaxTokens != 50 {
		t.Errorf("mini = %+v", mini)
	}
	if az := by["az"]; az.Model != "openai:dep" || az.BaseURL != "https://res.openai.azure.com/openai/v1" {
		t.Errorf("az = %+v", az)
	}
	if nm := by["nomodel"]; !strings.Contains(nm.Unsupported, "has no model") {
		t.Errorf("nomodel = %+v", nm)
	}
	providers := filepath.Join(dir, ".agentv/providers.yaml")
	var warned bool
	for _, w := range s.Warnings {
		if strings.Contains(w.Msg, "max_tokens is ignored") {
			warned = w.File == providers && w.Line == 10
		}
	}
	if !warned {
		t.Errorf("no warning about max_tokens at %s:10: %v", providers, s.Warnings)
	}
	if d, ok := differenceKeys(s)["azure_version"]; !ok || d.File != providers {
		t.Errorf("differences = %v", s.Differences)
	}
}

// .agentv/config.yaml, found from the working directory as AgentV's eval
// command finds it: its providers are the catalog, defaults.provider the
// target of a file that names none, defaults.grader the judge (so no
// --judge is needed), max_concurrency the tests at once.
func TestAgentVConfigDefaults(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		".agentv/config.yaml": `
providers: file://providers.yaml
defaults: file://defaults.yaml
execution: {max_concurrency: 2, verbose: true}
env_path: [.env.local]
`,
		".agentv/defaults.yaml": "provider: local\ngrader: local-grader\n",
		".agentv/providers.yaml": `
- id: openai
  label: local
  config: {model: agent-model}
- id: anthropic
  label: local-grader
  config: {model: judge-model}
`,
		// A targets file nearer the eval file: the config's catalog wins.
		"evals/.agentv/targets.yaml": "targets:\n  - {name: local, provider: openai, model: wrong}\n",
		"evals/e.eval.yaml": `
evaluate_options: {max_concurrency: 7}
tests:
  - id: a
    vars: {input: hi}
    assert: [Says hello politely]
`,
	})
	t.Chdir(dir)
	s := load(t, filepath.Join(dir, "evals/e.eval.yaml"), Options{})
	if s.DefaultTarget != "local" || targetsByName(s)["local"].Model != "openai:agent-model" {
		t.Errorf("default target %q, targets %+v", s.DefaultTarget, s.Targets)
	}
	defaults := filepath.Join(dir, ".agentv/defaults.yaml")
	if s.Judge == nil || s.Judge.Model != "anthropic:judge-model" || s.Judge.Pos.File != defaults || s.Judge.Pos.Line != 2 {
		t.Errorf("judge = %+v", s.Judge)
	}
	if s.Workers != 2 {
		t.Errorf("workers = %d, want the config's 2 over the file's 7", s.Workers)
	}
	if d, ok := differenceKeys(s)["env_path"]; !ok || d.File != filepath.Join(dir, ".agentv/config.yaml") {
		t.Errorf("differences = %v", s.Differences)
	}
}

// Outside the folder, the config does not apply: AgentV reads the one of
// the working directory.
func TestAgentVConfigFromWorkingDirectory(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"p/.agentv/config.yaml": "defaults: {grader: g}\nproviders: [{id: openai, label: g, model: m}]\n",
		"p/e.eval.yaml":         "tests:\n  - {id: a, input: hi, assertions: [Says hello]}\n",
	})
	t.Chdir(t.TempDir())
	s := load(t, filepath.Join(dir, "p/e.eval.yaml"), Options{NoJudgeNeeded: true})
	if s.Judge != nil {
		t.Errorf("judge = %+v, want none from a config outside the working directory", s.Judge)
	}
	t.Chdir(filepath.Join(dir, "p"))
	s = load(t, filepath.Join(dir, "p/e.eval.yaml"), Options{})
	if s.Judge == nil || s.Judge.Model != "openai:m" {
		t.Errorf("judge = %+v", s.Judge)
	}
}

// A config AgentV refuses is ignored whole, with a warning at its file.
func TestAgentVConfigRefused(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		".agentv/config.yaml":       "defaults: {grader: g}\nproviders: [{id: openai, label: g, model: m}]\n",
		".agentv/config.local.yaml": "execution: {workers: 3}\n",
		"e.eval.yaml":               "tests:\n  - {id: a, input: hi, assertions: [Says hello]}\n",
	})
	t.Chdir(dir)
	s := load(t, filepath.Join(dir, "e.eval.yaml"), Options{NoJudgeNeeded: true})
	if s.Judge != nil {
		t.Errorf("judge = %+v", s.Judge)
	}
	local := filepath.Join(dir, ".agentv/config.local.yaml")
	found := false
	for _, w := range s.Warnings {
		found = found || w.File == local && strings.Contains(w.Msg, "ignores this whole config")
	}
	if !found {
		t.Errorf("warnings = %v", s.Warnings)
	}
}

// grader_target names the judge: its target's model, said where it was
// chosen. It comes before defaults.grader; the suite's judge: before both.
// A grader's endpoint that the judge does not use is a difference.
func TestGraderTarget(t *testing.T) {
	files := map[string]string{
		".agentv/targets.yaml": `
targets:
  - name: default
    provider: openai
    model: agent
    grader_target: grader
  - name: grader
    provider: anthropic
    model: judge
    base_url: http://127.0.0.1:9
  - name: other
    provider: gemini
    model: g
  - name: script
    provider: cli
    command: ./grade.sh {PROMPT}
    grader_target: script2
  - name: script2
    provider: cli
    command: ./grade.sh {PROMPT}
`,
		".agentv/config.yaml": "defaults: {grader: other}\n",
		"a.eval.yaml":         "tests:\n  - {id: a, input: hi, assertions: [Says hello]}\n",
		"b.eval.yaml":         "judge: openai:mine\ntests:\n  - {id: a, input: hi, assertions: [Says hello]}\n",
		"c.eval.yaml":         "execution: {target: other}\ntests:\n  - {id: a, input: hi, assertions: [Says hello]}\n",
		"d.eval.yaml":         "execution: {target: script}\ntests:\n  - {id: a, input: hi, assertions: [Says hello]}\n",
	}
	dir := writeFiles(t, files)
	t.Chdir(dir)
	targets := filepath.Join(dir, ".agentv/targets.yaml")
	s := load(t, filepath.Join(dir, "a.eval.yaml"), Options{})
	if s.Judge == nil || s.Judge.Model != "anthropic:judge" || s.Judge.Pos != (agenteval.Pos{File: targets, Line: 5, Col: 20}) {
		t.Errorf("a: judge = %+v", s.Judge)
	}
	if d, ok := differenceKeys(s)["grader_endpoint"]; !ok || d.File != targets {
		t.Errorf("a: differences = %v", s.Differences)
	}
	if s := load(t, filepath.Join(dir, "b.eval.yaml"), Options{}); s.Judge.Model != "openai:mine" {
		t.Errorf("b: judge = %+v", s.Judge)
	}
	if s := load(t, filepath.Join(dir, "c.eval.yaml"), Options{}); s.Judge == nil || s.Judge.Model != "gemini:g" {
		t.Errorf("c: judge = %+v", s.Judge)
	}
	s = load(t, filepath.Join(dir, "d.eval.yaml"), Options{NoJudgeNeeded: true})
	if d, ok := differenceKeys(s)["grader"]; s.Judge != nil || !ok || d.File != targets || !strings.Contains(d.Msg, "--judge") {
		t.Errorf("d: judge %+v, differences %v", s.Judge, s.Differences)
	}
}

// default_test.options.rubric_prompt is the prompt of the llm-rubric
// graders, as in AgentV; where it cannot be, that is said at the grader.
// Another option is a difference, said at the test: default_test's file
// is not the eval file.
func TestRubricPrompt(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"evals/default-test.yaml": `
threshold: 0.8
options:
  rubric_prompt: |
    Grade {{ output }} against {{ rubrics }}.
  transform: file://t.js
`,
		"evals/e.eval.yaml": `
prompts: ["{{ input }}"]
default_test: file://./default-test.yaml
tests:
  - id: a
    vars: {input: hi}
    assert:
      - type: llm-rubric
        value: Says hello
      - type: llm-rubric
        value: [Says hello, Is short]
      - Is polite
      - type: llm-rubric
        value: Has a prompt
        prompt: Mine {{ output }}
`,
	})
	e := filepath.Join(dir, "evals/e.eval.yaml")
	s := load(t, e, Options{JudgeAvailable: true})
	as := s.Tests[0].Assertions
	if len(as) != 4 {
		t.Fatalf("assertions = %+v", as)
	}
	if as[0].Type != "llm_grader" || as[0].Params["prompt"] != "Grade {{ output }} against {{ rubrics }}.\n" {
		t.Errorf("llm-rubric = %+v", as[0])
	}
	if as[3].Params["prompt"] != "Mine {{ output }}" {
		t.Errorf("own prompt = %+v", as[3])
	}
	ds := differenceKeys(s)
	if d := ds["rubric_prompt"]; d.File != e || d.Line != 9 || d.Count != 2 {
		t.Errorf("rubric_prompt difference = %+v", d)
	}
	if d := ds["options.transform"]; d.File != e || d.Line != 4 {
		t.Errorf("options.transform difference = %+v", d)
	}
	for _, w := range s.Warnings {
		if strings.Contains(w.Msg, "options") {
			t.Errorf("warning: %v", w)
		}
	}
}
