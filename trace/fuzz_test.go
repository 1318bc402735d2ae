package trace

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// fuzzFormat reads data as the given format and checks that reading ends
// without a panic or hang, that every row and problem is sane, and that a
// conversation that decoded renders.
func fuzzFormat(f *testing.F, format string, seeds ...string) {
	for _, s := range seeds {
		b, err := os.ReadFile(filepath.Join("testdata", s))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("{"))
	f.Add([]byte("[1,{},\"x\",null]\n{\"a\":[}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "in")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		src, err := Open(path, Options{Format: format})
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		for i := 0; ; i++ {
			if i > len(data)+10 {
				t.Fatalf("more rows (%d) than the input has bytes", i)
			}
			row, err := src.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				if err.Error() == "" {
					t.Fatal("an error without a message")
				}
				break
			}
			for _, e := range append(row.Errors, row.Warnings...) {
				if e.Msg == "" || e.Line < 0 || e.Col < 0 {
					t.Fatalf("bad problem %+v", e)
				}
			}
			if row.Sample != nil {
				_ = row.Sample.UserInput.Pretty()
				_ = row.Sample.String()
			}
		}
		_ = src.Warnings()
	})
}

func FuzzOTLP(f *testing.F) {
	fuzzFormat(f, "otlp", "otel_genai.jsonl", "otel_events.jsonl", "openllmetry.json", "openinference.jsonl")
}

func FuzzOpenAIAgents(f *testing.F) { fuzzFormat(f, "openai-agents", "openai_agents.jsonl") }

func FuzzLangChain(f *testing.F) {
	fuzzFormat(f, "langchain", "langchain_messages.json", "langgraph_state.jsonl")
}

func FuzzInspect(f *testing.F) { fuzzFormat(f, "inspect", "inspect_log.json") }

func FuzzATIF(f *testing.F) { fuzzFormat(f, "atif", "atif.json") }

func FuzzClaude(f *testing.F) { fuzzFormat(f, "claude", "claude_session.jsonl") }

func FuzzCodex(f *testing.F) { fuzzFormat(f, "codex", "codex_rollout.jsonl") }

func FuzzCopilot(f *testing.F) { fuzzFormat(f, "copilot", "copilot_events.jsonl") }

// FuzzDetect reads whatever detection picks.
func FuzzDetect(f *testing.F) {
	fuzzFormat(f, "", "otel_genai.jsonl", "openai_agents.jsonl", "inspect_log.json", "atif.json", "claude_session.jsonl", "codex_rollout.jsonl", "copilot_events.jsonl", "langgraph_state.jsonl")
}
