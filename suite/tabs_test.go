package suite

import (
	"strings"
	"testing"
)

// TestTabIndentation: where the YAML parser stops at a tab with "found
// character that cannot start any token", the error says it is a tab, at
// its line and column; an editor shows a tab as spaces, so the parser's
// words alone leave the reader looking for a character that is not
// there. Other such errors keep the parser's words.
func TestTabIndentation(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"list item", "tests:\n\t- id: a\n", "evals.yaml:2:1: not valid YAML: a tab indents this line; YAML indents with spaces"},
		{"nested", "tests:\n  - id: a\n    input:\n\t\t- hi\n", "evals.yaml:4:1: not valid YAML: a tab indents this line; YAML indents with spaces"},
		{"first line", "\ttests: []\n", "evals.yaml:1:1: not valid YAML: a tab indents this line; YAML indents with spaces"},
		{"no tab", "tests:\n  - id: a\n    input: @x\n", "evals.yaml:3:12: not valid YAML: found character that cannot start any token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("evals.yaml", []byte(tt.src), Options{})
			if err == nil || err.Error() != tt.want {
				t.Errorf("Parse = %v, want %q", err, tt.want)
			}
		})
	}
	_, err := ParseProject("agenteval.yaml", []byte("judge: openai:m\ndefaults:\n\ttarget: x\n"), Options{})
	if err == nil || !strings.Contains(err.Error(), "agenteval.yaml:3:1: not valid YAML: a tab indents this line") {
		t.Errorf("project file: %v", err)
	}
}
