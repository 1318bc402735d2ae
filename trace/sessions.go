package trace

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// SessionLogs says where a coding agent keeps its session logs.
type SessionLogs struct {
	// Format is the trace format of the logs.
	Format string
	// Dir is where they are, from the agent's usual place or its
	// environment variable.
	Dir string
	// match reports whether a path under Dir is a session log.
	match func(rel string) bool
}

// Sessions returns where agent ("claude", "codex", "copilot" or "gemini")
// keeps its logs: ~/.claude/projects (or $CLAUDE_CONFIG_DIR/projects),
// ~/.codex/sessions (or $CODEX_HOME/sessions),
// ~/.copilot/session-state (or $COPILOT_HOME/session-state), and
// ~/.gemini/tmp.
func Sessions(agent string) (SessionLogs, error) {
	home, _ := os.UserHomeDir()
	env := func(k, def string) string {
		if v := os.Getenv(k); v != "" {
			return v
		}
		return def
	}
	switch agent {
	case "claude", "claude-code":
		return SessionLogs{Format: "claude", Dir: filepath.Join(env("CLAUDE_CONFIG_DIR", filepath.Join(home, ".claude")), "projects"),
			match: func(rel string) bool {
				// <project>/<session>.jsonl; subagent logs (agent-*.jsonl) are
				// separate conversations of their own.
				return strings.HasSuffix(rel, ".jsonl")
			}}, nil
	case "codex":
		return SessionLogs{Format: "codex", Dir: filepath.Join(env("CODEX_HOME", filepath.Join(home, ".codex")), "sessions"),
			match: func(rel string) bool {
				return strings.HasPrefix(filepath.Base(rel), "rollout-") && strings.HasSuffix(rel, ".jsonl")
			}}, nil
	case "copilot", "copilot-cli":
		return SessionLogs{Format: "copilot", Dir: filepath.Join(env("COPILOT_HOME", filepath.Join(home, ".copilot")), "session-state"),
			match: func(rel string) bool {
				return filepath.Base(rel) == "events.jsonl" || (filepath.Dir(rel) == "." && strings.HasSuffix(rel, ".jsonl"))
			}}, nil
	case "gemini", "gemini-cli":
		return SessionLogs{Format: "gemini", Dir: filepath.Join(home, ".gemini", "tmp"),
			match: func(rel string) bool {
				// <project hash>/chats/session-<time>-<id>.json
				parts := strings.Split(filepath.ToSlash(rel), "/")
				return len(parts) == 3 && parts[1] == "chats" && strings.HasPrefix(parts[2], "session-") && strings.HasSuffix(parts[2], ".json")
			}}, nil
	}
	return SessionLogs{}, fmt.Errorf("unknown coding agent %q; use claude, codex, copilot or gemini", agent)
}

// Find lists the session logs under Dir changed at or after since (zero:
// all), oldest first.
func (s SessionLogs) Find(since time.Time) ([]string, error) {
	type found struct {
		path string
		mod  time.Time
	}
	var out []found
	err := filepath.WalkDir(s.Dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == s.Dir {
				return err
			}
			return nil // an unreadable folder is skipped, not fatal
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(s.Dir, path)
		if !s.match(rel) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		if !since.IsZero() && info.ModTime().Before(since) {
			return nil
		}
		out = append(out, found{path, info.ModTime()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", s.Dir, err)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].mod.Equal(out[j].mod) {
			return out[i].mod.Before(out[j].mod)
		}
		return out[i].path < out[j].path
	})
	paths := make([]string, len(out))
	for i, f := range out {
		paths[i] = f.path
	}
	return paths, nil
}
