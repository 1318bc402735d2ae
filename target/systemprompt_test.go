package target

import (
	"context"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/fakellm"
	"github.com/agenteval/agenteval/suite"
	"github.com/google/go-cmp/cmp"
)

// The project's system_prompt reaches the model as the first message of a
// conversation that has no system message, on every call, as AgentV's LLM
// targets send theirs; a test's own system message is left alone.
func TestSystemPromptOption(t *testing.T) {
	s, err := fakellm.Start(fakellm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	text := func(s string) *string { return &s }
	sys := func(s string) agenteval.Message { return agenteval.Message{Role: agenteval.RoleSystem, Content: s} }
	reply := agenteval.Message{Role: agenteval.RoleAssistant, Content: "earlier"}
	for _, tc := range []struct {
		name    string
		prompt  *string
		history []agenteval.Message
		want    []string
	}{
		{"added", text("Answer from the facts given."), []agenteval.Message{user("hi")},
			[]string{"system: Answer from the facts given.", "user: hi"}},
		{"the test has its own", text("Answer from the facts given."), []agenteval.Message{sys("Be brief."), user("hi")},
			[]string{"system: Be brief.", "user: hi"}},
		{"a later turn", text("Answer from the facts given."), []agenteval.Message{user("hi"), reply, user("again")},
			[]string{"system: Answer from the facts given.", "user: hi", "assistant: earlier", "user: again"}},
		{"none set", nil, []agenteval.Message{user("hi")}, []string{"user: hi"}},
		{"empty means none", text(" "), []agenteval.Message{user("hi")}, []string{"user: hi"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.Reset()
			a, err := Open(suite.TargetSpec{Name: "m", Model: "openai:gpt-4o-mini", BaseURL: s.URL, APIKey: "k"}, nil, Options{SystemPrompt: tc.prompt})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.Respond(context.Background(), req(1, tc.history...)); err != nil {
				t.Fatal(err)
			}
			reqs := s.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests", len(reqs))
			}
			var got []string
			for _, m := range reqs[0].Messages {
				got = append(got, m.Role+": "+m.Text())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("messages sent (-want +got):\n%s", diff)
			}
		})
	}
}
