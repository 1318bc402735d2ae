package target

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/suite"
)

// TestPromptIsAgentVsQuestion: a cli target's {PROMPT} on a first turn is
// what AgentV 4.42.4 gives the same test's command (its argv, logged).
func TestPromptIsAgentVsQuestion(t *testing.T) {
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes.txt")
	os.WriteFile(notes, []byte("hello file\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "empty.txt"), []byte("  \n"), 0o644)
	tests := []struct {
		name, input, want string
	}{
		{"one user message", `[{role: user, content: plain please}]`, "plain please"},
		{"a string input", `plain please`, "plain please"},
		{"system and user", `[{role: system, content: Be terse.}, {role: user, content: hi}]`, "@[System]:\nBe terse.\n\n@[User]:\nhi"},
		{"system, user and a file", `[{role: system, content: Be terse.}, {role: user, content: [{type: text, value: full run please}, {type: file, value: ./notes.txt}]}]`,
			"@[System]:\nBe terse.\n\n@[User]:\nfull run please\n<file: path=\"" + notes + "\">"},
		{"a file alone is flat", `[{role: user, content: [{type: text, value: read this}, {type: file, value: ./notes.txt}]}]`,
			"read this\n\n<file: path=\"" + notes + "\">"},
		{"a file before the text", `[{role: user, content: [{type: file, value: ./notes.txt}, {type: text, value: summarize it}]}]`,
			"<file: path=\"" + notes + "\">\n\nsummarize it"},
		// A message whose only file is empty says nothing: no role heads.
		{"an empty file", `[{role: system, content: Be terse.}, {role: user, content: [{type: file, value: ./empty.txt}]}]`,
			"Be terse.\n\n<file: path=\"" + filepath.Join(dir, "empty.txt") + "\">"},
		{"two text blocks after a system message", `[{role: system, content: S}, {role: user, content: [{type: text, value: one}, {type: text, value: two}]}]`,
			"@[System]:\nS\n\n@[User]:\none\ntwo"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, "t.eval.yaml")
			s, err := suite.Parse(path, []byte("tests:\n  - id: x\n    criteria: c\n    input: "+tt.input+"\n"), suite.Options{JudgeAvailable: true})
			if err != nil {
				t.Fatal(err)
			}
			tc := s.Tests[0]
			msgs := append(agenteval.Conversation{}, tc.Input...)
			for _, turn := range tc.Turns {
				msgs = append(msgs, turn.Input...)
			}
			if got := promptOf(msgs); got != tt.want {
				t.Errorf("prompt\n got %q\nwant %q", got, tt.want)
			}
		})
	}
	// Once there is a reply, the command gets the transcript.
	conv := agenteval.Conversation{{Role: agenteval.RoleUser, Content: "a"}, {Role: agenteval.RoleAssistant, Content: "b"}, {Role: agenteval.RoleUser, Content: "c"}}
	if got := promptOf(conv); got != conv.Pretty() {
		t.Errorf("later turn: %q", got)
	}
}
