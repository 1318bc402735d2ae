package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestIgnoreState: .agenteval/ is added to a .gitignore once, after its
// last line, and never twice.
func TestIgnoreState(t *testing.T) {
	tests := []struct {
		name, before, after string
		added               bool
	}{
		{"no file", "", "# agenteval's run history and cache\n.agenteval/\n", true},
		{"other entries", "bin/\n", "bin/\n# agenteval's run history and cache\n.agenteval/\n", true},
		{"no final newline", "bin/", "bin/\n# agenteval's run history and cache\n.agenteval/\n", true},
		{"already there", "bin/\n.agenteval/\n", "bin/\n.agenteval/\n", false},
		{"without the slash", "/.agenteval\n", "/.agenteval\n", false},
		{"a longer name is another entry", ".agenteval-old/\n", ".agenteval-old/\n# agenteval's run history and cache\n.agenteval/\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), ".gitignore")
			if tt.before != "" {
				if err := os.WriteFile(p, []byte(tt.before), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			did, err := ignoreState(p)
			if err != nil {
				t.Fatal(err)
			}
			if (did != "") != tt.added {
				t.Errorf("ignoreState said %q, want added=%v", did, tt.added)
			}
			got, _ := os.ReadFile(p)
			if string(got) != tt.after {
				t.Errorf(".gitignore = %q, want %q", got, tt.after)
			}
		})
	}
}
