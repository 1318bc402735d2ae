package trace

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenteval/agenteval/internal/golden"
)

// dump reads a file with Open and renders every row: its id, problems and
// conversation, as the golden files hold them.
func dump(t *testing.T, path, format string) []byte {
	t.Helper()
	src, err := Open(path, Options{Format: format})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var b strings.Builder
	b.WriteString("format: " + src.FormatName() + "\n")
	for {
		row, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			b.WriteString("stopped: " + err.Error() + "\n")
			break
		}
		b.WriteString("\n== " + row.TestID() + "\n")
		for _, e := range row.Errors {
			b.WriteString("error: " + e.Error() + "\n")
		}
		for _, w := range row.Warnings {
			b.WriteString("warning: " + w.Error() + "\n")
		}
		if row.Sample == nil {
			continue
		}
		md, _ := json.Marshal(row.Sample.Metadata)
		b.WriteString("metadata: " + string(md) + "\n")
		for _, m := range row.Sample.UserInput {
			b.Write(messageJSON(m))
			b.WriteString("\n")
		}
	}
	for _, w := range src.Warnings() {
		b.WriteString("file warning: " + w.Error() + "\n")
	}
	return []byte(b.String())
}

func TestGolden(t *testing.T) {
	cases := []struct{ file, format string }{
		{"otel_genai.jsonl", ""},
		{"otel_events.jsonl", ""},
		{"openllmetry.json", ""},
		{"openinference.jsonl", "openinference"},
		{"openai_agents.jsonl", ""},
		{"langchain_messages.json", ""},
		{"langgraph_state.jsonl", ""},
		{"inspect_log.json", ""},
		{"atif.json", ""},
		{"claude_session.jsonl", ""},
		{"codex_rollout.jsonl", ""},
		{"copilot_events.jsonl", ""},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			got := dump(t, filepath.Join("testdata", c.file), c.format)
			golden.Check(t, filepath.Join("testdata", "golden", c.file+".txt"), got)
		})
	}
}

var _ = os.Open
