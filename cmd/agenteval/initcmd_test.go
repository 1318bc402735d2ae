package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestIgnoreState: .agenteval/ is added to a .gitignore once, after its
// last line, and never twice.
// envLines keep the project's keys out of commits.
const envLines = "# API keys, read by agenteval from the project root\n.env\n"

func TestIgnoreState(t *testing.T) {
	tests := []struct {
		name, before, after string
		added               bool
	}{
		{"no file", "", "# agenteval's run history and cache\n.agenteval/\n" + envLines, true},
		{"other entries", "bin/\n", "bin/\n# agenteval's run history and cache\n.agenteval/\n" + envLines, true},
		{"no final newline", "bin/", "bin/\n# agenteval's run history and cache\n.agenteval/\n" + envLines, true},
		{"already there", "bin/\n.agenteval/\n.env\n", "bin/\n.agenteval/\n.env\n", false},
		{"without the slash", "/.agenteval\n/.env\n", "/.agenteval\n/.env\n", false},
		{"only .env missing", ".agenteval/\n", ".agenteval/\n" + envLines, true},
		{"only .agenteval missing", ".env\n", ".env\n# agenteval's run history and cache\n.agenteval/\n", true},
		{"a longer name is another entry", ".agenteval-old/\n.envrc\n", ".agenteval-old/\n.envrc\n# agenteval's run history and cache\n.agenteval/\n" + envLines, true},
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
