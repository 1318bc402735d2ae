package target

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/redact"
	"github.com/agenteval/agenteval/suite"
)

// aguiSeen is one request an AG-UI test server got.
type aguiSeen struct {
	Header http.Header
	Body   []byte
	Input  struct {
		ThreadID string            `json:"threadId"`
		RunID    string            `json:"runId"`
		Messages []json.RawMessage `json:"messages"`
		Tools    []aguiTool        `json:"tools"`
	}
}

// aguiTestServer is an AG-UI endpoint on 127.0.0.1 whose runs play the
// events events returns for each request, in SSE as the protocol's
// EventEncoder writes them ("data: JSON\n\n").
type aguiTestServer struct {
	*httptest.Server
	mu   sync.Mutex
	seen []aguiSeen
}

func newAGUITestServer(t *testing.T, events func(n int, in *aguiSeen) []string) *aguiTestServer {
	t.Helper()
	s := &aguiTestServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in aguiSeen
		in.Header = r.Header.Clone()
		in.Body, _ = io.ReadAll(r.Body)
		if err := json.Unmarshal(in.Body, &in.Input); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		s.mu.Lock()
		s.seen = append(s.seen, in)
		n := len(s.seen)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range events(n, &in) {
			fmt.Fprintf(w, "data: %s\n\n", e)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *aguiTestServer) requests() []aguiSeen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]aguiSeen(nil), s.seen...)
}

func aguiEvents(events ...string) []string {
	return append(append([]string{`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`}, events...), `{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`)
}

func aguiJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestAGUIRequest pins the RunAgentInput sent for a history with every
// kind of message, and the headers.
func TestAGUIRequest(t *testing.T) {
	srv := newAGUITestServer(t, func(int, *aguiSeen) []string {
		return aguiEvents(`{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}`,
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"ok"}`, `{"type":"TEXT_MESSAGE_END","messageId":"m1"}`)
	})
	a := NewAGUI(suite.ProtocolTarget{URL: srv.URL + "/agent", Headers: map[string]string{"X-Team": "evals"}}, 0)
	a.newID = func() string { return "run-1" }
	history := agenteval.Conversation{
		{Role: agenteval.RoleSystem, Content: "You book tables."},
		{Role: agenteval.RoleUser, Content: "A table in Paris, please."},
		{Role: agenteval.RoleAssistant, Content: "Searching.", ToolCalls: []agenteval.ToolCall{{ID: "c1", Name: "search", Args: map[string]any{"city": "Paris", "party": 2}}}},
		{Role: agenteval.RoleTool, ToolCallID: "c1", Name: "search", Content: `["Chez Nous"]`},
		// Calls and results from an eval file, with no ids.
		{Role: agenteval.RoleAssistant, ToolCalls: []agenteval.ToolCall{{Name: "hours", Args: map[string]any{}}}},
		{Role: agenteval.RoleTool, Name: "hours", Content: "18:00-23:00"},
		{Role: agenteval.RoleAssistant, Content: "Chez Nous is open."},
		{Role: agenteval.RoleUser, Content: "What does it look like?", Parts: []agenteval.Part{{Type: "image", URL: "data:image/png;base64,iVBORw0KGgo="}}},
	}
	_, err := a.Respond(context.Background(), &agenteval.AgentRequest{
		ConversationID: "run1/copilot/book#1", Turn: 2, Messages: history,
		Tools:       []agenteval.ToolSpec{{Name: "book_table", Description: "Book a table.", Parameters: map[string]any{"type": "object", "properties": map[string]any{"time": map[string]any{"type": "string"}}}}, {Name: "ping"}},
		TraceParent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
	})
	if err != nil {
		t.Fatal(err)
	}
	seen := srv.requests()[0]
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, seen.Body, "", "  "); err != nil {
		t.Fatal(err)
	}
	golden(t, filepath.Join("testdata", "agui", "request.json"), pretty.String()+"\n")
	for k, want := range map[string]string{"Accept": "text/event-stream", "Content-Type": "application/json", "X-Team": "evals",
		"Traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"} {
		if got := seen.Header.Get(k); got != want {
			t.Errorf("header %s = %q, want %q", k, got, want)
		}
	}
}

// golden compares got with a file; UPDATE_GOLDEN=1 rewrites it.
func golden(t *testing.T, path, got string) {
	t.Helper()
	if os.Getenv("UPDATE_GOLDEN") != "" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (UPDATE_GOLDEN=1 writes it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (UPDATE_GOLDEN=1 rewrites it):\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

// TestAGUIEvents reads every kind of event stream into a reply.
func TestAGUIEvents(t *testing.T) {
	text := func(id, s string) []string {
		return []string{`{"type":"TEXT_MESSAGE_START","messageId":"` + id + `","role":"assistant"}`,
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"` + id + `","delta":` + aguiJSON(t, s) + `}`,
			`{"type":"TEXT_MESSAGE_END","messageId":"` + id + `"}`}
	}
	call := func(id, name, parent string, args ...string) []string {
		p := ""
		if parent != "" {
			p = `,"parentMessageId":"` + parent + `"`
		}
		out := []string{`{"type":"TOOL_CALL_START","toolCallId":"` + id + `","toolCallName":"` + name + `"` + p + `}`}
		for _, a := range args {
			out = append(out, `{"type":"TOOL_CALL_ARGS","toolCallId":"`+id+`","delta":`+aguiJSON(t, a)+`}`)
		}
		return append(out, `{"type":"TOOL_CALL_END","toolCallId":"`+id+`"}`)
	}
	result := func(msgID, callID, content string) string {
		return `{"type":"TOOL_CALL_RESULT","messageId":"` + msgID + `","toolCallId":"` + callID + `","role":"tool","content":` + aguiJSON(t, content) + `}`
	}
	cat := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	one := func(s ...string) []string { return s }
	// The history each run is sent: its user message has the id
	// aguiMessages gives it.
	history := agenteval.Conversation{{Role: agenteval.RoleUser, Content: "hi"}}
	userID := aguiNameUUID(aguiThreadID("conv") + "\x00" + aguiFingerprint(history[0]) + "#1")
	snapshotOf := func(msgs ...string) string {
		return `{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"` + userID + `","role":"user","content":"hi"}` + strings.Join(append([]string{""}, msgs...), ",") + `]}`
	}
	cases := []struct {
		name   string
		stream []string // events between RUN_STARTED and RUN_FINISHED
		raw    string   // the body as is, instead of stream
		want   string   // the reply's messages, as JSON
		usage  string
		err    string
	}{
		{name: "text in deltas", stream: one(`{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}`,
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Hel"}`, `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"lo"}`,
			`{"type":"TEXT_MESSAGE_END","messageId":"m1"}`),
			want: `[{"role":"assistant","content":"Hello"}]`},
		{name: "two text messages", stream: cat(text("m1", "One."), text("m2", "Two.")),
			want: `[{"role":"assistant","content":"One."},{"role":"assistant","content":"Two."}]`},
		{name: "text chunks", stream: one(`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","role":"assistant","delta":"Hel"}`,
			`{"type":"TEXT_MESSAGE_CHUNK","delta":"lo"}`, `{"type":"TEXT_MESSAGE_CHUNK","messageId":"m2","delta":"Bye"}`),
			want: `[{"role":"assistant","content":"Hello"},{"role":"assistant","content":"Bye"}]`},
		{name: "a chunk with no message to continue", stream: one(`{"type":"TEXT_MESSAGE_CHUNK","delta":"lo"}`),
			err: "the first TEXT_MESSAGE_CHUNK of a message has no messageId"},
		{name: "frontend call under a text message", stream: cat(text("m1", "Booking."), call("c1", "book_table", "m1", `{"time":`, `"20:00"}`)),
			want: `[{"role":"assistant","content":"Booking.","tool_calls":[{"id":"c1","name":"book_table","args":{"time":"20:00"}}]}]`},
		{name: "tool call chunks", stream: one(`{"type":"TOOL_CALL_CHUNK","toolCallId":"c1","toolCallName":"book_table","parentMessageId":"m9","delta":"{\"time\":"}`,
			`{"type":"TOOL_CALL_CHUNK","delta":"\"20:00\"}"}`, `{"type":"TOOL_CALL_CHUNK","toolCallId":"c2","toolCallName":"ping","parentMessageId":"m9"}`),
			want: `[{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"book_table","args":{"time":"20:00"}},{"id":"c2","name":"ping","args":{}}]}]`},
		{name: "backend tool and its result", stream: cat(call("c1", "search", "", `{"city":"Paris"}`), one(result("r1", "c1", `["Roma"]`)), text("m2", "Roma it is.")),
			want: `[{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"search","args":{"city":"Paris"}}]},{"role":"tool","content":"[\"Roma\"]","tool_call_id":"c1","name":"search"},{"role":"assistant","content":"Roma it is."}]`},
		{name: "a result after the text that followed the call", stream: cat(call("c1", "search", "m1", `{}`), text("m2", "Found."), one(result("r1", "c1", "ok"))),
			want: `[{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"search","args":{}}]},{"role":"tool","content":"ok","tool_call_id":"c1","name":"search"},{"role":"assistant","content":"Found."}]`},
		{name: "an unanswered call beside an answered one goes last", stream: cat(call("c1", "search", "m1", `{}`), call("c2", "book_table", "m1", `{"time":"20:00"}`), one(result("r1", "c1", "ok"))),
			want: `[{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"search","args":{}}]},{"role":"tool","content":"ok","tool_call_id":"c1","name":"search"},{"role":"assistant","content":"","tool_calls":[{"id":"c2","name":"book_table","args":{"time":"20:00"}}]}]`},
		{name: "an unanswered call before text goes last", stream: cat(call("c1", "book_table", "", `{}`), text("m2", "Asked the app to book.")),
			want: `[{"role":"assistant","content":"Asked the app to book."},{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"book_table","args":{}}]}]`},
		{name: "arguments that are not JSON", stream: call("c1", "search", "", `{"city":`),
			want: `[{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"search","args":null,"raw_args":"{\"city\":"}]}]`},
		{name: "a snapshot repeats what was streamed", stream: cat(call("c1", "search", "m1", `{"q":"x"}`), one(result("r1", "c1", "ok")), text("m2", "Done."),
			one(snapshotOf(`{"id":"m1","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"search","arguments":"{\"q\":\"x\"}"}}]}`,
				`{"id":"r1","role":"tool","toolCallId":"c1","content":"ok"}`, `{"id":"m2","role":"assistant","content":"Done."}`))),
			want: `[{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"search","args":{"q":"x"}}]},{"role":"tool","content":"ok","tool_call_id":"c1","name":"search"},{"role":"assistant","content":"Done."}]`},
		{name: "a snapshot under other ids replaces what was streamed", stream: cat(text("tmp-1", "Done."),
			one(`{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"lc-1","role":"user","content":"hi"},{"id":"lc-2","role":"assistant","content":"Done."}]}`)),
			want: `[{"role":"assistant","content":"Done."}]`},
		{name: "events after a snapshot add to it", stream: cat(text("m1", "One."), one(snapshotOf(`{"id":"m1","role":"assistant","content":"One."}`)), text("m2", "Two.")),
			want: `[{"role":"assistant","content":"One."},{"role":"assistant","content":"Two."}]`},
		{name: "a snapshot alone", stream: one(snapshotOf(`{"id":"m1","role":"assistant","content":[{"type":"text","text":"From "},{"type":"text","text":"parts."}]}`)),
			want: `[{"role":"assistant","content":"From parts."}]`},
		{name: "reasoning", stream: cat(one(`{"type":"REASONING_START","messageId":"r0"}`, `{"type":"REASONING_MESSAGE_START","messageId":"r0","role":"reasoning"}`,
			`{"type":"REASONING_MESSAGE_CONTENT","messageId":"r0","delta":"Paris, so French."}`, `{"type":"REASONING_MESSAGE_END","messageId":"r0"}`, `{"type":"REASONING_END","messageId":"r0"}`), text("m1", "Bonjour.")),
			want: `[{"role":"assistant","content":"Bonjour.","metadata":{"reasoning":"Paris, so French."}}]`},
		{name: "thinking, the older name", stream: cat(one(`{"type":"THINKING_START"}`, `{"type":"THINKING_TEXT_MESSAGE_START"}`, `{"type":"THINKING_TEXT_MESSAGE_CONTENT","delta":"Hmm."}`,
			`{"type":"THINKING_TEXT_MESSAGE_END"}`, `{"type":"THINKING_END"}`), text("m1", "Yes.")),
			want: `[{"role":"assistant","content":"Yes.","metadata":{"reasoning":"Hmm."}}]`},
		{name: "state, steps, custom and raw events are read and left aside", stream: cat(one(`{"type":"STEP_STARTED","stepName":"plan"}`,
			`{"type":"STATE_SNAPSHOT","snapshot":{"n":1}}`, `{"type":"STATE_DELTA","delta":[{"op":"replace","path":"/n","value":2}]}`,
			`{"type":"CUSTOM","name":"x","value":1}`, `{"type":"RAW","event":{}}`, `{"type":"ACTIVITY_SNAPSHOT","messageId":"a1","activityType":"plan","content":{}}`,
			`{"type":"STEP_FINISHED","stepName":"plan"}`), text("m1", "Done.")),
			want: `[{"role":"assistant","content":"Done."}]`},
		{name: "unknown events are counted", stream: cat(one(`{"type":"FUTURE_THING"}`, `{"type":"FUTURE_THING"}`), text("m1", "Done.")),
			want: `[{"role":"assistant","content":"Done.","metadata":{"agui_unknown_events":{"FUTURE_THING":2}}}]`},
		{name: "usage", raw: "data: " + `{"type":"RUN_STARTED","threadId":"t","runId":"r"}` + "\n\n" + "data: " + strings.Join(text("m1", "Hi."), "\n\ndata: ") +
			"\n\ndata: " + `{"type":"RUN_FINISHED","threadId":"t","runId":"r","usage":[{"model":"a","inputTokens":10,"outputTokens":3},{"model":"b","inputTokens":5,"outputTokens":1}]}` + "\n\n",
			want: `[{"role":"assistant","content":"Hi."}]`, usage: `{"calls":1,"input_tokens":15,"output_tokens":4}`},
		{name: "CRLF, comments, event names and data over two lines", raw: ": hello\r\nevent: message\r\ndata: {\"type\":\"RUN_STARTED\",\r\ndata: \"threadId\":\"t\",\"runId\":\"r\"}\r\n\r\n" +
			"data:{\"type\":\"TEXT_MESSAGE_CHUNK\",\"messageId\":\"m1\",\"delta\":\"Hi\"}\r\n\r\nretry: 10\r\n\r\ndata: {\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r\"}\r\n\r\n",
			want: `[{"role":"assistant","content":"Hi"}]`},
		{name: "the last event with no blank line after it", raw: "data: " + strings.Join(aguiEvents(text("m1", "Hi.")...), "\n\ndata: ") + "\n",
			want: `[{"role":"assistant","content":"Hi."}]`},
		{name: "RUN_ERROR", raw: "data: " + `{"type":"RUN_STARTED","threadId":"t","runId":"r"}` + "\n\ndata: " + `{"type":"RUN_ERROR","message":"model overloaded","code":"rate_limit"}` + "\n\n",
			err: "the agent reported RUN_ERROR: model overloaded (code rate_limit)"},
		{name: "a stream that stops mid-run", raw: "data: " + `{"type":"RUN_STARTED","threadId":"t","runId":"r"}` + "\n\ndata: " + strings.Join(text("m1", "Hi."), "\n\ndata: ") + "\n\n",
			err: "the event stream ended before RUN_FINISHED or RUN_ERROR"},
		{name: "a stream cut mid-event", raw: "data: " + `{"type":"RUN_STARTED","threadId":"t","runId":"r"}` + "\n\ndata: {\"type\":\"TEXT_MES",
			err: "the event stream ended before RUN_FINISHED or RUN_ERROR"},
		{name: "an event that is not JSON", raw: "data: {oops\n\n", err: `event 1 is not JSON: "{oops"`},
		{name: "an event with no type", raw: "data: {\"x\":1}\n\n", err: `event 1 has no type`},
		{name: "an interrupt", stream: cat(text("m1", "May I?"), one(`{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"interrupt","interrupts":[{"id":"i1","reason":"approval","message":"Spend 40 EUR?"}]}}`)),
			err: "the run paused for a person's answer (an interrupt: approval: Spend 40 EUR?)"},
		{name: "a run with nothing to say", stream: one(`{"type":"STATE_SNAPSHOT","snapshot":{}}`), err: "the run finished without a message or a tool call"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
				if c.raw != "" {
					io.WriteString(w, c.raw)
					return
				}
				for _, e := range aguiEvents(c.stream...) {
					fmt.Fprintf(w, "data: %s\n\n", e)
				}
			}))
			defer srv.Close()
			a := NewAGUI(suite.ProtocolTarget{URL: srv.URL}, 5*time.Second)
			resp, err := a.Respond(context.Background(), &agenteval.AgentRequest{ConversationID: "conv", Turn: 1, Messages: history})
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want %q", err, c.err)
				}
				if !strings.Contains(err.Error(), srv.URL) {
					t.Errorf("the error does not name the URL: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := aguiJSON(t, resp.Messages); got != c.want {
				t.Errorf("messages:\n got %s\nwant %s", got, c.want)
			}
			if c.usage != "" {
				if got := aguiJSON(t, resp.Usage); got != c.usage {
					t.Errorf("usage = %s, want %s", got, c.usage)
				}
			}
		})
	}
}

// TestAGUIAnswers: what is not an event stream is an error that says what
// came instead, quoting the server.
func TestAGUIAnswers(t *testing.T) {
	cases := []struct {
		name, ctype, body string
		status            int
		err               string
	}{
		{"an error status with JSON", "application/json", `{"error":"unknown agent"}`, 404, `answered HTTP 404: {"error":"unknown agent"}`},
		{"JSON with 200", "application/json", `{"messages":[]}`, 200, "answered application/json, not an AG-UI event stream (text/event-stream)"},
		{"protobuf", "application/vnd.ag-ui.event+proto", "", 200, "answered application/vnd.ag-ui.event+proto, not an AG-UI event stream"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", c.ctype)
				w.WriteHeader(c.status)
				io.WriteString(w, c.body)
			}))
			defer srv.Close()
			a := NewAGUI(suite.ProtocolTarget{URL: srv.URL}, 5*time.Second)
			_, err := a.Respond(context.Background(), &agenteval.AgentRequest{Messages: agenteval.Conversation{{Role: agenteval.RoleUser, Content: "hi"}}})
			if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "agui target "+srv.URL) {
				t.Fatalf("err = %v, want %q", err, c.err)
			}
		})
	}
	t.Run("unreachable", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		url := srv.URL
		srv.Close()
		_, err := NewAGUI(suite.ProtocolTarget{URL: url}, time.Second).Respond(context.Background(), &agenteval.AgentRequest{})
		if err == nil || !strings.Contains(err.Error(), "agui target "+url+" is unreachable") {
			t.Fatalf("err = %v", err)
		}
	})
}

// TestAGUIBounds: a server that hangs, or streams without end, is
// stopped.
func TestAGUIBounds(t *testing.T) {
	t.Run("a run that never finishes", func(t *testing.T) {
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: %s\n\n", `{"type":"RUN_STARTED","threadId":"t","runId":"r"}`)
			w.(http.Flusher).Flush()
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}))
		defer srv.Close()
		defer close(release)
		t0 := time.Now()
		_, err := NewAGUI(suite.ProtocolTarget{URL: srv.URL}, 200*time.Millisecond).Respond(context.Background(), &agenteval.AgentRequest{})
		if err == nil || !strings.Contains(err.Error(), "the run did not finish within 200ms") {
			t.Fatalf("err = %v", err)
		}
		if d := time.Since(t0); d > 3*time.Second {
			t.Errorf("took %s", d)
		}
	})
	t.Run("an event over the bound", func(t *testing.T) {
		defer func(e int) { aguiMaxEventBytes = e }(aguiMaxEventBytes)
		aguiMaxEventBytes = 1 << 20
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: {\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m\",\"delta\":\"%s\"}\n\n", strings.Repeat("x", 2<<20))
		}))
		defer srv.Close()
		_, err := NewAGUI(suite.ProtocolTarget{URL: srv.URL}, 5*time.Second).Respond(context.Background(), &agenteval.AgentRequest{})
		if err == nil || !strings.Contains(err.Error(), "an event is over 1 MiB") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("a stream over the bound", func(t *testing.T) {
		defer func(e int) { aguiMaxRunBytes = e }(aguiMaxRunBytes)
		aguiMaxRunBytes = 1 << 20
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			for i := 0; i < 40000; i++ {
				if _, err := fmt.Fprintf(w, "data: {\"type\":\"STEP_STARTED\",\"stepName\":\"%d\"}\n\n", i); err != nil {
					return
				}
			}
		}))
		defer srv.Close()
		_, err := NewAGUI(suite.ProtocolTarget{URL: srv.URL}, 5*time.Second).Respond(context.Background(), &agenteval.AgentRequest{})
		if err == nil || !strings.Contains(err.Error(), "the event stream is over 1 MiB") {
			t.Fatalf("err = %v", err)
		}
	})
}

// TestAGUIFrontendTools: the suite's tools are offered to the agent; a
// run that ends on a call of one is answered by MockedTools with its mock
// result, and the next run, on the same thread, carries the call and the
// result under the agent's own ids; so does the next turn.
func TestAGUIFrontendTools(t *testing.T) {
	srv := newAGUITestServer(t, func(n int, in *aguiSeen) []string {
		var last struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		}
		json.Unmarshal(in.Input.Messages[len(in.Input.Messages)-1], &last)
		switch {
		case last.Role == "tool":
			return aguiEvents(`{"type":"TEXT_MESSAGE_START","messageId":"m3","role":"assistant"}`,
				`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m3","delta":"Booked: `+strings.ReplaceAll(last.Content, `"`, `\"`)+`"}`,
				`{"type":"TEXT_MESSAGE_END","messageId":"m3"}`)
		case len(in.Input.Tools) == 1 && last.Content == "Book it.":
			return aguiEvents(`{"type":"TEXT_MESSAGE_START","messageId":"m2","role":"assistant"}`,
				`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m2","delta":"Booking."}`, `{"type":"TEXT_MESSAGE_END","messageId":"m2"}`,
				`{"type":"TOOL_CALL_START","toolCallId":"call-7","toolCallName":"book_table","parentMessageId":"m2"}`,
				`{"type":"TOOL_CALL_ARGS","toolCallId":"call-7","delta":"{\"time\":\"20:00\"}"}`, `{"type":"TOOL_CALL_END","toolCallId":"call-7"}`)
		}
		return aguiEvents(`{"type":"TEXT_MESSAGE_START","messageId":"m`+fmt.Sprint(n+10)+`","role":"assistant"}`,
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m`+fmt.Sprint(n+10)+`","delta":"Anything else?"}`, `{"type":"TEXT_MESSAGE_END","messageId":"m`+fmt.Sprint(n+10)+`"}`)
	})
	tools := []suite.ToolMock{{Name: "book_table", Description: "Book a table.", Parameters: map[string]any{"type": "object"},
		Result: map[string]any{"confirmation": "ABC123"}}}
	spec := suite.TargetSpec{Name: "copilot", AGUI: &suite.ProtocolTarget{URL: srv.URL}}
	agent, err := Open(spec, &suite.Suite{Tools: tools}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	history := agenteval.Conversation{{Role: agenteval.RoleUser, Content: "Book it."}}
	resp, err := agent.Respond(context.Background(), &agenteval.AgentRequest{ConversationID: "c1", Turn: 1, Messages: history})
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"role":"assistant","content":"Booking.","tool_calls":[{"id":"call-7","name":"book_table","args":{"time":"20:00"}}]},` +
		`{"role":"tool","content":"{\"confirmation\":\"ABC123\"}","tool_call_id":"call-7","name":"book_table"},{"role":"assistant","content":"Booked: {\"confirmation\":\"ABC123\"}"}]`
	if got := aguiJSON(t, resp.Messages); got != want {
		t.Fatalf("turn 1:\n got %s\nwant %s", got, want)
	}
	history = append(append(history, resp.Messages...), agenteval.Message{Role: agenteval.RoleUser, Content: "Thanks."})
	if _, err := agent.Respond(context.Background(), &agenteval.AgentRequest{ConversationID: "c1", Turn: 2, Messages: history}); err != nil {
		t.Fatal(err)
	}
	reqs := srv.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d runs, want 3", len(reqs))
	}
	if reqs[0].Input.ThreadID != reqs[1].Input.ThreadID || reqs[1].Input.ThreadID != reqs[2].Input.ThreadID {
		t.Errorf("the thread changed: %s %s %s", reqs[0].Input.ThreadID, reqs[1].Input.ThreadID, reqs[2].Input.ThreadID)
	}
	if reqs[0].Input.RunID == reqs[1].Input.RunID || reqs[1].Input.RunID == reqs[2].Input.RunID {
		t.Errorf("a run id was used twice")
	}
	if got := aguiJSON(t, reqs[0].Input.Tools); got != `[{"name":"book_table","description":"Book a table.","parameters":{"type":"object"}}]` {
		t.Errorf("tools = %s", got)
	}
	// The resumed run, and the next turn, send the agent's messages back
	// under its ids, the tool result under ours.
	userID := aguiNameUUID(reqs[0].Input.ThreadID + "\x00" + aguiFingerprint(history[0]) + "#1")
	resultID := aguiNameUUID(reqs[0].Input.ThreadID + "\x00" + aguiFingerprint(resp.Messages[1]) + "#1")
	wantResumed := `[{"id":"` + userID + `","role":"user","content":"Book it."},` +
		`{"id":"m2","role":"assistant","content":"Booking.","toolCalls":[{"id":"call-7","type":"function","function":{"name":"book_table","arguments":"{\"time\":\"20:00\"}"}}]},` +
		`{"id":"` + resultID + `","role":"tool","content":"{\"confirmation\":\"ABC123\"}","toolCallId":"call-7"}]`
	if got := aguiJSON(t, reqs[1].Input.Messages); got != wantResumed {
		t.Errorf("resumed run's messages:\n got %s\nwant %s", got, wantResumed)
	}
	var ids []string
	for _, m := range reqs[2].Input.Messages {
		var x struct{ ID string }
		json.Unmarshal(m, &x)
		ids = append(ids, x.ID)
	}
	if len(ids) != 5 || ids[0] != userID || ids[1] != "m2" || ids[2] != resultID || ids[3] != "m3" {
		t.Errorf("turn 2's message ids = %v", ids)
	}
	// A finished conversation is forgotten.
	if c, ok := agent.(agenteval.Closer); !ok {
		t.Fatal("the agent is no Closer")
	} else if err := c.CloseConversation("c1"); err != nil {
		t.Fatal(err)
	}
	if n := len(agent.(*MockedTools).Agent.(*AGUIAgent).known("c1")); n != 0 {
		t.Errorf("%d ids kept after the conversation closed", n)
	}
}

// TestAGUISplitCallsGoBack: calls the reply moved last go back into the
// message they came from when the history is sent again.
func TestAGUISplitCallsGoBack(t *testing.T) {
	srv := newAGUITestServer(t, func(n int, in *aguiSeen) []string {
		if n == 1 {
			return aguiEvents(`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"search","parentMessageId":"m1"}`,
				`{"type":"TOOL_CALL_END","toolCallId":"c1"}`,
				`{"type":"TOOL_CALL_START","toolCallId":"c2","toolCallName":"book_table","parentMessageId":"m1"}`,
				`{"type":"TOOL_CALL_END","toolCallId":"c2"}`,
				`{"type":"TOOL_CALL_RESULT","messageId":"r1","toolCallId":"c1","content":"found"}`)
		}
		return aguiEvents(`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m5","delta":"Done."}`)
	})
	agent, err := Open(suite.TargetSpec{AGUI: &suite.ProtocolTarget{URL: srv.URL}}, &suite.Suite{Tools: []suite.ToolMock{{Name: "book_table", Result: "booked"}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := agent.Respond(context.Background(), &agenteval.AgentRequest{ConversationID: "c", Messages: agenteval.Conversation{{Role: agenteval.RoleUser, Content: "Go."}}}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range srv.requests()[1].Input.Messages {
		var x struct {
			ID        string
			Role      string
			ToolCalls []aguiToolCall
		}
		json.Unmarshal(m, &x)
		s := x.Role + ":" + x.ID
		for _, c := range x.ToolCalls {
			s += " " + c.ID
		}
		got = append(got, s)
	}
	if g := strings.Join(got[1:], " | "); !strings.HasPrefix(g, "assistant:m1 c1 c2 | tool:r1 | tool:") {
		t.Errorf("resumed run's messages = %s", g)
	}
}

// TestAGUISecrets: credentials in the URL and headers reach the server
// and no error.
func TestAGUISecrets(t *testing.T) {
	const token, key = "agui-test-token-4d1f9c", "agui-test-key-77e2b0"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token || r.URL.Query().Get("api_key") != key {
			http.Error(w, "no", 500)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(401)
		fmt.Fprintf(w, `{"error":"token %s expired for key %s"}`, token, key)
	}))
	defer srv.Close()
	a := NewAGUI(suite.ProtocolTarget{URL: srv.URL + "/agent?api_key=" + key, Headers: map[string]string{"Authorization": "Bearer " + token}}, 5*time.Second)
	_, err := a.Respond(context.Background(), &agenteval.AgentRequest{})
	if err == nil || !strings.Contains(err.Error(), "answered HTTP 401") {
		t.Fatalf("err = %v", err)
	}
	if msg := redact.String(err.Error()); strings.Contains(msg, token) || strings.Contains(msg, key) {
		t.Errorf("a secret shows: %s", msg)
	}
	if strings.Contains(err.Error(), token) || strings.Contains(err.Error(), key) {
		t.Errorf("the error itself holds a secret: %s", err)
	}
}
