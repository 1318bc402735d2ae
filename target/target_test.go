package target

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/agent"
	"github.com/agenteval/agenteval/internal/fakellm"
	"github.com/agenteval/agenteval/provider"
	_ "github.com/agenteval/agenteval/provider/openai"
	"github.com/agenteval/agenteval/suite"
)

func req(turn int, msgs ...agenteval.Message) *agenteval.AgentRequest {
	return &agenteval.AgentRequest{ConversationID: "t#1", Turn: turn, Messages: msgs}
}

func user(s string) agenteval.Message { return agenteval.Message{Role: agenteval.RoleUser, Content: s} }

func TestModelTargetToolLoop(t *testing.T) {
	s, err := fakellm.Start(fakellm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// The model calls two tools in one message, then answers.
	s.Add(&fakellm.Rule{Times: 1, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{
		{Name: "book", Arguments: `{"time": "7pm", "party": 2}`},
		{Name: "book", Arguments: `{"time": "9pm", "party": 2}`},
		{Name: "nope", Arguments: `{}`},
	}}}, &fakellm.Rule{Reply: fakellm.Reply{Content: "Booked."}})
	m, _ := provider.Open(provider.Config{Provider: "openai", Model: "gpt-4o-mini", BaseURL: s.URL, APIKey: "k"})
	a := &agent.ToolLoop{Model: m, Tools: MockTools([]suite.ToolMock{{
		Name: "book", Parameters: map[string]any{"type": "object"}, Result: "full",
		Cases: []suite.MockCase{{When: map[string]any{"time": "7pm"}, Result: map[string]any{"ok": true}}},
	}})}
	resp, err := a.Respond(context.Background(), req(1, agenteval.Message{Role: agenteval.RoleSystem, Content: "sys"}, user("book")))
	if err != nil {
		t.Fatal(err)
	}
	got := resp.Messages
	if len(got) != 5 || got[1].Content != `{"ok":true}` || got[2].Content != "full" || !strings.Contains(got[3].Content, `unknown tool "nope"`) || got[4].Content != "Booked." {
		t.Fatalf("messages = %+v", got)
	}
	if got[1].ToolCallID != got[0].ToolCalls[0].ID || got[1].ToolCallID == "" {
		t.Errorf("tool result not linked: %+v", got[1])
	}
	// The second model call saw the tool results; neither call got a
	// system prompt of ours.
	second := s.Requests()[1]
	if len(second.Messages) != 6 || second.Messages[0].Text() != "sys" || second.Messages[3].Role != "tool" {
		t.Errorf("second call = %+v", second.Messages)
	}
	if len(s.Requests()[0].Tools) != 1 {
		t.Errorf("tools not offered")
	}
	if resp.Usage.Calls != 2 {
		t.Errorf("usage = %+v", resp.Usage)
	}
}

func TestModelTargetMaxSteps(t *testing.T) {
	s, _ := fakellm.Start(fakellm.Options{})
	defer s.Close()
	s.Add(&fakellm.Rule{Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "loop", Arguments: `{}`}}}})
	m, _ := provider.Open(provider.Config{Provider: "openai", Model: "gpt-4o-mini", BaseURL: s.URL, APIKey: "k"})
	a := &agent.ToolLoop{Model: m, MaxIterations: 3}
	resp, err := a.Respond(context.Background(), req(1, user("go")))
	if !errors.Is(err, agent.ErrMaxIterations) || s.Calls() != 3 || len(resp.Messages) != 6 {
		t.Errorf("err %v after %d calls, %d messages", err, s.Calls(), len(resp.Messages))
	}
}

func TestHTTPAgent(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case r.Header.Get("Authorization") != "Bearer tok":
			http.Error(w, "no auth", 401)
		case strings.Contains(string(body), "boom"):
			http.Error(w, "internal failure", 500)
		case strings.Contains(string(body), "empty"):
			w.Write([]byte(`{"messages": []}`))
		default:
			w.Write([]byte(`{"messages": [{"role": "assistant", "content": "hi"}], "usage": {"input_tokens": 3, "output_tokens": 1}}`))
		}
	}))
	defer srv.Close()
	a := &HTTPAgent{URL: srv.URL, Headers: map[string]string{"Authorization": "Bearer tok"}, Timeout: time.Second}
	resp, err := a.Respond(context.Background(), req(1, user("hello")))
	if err != nil || resp.Messages[0].Content != "hi" || resp.Usage.InputTokens != 3 {
		t.Fatalf("resp %+v, err %v", resp, err)
	}
	if _, err := a.Respond(context.Background(), req(1, user("boom"))); err == nil || !strings.Contains(err.Error(), "answered HTTP 500: internal failure") {
		t.Errorf("500: %v", err)
	}
	if _, err := a.Respond(context.Background(), req(1, user("empty"))); err == nil || !strings.Contains(err.Error(), "returned no messages") {
		t.Errorf("empty: %v", err)
	}
}

func TestReplay(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "rec.jsonl")
	// A results file from agenteval run opens with its run header, which
	// replay skips.
	os.WriteFile(p, []byte(`{"record":"run","run_id":"r1","suites":[]}`+"\n"+`{"test_id": "t", "output": [{"role": "system", "content": "s"}, {"role": "user", "content": "one"}, {"role": "assistant", "content": "first"}, {"role": "user", "content": "two"}, {"role": "assistant", "tool_calls": [{"id": "c", "name": "f", "args": {}}]}, {"role": "tool", "tool_call_id": "c", "content": "r"}, {"role": "assistant", "content": "second"}]}`+"\n"), 0o644)
	a, err := OpenReplay(p)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := a.Respond(context.Background(), req(2, user("one"), agenteval.Message{Role: agenteval.RoleAssistant, Content: "first"}, user("two")))
	if err != nil || len(resp.Messages) != 3 || resp.Messages[2].Content != "second" {
		t.Fatalf("resp %+v, err %v", resp, err)
	}
	if _, err := a.Respond(context.Background(), req(1, user("changed"))); err == nil || !strings.Contains(err.Error(), `recorded for the user message "one"`) {
		t.Errorf("mismatch: %v", err)
	}
	if _, err := a.Respond(context.Background(), req(3, user("one"), user("two"), user("x"))); err == nil || !strings.Contains(err.Error(), "recorded with 2 user messages") {
		t.Errorf("extra turn: %v", err)
	}
	// A test whose input holds an earlier exchange: its turn 1 is the
	// recording's second user message.
	resp, err = a.Respond(context.Background(), req(1, user("one"), agenteval.Message{Role: agenteval.RoleAssistant, Content: "first"}, user("two")))
	if err != nil || len(resp.Messages) != 3 || resp.Messages[2].Content != "second" {
		t.Errorf("turn 1 after an input exchange: resp %+v, err %v", resp, err)
	}
	if _, err := a.Respond(context.Background(), &agenteval.AgentRequest{ConversationID: "other#1", Turn: 1, Messages: agenteval.Conversation{user("x")}}); err == nil || !strings.Contains(err.Error(), `no recording of test "other"`) {
		t.Errorf("unknown test: %v", err)
	}
	// The runner's conversation ids start with the run, the target and the
	// suite; the request names the test.
	r := &agenteval.AgentRequest{ConversationID: "a1b2c3/rec/my/suite/t#2", TestID: "t", Trial: 2, Turn: 1, Messages: agenteval.Conversation{user("one")}}
	if resp, err := a.Respond(context.Background(), r); err != nil || resp.Messages[0].Content != "first" {
		t.Errorf("a runner's request: resp %+v, err %v", resp, err)
	}
}

func TestSelect(t *testing.T) {
	s := &suite.Suite{File: "s.yaml", Targets: []suite.TargetSpec{{Name: "a", Model: "openai:x"}, {Name: "b", Replay: "r"}}}
	if ts, _ := Select(s, ""); ts.Name != "a" {
		t.Errorf("default = %s", ts.Name)
	}
	if ts, _ := Select(s, "b"); ts.Replay != "r" {
		t.Errorf("by name = %+v", ts)
	}
	if ts, _ := Select(s, "ollama:llama3.2"); ts.Model != "ollama:llama3.2" {
		t.Errorf("by spec = %+v", ts)
	}
	if _, err := Select(s, "c"); err == nil || !strings.Contains(err.Error(), "defines a, b") {
		t.Errorf("unknown: %v", err)
	}
	if _, err := Select(&suite.Suite{File: "s.yaml"}, ""); err == nil || !strings.Contains(err.Error(), "--target provider:model") {
		t.Errorf("none: %v", err)
	}
}

// TestCommandPathsFromAnotherFolder: agenteval run myeval/suite.yaml with
// command: [python3, agent.py] runs myeval/agent.py, once, from myeval.
func TestCommandPathsFromAnotherFolder(t *testing.T) {
	root := t.TempDir()
	t.Chdir(root)
	os.MkdirAll("myeval", 0o755)
	os.WriteFile(filepath.Join("myeval", "agent.py"), []byte("print('hi')"), 0o644)
	s := &suite.Suite{File: filepath.Join("myeval", "suite.yaml")}
	a, err := Open(suite.TargetSpec{Name: "py", Command: []string{"python3", "agent.py", "--flag"}}, s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := a.(*CommandAgent)
	if want, _ := filepath.Abs(filepath.Join("myeval", "agent.py")); c.Argv[1] != want || c.Argv[2] != "--flag" {
		t.Errorf("argv = %v", c.Argv)
	}
	if c.Dir != "myeval" {
		t.Errorf("dir = %q", c.Dir)
	}
	// From the process's folder, the script is where it is.
	if _, err := os.Stat(c.Argv[1]); err != nil {
		t.Error(err)
	}
}
