package dataset

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/golden"
	"github.com/google/go-cmp/cmp"
)

func TestReadMixedFile(t *testing.T) {
	rows, err := ReadAll("testdata/mixed.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	type summary struct {
		ID     string
		Errors []string
	}
	var got []summary
	for _, r := range rows {
		var errs []string
		for _, e := range r.Errors {
			errs = append(errs, e.Error())
		}
		got = append(got, summary{r.TestID(), errs})
	}
	want := []summary{
		{"ok-ragas", nil},
		{"row-2", []string{`testdata/mixed.jsonl:2:34: malformed JSON: unexpected end of JSON input; each row must be one complete JSON object`}},
		{"bad-type", []string{`testdata/mixed.jsonl:3:80: user_input[1].type: unknown message type "robot"; use human, ai or tool`}},
		{"tool-first", []string{`testdata/mixed.jsonl:5:73: user_input[1]: tool message has no assistant message before it; a tool result must answer an assistant's tool call`}},
		{"args-list", []string{`testdata/mixed.jsonl:6:139: user_input[1].tool_calls[0].args: arguments must be a JSON object, not a list`}},
		{"no-conv", []string{`testdata/mixed.jsonl:7:1: the row has no conversation; put its messages under "user_input" (Ragas) or "messages" (OpenAI)`}},
		{"7", nil},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	// The OpenAI row decodes into the same vocabulary as a Ragas row.
	s := rows[6].Sample
	wantConv := agenteval.Conversation{
		{Role: agenteval.RoleUser, Content: "weather?"},
		{Role: agenteval.RoleAssistant, ToolCalls: []agenteval.ToolCall{{ID: "c1", Name: "weather", Args: map[string]any{"city": "Paris"}}}},
		{Role: agenteval.RoleTool, Content: "sunny", ToolCallID: "c1"},
		{Role: agenteval.RoleAssistant, Content: "It is sunny."},
	}
	if diff := cmp.Diff(wantConv, s.UserInput); diff != "" {
		t.Errorf("OpenAI conversation (-want +got):\n%s", diff)
	}
	if rows[0].Sample.ReferenceToolCalls[0].Args["party"] != json.Number("2") {
		t.Errorf("numbers should decode as json.Number, got %T", rows[0].Sample.ReferenceToolCalls[0].Args["party"])
	}
}

func decodeOne(t *testing.T, line string) *Row {
	t.Helper()
	r := NewReader(strings.NewReader(line), "x.jsonl")
	row, err := r.Next()
	if err != nil {
		t.Fatalf("Next: %v", err)
	}
	return row
}

func TestBadInput(t *testing.T) {
	tests := []struct {
		name string
		line string
		want string // substring of the first error
	}{
		{"not an object", `"hello"`, "x.jsonl:1:1: a row must be a JSON object, not a string"},
		{"array file of numbers", `[1,2]`, "x.jsonl:1:2: a row must be a JSON object, not a number"},
		{"unknown role", `{"messages":[{"role":"robot","content":"x"}]}`, `x.jsonl:1:22: messages[0].role: unknown role "robot"; use user, assistant, tool or system`},
		{"no type or role", `{"user_input":[{"content":"x"}]}`, `x.jsonl:1:16: user_input[0]: message has no type or role`},
		{"tool after plain ai", `{"user_input":[{"type":"human","content":"a"},{"type":"ai","content":"b"},{"type":"tool","content":"c"}]}`, "user_input[2]: tool message follows an assistant message that made no tool calls"},
		{"tool after human", `{"user_input":[{"type":"ai","content":"","tool_calls":[{"name":"f","args":{}}]},{"type":"human","content":"a"},{"type":"tool","content":"c"}]}`, "tool message must follow an assistant message with tool calls or another tool message, not a user message"},
		{"reference args string not object", `{"messages":[{"role":"user","content":"a"}],"reference_tool_calls":[{"function":{"name":"f","arguments":"[1]"}}]}`, "reference_tool_calls[0].function.arguments: arguments string is JSON list, not an object"},
		{"trailing brace", `{"user_input":[{"type":"human","content":"a"}]}}`, "x.jsonl:1:48: malformed JSON: unexpected text after the row's closing brace"},
		{"args number", `{"user_input":[{"type":"ai","tool_calls":[{"name":"f","args":3}]}]}`, "arguments must be a JSON object, not a number"},
		{"missing user_input", `{"id":"a"}`, "the row has no conversation"},
		{"both conversations", `{"user_input":[],"messages":[]}`, "has both user_input and messages"},
		{"empty conversation", `{"user_input":[]}`, "the conversation is empty"},
		{"user_input not a list", `{"user_input":"hello"}`, "user_input: must be a list of messages, not a string"},
		{"typo in field", `{"user_input":[{"type":"human","content":"a"}],"refrence":"x"}`, `refrence: unknown field; did you mean "reference"?`},
		{"tool call without name", `{"user_input":[{"type":"ai","tool_calls":[{"args":{}}]}]}`, "tool call has no name"},
		{"bad tool_call_id", `{"messages":[{"role":"assistant","tool_calls":[{"id":"a","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"b","content":"x"}]}`, `messages[1].tool_call_id: "b" matches no tool call of message 0 (its call IDs: a)`},
		{"reference args bad json", `{"user_input":[{"type":"human","content":"a"}],"reference_tool_calls":[{"name":"f","arguments":"{oops"}]}`, "arguments string is not valid JSON"},
		{"type and role disagree", `{"messages":[{"type":"human","role":"assistant","content":"x"}]}`, `role "assistant" disagrees with type "user"`},
		{"rubrics not strings", `{"user_input":[{"type":"human","content":"a"}],"rubrics":{"a":1}}`, "rubrics.a: must be a string, not a number"},
		{"bad id", `{"id":[1],"user_input":[{"type":"human","content":"a"}]}`, "id must be a string or a number, not a list"},
		{"reference call with output", `{"messages":[{"role":"user","content":"a"}],"reference_tool_calls":[{"name":"f","args":{},"output":"x"}]}`, "x.jsonl:1:68: reference_tool_calls: a reference call has no output; the conversation holds what tools returned"},
		{"gemini role typo", `{"messages":[{"role":"modle","content":"a"}]}`, `x.jsonl:1:22: messages[0].role: unknown role "modle"; use user, assistant, tool or system`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			row := decodeOne(t, tt.line)
			if len(row.Errors) == 0 {
				t.Fatalf("no error, want %q", tt.want)
			}
			if got := row.Errors[0].Error(); !strings.Contains(got, tt.want) {
				t.Errorf("error = %q, want it to contain %q", got, tt.want)
			}
		})
	}
}

func TestAllErrorsOfARowAreReported(t *testing.T) {
	row := decodeOne(t, `{"user_input":[{"type":"robot"},{"type":"human","content":"a"},{"type":"tool","content":"x"}],"rubrics":5}`)
	if len(row.Errors) != 2 {
		t.Fatalf("got %d errors, want 2 (the role and the rubrics; structure is not checked when a message is broken): %v", len(row.Errors), row.Err())
	}
	if !strings.Contains(row.Errors[0].Error(), "robot") || !strings.Contains(row.Errors[1].Error(), "rubrics") {
		t.Errorf("errors out of order: %v", row.Err())
	}
	row = decodeOne(t, `{"user_input":[{"type":"tool","content":"a"},{"type":"human","content":"a"},{"type":"tool","content":"x"}]}`)
	if len(row.Errors) != 2 {
		t.Fatalf("got %d errors, want 2: %v", len(row.Errors), row.Err())
	}
}

func TestUnknownFieldPointsAtKey(t *testing.T) {
	row := decodeOne(t, `{"user_input": [{"type": "human", "content": "a"}], "idd": 2}`)
	if len(row.Errors) != 1 || row.Errors[0].Error() != `x.jsonl:1:53: idd: unknown field; did you mean "id"?` {
		t.Errorf("errors = %v", row.Err())
	}
}

func TestNonObjectArgumentsKeptRaw(t *testing.T) {
	row := decodeOne(t, `{"messages":[{"role":"user","content":"a"},{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":"[1, 2]"}}]}]}`)
	if len(row.Errors) != 0 || len(row.Warnings) != 1 || !strings.Contains(row.Warnings[0].Msg, "arguments are JSON list, not an object; kept as raw text") {
		t.Fatalf("errors %v, warnings %v", row.Err(), row.Warnings)
	}
	if tc := row.Sample.UserInput[1].ToolCalls[0]; tc.Args != nil || tc.RawArgs != "[1, 2]" {
		t.Errorf("call = %+v", tc)
	}
}

func TestRawArgsRoundTrip(t *testing.T) {
	row := decodeOne(t, `{"messages":[{"role":"user","content":"a"},{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":"{\"a\": 1"}}]}]}`)
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.Write(row.Sample)
	w.Flush()
	if !strings.Contains(buf.String(), `"args":{},"raw_args":"{\"a\": 1"`) {
		t.Fatalf("export = %s", buf.String())
	}
	back := decodeOne(t, buf.String())
	if len(back.Errors) != 0 || len(back.Warnings) != 1 {
		t.Fatalf("read back: errors %v, warnings %v", back.Err(), back.Warnings)
	}
	if tc := back.Sample.UserInput[1].ToolCalls[0]; tc.Args != nil || tc.RawArgs != `{"a": 1` {
		t.Errorf("raw arguments lost in the round trip: %+v", tc)
	}
}

func TestMalformedArgumentsKeptRaw(t *testing.T) {
	row := decodeOne(t, `{"messages":[{"role":"user","content":"a"},{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":"{\"a\": 1"}}]}]}`)
	if len(row.Errors) != 0 {
		t.Fatalf("unexpected errors: %v", row.Err())
	}
	if len(row.Warnings) != 1 || !strings.Contains(row.Warnings[0].Msg, "kept as raw text") {
		t.Fatalf("want one raw-args warning, got %v", row.Warnings)
	}
	tc := row.Sample.UserInput[1].ToolCalls[0]
	if tc.Args != nil || tc.RawArgs != `{"a": 1` {
		t.Errorf("call = %+v, want nil Args and the raw text", tc)
	}
}

func TestJSONArrayFile(t *testing.T) {
	doc := "\ufeff[\n  {\"id\": \"a\", \"user_input\": [{\"type\": \"human\", \"content\": \"x\"}]},\n  {\"id\": \"b\",\n   \"user_input\": [{\"type\": \"robot\", \"content\": \"x\"}]}\n]\n"
	r := NewReader(strings.NewReader(doc), "d.json")
	var ids, errs []string
	for {
		row, err := r.Next()
		if err != nil {
			break
		}
		ids = append(ids, row.TestID())
		for _, e := range row.Errors {
			errs = append(errs, e.Error())
		}
	}
	if diff := cmp.Diff([]string{"a", "b"}, ids); diff != "" {
		t.Errorf("ids (-want +got):\n%s", diff)
	}
	want := []string{`d.json:4:28: user_input[0].type: unknown message type "robot"; use human, ai or tool`}
	if diff := cmp.Diff(want, errs); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

func TestArrayPunctuation(t *testing.T) {
	good := `{"user_input":[{"type":"human","content":"x"}]}`
	tests := []struct {
		doc  string
		rows int
		want string
	}{
		{"[" + good + "]\n" + good + "\n", 1, "d.json:2:1: unexpected text after the closing ']'"},
		{"[" + good + " " + good + "]", 1, "d.json:1:50: expected ',' or ']' after the previous row"},
		{"[," + good + "]", 0, "d.json:1:2: unexpected ',' where a row should be"},
		{"[" + good + ",,]", 1, "d.json:1:50: unexpected ',' where a row should be"},
		{"[" + good + ",]", 1, "d.json:1:50: unexpected ']' after a ','"},
		{"[]", 0, ""},
		{"[" + good + "," + good + "]  \n", 2, ""},
	}
	for _, tt := range tests {
		r := NewReader(strings.NewReader(tt.doc), "d.json")
		n := 0
		var err error
		for {
			var row *Row
			row, err = r.Next()
			if err != nil {
				break
			}
			n++
			if len(row.Errors) > 0 {
				t.Errorf("%q: row errors %v", tt.doc, row.Err())
			}
		}
		if n != tt.rows {
			t.Errorf("%q: %d rows, want %d", tt.doc, n, tt.rows)
		}
		if tt.want == "" {
			if err != io.EOF {
				t.Errorf("%q: err = %v, want EOF", tt.doc, err)
			}
		} else if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%q: err = %v, want %q", tt.doc, err, tt.want)
		}
	}
}

func TestUnclosedArray(t *testing.T) {
	r := NewReader(strings.NewReader(`[{"user_input":[{"type":"human","content":"x"}]},`), "d.json")
	if _, err := r.Next(); err != nil {
		t.Fatalf("first row: %v", err)
	}
	_, err := r.Next()
	if err == nil || !strings.Contains(err.Error(), "not closed") {
		t.Fatalf("err = %v, want an unclosed-array error", err)
	}
}

func TestRoundTripRagas(t *testing.T) {
	rows, err := ReadAll("testdata/mixed.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := NewWriter(&buf)
	var valid []*agenteval.Sample
	for _, r := range rows {
		if len(r.Errors) == 0 {
			valid = append(valid, r.Sample)
			if err := w.Write(r.Sample); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"type":"ai"`) || strings.Contains(buf.String(), `"role"`) {
		t.Errorf("output is not Ragas-typed:\n%s", buf.String())
	}
	back := NewReader(&buf, "back.jsonl")
	for i := 0; ; i++ {
		row, err := back.Next()
		if err != nil {
			if i != len(valid) {
				t.Fatalf("read back %d rows, want %d (%v)", i, len(valid), err)
			}
			break
		}
		if len(row.Errors) > 0 {
			t.Fatalf("row %d does not read back: %v", i, row.Err())
		}
		if diff := cmp.Diff(valid[i], row.Sample); diff != "" {
			t.Errorf("row %d changed in the round trip (-want +got):\n%s", i, diff)
		}
	}
}

func TestCSVExport(t *testing.T) {
	rows, err := ReadAll("testdata/mixed.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := NewCSVWriter(&buf)
	if err := w.Write(rows[0].Sample); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "export.csv.golden"), buf.Bytes())
}

func TestBlankLinesAndCRLF(t *testing.T) {
	doc := "\r\n{\"user_input\":[{\"type\":\"human\",\"content\":\"a\"}]}\r\n\r\n  {\"user_input\":[{\"type\":\"hum\",\"content\":\"a\"}]}\r\n"
	r := NewReader(strings.NewReader(doc), "c.jsonl")
	first, _ := r.Next()
	second, _ := r.Next()
	if first.Line != 2 || first.N != 1 || len(first.Errors) != 0 {
		t.Errorf("first row at line %d (n=%d), errors %v", first.Line, first.N, first.Err())
	}
	if second.Line != 4 || second.N != 2 || second.TestID() != "row-2" {
		t.Errorf("second row at line %d, id %s", second.Line, second.TestID())
	}
	if len(second.Errors) != 1 || !strings.HasPrefix(second.Errors[0].Error(), "c.jsonl:4:26:") {
		t.Errorf("second row errors: %v", second.Err())
	}
}

// TestArgumentKeyOrderKept: decoded objects are maps, so the written order
// of nested objects' keys is kept beside them (Ragas's str() depends on
// it), for Ragas object arguments, OpenAI string arguments and agents'
// replies alike.
func TestArgumentKeyOrderKept(t *testing.T) {
	row := `{"user_input": [{"type": "human", "content": "hi"},
  {"type": "ai", "content": "", "tool_calls": [{"name": "f", "args": {"q": {"b": 1, "a": [{"y": 1, "x": 2}]}, "r": {"one": 1}}}]}],
 "reference_tool_calls": [{"name": "f", "args": {"q": {"a": [{"x": 2, "y": 1}], "b": 1}}}]}`
	s, probs := DecodeSample([]byte(row))
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	want := map[string][]string{"/q": {"b", "a"}, "/q/a/0": {"y", "x"}}
	if got := s.UserInput[1].ToolCalls[0].KeyOrder; !reflect.DeepEqual(got, want) {
		t.Errorf("call key order = %v, want %v", got, want)
	}
	if got := s.ReferenceToolCalls[0].KeyOrder; !reflect.DeepEqual(got, map[string][]string{"/q": {"a", "b"}, "/q/a/0": {"x", "y"}}) {
		t.Errorf("reference key order = %v", got)
	}
	msgs, err := DecodeMessages([]byte(`[{"role": "assistant", "tool_calls": [{"id": "1", "type": "function", "function": {"name": "f", "arguments": "{\"q\": {\"z\": 1, \"a\": 2}}"}}]}]`))
	if err != nil {
		t.Fatal(err)
	}
	if got := msgs[0].ToolCalls[0].KeyOrder; !reflect.DeepEqual(got, map[string][]string{"/q": {"z", "a"}}) {
		t.Errorf("OpenAI string arguments: key order = %v", got)
	}
}

// TestOversizeRows: a row over MaxRowBytes is an error for that row, read
// past without being held; the rows around it are read as usual.
func TestOversizeRows(t *testing.T) {
	good := `{"user_input": [{"type": "human", "content": "hi"}]}`
	big := `{"user_input": [{"type": "human", "content": "` + strings.Repeat("x", 5000) + `"}]}`
	for _, form := range []struct{ name, text string }{
		{"jsonl", good + "\n" + big + "\n" + good + "\n"},
		{"array", "[" + good + ",\n" + big + ",\n" + good + "]"},
	} {
		t.Run(form.name, func(t *testing.T) {
			r := NewReader(strings.NewReader(form.text), "big."+form.name)
			r.MaxRowBytes = 1000
			var rows []*Row
			for {
				row, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				rows = append(rows, row)
			}
			if len(rows) != 3 || rows[0].Err() != nil || rows[2].Err() != nil || rows[2].N != 3 {
				t.Fatalf("rows = %+v", rows)
			}
			err := rows[1].Err()
			if err == nil || !strings.Contains(err.Error(), "big."+form.name+":2:1: the row is 4.9 KB, over the 1000 bytes limit for one row; raise it with --max-row-size") {
				t.Errorf("oversize row: %v", err)
			}
		})
	}
}

// TestRowLimitExcludesTerminator: the row limit counts a row's content,
// not the "\n" or "\r\n" that ends its line, so a row of exactly
// MaxRowBytes is read whatever ends it, and one byte more is over.
func TestRowLimitExcludesTerminator(t *testing.T) {
	row := `{"user_input": [{"type": "human", "content": "hi"}]}`
	n := int64(len(row))
	// A row whose "\r" fills the reader's 64 KB buffer, so its "\n" comes
	// in the next read.
	edge := `{"user_input": [{"type": "human", "content": "` + strings.Repeat("x", 64<<10-1-len(row)+2) + `"}]}`
	for _, tc := range []struct {
		name  string
		text  string
		limit int64
		over  bool
	}{
		{"crlf split across reads", edge + "\r\n", int64(len(edge)), false},
		{"lf at limit", row + "\n", n, false},
		{"crlf at limit", row + "\r\n", n, false},
		{"crlf then row at limit", row + "\r\n" + row + "\r\n", n, false},
		{"eof at limit", row, n, false},
		{"lf over limit", row + "\n", n - 1, true},
		{"crlf over limit", row + "\r\n", n - 1, true},
		{"crlf two over limit", row + "\r\n", n - 2, true},
		{"eof over limit", row, n - 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReader(strings.NewReader(tc.text), "rows.jsonl")
			r.MaxRowBytes = tc.limit
			rows := 0
			for {
				got, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				rows++
				err = got.Err()
				if tc.over {
					want := fmt.Sprintf("rows.jsonl:1:1: the row is %d bytes, over the %d bytes limit", n, tc.limit)
					if err == nil || !strings.Contains(err.Error(), want) {
						t.Errorf("row %d: error %v, want %q", rows, err, want)
					}
				} else if err != nil {
					t.Errorf("row %d: %v", rows, err)
				}
			}
			if rows == 0 {
				t.Error("no rows read")
			}
		})
	}
}

// TestOversizeRowCostsNoMemory: a 64 MB row over a 1 MB limit is skipped
// with memory bounded by the limit, not by the row.
func TestOversizeRowCostsNoMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("64 MB of input")
	}
	big := io.MultiReader(strings.NewReader(`{"user_input": [{"type": "human", "content": "`), &repeat{b: 'x', n: 64 << 20}, strings.NewReader("\"}]}\n"))
	r := NewReader(big, "huge.jsonl")
	r.MaxRowBytes = 1 << 20
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	row, err := r.Next()
	runtime.ReadMemStats(&after)
	if err != nil || row.Err() == nil {
		t.Fatalf("row %v, err %v", row, err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 { // bounded by the limit, not the row
		t.Errorf("%d MB allocated to skip the row", alloc>>20)
	}
}

// repeat is an io.Reader of n copies of b.
type repeat struct {
	b byte
	n int
}

func (r *repeat) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	n := min(len(p), r.n)
	for i := range n {
		p[i] = r.b
	}
	r.n -= n
	return n, nil
}

// TestInvalidUTF8 is reported at its place, not replaced by U+FFFD.
func TestInvalidUTF8(t *testing.T) {
	data := "{\"id\": \"ok\", \"user_input\": [{\"type\": \"human\", \"content\": \"hi\"}]}\n{\"id\": \"caf\xe9\", \"user_input\": [{\"type\": \"human\", \"content\": \"hi\"}]}\n"
	r := NewReader(strings.NewReader(data), "latin1.jsonl")
	r.Next()
	row, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if e := row.Err(); e == nil || !strings.Contains(e.Error(), "latin1.jsonl:2:12: byte 0xE9 is not valid UTF-8; save the file as UTF-8") {
		t.Errorf("err = %v", e)
	}
	if row.Sample != nil {
		t.Errorf("an invalid row was decoded: %+v", row.Sample)
	}
}
