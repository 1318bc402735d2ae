package messages_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/dataset"
	"github.com/agenteval/agenteval/suite"
	"github.com/agenteval/agenteval/trace"
	"github.com/google/go-cmp/cmp"
)

// TestSamePathsSameMessages: a list of messages decodes to the same
// agenteval.Message whether it is a dataset row's, a trace's (an OpenAI
// Agents SDK generation span's input) or an eval file's input.
func TestSamePathsSameMessages(t *testing.T) {
	cases := []struct {
		name string
		json string
	}{
		{name: "openai", json: `[
			{"role": "system", "content": "Be brief."},
			{"role": "user", "content": "Book a table for 2 at 8pm"},
			{"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "book", "arguments": "{\"party\": 2, \"time\": \"8pm\", \"where\": {\"z\": 1, \"a\": 2}}"}}]},
			{"role": "tool", "tool_call_id": "c1", "content": "booked"},
			{"role": "assistant", "content": "Done."}]`},
		{name: "ragas", json: `[
			{"type": "human", "content": "weather?"},
			{"type": "ai", "content": "", "tool_calls": [{"name": "weather", "args": {"city": "Paris", "days": 2.50}}]},
			{"type": "tool", "content": "sunny"},
			{"type": "ai", "content": "It is sunny."}]`},
		{name: "aliases", json: `[
			{"role": "developer", "content": "x"},
			{"role": "Human", "content": "hi"},
			{"role": "model", "content": "", "tool_calls": [{"tool": "f", "input": {"q": "a"}, "id": 7}]},
			{"role": "function", "tool_call_id": 7, "name": "f", "content": "r"},
			{"role": "bot", "content": "ok"}]`},
		{name: "content parts", json: `[
			{"role": "user", "content": [{"type": "text", "text": "look"}, "at this", {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}]},
			{"role": "assistant", "content": [{"type": "reasoning", "text": "hm"}, {"type": "output_text", "text": "a picture"}]}]`},
		// An eval file writes structured content as AgentV does (keys in
		// written order, numbers as JavaScript prints them: suite's
		// TestJSONContentKeepsOrder); here the keys are in order already,
		// so every path agrees.
		{name: "structured content", json: `[
			{"role": "user", "content": {"items": ["a <b>", 1.5], "order": 42}},
			{"role": "assistant", "content": 3}]`},
		{name: "calls with outputs", json: `[
			{"role": "user", "content": "go"},
			{"role": "assistant", "tool_calls": [{"tool": "search", "input": {"q": "x"}, "output": {"hits": 2}, "duration_ms": 12}, {"function": "lookup", "arguments": {"id": "1"}, "call_id": "k"}]},
			{"role": "tool", "tool_call_id": "k", "content": "found"}]`},
		{name: "legacy function_call", json: `[
			{"role": "user", "content": "go"},
			{"role": "assistant", "content": "", "function_call": {"name": "f", "arguments": "{\"a\": [1, 2]}"}},
			{"role": "function", "name": "f", "content": "ok"}]`},
		{name: "nested object args", json: `[
			{"role": "user", "content": "go"},
			{"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": {"q": {"z": 1, "a": [{"y": 1, "x": 2}]}}}}]},
			{"role": "tool", "tool_call_id": "c", "content": "ok"}]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fromDataset, err := dataset.DecodeMessages([]byte(c.json))
			if err != nil {
				t.Fatalf("dataset: %v", err)
			}
			fromTrace, warnings := viaTrace(t, c.json)
			if len(warnings) > 0 {
				t.Errorf("trace warnings: %v", warnings)
			}
			fromSuite := viaSuite(t, c.json)
			if diff := cmp.Diff(fromDataset, fromSuite); diff != "" {
				t.Errorf("dataset and eval file differ (-dataset +suite):\n%s", diff)
			}
			// Nested arguments written as objects keep their key order on
			// every path: each reader decodes them in written order.
			if diff := cmp.Diff(fromDataset, fromTrace); diff != "" {
				t.Errorf("dataset and trace differ (-dataset +trace):\n%s", diff)
			}
		})
	}
}

// TestSamePathsDifferOnPurpose: where the readers differ, it is by an
// option, and each reports it at its own place: a model's broken arguments
// are kept raw in a dataset and a trace, and refused in an eval file,
// where a person wrote them; an unknown role is an error in a dataset and
// an eval file, and leaves the message out of a trace.
func TestSamePathsDifferOnPurpose(t *testing.T) {
	broken := `[{"role": "user", "content": "go"}, {"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "{\"a\": 1"}}]}, {"role": "tool", "tool_call_id": "c", "content": "?"}]`
	ds, err := dataset.DecodeMessages([]byte(broken))
	if err != nil || ds[1].ToolCalls[0].RawArgs != `{"a": 1` {
		t.Errorf("dataset: %v, %+v", err, ds)
	}
	tr, warnings := viaTrace(t, broken)
	if tr[1].ToolCalls[0].RawArgs != `{"a": 1` || len(warnings) != 1 ||
		!strings.HasSuffix(warnings[0], "trace.jsonl:2:1: generation input[1].tool_calls[0].function.arguments: arguments are not valid JSON; kept as raw text, and every check of this call's arguments will fail") {
		t.Errorf("trace: %+v, warnings %v", tr, warnings)
	}
	_, err = suite.Parse("e.yaml", []byte("tests:\n  - id: a\n    criteria: c\n    input: "+broken+"\n"), suite.Options{JudgeAvailable: true})
	if err == nil || err.Error() != `e.yaml:4:136: input: arguments string is not valid JSON; write the arguments as a JSON object` {
		t.Errorf("eval file: %v", err)
	}

	robot := `[{"role": "robot", "content": "beep"}, {"role": "user", "content": "hi"}]`
	if _, err := dataset.DecodeMessages([]byte(robot)); err == nil || err.Error() != `messages[0].role: unknown role "robot"; use user, assistant, tool or system` {
		t.Errorf("dataset: %v", err)
	}
	tr, warnings = viaTrace(t, robot)
	if len(tr) != 1 || tr[0].Role != agenteval.RoleUser || len(warnings) != 1 ||
		!strings.HasSuffix(warnings[0], `trace.jsonl:2:1: generation input[0].role: unknown role "robot"; left out`) {
		t.Errorf("trace: %+v, warnings %v", tr, warnings)
	}
	_, err = suite.Parse("e.yaml", []byte("tests:\n  - id: a\n    criteria: c\n    input: "+robot+"\n"), suite.Options{JudgeAvailable: true})
	if err == nil || err.Error() != `e.yaml:4:22: input: unknown role "robot"; use user, assistant, tool or system` {
		t.Errorf("eval file: %v", err)
	}
}

// viaTrace reads the messages as the input of the one generation span of
// an OpenAI Agents SDK trace export, and returns the row's warnings.
func viaTrace(t *testing.T, msgs string) (agenteval.Conversation, []string) {
	t.Helper()
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(msgs)); err != nil {
		t.Fatal(err)
	}
	file := `{"object": "trace", "id": "trace_1", "workflow_name": "w", "group_id": "g"}` + "\n" +
		fmt.Sprintf(`{"object": "trace.span", "id": "span_1", "trace_id": "trace_1", "started_at": "2025-01-01T00:00:00+00:00", "ended_at": "2025-01-01T00:00:01+00:00", "span_data": {"type": "generation", "input": %s, "output": []}}`, compact.String()) + "\n"
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	if err := os.WriteFile(path, []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := trace.Open(path, trace.Options{Format: "openai-agents"})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	row, err := src.Next()
	if err != nil {
		t.Fatal(err)
	}
	if row.Err() != nil {
		t.Errorf("trace: %v", row.Err())
	}
	if _, err := src.Next(); err != io.EOF {
		t.Errorf("trace: a second row: %v", err)
	}
	var warnings []string
	for _, w := range row.Warnings {
		warnings = append(warnings, w.Error())
	}
	return row.Sample.UserInput, warnings
}

// viaSuite reads the messages as the input of an eval file's test.
func viaSuite(t *testing.T, msgs string) agenteval.Conversation {
	t.Helper()
	s, err := suite.Parse("e.yaml", []byte("tests:\n  - id: a\n    criteria: c\n    input: "+msgs+"\n"), suite.Options{JudgeAvailable: true})
	if err != nil {
		t.Fatalf("eval file: %v", err)
	}
	if len(s.Warnings) > 0 {
		t.Errorf("eval file warnings: %v", s.Warnings)
	}
	return s.Tests[0].Input
}
