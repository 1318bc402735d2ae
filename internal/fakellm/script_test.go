package fakellm_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/agent"
	"github.com/agenteval/agenteval/internal/fakellm"
	"github.com/agenteval/agenteval/provider"
	_ "github.com/agenteval/agenteval/provider/openai"
)

func TestScript(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fake.yaml")
	os.WriteFile(path, []byte(`
- when: "table for (\\w+)"
  tool_calls:
    - {name: book_table, arguments: {party: 2, time: 7pm}}
  reply: Booked a table for $1.
- when: thanks
  reply: You're welcome!
`), 0o644)
	rules, err := fakellm.LoadScript(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := fakellm.Start(fakellm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Add(rules...)
	m, _ := provider.Open(provider.Config{Provider: "openai", Model: "fake", BaseURL: s.URL, APIKey: "k"})
	booked := ""
	book := agent.MustFunc("book_table", "Book a table", func(ctx context.Context, p struct {
		Party int    `json:"party"`
		Time  string `json:"time"`
	}) (string, error) {
		booked = p.Time
		return "ok", nil
	})
	loop := &agent.ToolLoop{Model: m, Tools: []agent.Tool{book}}
	resp, err := loop.Respond(context.Background(), &agenteval.AgentRequest{ConversationID: "c", Turn: 1,
		Messages: agenteval.Conversation{{Role: agenteval.RoleUser, Content: "A table for two, please"}}})
	if err != nil || booked != "7pm" || resp.Messages[len(resp.Messages)-1].Content != "Booked a table for two." {
		t.Fatalf("reply %+v, booked %q, err %v", resp, booked, err)
	}
	resp, _ = loop.Respond(context.Background(), &agenteval.AgentRequest{ConversationID: "c", Turn: 2,
		Messages: agenteval.Conversation{{Role: agenteval.RoleUser, Content: "Thanks!"}}})
	if len(resp.Messages) != 1 || resp.Messages[0].Content != "You're welcome!" {
		t.Errorf("reply %+v", resp.Messages)
	}
}

func TestScriptErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(path, []byte("- when: \"(\"\n  reply: x\n- when: a\n- when: b\n  replay: x\n"), 0o644)
	_, err := fakellm.LoadScript(path)
	for _, want := range []string{"bad.yaml:1:3: when is not a regular expression", "bad.yaml:3:3: a step needs reply, tool_calls or both", `bad.yaml:4:3: unknown key "replay"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want %q", err, want)
		}
	}
}
