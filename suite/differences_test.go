package suite

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Each place a file runs with another meaning than AgentV gives it is
// said once per file, at its first position, with how many places.
func TestDifferences(t *testing.T) {
	cases := []struct {
		name, yaml string
		// want is "key@line(count)" for each difference, in order.
		want []string
	}{
		{"conversation criteria only", `
tests:
  - id: c
    mode: conversation
    criteria: Keeps the budget in mind
    turns:
      - input: hi
      - input: bye
`, []string{"conversation-criteria@5(1)", "ungraded-turn@7(2)"}},
		{"turn references judge the criteria", `
tests:
  - id: c
    mode: conversation
    criteria: Keeps the budget in mind
    turns:
      - input: hi
        expected_output: hello
`, nil},
		{"ungraded turns beside graded ones", `
tests:
  - id: a
    mode: conversation
    turns:
      - input: set the scene
      - input: question
        assertions: [{type: contains, value: x}]
  - id: b
    mode: conversation
    turns:
      - input: set the scene
      - input: question
        expected_output: x
`, []string{"ungraded-turn@6(2)"}},
		{"nothing differs", `
tests:
  - id: a
    input: hi
    expected_output: hello
`, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := Parse("t.yaml", []byte(c.yaml), Options{JudgeAvailable: true})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range s.Differences {
				got = append(got, d.Key+"@"+strconv.Itoa(d.Line)+"("+strconv.Itoa(d.Count)+")")
				if !strings.HasPrefix(d.String(), "t.yaml:") || !strings.Contains(d.String(), "differs from AgentV: ") {
					t.Errorf("String() = %q", d.String())
				}
			}
			if strings.Join(got, " ") != strings.Join(c.want, " ") {
				t.Errorf("differences = %v, want %v", got, c.want)
			}
		})
	}
}

// With no judge, the error says what AgentV would grade with.
func TestNoJudgeSaysAgentVsRule(t *testing.T) {
	_, err := Parse("t.yaml", []byte(`targets:
  - name: m
    model: openai:small
tests:
  - id: a
    input: hi
    assertions: [Greets the user]
`), Options{})
	if err == nil || !strings.Contains(err.Error(), "AgentV would let target m grade its own replies when it names no grader_target; to do the same, pass --judge openai:small") {
		t.Errorf("err = %v", err)
	}
}

// A bare prompt: that names a file is read here, and the run says AgentV
// reads it as text.
func TestPromptFileDifference(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "grader.md"), []byte("Is {{ output }} polite?"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := `tests:
  - id: a
    input: hi
    assertions:
      - type: llm-grader
        prompt: grader.md
      - type: llm-grader
        prompt: file://grader.md
`
	s, err := Parse(filepath.Join(dir, "e.yaml"), []byte(src), Options{JudgeAvailable: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Differences) != 1 || s.Differences[0].Key != "prompt-file" || s.Differences[0].Line != 6 {
		t.Errorf("differences = %v", s.Differences)
	}
}
