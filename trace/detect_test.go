package trace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A pretty-printed object that no reader knows is one clear error naming
// its keys and the formats read, not an error per line.
func TestUnknownDocument(t *testing.T) {
	dir := t.TempDir()
	big := `{
  "traceId": "abc",
  "observations": [` + strings.Repeat(`{"id": "x", "input": "padding padding padding padding"},`, 2000) + `{}],
  "scores": []
}
`
	tests := []struct {
		name, content, want string
	}{
		{"unknown.json", "{\n  \"project\": \"p\",\n  \"items\": [1, 2]\n}\n",
			"unknown.json: a JSON document of unknown shape (keys: project, items); formats read: Ragas or OpenAI-messages JSONL; "},
		{"big.json", big, "big.json: a JSON document of unknown shape (keys: traceId, observations, scores)"},
		{"ragas.json", "{\n  \"user_input\": [],\n  \"reference\": \"x\"\n}\n",
			"a Ragas or OpenAI-messages dataset holds one row per line (JSONL), or a JSON array of rows"},
		{"broken.json", "{\n  \"a\": 1,\n  \"b\": [1, 2\n", "broken.json:3:13: the file ends in the middle of a JSON document"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(dir, tt.name)
			if err := os.WriteFile(p, []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := readAll(t, p)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q\nwant it to say %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "malformed JSON line") {
				t.Errorf("read as JSON lines: %v", err)
			}
		})
	}
}

// JSON lines and JSON arrays of unknown rows still go to the dataset
// reader, whose errors say what a row needs.
func TestDatasetShapesPassThrough(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"rows.jsonl": "{\"user_input\": [{\"content\": \"hi\", \"type\": \"human\"}]}\n",
		"rows.json":  "[\n  {\"user_input\": [{\"content\": \"hi\", \"type\": \"human\"}]}\n]\n",
	} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o644)
		src, err := Open(p, Options{})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if src.Format().Name != "ragas" {
			t.Errorf("%s: format %s", name, src.Format().Name)
		}
		src.Close()
	}
}

func TestDetectNewFormats(t *testing.T) {
	for file, want := range map[string]string{
		"gemini_cli_0.9_session.json":       "gemini",
		"langsmith_0.4_runs.jsonl":          "langsmith",
		"langsmith_0.4_batches.jsonl":       "langsmith",
		"langsmith_0.4_batch.json":          "langsmith",
		"inspect_0.3.140.eval":              "inspect",
		"claude_code_2.0.37_subagent.jsonl": "claude",
	} {
		src, err := Open(filepath.Join("testdata", file), Options{})
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		if got := src.Format().Name; got != want {
			t.Errorf("%s: detected %s, want %s", file, got, want)
		}
		src.Close()
	}
}

func FuzzGemini(f *testing.F) {
	fuzzFormat(f, "gemini", "gemini_cli_0.9_session.json", "gemini_cli_0.17_session_parts.json")
}

func FuzzLangSmith(f *testing.F) {
	fuzzFormat(f, "langsmith", "langsmith_0.4_runs.jsonl", "langsmith_0.4_batch.json")
}

func FuzzInspectEval(f *testing.F) {
	fuzzFormat(f, "inspect", "inspect_0.3.140.eval", "inspect_0.3.140_unfinished.eval")
}
