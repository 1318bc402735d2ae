package simulate

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/cache"
	"github.com/agenteval/agenteval/internal/fakellm"
	"github.com/agenteval/agenteval/judge"
	"github.com/agenteval/agenteval/provider"
	_ "github.com/agenteval/agenteval/provider/openai"
)

const modelName = "openai:gpt-4o-mini"

// fakeUser starts a fake OpenAI server on 127.0.0.1 and returns a simulated
// user whose model talks to it over HTTP.
func fakeUser(t *testing.T, spec agenteval.SimulatedUser) (*User, *fakellm.Server) {
	t.Helper()
	s, err := fakellm.Start(fakellm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	m, err := provider.Open(provider.Config{Provider: "openai", Model: "gpt-4o-mini", BaseURL: s.URL, APIKey: "k",
		RetryWait: time.Millisecond, Timeout: 5 * time.Second, MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}
	return &User{Model: m, Name: modelName, Spec: spec}, s
}

var nonceRE = regexp.MustCompile(`<instruction id="([0-9a-f]{12})">`)

// nonceOf finds the block id a simulated user's system prompt declares.
func nonceOf(t *testing.T, sys string) string {
	t.Helper()
	m := nonceRE.FindStringSubmatch(sys)
	if m == nil {
		t.Fatalf("no block id in the system prompt:\n%s", sys)
	}
	return m[1]
}

func msg(role agenteval.Role, content string) agenteval.Message {
	return agenteval.Message{Role: role, Content: content}
}

// booking is a two-turn conversation from the agent's side, with tool
// traffic and a reply split over two text messages.
func booking() agenteval.Conversation {
	return agenteval.Conversation{
		msg(agenteval.RoleUser, "I need a table for two tonight."),
		{Role: agenteval.RoleAssistant, ToolCalls: []agenteval.ToolCall{{ID: "c1", Name: "search", Args: map[string]any{"party": 2}}}},
		{Role: agenteval.RoleTool, ToolCallID: "c1", Content: `{"free": ["19:00", "21:00"]}`},
		msg(agenteval.RoleAssistant, "I found two slots."),
		msg(agenteval.RoleAssistant, "19:00 or 21:00?"),
		msg(agenteval.RoleUser, "21:00 please."),
		{Role: agenteval.RoleAssistant, Content: "Booking it now.", ToolCalls: []agenteval.ToolCall{{ID: "c2", Name: "book", Args: map[string]any{"time": "21:00"}}}},
		{Role: agenteval.RoleTool, ToolCallID: "c2", Content: "booked"},
		msg(agenteval.RoleAssistant, "Done: a table for two at 21:00."),
	}
}

func TestFlip(t *testing.T) {
	u, a := agenteval.RoleUser, agenteval.RoleAssistant
	open := msg(u, opening)
	empty := msg(u, "(The assistant's reply is empty.)")
	tests := []struct {
		name string
		conv agenteval.Conversation
		want agenteval.Conversation
	}{
		{
			name: "empty conversation is only the opening",
			conv: nil,
			want: agenteval.Conversation{open},
		},
		{
			name: "roles are flipped",
			conv: agenteval.Conversation{msg(u, "hi"), msg(a, "hello, how can I help?")},
			want: agenteval.Conversation{open, msg(a, "hi"), msg(u, "hello, how can I help?")},
		},
		{
			name: "tool calls and results are hidden, text of a call message is kept, split replies are joined",
			conv: booking(),
			want: agenteval.Conversation{open,
				msg(a, "I need a table for two tonight."),
				msg(u, "I found two slots.\n\n19:00 or 21:00?"),
				msg(a, "21:00 please."),
				msg(u, "Booking it now.\n\nDone: a table for two at 21:00."),
			},
		},
		{
			name: "a reply made only of tool traffic reads as an empty reply",
			conv: agenteval.Conversation{msg(u, "book it"),
				{Role: a, ToolCalls: []agenteval.ToolCall{{Name: "book"}}},
				{Role: agenteval.RoleTool, Content: "booked"},
			},
			want: agenteval.Conversation{open, msg(a, "book it"), empty},
		},
		{
			name: "an empty reply stays in the history, so it reads the same on every later turn",
			conv: agenteval.Conversation{msg(u, "book it"),
				{Role: a, ToolCalls: []agenteval.ToolCall{{Name: "book"}}},
				{Role: agenteval.RoleTool, Content: "booked"},
				msg(u, "hello?"), msg(a, "Booked."),
			},
			want: agenteval.Conversation{open, msg(a, "book it"), empty, msg(a, "hello?"), msg(u, "Booked.")},
		},
		{
			name: "a whitespace-only reply reads as an empty reply",
			conv: agenteval.Conversation{msg(u, "hello?"), msg(a, "  \n ")},
			want: agenteval.Conversation{open, msg(a, "hello?"), empty},
		},
		{
			name: "system messages of the agent are not shown",
			conv: agenteval.Conversation{msg(agenteval.RoleSystem, "You are a booking bot."), msg(u, "hi"), msg(a, "hello")},
			want: agenteval.Conversation{open, msg(a, "hi"), msg(u, "hello")},
		},
		{
			name: "an agent greeting before the user speaks is not merged into the opening",
			conv: agenteval.Conversation{msg(a, "Welcome!"), msg(a, "Ask me anything.")},
			want: agenteval.Conversation{open, msg(u, "Welcome!\n\nAsk me anything.")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := append(agenteval.Conversation(nil), tt.conv...)
			got := flip(tt.conv)
			if len(got) != len(tt.want) {
				t.Fatalf("Flip = %s\nwant %s", got.Pretty(), tt.want.Pretty())
			}
			for i := range got {
				if got[i].Role != tt.want[i].Role || got[i].Content != tt.want[i].Content || len(got[i].ToolCalls) != 0 || got[i].ToolCallID != "" {
					t.Errorf("message %d = %+v, want %+v", i, got[i], tt.want[i])
				}
			}
			// Flip must not modify its input.
			for i := range before {
				if before[i].Content != tt.conv[i].Content || before[i].Role != tt.conv[i].Role {
					t.Errorf("input message %d changed: %+v", i, tt.conv[i])
				}
			}
		})
	}
}

func TestNextRequest(t *testing.T) {
	temp := 0.4
	u, s := fakeUser(t, agenteval.SimulatedUser{Instruction: "  You want a table for two at 21:00 tonight.  ", Persona: "novice", Temperature: &temp})
	s.Add(&fakellm.Rule{Reply: fakellm.Reply{Content: "  Thanks, that is all I needed?  "}})
	r, err := u.Next(context.Background(), booking(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if r.Stop || r.Content != "Thanks, that is all I needed?" {
		t.Errorf("reply = %+v", r)
	}
	if r.Usage.Calls != 1 || r.Usage.InputTokens == 0 || r.Usage.CachedCalls != 0 {
		t.Errorf("usage = %+v", r.Usage)
	}
	if s.Calls() != 1 {
		t.Fatalf("%d requests, want 1", s.Calls())
	}
	req := s.Requests()[0]
	if req.Temperature == nil || *req.Temperature != 0.4 {
		t.Errorf("temperature = %v, want 0.4", req.Temperature)
	}
	if req.ResponseFormat != nil || len(req.Tools) != 0 {
		t.Errorf("the simulated user asked for structured output or tools: %s", req.Raw)
	}
	// The system prompt: instruction, expanded persona, stop marker.
	if len(req.Messages) == 0 || req.Messages[0].Role != "system" {
		t.Fatalf("messages = %+v", req.Messages)
	}
	sys := req.Messages[0].Text()
	nonce := nonceOf(t, sys)
	for _, want := range []string{
		judge.Quote("instruction", nonce, "You want a table for two at 21:00 tonight."),
		judge.Quote("persona", nonce, (&agenteval.SimulatedUser{Persona: "novice"}).PersonaText()),
		"followed by " + agenteval.DefaultStopMarker + ".",
	} {
		if !strings.Contains(sys, want) {
			t.Errorf("system prompt lacks %q:\n%s", want, sys)
		}
	}
	if strings.Contains(sys, ">novice<") {
		t.Error("the persona keyword was not expanded")
	}
	// The conversation as sent over HTTP: roles flipped, tool traffic gone.
	type wm struct{ role, text string }
	want := []wm{
		{"user", opening},
		{"assistant", "I need a table for two tonight."},
		{"user", judge.Quote("assistant_message", nonce, "I found two slots.\n\n19:00 or 21:00?")},
		{"assistant", "21:00 please."},
		{"user", judge.Quote("assistant_message", nonce, "Booking it now.\n\nDone: a table for two at 21:00.")},
	}
	got := req.Messages[1:]
	if len(got) != len(want) {
		t.Fatalf("%d messages after the system prompt, want %d: %s", len(got), len(want), req.Raw)
	}
	for i, w := range want {
		if got[i].Role != w.role || got[i].Text() != w.text || len(got[i].ToolCalls) != 0 || got[i].ToolCallID != "" {
			t.Errorf("message %d = %s %q (calls %v), want %s %q", i+1, got[i].Role, got[i].Text(), got[i].ToolCalls, w.role, w.text)
		}
	}
	if strings.Contains(string(req.Raw), "booked") || strings.Contains(string(req.Raw), `"tool"`) {
		t.Errorf("tool traffic reached the simulated user: %s", req.Raw)
	}
}

// TestNextFailedCallUsage: a simulated user's call that fails past its
// retries still reports what it spent.
func TestNextFailedCallUsage(t *testing.T) {
	u, s := fakeUser(t, agenteval.SimulatedUser{Instruction: "Book a table."})
	s.Add(&fakellm.Rule{Reply: fakellm.Reply{Fault: fakellm.FaultServer}})
	r, err := u.Next(context.Background(), booking(), 1)
	if err == nil {
		t.Fatal("no error from a server that fails")
	}
	// fakeUser allows one retry.
	if r.Usage.Calls != 1 || r.Usage.Retries != 1 || s.Calls() != 2 {
		t.Errorf("usage = %+v for %d requests, want 1 call and 1 retry", r.Usage, s.Calls())
	}
}

func TestNextWithoutPersonaOmitsIt(t *testing.T) {
	u, s := fakeUser(t, agenteval.SimulatedUser{Instruction: "Ask about opening hours."})
	if _, err := u.Next(context.Background(), nil, 0); err != nil {
		t.Fatal(err)
	}
	req := s.Requests()[0]
	sys := req.Messages[0].Text()
	if strings.Contains(sys, "<persona ") || !strings.Contains(sys, "Ask about opening hours.") {
		t.Errorf("system prompt = %s", sys)
	}
	// With no temperature set, the simulated user runs at 0.
	if req.Temperature == nil || *req.Temperature != 0 {
		t.Errorf("temperature = %v, want 0", req.Temperature)
	}
	// The first call sees only the opening.
	if len(req.Messages) != 2 || req.Messages[1].Role != "user" || req.Messages[1].Text() != opening {
		t.Errorf("messages = %+v", req.Messages)
	}
}

// TestTerminatingConditionReachesThePrompt: agent_inspect's
// terminating_condition is the simulated user's stop rule; it is quoted in
// the system prompt as the condition to end on, in place of our default
// rule, and without it the default rule stands.
func TestTerminatingConditionReachesThePrompt(t *testing.T) {
	cond := "The task is complete if you are transferred to another agent."
	u, s := fakeUser(t, agenteval.SimulatedUser{Instruction: "Change your flight.", TerminatingCondition: cond})
	if _, err := u.Next(context.Background(), nil, 0); err != nil {
		t.Fatal(err)
	}
	sys := s.Requests()[0].Messages[0].Text()
	nonce := nonceOf(t, sys)
	block := `<terminating_condition id="` + nonce + `">` + cond + `</terminating_condition id="` + nonce + `">`
	if !strings.Contains(sys, "End the conversation when this condition holds, and not before: "+block) {
		t.Errorf("the condition is not the quoted stop rule:\n%s", sys)
	}
	if strings.Contains(sys, "When your goal is met") {
		t.Errorf("the default stop rule is still there:\n%s", sys)
	}
	u2, s2 := fakeUser(t, agenteval.SimulatedUser{Instruction: "Change your flight."})
	if _, err := u2.Next(context.Background(), nil, 0); err != nil {
		t.Fatal(err)
	}
	if sys := s2.Requests()[0].Messages[0].Text(); strings.Contains(sys, "terminating_condition") || !strings.Contains(sys, "When your goal is met") {
		t.Errorf("without a condition the default rule stands:\n%s", sys)
	}
}

func TestNextStopMarker(t *testing.T) {
	tests := []struct {
		name    string
		stop    string // Spec.Stop
		reply   string
		want    string
		wantEnd bool
	}{
		{"plain message", "", "Is there a table at 21:00?", "Is there a table at 21:00?", false},
		{"marker alone", "", "###STOP###", "", true},
		{"marker with whitespace", "", "\n  ###STOP###  \n", "", true},
		{"closing remark before the marker", "", "Great, thanks for your help! ###STOP###", "Great, thanks for your help!", true},
		{"text after the marker is dropped", "", "Bye. ###STOP### (ends chat)", "Bye.", true},
		{"custom marker", "<<DONE>>", "Perfect, bye. <<DONE>>", "Perfect, bye.", true},
		{"custom marker trimmed", "  <<DONE>>  ", "<<DONE>>", "", true},
		{"default marker is plain text under a custom one", "<<DONE>>", "Thanks ###STOP###", "Thanks ###STOP###", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, s := fakeUser(t, agenteval.SimulatedUser{Instruction: "Book a table.", Stop: tt.stop})
			s.Add(&fakellm.Rule{Reply: fakellm.Reply{Content: tt.reply}})
			r, err := u.Next(context.Background(), agenteval.Conversation{msg(agenteval.RoleUser, "hi"), msg(agenteval.RoleAssistant, "Booked.")}, 0)
			if err != nil {
				t.Fatal(err)
			}
			if r.Stop != tt.wantEnd || r.Content != tt.want {
				t.Errorf("reply = %+v, want content %q stop %v", r, tt.want, tt.wantEnd)
			}
			marker := strings.TrimSpace(tt.stop)
			if marker == "" {
				marker = agenteval.DefaultStopMarker
			}
			if u.stopMarker() != marker {
				t.Errorf("StopMarker = %q, want %q", u.stopMarker(), marker)
			}
			if sys := s.Requests()[0].Messages[0].Text(); !strings.Contains(sys, "followed by "+marker+".") {
				t.Errorf("the system prompt does not name the marker %q:\n%s", marker, sys)
			}
			if s.Calls() != 1 {
				t.Errorf("%d requests, want 1", s.Calls())
			}
		})
	}
}

func TestNextRepairsEmptyOutput(t *testing.T) {
	u, s := fakeUser(t, agenteval.SimulatedUser{Instruction: "Book a table."})
	// fakellm replaces an empty content with its default text, so "empty"
	// here is whitespace, which the simulated user treats as empty.
	s.Add(&fakellm.Rule{Times: 1, Reply: fakellm.Reply{Content: " \n "}},
		&fakellm.Rule{Reply: fakellm.Reply{Content: "A table for two, please."}})
	r, err := u.Next(context.Background(), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.Content != "A table for two, please." || r.Stop {
		t.Errorf("reply = %+v", r)
	}
	if s.Calls() != 2 || r.Usage.Calls != 2 {
		t.Errorf("%d requests, usage %+v; want 2 of each", s.Calls(), r.Usage)
	}
	reqs := s.Requests()
	first, second := reqs[0].Messages, reqs[1].Messages
	if len(second) != len(first)+2 {
		t.Fatalf("repair request has %d messages, want %d", len(second), len(first)+2)
	}
	if second[len(first)].Role != "assistant" {
		t.Errorf("the empty reply is not echoed back: %+v", second[len(first)])
	}
	last := second[len(second)-1]
	if last.Role != "user" || !strings.Contains(last.Text(), "Your message was empty") || !strings.Contains(last.Text(), agenteval.DefaultStopMarker) {
		t.Errorf("repair message = %s %q", last.Role, last.Text())
	}
}

func TestNextGivesUpOnEmptyOutput(t *testing.T) {
	tests := []struct {
		name       string
		maxRepairs int
		requests   int
	}{
		{"default repairs", 0, 3},
		{"one repair", 1, 2},
		{"no repairs", -1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, s := fakeUser(t, agenteval.SimulatedUser{Instruction: "Book a table."})
			u.MaxRepairs = tt.maxRepairs
			s.Add(&fakellm.Rule{Reply: fakellm.Reply{Content: "   "}})
			r, err := u.Next(context.Background(), nil, 0)
			if err == nil {
				t.Fatalf("no error; reply %+v", r)
			}
			if !strings.Contains(err.Error(), "simulated user "+modelName) || !strings.Contains(err.Error(), "empty message") {
				t.Errorf("err = %v", err)
			}
			if s.Calls() != tt.requests || r.Usage.Calls != tt.requests {
				t.Errorf("%d requests, usage %+v; want %d", s.Calls(), r.Usage, tt.requests)
			}
		})
	}
}

func TestNextProviderFaults(t *testing.T) {
	t.Run("a server error is retried", func(t *testing.T) {
		u, s := fakeUser(t, agenteval.SimulatedUser{Instruction: "Book a table."})
		s.Add(&fakellm.Rule{Times: 1, Reply: fakellm.Reply{Fault: fakellm.FaultServer}},
			&fakellm.Rule{Reply: fakellm.Reply{Content: "Hello there."}})
		r, err := u.Next(context.Background(), nil, 0)
		if err != nil || r.Content != "Hello there." || s.Calls() != 2 {
			t.Errorf("reply %+v, err %v, after %d requests", r, err, s.Calls())
		}
	})
	t.Run("server errors past the retries", func(t *testing.T) {
		u, s := fakeUser(t, agenteval.SimulatedUser{Instruction: "Book a table."})
		s.Add(&fakellm.Rule{Reply: fakellm.Reply{Fault: fakellm.FaultServer}})
		_, err := u.Next(context.Background(), nil, 0)
		if err == nil || !strings.HasPrefix(err.Error(), "simulated user "+modelName+": ") || !strings.Contains(err.Error(), "500") {
			t.Errorf("err = %v", err)
		}
		if s.Calls() != 2 {
			t.Errorf("%d requests, want 2 (one retry)", s.Calls())
		}
	})
	t.Run("rejected credentials are fatal", func(t *testing.T) {
		u, s := fakeUser(t, agenteval.SimulatedUser{Instruction: "Book a table."})
		s.Add(&fakellm.Rule{Reply: fakellm.Reply{Fault: fakellm.FaultUnauthorized}})
		_, err := u.Next(context.Background(), nil, 0)
		var fe *agenteval.FatalError
		if !errors.As(err, &fe) || !strings.HasPrefix(err.Error(), "simulated user "+modelName+": ") {
			t.Errorf("err = %v, want a wrapped FatalError", err)
		}
		if s.Calls() != 1 {
			t.Errorf("%d requests, want 1 (no retry)", s.Calls())
		}
	})
}

func TestNextCache(t *testing.T) {
	u, s := fakeUser(t, agenteval.SimulatedUser{Instruction: "Book a table."})
	u.Model = cache.Wrap(u.Model, u.Name, &cache.Store{Dir: t.TempDir()})
	s.Add(&fakellm.Rule{Reply: fakellm.Reply{Func: func(r *fakellm.Request) fakellm.Reply {
		return fakellm.Reply{Content: "message " + string(rune('0'+len(r.Messages)))}
	}}})
	conv := agenteval.Conversation{msg(agenteval.RoleUser, "hi"), msg(agenteval.RoleAssistant, "hello")}
	ctx := context.Background()

	first, err := u.Next(ctx, conv, 1)
	if err != nil {
		t.Fatal(err)
	}
	if first.Usage.Calls != 1 || first.Usage.CachedCalls != 0 || s.Calls() != 1 {
		t.Fatalf("first: %+v after %d requests", first, s.Calls())
	}

	again, err := u.Next(ctx, conv, 1)
	if err != nil {
		t.Fatal(err)
	}
	if s.Calls() != 1 {
		t.Errorf("a cached reply made a request (%d in all)", s.Calls())
	}
	if again.Content != first.Content || again.Stop != first.Stop || again.Usage != (agenteval.Usage{CachedCalls: 1}) {
		t.Errorf("cached reply = %+v, want %q with one cached call", again, first.Content)
	}

	// Another trial is an independent run: it asks the model.
	if _, err := u.Next(ctx, conv, 2); err != nil {
		t.Fatal(err)
	}
	if s.Calls() != 2 {
		t.Errorf("another trial: %d requests, want 2", s.Calls())
	}
	// So does another conversation.
	longer := append(conv, msg(agenteval.RoleUser, "a table"), msg(agenteval.RoleAssistant, "when?"))
	if _, err := u.Next(ctx, longer, 1); err != nil {
		t.Fatal(err)
	}
	if s.Calls() != 3 {
		t.Errorf("another conversation: %d requests, want 3", s.Calls())
	}
	// A stop reply is cached as a stop.
	s.Reset()
	s.Add(&fakellm.Rule{Reply: fakellm.Reply{Content: "Bye! ###STOP###"}})
	done := append(longer, msg(agenteval.RoleUser, "21:00"), msg(agenteval.RoleAssistant, "Booked."))
	r1, err := u.Next(ctx, done, 1)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := u.Next(ctx, done, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !r1.Stop || !r2.Stop || r2.Content != "Bye!" || r2.Usage.CachedCalls != 1 || s.Calls() != 1 {
		t.Errorf("stop replies %+v, %+v after %d requests", r1, r2, s.Calls())
	}
}

func TestNextCacheSkipsFailures(t *testing.T) {
	u, s := fakeUser(t, agenteval.SimulatedUser{Instruction: "Book a table."})
	u.Model = cache.Wrap(u.Model, u.Name, &cache.Store{Dir: t.TempDir()})
	u.MaxRepairs = -1
	s.Add(&fakellm.Rule{Times: 1, Reply: fakellm.Reply{Content: " "}},
		&fakellm.Rule{Reply: fakellm.Reply{Content: "Second try."}})
	if _, err := u.Next(context.Background(), nil, 0); err == nil {
		t.Fatal("empty output without repairs should fail")
	}
	// The failure was not cached: the next call asks the model again.
	r, err := u.Next(context.Background(), nil, 0)
	if err != nil || r.Content != "Second try." || r.Usage.CachedCalls != 0 || s.Calls() != 2 {
		t.Errorf("reply %+v, err %v, after %d requests", r, err, s.Calls())
	}
}
