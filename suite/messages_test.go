package suite

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/google/go-cmp/cmp"
)

// TestMessageProblemsAtTheirPlace: what the message decoder finds in an
// eval file is reported at the YAML node it is about, in block and flow
// style alike, after the field it belongs to.
func TestMessageProblemsAtTheirPlace(t *testing.T) {
	_, err := parse(t, `
tests:
  - id: a
    criteria: c
    input:
      - role: robot
        content: hi
      - role: assistant
        tool_calls:
          - {tool: book, input: "{\"time\": 8", id: c1}
          - name: search
            arguements: {q: x}
      - {role: user, content: [{type: text, value: a}, {value: b}]}
    expected_output:
      - {role: assistant, tool_calls: [{input: {}}]}
`, Options{JudgeAvailable: true, Strict: true})
	var got []string
	for _, e := range unjoin(err) {
		got = append(got, e.Error())
	}
	want := []string{
		`evals.yaml:5:15: input: unknown role "robot"; use user, assistant, tool or system`,
		`evals.yaml:9:33: input: arguments string is not valid JSON; write the arguments as a JSON object`,
		`evals.yaml:11:13: unknown key "arguements" in a tool call; did you mean "arguments"?`,
		`evals.yaml:12:56: input: a content block needs a type: text, image or file`,
		`evals.yaml:14:40: expected_output: tool call has no name; give "name" (or function.name)`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

// TestMessagesReadAsEverywhere: an eval file's messages take the forms a
// dataset's and a trace's do (role names, Ragas's type, OpenAI's calls),
// with numbers kept as written, and a message without a role takes the
// role of its place, or the assistant's when it makes calls.
func TestMessagesReadAsEverywhere(t *testing.T) {
	s, err := parse(t, `
tests:
  - id: a
    criteria: c
    input:
      - {type: human, content: "Book for 2"}
      - role: model
        tool_calls:
          - {id: c1, type: function, function: {name: book, arguments: '{"party": 2, "at": {"h": 20, "m": 0}}'}}
      - {role: tool, tool_call_id: c1, content: booked}
      - tool_calls: [{tool: pay, input: {amount: 12.50, card: {last4: "4242", exp: "01/30"}}}]
      - content: thanks
`, Options{JudgeAvailable: true})
	if err != nil {
		t.Fatal(err)
	}
	want := agenteval.Conversation{
		{Role: agenteval.RoleUser, Content: "Book for 2"},
		{Role: agenteval.RoleAssistant, ToolCalls: []agenteval.ToolCall{{ID: "c1", Name: "book",
			Args:     map[string]any{"party": json.Number("2"), "at": map[string]any{"h": json.Number("20"), "m": json.Number("0")}},
			KeyOrder: map[string][]string{"/at": {"h", "m"}}}}},
		{Role: agenteval.RoleTool, ToolCallID: "c1", Content: "booked"},
		{Role: agenteval.RoleAssistant, ToolCalls: []agenteval.ToolCall{{Name: "pay",
			Args:     map[string]any{"amount": json.Number("12.50"), "card": map[string]any{"last4": "4242", "exp": "01/30"}},
			KeyOrder: map[string][]string{"/card": {"last4", "exp"}}}}},
		{Role: agenteval.RoleUser, Content: "thanks"},
	}
	if diff := cmp.Diff(want, s.Tests[0].Input); diff != "" {
		t.Errorf("input (-want +got):\n%s", diff)
	}
	if len(s.Warnings) > 0 {
		t.Errorf("warnings: %v", s.Warnings)
	}
}

// TestTwoEntryMessageStillOne: a role-only entry followed by its text is
// one message; a role-only entry at the end is an error.
func TestTwoEntryMessageStillOne(t *testing.T) {
	s, err := parse(t, `
tests:
  - id: a
    criteria: c
    input: [{role: system}, {input: Be brief.}, {content: hi}]
`, Options{JudgeAvailable: true})
	if err != nil {
		t.Fatal(err)
	}
	want := agenteval.Conversation{{Role: agenteval.RoleSystem, Content: "Be brief."}, {Role: agenteval.RoleUser, Content: "hi"}}
	if diff := cmp.Diff(want, s.Tests[0].Input); diff != "" {
		t.Errorf("input (-want +got):\n%s", diff)
	}
	_, err = parse(t, "tests:\n  - id: a\n    criteria: c\n    input: [{content: hi}, {role: system}]\n", Options{JudgeAvailable: true})
	if err == nil || !strings.Contains(err.Error(), "evals.yaml:4:28: input: a message with a role needs content") {
		t.Errorf("err = %v", err)
	}
}

// TestUnsetSystemPromptDropped: a system message whose whole content is
// an unset variable is left out, as AgentV leaves it out, and the unset
// variable is still warned about; a system message with text stays.
func TestUnsetSystemPromptDropped(t *testing.T) {
	tests := []struct {
		name, input string
		want        agenteval.Conversation
		warn        string
	}{
		{"unset ${{ VAR }}", `[{role: system, content: "${{ SYSTEM_PROMPT }}"}, {role: user, content: hi}]`,
			agenteval.Conversation{{Role: agenteval.RoleUser, Content: "hi"}}, "environment variable SYSTEM_PROMPT is not set"},
		{"unset {{ env.VAR }}", `[{role: system, content: "{{ env.SYSTEM_PROMPT }}"}, {role: user, content: hi}]`,
			agenteval.Conversation{{Role: agenteval.RoleUser, Content: "hi"}}, "environment variable SYSTEM_PROMPT is not set"},
		{"two-entry form", `[{role: system}, {input: "${{ SYSTEM_PROMPT }}"}, hi]`,
			agenteval.Conversation{{Role: agenteval.RoleUser, Content: "hi"}}, "environment variable SYSTEM_PROMPT is not set"},
		{"blank literal", `[{role: system, content: "  "}, {role: user, content: hi}]`,
			agenteval.Conversation{{Role: agenteval.RoleUser, Content: "hi"}}, ""},
		{"set", `[{role: system, content: "${{ MODEL }}"}, {role: user, content: hi}]`,
			agenteval.Conversation{{Role: agenteval.RoleSystem, Content: "gpt-4o-mini"}, {Role: agenteval.RoleUser, Content: "hi"}}, ""},
		{"empty user message stays", `[{role: system, content: be brief}, {role: user, content: ""}]`,
			agenteval.Conversation{{Role: agenteval.RoleSystem, Content: "be brief"}, {Role: agenteval.RoleUser}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := parse(t, "tests:\n  - id: a\n    criteria: c\n    input: "+tt.input+"\n", Options{JudgeAvailable: true})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, s.Tests[0].Input); diff != "" {
				t.Errorf("input (-want +got):\n%s", diff)
			}
			var warns []string
			for _, w := range s.Warnings {
				warns = append(warns, w.Error())
			}
			if got := strings.Join(warns, "\n"); tt.warn != "" && !strings.Contains(got, tt.warn) || tt.warn == "" && strings.Contains(got, "not set") {
				t.Errorf("warnings = %q, want one with %q", got, tt.warn)
			}
		})
	}
}

// A single exchange's lone message is trimmed, as AgentV sends it as the
// question; several messages, and conversation turns, keep their text.
func TestLoneQuestionTrimmed(t *testing.T) {
	s, err := Parse("t.yaml", []byte(`tests:
  - id: lone
    input: |
      What is 2+2?
    assertions: [{type: contains, value: x}]
  - id: two
    input:
      - {role: system, content: "Be brief.\n"}
      - {role: user, content: "What is 2+2?\n"}
    assertions: [{type: contains, value: x}]
`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Tests[0].Input[0].Content; got != "What is 2+2?" {
		t.Errorf("lone = %q", got)
	}
	if got := s.Tests[1].Input[1].Content; got != "What is 2+2?\n" {
		t.Errorf("two = %q", got)
	}
}

// The same in a list of messages, where the message decoder reads it.
func TestJSONContentKeepsOrderInMessages(t *testing.T) {
	s, err := Parse("t.yaml", []byte(`tests:
  - id: a
    input:
      - {role: system, content: x}
      - role: user
        content: {type_of: check, b: 1, a: 2}
    assertions: [{type: contains, value: x}]
`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"type_of\": \"check\",\n  \"b\": 1,\n  \"a\": 2\n}"
	if got := s.Tests[0].Input[1].Content; got != want {
		t.Errorf("content =\n%s\nwant\n%s", got, want)
	}
}
