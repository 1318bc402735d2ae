package target

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/agenteval/agenteval"
)

// promptOf is the text a cli target gets as {PROMPT}. On a first turn it
// is AgentV's question: the input's text, with each attached file as a
// reference to its absolute path (<file: path="...">), the command being
// an agent that reads files itself; when more than one message says
// something, each is headed by its role (@[System]:, @[User]:). Once the
// conversation has a reply, it is the whole transcript as Human:/AI:
// lines, so that the command sees the history (AgentV gives a cli
// target of a conversation the turn's user text alone).
func promptOf(msgs agenteval.Conversation) string {
	for _, m := range msgs {
		if m.Role == agenteval.RoleAssistant || m.Role == agenteval.RoleTool {
			return msgs.Pretty()
		}
	}
	segs := make([][]segment, len(msgs))
	visible := 0
	for i, m := range msgs {
		segs[i] = segmentsOf(m)
		for _, s := range segs[i] {
			if strings.TrimSpace(s.text) != "" {
				visible++
				break
			}
		}
	}
	if visible > 1 {
		var parts []string
		for i, m := range msgs {
			shown := false
			var lines []string
			for _, s := range segs[i] {
				shown = shown || strings.TrimSpace(s.text) != ""
				if f := s.format(); f != "" {
					lines = append(lines, f)
				}
			}
			if !shown || len(lines) == 0 {
				continue
			}
			role := string(m.Role)
			if role != "" {
				role = strings.ToUpper(role[:1]) + role[1:]
			}
			parts = append(parts, "@["+role+"]:\n"+strings.Join(lines, "\n"))
		}
		return strings.Join(parts, "\n\n")
	}
	var parts []string
	for _, ss := range segs {
		for _, s := range ss {
			if f := strings.TrimSpace(s.format()); f != "" {
				parts = append(parts, f)
			}
		}
	}
	return strings.Join(parts, "\n\n")
}

// segment is a piece of a message as AgentV keeps it: text, or a file
// (its absolute path; text is then the file's text).
type segment struct {
	text string
	file string
}

func (s segment) format() string {
	if s.file != "" {
		return `<file: path="` + s.file + `">`
	}
	return s.text
}

// segmentsOf cuts a message into AgentV's segments. The eval file's
// decoder keeps a message's text with each attached file's text inlined
// (<file path="...">, its trimmed text, </file>, set apart by blank
// lines) and the files as parts; each file's block is found by its text,
// read again, and stands for the file. A block that cannot be found (the
// file changed since) leaves the text as it is.
func segmentsOf(m agenteval.Message) []segment {
	rest := m.Content
	var out []segment
	for _, p := range m.Parts {
		if p.Type != "file" || p.Path == "" {
			continue
		}
		data, err := os.ReadFile(p.Path)
		if err != nil {
			continue
		}
		body := ">\n" + strings.TrimSpace(strings.ReplaceAll(string(data), "\r\n", "\n")) + "\n</file>"
		end := strings.Index(rest, body)
		if end < 0 {
			continue
		}
		start := strings.LastIndex(rest[:end], `<file path="`)
		if start < 0 {
			continue
		}
		if before := strings.TrimSuffix(rest[:start], "\n\n"); before != "" {
			out = append(out, segment{text: before})
		}
		path := p.Path
		if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
		out = append(out, segment{file: path, text: string(data)})
		rest = strings.TrimPrefix(rest[end+len(body):], "\n\n")
	}
	if strings.TrimSpace(rest) != "" {
		out = append(out, segment{text: rest})
	}
	return out
}
