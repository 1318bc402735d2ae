package suite

import (
	"strings"
	"testing"
)

// TestMisspeltKeysAreErrors: an eval file's unknown keys are ignored with
// a warning, as AgentV ignores them, except a key a letter or two from a
// known one. That is the known key misspelt, and ignoring it would drop
// what it holds: a test whose assertions: is misspelt has nothing left to
// check, and would pass.
func TestMisspeltKeysAreErrors(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"test", `
tests:
  - id: a
    input: hi
    asertions: [{type: contains, value: x}]
`, `evals.yaml:4:5: unknown key "asertions" in test 1; did you mean "assertions"?`},
		{"turn", `
tests:
  - id: a
    mode: conversation
    turns:
      - input: hi
        assertions: [{type: contains, value: x}]
      - input: more
        asertions: [{type: contains, value: y}]
`, `evals.yaml:8:9: unknown key "asertions" in turn 2; did you mean "assertions"?`},
		{"top level", `
asertions: [{type: contains, value: x}]
tests:
  - {id: a, input: hi, assertions: [{type: contains, value: y}]}
`, `evals.yaml:1:1: unknown key "asertions" in the eval file; did you mean "assertions"?`},
		{"letter case", `
tests:
  - id: a
    input: hi
    Assertions: [{type: contains, value: x}]
`, `evals.yaml:4:5: unknown key "Assertions" in test 1; did you mean "assertions"?`},
		{"message", `
tests:
  - id: a
    input:
      - {role: user, content: hi, metdata: {k: v}}
    assertions: [{type: contains, value: x}]
`, `evals.yaml:4:35: unknown key "metdata" in a message; did you mean "metadata"?`},
		{"assertion setting", `
tests:
  - id: a
    input: hi
    assertions: [{type: contains, vaule: x}]
`, `evals.yaml:4:35: contains does not take vaule; did you mean value?`},
		{"a setting every assertion takes", `
tests:
  - id: a
    input: hi
    assertions: [{type: contains, value: x, wieght: 2}]
`, `evals.yaml:4:45: contains does not take wieght; did you mean weight?`},
		{"execution", `
execution: {treshold: 0.9}
tests:
  - {id: a, input: hi, assertions: [{type: contains, value: y}]}
`, `evals.yaml:1:13: unknown key "treshold" in execution; did you mean "threshold"?`},
		{"target", `
targets:
  - {name: t, modle: openai:gpt-4o-mini}
tests:
  - {id: a, input: hi, assertions: [{type: contains, value: y}]}
`, `evals.yaml:2:15: unknown key "modle" in a target; did you mean "model"?`},
		{"tool", `
tools:
  - {name: search, resutl: ok}
tests:
  - {id: a, input: hi, assertions: [{type: contains, value: y}]}
`, `evals.yaml:2:20: unknown key "resutl" in a tool; did you mean "result"?`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse(t, tt.src, Options{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse = %v, want the error %q", err, tt.want)
			}
		})
	}
}

// TestOtherUnknownKeysWarn: a key that is no misspelling (another tool's
// extension, AgentV's own settings) stays a warning, and the file loads;
// --strict makes it an error.
func TestOtherUnknownKeysWarn(t *testing.T) {
	src := `
reviewer: alice
execution: {failOnError: false, budgetUsd: 2}
x-notes: kept for anchors
tests:
  - id: a
    input: hi
    owner_team: search
    assertions: [{type: contains, value: x, colour: red}]
`
	s, err := parse(t, src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range s.Warnings {
		got = append(got, w.Error())
	}
	want := []string{
		`evals.yaml:1:1: unknown key "reviewer" in the eval file is ignored`,
		"evals.yaml:2:33: execution.budgetUsd is not enforced",
		`evals.yaml:7:5: unknown key "owner_team" in test 1 is ignored`,
		"evals.yaml:8:45: contains does not take colour; it is ignored",
	}
	if len(got) != len(want) {
		t.Fatalf("warnings %q, want %d", got, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i], w) {
			t.Errorf("warning %d = %q, want it to start %q", i, got[i], w)
		}
	}
	if _, err := parse(t, src, Options{Strict: true}); err == nil || !strings.Contains(err.Error(), `unknown key "owner_team"`) {
		t.Errorf("--strict: %v, want the warnings as errors", err)
	}
}

// TestProjectFileMisspeltKey: the project file has no AgentV leniency;
// every unknown key is an error there, a misspelt one with the key meant.
func TestProjectFileMisspeltKey(t *testing.T) {
	_, err := ParseProject("agenteval.yaml", []byte("judgee: openai:gpt-4o-mini\n"), Options{})
	if err == nil || !strings.Contains(err.Error(), `agenteval.yaml:1:1: unknown key "judgee" in the project file; did you mean "judge"?`) {
		t.Errorf("ParseProject = %v", err)
	}
}
