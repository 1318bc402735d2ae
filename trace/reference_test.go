package trace

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/grade"
	"github.com/agenteval/agenteval/internal/golden"
	"github.com/agenteval/agenteval/internal/jsonvalue"
)

// Shared by the golden tests of every format (G's too):
//
//   - messageJSON renders a message as the golden files hold it, with
//     each call's nested arguments in the key order the reader kept, so a
//     golden file shows the order and a reader that loses it fails;
//   - checkOwnReference reads a fixture and checks that a reference made
//     of the file's own calls, their arguments copied from the file's
//     text (not from what the reader made of it), scores 1 on
//     tool_call_accuracy (Ragas-exact, so key order counts), tool_call_f1
//     and tool_calls.

// messageJSON is json.Marshal of m, but with each call's arguments
// written in the order of its KeyOrder.
func messageJSON(m agenteval.Message) []byte {
	if len(m.ToolCalls) > 0 {
		calls := make([]agenteval.ToolCall, len(m.ToolCalls))
		for i, c := range m.ToolCalls {
			calls[i] = c
			if c.Args == nil || c.KeyOrder == nil {
				continue
			}
			args := make(map[string]any, len(c.Args))
			for k, v := range c.Args {
				args[k] = json.RawMessage(orderedJSON(v, agenteval.ChildPointer("", k), c.KeyOrder))
			}
			calls[i].Args = args
		}
		m.ToolCalls = calls
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.Encode(m)
	return bytes.TrimRight(b.Bytes(), "\n")
}

func orderedJSON(v any, path string, order map[string][]string) []byte {
	switch x := v.(type) {
	case map[string]any:
		keys := order[path]
		if len(keys) != len(x) {
			keys = keys[:0:0]
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
		}
		var b bytes.Buffer
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			kj, _ := json.Marshal(k)
			b.Write(kj)
			b.WriteByte(':')
			b.Write(orderedJSON(x[k], agenteval.ChildPointer(path, k), order))
		}
		b.WriteByte('}')
		return b.Bytes()
	case []any:
		var b bytes.Buffer
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(orderedJSON(e, agenteval.ChildPointer(path, i), order))
		}
		b.WriteByte(']')
		return b.Bytes()
	}
	j, _ := json.Marshal(v)
	return j
}

// sourceObjects lists, in file order, every JSON object written in data,
// at any depth and inside JSON strings too (arguments sent as JSON text),
// each with its text.
func sourceObjects(data []byte) []sourceObject {
	var out []sourceObject
	add := func(text []byte) {
		var o jsonvalue.Orders
		v, err := o.Decode(text)
		if m, ok := v.(map[string]any); ok && err == nil {
			out = append(out, sourceObject{m, agenteval.KeyOrderOf(text)})
		}
	}
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '{':
			var raw json.RawMessage
			if json.NewDecoder(bytes.NewReader(data[i:])).Decode(&raw) == nil {
				add(raw)
			}
		case '"':
			var s string
			if json.NewDecoder(bytes.NewReader(data[i:])).Decode(&s) == nil && strings.HasPrefix(strings.TrimSpace(s), "{") {
				add([]byte(s))
				// Objects written inside that text, too.
				for _, o := range sourceObjects([]byte(s)[1:]) {
					out = append(out, o)
				}
			}
		}
	}
	return out
}

type sourceObject struct {
	args  map[string]any
	order map[string][]string
}

// ownReference is the reference a person would copy from the file: the
// calls of conv, each one's arguments taken from the file's text where
// an object equal to them is written (the first not taken yet, in file
// order), with that text's key order.
func ownReference(t *testing.T, objs []sourceObject, used map[int]bool, conv agenteval.Conversation) []agenteval.ToolCall {
	t.Helper()
	var ref []agenteval.ToolCall
	for _, m := range conv {
		for _, c := range m.ToolCalls {
			rc := agenteval.ToolCall{Name: c.Name, Args: c.Args, RawArgs: c.RawArgs}
			if c.Args != nil && agenteval.HasNestedObjects(c.Args) {
				found := false
				for i, o := range objs {
					if !used[i] && jsonvalue.Equal(o.args, c.Args) {
						used[i], found = true, true
						rc.Args, rc.KeyOrder = o.args, o.order
						break
					}
				}
				if !found {
					t.Errorf("the arguments of %s are written nowhere in the file", c.String())
				}
			}
			ref = append(ref, rc)
		}
	}
	return ref
}

// checkOwnReference reads a fixture and scores each conversation against
// the reference made of its own calls: 1 on tool_call_accuracy,
// tool_call_f1 and tool_calls.
func checkOwnReference(t *testing.T, path, format string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data))); err == nil {
		// A zip (Inspect's .eval): the text is its entries'.
		var all []byte
		for _, f := range zr.File {
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(rc)
			rc.Close()
			all = append(append(all, b...), '\n')
		}
		data = all
	}
	objs := sourceObjects(data)
	used := map[int]bool{}
	src, err := Open(path, Options{Format: format})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	graders := map[string]agenteval.Grader{}
	for _, name := range []string{"tool_call_accuracy", "tool_call_f1", "tool_calls"} {
		g, err := grade.New(grade.Spec{Type: name})
		if err != nil {
			t.Fatal(err)
		}
		graders[name] = g
	}
	rows := 0
	for {
		row, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if row.Sample == nil {
			continue
		}
		rows++
		conv := row.Sample.UserInput
		ref := ownReference(t, objs, used, conv)
		names := []string{"tool_call_accuracy", "tool_call_f1", "tool_calls"}
		for _, c := range ref {
			if c.Args == nil && c.RawArgs != "" {
				// Arguments that did not parse fail every check of them,
				// by design: only the name-level metrics apply.
				names = names[:2]
			}
		}
		for _, name := range names {
			s, err := graders[name].Grade(context.Background(), &agenteval.GradeInput{Transcript: conv, Output: conv, ReferenceToolCalls: ref})
			if err != nil {
				t.Errorf("%s row %d: %s: %v", path, row.N, name, err)
				continue
			}
			if s.Score != 1 {
				t.Errorf("%s row %d (%s): %s = %v, want 1: %s", path, row.N, row.Sample.ID, name, s.Score, s.Reason)
			}
		}
	}
	if rows == 0 {
		t.Errorf("%s: no conversation read", path)
	}
}

// fFixtures are the fixtures of the session-log and message-list formats,
// with the format to force ("" detects it).
var fFixtures = []struct{ file, format string }{
	{"langchain_messages.json", ""},
	{"langgraph_state.jsonl", ""},
	{"inspect_log.json", ""},
	{"atif.json", ""},
	{"claude_session.jsonl", ""},
	{"codex_rollout.jsonl", ""},
	{"copilot_events.jsonl", ""},
	{"claude_code_2.0.37_session_events.jsonl", ""},
	{"claude_code_2.0.37_subagent.jsonl", ""},
	{"claude_code_2.0.37_damaged.jsonl", ""},
	{"codex_0.58.0_compaction_damaged.jsonl", ""},
	{"copilot_0.0.365_damaged.jsonl", ""},
	{"inspect_0.3.140.eval", ""},
	{"inspect_0.3.140_unfinished.eval", ""},
	{"gemini_cli_0.9_session.json", ""},
	{"gemini_cli_0.17_session_parts.json", ""},
	{"langsmith_0.4_runs.jsonl", ""},
	{"langsmith_0.4_batches.jsonl", ""},
	{"langsmith_0.4_batch.json", ""},
}

// fNewGolden are the fixtures whose golden files this file checks (the
// older ones are in TestGolden).
var fNewGolden = []string{
	"claude_code_2.0.37_session_events.jsonl",
	"claude_code_2.0.37_subagent.jsonl",
	"claude_code_2.0.37_damaged.jsonl",
	"codex_0.58.0_compaction_damaged.jsonl",
	"copilot_0.0.365_damaged.jsonl",
	"inspect_0.3.140.eval",
	"inspect_0.3.140_unfinished.eval",
	"gemini_cli_0.9_session.json",
	"gemini_cli_0.17_session_parts.json",
	"langsmith_0.4_runs.jsonl",
	"langsmith_0.4_batches.jsonl",
	"langsmith_0.4_batch.json",
}

func TestGoldenSessionLogs(t *testing.T) {
	for _, f := range fNewGolden {
		t.Run(f, func(t *testing.T) {
			checkGolden(t, f, "")
		})
	}
}

func TestOwnReferenceScoresOne(t *testing.T) {
	for _, f := range fFixtures {
		t.Run(f.file, func(t *testing.T) {
			checkOwnReference(t, filepath.Join("testdata", f.file), f.format)
		})
	}
}

// checkGolden compares the reading of a fixture with its golden file.
func checkGolden(t *testing.T, file, format string) {
	t.Helper()
	got := dump(t, filepath.Join("testdata", file), format)
	golden.Check(t, filepath.Join("testdata", "golden", file+".txt"), got)
}
