package suite

import (
	"strings"
	"testing"
)

// TestNothingToGradeIsAnError: a test that checks nothing, at any level,
// would pass whatever the agent said; it is refused, at its position,
// with what to add.
func TestNothingToGradeIsAnError(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"single exchange", `
tests:
  - id: a
    input: hi
`, `evals.yaml:2:5: test "a" has nothing to grade, so it would pass whatever the agent says; add assertions, expected_output or criteria`},
		{"conversation", `
tests:
  - id: b
    mode: conversation
    turns:
      - input: hi
      - input: and then?
`, `evals.yaml:2:5: test "b" has nothing to grade, so it would pass whatever the agent says; add assertions or expected_output to a turn`},
		{"simulated user", `
judge: openai:m
tests:
  - id: c
    user: You want a refund.
`, `evals.yaml:3:5: test "c" has a simulated user but nothing grades the conversation; add subgoals`},
		{"the checks misspelt, beside an extension key", `
tests:
  - id: d
    input: hi
    x-owner: search
    assertion: [{type: contains, value: x}]
`, `evals.yaml:5:5: unknown key "assertion" in test 1; did you mean "assertions"?`},
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

// TestSomethingToGrade: any one check anywhere is enough, and a test that
// will not run needs none.
func TestSomethingToGrade(t *testing.T) {
	src := `
judge: openai:m
assertions: [{type: contains, value: ok}]
tests:
  - {id: suite-level, input: hi}
  - {id: criteria, input: hi, criteria: Greets., execution: {skip_defaults: true}}
  - {id: reference, input: hi, expected_output: hello, execution: {skip_defaults: true}}
  - {id: subgoals, input: hi, subgoals: [Greets.], execution: {skip_defaults: true}}
  - {id: calls, input: hi, expected_tool_calls: [{tool: search}], execution: {skip_defaults: true}}
  - id: one-turn
    mode: conversation
    execution: {skip_defaults: true}
    turns:
      - input: hi
      - {input: bye, expected_output: Goodbye.}
  - id: workspace
    input: fix it
    workspace: {repos: [{path: ., repo: x/y}]}
    execution: {skip_defaults: true}
`
	s, err := parse(t, src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Tests) != 7 || s.Tests[6].Skip == "" {
		t.Errorf("tests %d, last skipped for %q", len(s.Tests), s.Tests[len(s.Tests)-1].Skip)
	}
}
