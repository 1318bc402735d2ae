package session

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A run of an AgentV file against a model target says, once per target,
// that tests without a system message get none here, where AgentV's LLM
// targets send one; a project system_prompt (even "") silences it. The
// judge AgentV's config chose is said with where it was chosen.
func TestRunNotes(t *testing.T) {
	const suiteYAML = `targets:
  - name: m
    model: openai:fake
tests:
  - id: plain
    input: hi
    assertions: [{type: contains, value: x}]
  - id: own-system
    input: [{role: system, content: Be brief.}, {role: user, content: hi}]
    assertions: [{type: contains, value: x}]
  - id: skipped
    input: hi
    workspace: {repos: [{path: x}]}
    assertions: [{type: contains, value: x}]
`
	for _, tc := range []struct {
		name    string
		project string
		opt     Options
		want    []string
	}{
		{"no system prompt", "", Options{},
			[]string{"e.yaml:2:5: differs from AgentV: AgentV's LLM targets send a brief built-in system message to a test that has none; target m sends none to 1 of 2 tests (e.yaml). To send one, set system_prompt: on the target or in agenteval.yaml (system_prompt: \"\" says none is meant)"}},
		{"a model named on the command line", "", Options{Targets: []string{"openai:other"}},
			[]string{"agenteval: differs from AgentV: AgentV's LLM targets send a brief built-in system message to a test that has none; target openai:other sends none to 1 of 2 tests (e.yaml). To send one, set system_prompt: on the target or in agenteval.yaml (system_prompt: \"\" says none is meant)"}},
		{"the project sends one", "system_prompt: Answer from the facts given.\n", Options{}, nil},
		{"the project says none", "system_prompt: \"\"\n", Options{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"e.yaml": suiteYAML}
			if tc.project != "" {
				files["agenteval.yaml"] = tc.project
			}
			dir := write(t, files)
			s, err := Load(tc.opt, filepath.Join(dir, "e.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			p, err := s.Plan()
			if err != nil {
				t.Fatal(err)
			}
			got := runNotes(p)
			for i := range got {
				got[i] = strings.ReplaceAll(got[i], dir+string(filepath.Separator), "")
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
		})
	}
}

// The judge AgentV's configuration chose is said, where it was chosen;
// --judge chooses another, and then nothing is said.
func TestJudgeNote(t *testing.T) {
	dir := write(t, map[string]string{
		".agentv/targets.yaml": "targets:\n  - name: default\n    provider: openai\n    model: fake\n    grader_target: g\n  - name: g\n    provider: openai\n    model: judge\n",
		"e.yaml":               "tests:\n  - id: a\n    input: [{role: system, content: s}, {role: user, content: hi}]\n    assertions: [Says hello]\n",
	})
	s, err := Load(Options{}, filepath.Join(dir, "e.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Plan()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, ".agentv/targets.yaml") + ":5:20: note: the judge is openai:judge, chosen here for e.yaml (--judge chooses another)"}
	if diff := cmp.Diff(want, runNotes(p)); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
	s, err = Load(Options{Models: Models{Judge: "openai:mine"}}, filepath.Join(dir, "e.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if p, err = s.Plan(); err != nil {
		t.Fatal(err)
	}
	if notes := runNotes(p); len(notes) != 0 {
		t.Errorf("with --judge: %v", notes)
	}
}

// A cli target in a conversation test gets the history here, and only the
// turn's text in AgentV: the run says so once per target.
func TestCLIConversationNote(t *testing.T) {
	dir := write(t, map[string]string{
		".agentv/targets.yaml": "targets:\n  - name: default\n    provider: cli\n    command: [agent, \"{PROMPT}\"]\n",
		"e.yaml": `tests:
  - id: a
    mode: conversation
    turns:
      - input: hi
        assertions: [{type: contains, value: x}]
  - id: b
    input: hi
    assertions: [{type: contains, value: x}]
`,
	})
	s, err := Load(Options{}, filepath.Join(dir, "e.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Plan()
	if err != nil {
		t.Fatal(err)
	}
	got := cliConversationDifferences(p)
	if len(got) != 1 || !strings.Contains(got[0], "differs from AgentV: cli target default gets the conversation so far as {PROMPT} on each turn of 1 conversation test") {
		t.Errorf("notes = %q", got)
	}
}
