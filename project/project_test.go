package project

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agenteval/agenteval/suite"
)

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

const projectYAML = `judge: openai:gpt-4o-mini
simulator: openai:gpt-4o
targets:
  - name: api
    command: [./agent.sh]
  - name: gpt
    model: openai:gpt-4o-mini
tools:
  - name: lookup
    result: found
  - name: book
    result: booked
defaults:
  target: api
  threshold: 0.7
  jobs: 3
  trials: 2
`

// TestFindWalksUp: the nearest agenteval.yaml at or above a file applies;
// a suite's own keys win over it.
func TestFindWalksUp(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, FileName), projectYAML)
	evals := filepath.Join(root, "evals", "deep", "suite.yaml")
	write(t, evals, `targets:
  - name: gpt
    model: anthropic:claude-3-5-haiku-latest
tools:
  - name: book
    result: mine
execution: {threshold: 0.9}
tests:
  - id: a
    input: hi
    assertions: [{type: contains, value: x}]
  - id: b
    input: hi
    trials: 5
    assertions: [{type: contains, value: x}]
`)
	p, err := Find(evals)
	if err != nil || p != filepath.Join(root, FileName) {
		t.Fatalf("Find = %q, %v", p, err)
	}
	c, err := For(evals, "", suite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := suite.Load(evals, suite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	Apply(c, s)
	if len(s.Targets) != 2 || s.Targets[0].Model != "anthropic:claude-3-5-haiku-latest" || s.Targets[1].Name != "api" || s.Targets[1].BaseDir != root {
		t.Errorf("targets = %+v", s.Targets)
	}
	if len(s.Tools) != 2 || s.Tools[0].Result != "mine" || s.Tools[1].Name != "lookup" {
		t.Errorf("tools = %+v", s.Tools)
	}
	if s.Judge == nil || s.Judge.Model != "openai:gpt-4o-mini" || s.DefaultTarget != "api" || *s.Threshold != 0.9 {
		t.Errorf("judge %+v, target %q, threshold %v", s.Judge, s.DefaultTarget, *s.Threshold)
	}
	if s.Tests[0].Trials != 2 || s.Tests[1].Trials != 5 {
		t.Errorf("trials = %d, %d; want the project's 2 and the test's own 5", s.Tests[0].Trials, s.Tests[1].Trials)
	}
	if c.Simulator != "openai:gpt-4o" || c.Defaults.Jobs != 3 {
		t.Errorf("simulator %q, jobs %d", c.Simulator, c.Defaults.Jobs)
	}
	// Nothing above: no project file.
	lone := filepath.Join(t.TempDir(), "s.yaml")
	write(t, lone, "tests: []")
	if c, err := For(lone, "", suite.Options{}); c != nil || err != nil {
		t.Errorf("For without a project file = %v, %v", c, err)
	}
	// --config names one explicitly.
	if c, err := For(lone, filepath.Join(root, FileName), suite.Options{}); err != nil || c == nil || len(c.Targets) != 2 {
		t.Errorf("For with --config = %v, %v", c, err)
	}
}

func TestProjectFileErrors(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, FileName)
	write(t, p, `targets:
  - name: api
judge: gpt-4o
simulator: nobody
defaults:
  trials: 0
  jobs: -1
  treshold: 0.8
tests: []
`)
	_, err := Load(p, suite.Options{})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		p + `:2:5: target "api" needs one of model, http, a2a, agui, command or replay`,
		p + ":3:8: judge must be provider:model",
		p + ":4:12: simulator must be provider:model",
		p + ":6:11: defaults.trials must be between 1 and",
		p + ":7:9: defaults.jobs must be 1 or more",
		p + `:8:3: unknown key "treshold" in defaults; did you mean "threshold"?`,
		p + `:9:1: unknown key "tests" in the project file`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

// TestRoot: the folder of agenteval.yaml, else the git root, else the
// working directory.
func TestRoot(t *testing.T) {
	base := t.TempDir()
	write(t, filepath.Join(base, "repo", ".git", "HEAD"), "ref: refs/heads/main\n")
	file := filepath.Join(base, "repo", "a", "b", "evals.yaml")
	write(t, file, "tests: []")
	if r, err := Root(file); err != nil || r != filepath.Join(base, "repo") {
		t.Errorf("Root = %q, %v; want the git root", r, err)
	}
	write(t, filepath.Join(base, "repo", "a", FileName), "judge: openai:x\n")
	if r, err := Root(file); err != nil || r != filepath.Join(base, "repo", "a") {
		t.Errorf("Root = %q, %v; want the project file's folder", r, err)
	}
	wd, _ := os.Getwd()
	lone := t.TempDir()
	if r, err := Root(lone); err != nil || (r != wd && !strings.HasPrefix(lone, r)) {
		t.Errorf("Root of a folder outside any project = %q, %v", r, err)
	}
}

// TestSystemPrompt: system_prompt is the project's; "" says none is meant,
// which is not the same as leaving it out.
func TestSystemPrompt(t *testing.T) {
	for _, tc := range []struct {
		yaml string
		want *string
	}{
		{"system_prompt: |\n  Answer from the facts given.\n", ptr("Answer from the facts given.\n")},
		{"system_prompt: ${PROMPT}\n", ptr("Be exact.")},
		{"system_prompt: \"\"\n", ptr("")},
		{"system_prompt:\n", ptr("")},
		{"judge: openai:x\n", nil},
	} {
		p := filepath.Join(t.TempDir(), FileName)
		write(t, p, tc.yaml)
		env := func(n string) (string, bool) { return "Be exact.", n == "PROMPT" }
		c, err := Load(p, suite.Options{Env: env})
		if err != nil {
			t.Fatalf("%q: %v", tc.yaml, err)
		}
		if (c.SystemPrompt == nil) != (tc.want == nil) || c.SystemPrompt != nil && *c.SystemPrompt != *tc.want {
			t.Errorf("%q: system prompt = %v, want %v", tc.yaml, show(c.SystemPrompt), show(tc.want))
		}
	}
	p := filepath.Join(t.TempDir(), FileName)
	write(t, p, "system_prompt: [a, b]\n")
	if _, err := Load(p, suite.Options{}); err == nil || !strings.Contains(err.Error(), p+":1:16: system_prompt must be text") {
		t.Errorf("a list: %v", err)
	}
}

func ptr(s string) *string { return &s }

func show(s *string) string {
	if s == nil {
		return "unset"
	}
	return strconv.Quote(*s)
}

// A judge in agenteval.yaml wins over the one AgentV's configuration
// chose, and not over a suite's own.
func TestProjectJudgeOverAgentVs(t *testing.T) {
	c := &Config{Judge: &suite.JudgeSpec{Model: "openai:ours"}}
	for _, tc := range []struct {
		judge *suite.JudgeSpec
		want  string
	}{
		{nil, "openai:ours"},
		{&suite.JudgeSpec{Model: "openai:agentv", FromAgentV: true}, "openai:ours"},
		{&suite.JudgeSpec{Model: "openai:suite"}, "openai:suite"},
	} {
		s := &suite.Suite{Judge: tc.judge}
		Apply(c, s)
		if s.Judge.Model != tc.want {
			t.Errorf("judge %+v: got %s, want %s", tc.judge, s.Judge.Model, tc.want)
		}
	}
}
