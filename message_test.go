package agenteval

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func restaurant() *Sample {
	return &Sample{
		UserInput: Conversation{
			{Role: RoleUser, Content: "Book a table at the best Chinese restaurant for 8pm"},
			{Role: RoleAssistant, Content: "Let me search for Chinese restaurants.", ToolCalls: []ToolCall{{Name: "restaurant_search", Args: map[string]any{"cuisine": "Chinese", "time": "8pm"}}}},
			{Role: RoleTool, Content: "Found: Golden Dragon, Jade Palace"},
			{Role: RoleAssistant, Content: "I'll book Golden Dragon.", ToolCalls: []ToolCall{{Name: "restaurant_book", Args: map[string]any{"name": "Golden Dragon", "time": "8pm"}}}},
			{Role: RoleTool, Content: "Table booked at Golden Dragon for 8pm."},
			{Role: RoleAssistant, Content: "Your table at Golden Dragon is booked for 8pm!"},
		},
		Reference: "A table is booked at a Chinese restaurant for 8:00pm.",
		ReferenceToolCalls: []ToolCall{
			{Name: "restaurant_search", Args: map[string]any{"cuisine": "Chinese", "time": "8pm"}},
			{Name: "restaurant_book", Args: map[string]any{"name": "Golden Dragon", "time": "8pm"}},
		},
		ReferenceTopics: []string{"Restaurant Booking", "Chinese Cuisine"},
	}
}

func TestPretty(t *testing.T) {
	got := restaurant().UserInput.Pretty()
	want := strings.Join([]string{
		"Human: Book a table at the best Chinese restaurant for 8pm",
		"AI: Let me search for Chinese restaurants.",
		"Tools:",
		`  restaurant_search: {"cuisine":"Chinese","time":"8pm"}`,
		"ToolOutput: Found: Golden Dragon, Jade Palace",
		"AI: I'll book Golden Dragon.",
		"Tools:",
		`  restaurant_book: {"name":"Golden Dragon","time":"8pm"}`,
		"ToolOutput: Table booked at Golden Dragon for 8pm.",
		"AI: Your table at Golden Dragon is booked for 8pm!",
	}, "\n")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Pretty (-want +got):\n%s", diff)
	}
	// An assistant message with calls and no text has no "AI:" line, as in Ragas.
	m := Message{Role: RoleAssistant, ToolCalls: []ToolCall{{Name: "f", RawArgs: "{bad"}}}
	if got, want := m.Pretty(), "Tools:\n  f: {bad"; got != want {
		t.Errorf("Pretty = %q, want %q", got, want)
	}
}

func TestValidate(t *testing.T) {
	u := Message{Role: RoleUser, Content: "hi"}
	a := Message{Role: RoleAssistant, Content: "hello"}
	ac := Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Name: "f"}, {ID: "c2", Name: "g"}}}
	tool := func(id string) Message { return Message{Role: RoleTool, Content: "r", ToolCallID: id} }
	tests := []struct {
		name string
		conv Conversation
		want []string
	}{
		{"valid", Conversation{u, ac, tool("c1"), tool("c2"), a}, nil},
		{"valid without ids", Conversation{u, ac, tool(""), a}, nil},
		{"empty", Conversation{}, []string{"message 0: the conversation is empty; give at least one message"}},
		{"unknown role", Conversation{u, {Role: "robot"}}, []string{`message 1: unknown role "robot"; use system, user, assistant or tool (or Ragas's human, ai, tool)`}},
		{"tool before any assistant", Conversation{u, tool("")}, []string{"message 1: tool message has no assistant message before it; a tool result must answer an assistant's tool call"}},
		{"tool after assistant without calls", Conversation{u, a, tool("")}, []string{"message 2: tool message follows an assistant message that made no tool calls"}},
		{"tool after user", Conversation{u, ac, tool("c1"), u, tool("")}, []string{"message 4: tool message must follow an assistant message with tool calls or another tool message, not a user message"}},
		{"tool id mismatch", Conversation{u, ac, tool("c9")}, []string{`message 2: tool_call_id: "c9" matches no tool call of message 1 (its call IDs: c1, c2)`}},
		{"call without name", Conversation{u, {Role: RoleAssistant, ToolCalls: []ToolCall{{Name: " "}}}}, []string{"message 1: tool_calls[0].name: tool call has no name"}},
		{"user with calls", Conversation{{Role: RoleUser, ToolCalls: []ToolCall{{Name: "f"}}}}, []string{"message 0: tool_calls[0]: only assistant messages may make tool calls, this one is user"}},
		{"every error reported", Conversation{tool(""), u, a, tool("")}, []string{
			"message 0: tool message has no assistant message before it; a tool result must answer an assistant's tool call",
			"message 3: tool message follows an assistant message that made no tool calls",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, e := range MessageErrors(tt.conv.Validate()) {
				got = append(got, e.Error())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseRole(t *testing.T) {
	for in, want := range map[string]Role{"human": RoleUser, "AI": RoleAssistant, "tool": RoleTool, "user": RoleUser, "assistant": RoleAssistant, "system": RoleSystem} {
		if got, ok := ParseRole(in); !ok || got != want {
			t.Errorf("ParseRole(%q) = %q, %v", in, got, ok)
		}
	}
	if _, ok := ParseRole("robot"); ok {
		t.Error("ParseRole(robot) succeeded")
	}
}

func TestFeaturesAndString(t *testing.T) {
	s := restaurant()
	f := s.Features()
	keys := []string{}
	for k := range f {
		keys = append(keys, k)
	}
	want := map[string]bool{"user_input": true, "reference": true, "reference_tool_calls": true, "reference_topics": true}
	if len(f) != len(want) {
		t.Errorf("Features keys = %v, want %v", keys, want)
	}
	for k := range want {
		if _, ok := f[k]; !ok {
			t.Errorf("Features lacks %s", k)
		}
	}
	if _, ok := f[fieldRubrics]; ok {
		t.Error("Features has rubrics on a sample without rubrics")
	}
	// A present-but-empty reference list is a feature: it means "no calls".
	s.ReferenceToolCalls = []ToolCall{}
	if _, ok := s.Features()[fieldReferenceToolCalls]; !ok {
		t.Error("an empty reference_tool_calls should still be a feature")
	}
	str := restaurant().String()
	for _, part := range []string{"user_input:\n  Human: Book a table", "reference: A table is booked", `reference_tool_calls: [restaurant_search({"cuisine":"Chinese","time":"8pm"}), restaurant_book(`, "reference_topics: [Restaurant Booking, Chinese Cuisine]"} {
		if !strings.Contains(str, part) {
			t.Errorf("String() lacks %q:\n%s", part, str)
		}
	}
}

func TestCombine(t *testing.T) {
	sc := func(score float64, v Verdict, w float64, req bool) Score {
		return Score{Score: score, Verdict: v, Weight: w, Required: req}
	}
	tests := []struct {
		name    string
		scores  []Score
		want    float64
		verdict Verdict
	}{
		{"nothing to grade passes", nil, 1, VerdictPass},
		{"weighted mean", []Score{sc(1, VerdictPass, 3, false), sc(0, VerdictFail, 1, false)}, 0.75, VerdictFail},
		{"required failure zeroes", []Score{sc(1, VerdictPass, 1, false), sc(0.5, VerdictFail, 1, true)}, 0, VerdictFail},
		{"skips do not count", []Score{sc(1, VerdictPass, 1, false), sc(0, VerdictSkip, 1, false)}, 1, VerdictPass},
		{"errors make the verdict error", []Score{sc(1, VerdictPass, 1, false), {Verdict: VerdictError, Weight: 1}}, 1, VerdictError},
		{"zero weights are informational", []Score{sc(0, VerdictFail, 0, false)}, 1, VerdictPass},
		{"only errors score 0", []Score{{Verdict: VerdictError, Weight: 1}}, 0, VerdictError},
		{"errors of weight 0 are informational too", []Score{sc(1, VerdictPass, 1, false), {Verdict: VerdictError, Weight: 0}}, 1, VerdictPass},
	}
	for _, tt := range tests {
		got, v := Combine(tt.scores, DefaultThreshold)
		if got != tt.want || v != tt.verdict {
			t.Errorf("%s: Combine = %v %s, want %v %s", tt.name, got, v, tt.want, tt.verdict)
		}
	}
}

func TestUsageAdd(t *testing.T) {
	c := 0.5
	var u Usage
	u.Add(&Usage{Calls: 1, InputTokens: 10, OutputTokens: 2, CostUSD: &c})
	u.Add(&Usage{Calls: 1, InputTokens: 10, OutputTokens: 2, CostUSD: &c})
	if u.CostUSD == nil || *u.CostUSD != 1 || u.InputTokens != 20 {
		t.Errorf("usage = %+v", u)
	}
	u.Add(&Usage{Calls: 1, InputTokens: 1})
	if u.CostUSD != nil {
		t.Error("cost stayed known after adding a call with no known price")
	}
	u.Add(&Usage{Calls: 1, InputTokens: 1, CostUSD: &c})
	if u.CostUSD != nil {
		t.Error("cost became known again")
	}
}

func FuzzValidate(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 2, 1})
	f.Add([]byte{3, 3, 1})
	f.Fuzz(func(t *testing.T, shape []byte) {
		roles := []Role{RoleUser, RoleAssistant, RoleTool, RoleSystem, "bad"}
		var conv Conversation
		for i, b := range shape {
			m := Message{Role: roles[int(b)%len(roles)]}
			if b&0x10 != 0 && m.Role == RoleAssistant {
				m.ToolCalls = []ToolCall{{ID: string(rune('a' + i%3)), Name: "f"}}
			}
			if b&0x20 != 0 && m.Role == RoleTool {
				m.ToolCallID = string(rune('a' + int(b)%4))
			}
			conv = append(conv, m)
		}
		errs := MessageErrors(conv.Validate())
		for _, e := range errs {
			if e.Index < 0 || (len(conv) > 0 && e.Index >= len(conv)) {
				t.Fatalf("error index %d out of range for %d messages", e.Index, len(conv))
			}
		}
		_ = conv.Pretty()
	})
}

func TestWithCallIDs(t *testing.T) {
	conv := Conversation{
		{Role: RoleUser, Content: "go"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{Name: "a"}, {ID: "x", Name: "b"}}},
		{Role: RoleTool, Content: "ra"},
		{Role: RoleTool, ToolCallID: "x", Content: "rb"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{Name: "c"}}},
		{Role: RoleTool, Content: "rc"},
	}
	got := conv.WithCallIDs()
	ids := []string{got[1].ToolCalls[0].ID, got[1].ToolCalls[1].ID, got[2].ToolCallID, got[3].ToolCallID, got[4].ToolCalls[0].ID, got[5].ToolCallID}
	want := []string{"call_1", "x", "call_1", "x", "call_3", "call_3"}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("ids (-want +got):\n%s", diff)
	}
	if conv[1].ToolCalls[0].ID != "" || conv[2].ToolCallID != "" {
		t.Error("the original conversation was modified")
	}
}

func TestTurns(t *testing.T) {
	conv := Conversation{
		{Role: RoleSystem, Content: "sys"},
		{Role: RoleUser, Content: "u1"},
		{Role: RoleAssistant, Content: "a1"},
		{Role: RoleUser, Content: "u2"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{Name: "f", Args: map[string]any{}}}},
		{Role: RoleTool, Content: "r"},
		{Role: RoleAssistant, Content: "a2"},
		{Role: RoleUser, Content: "u3"},
	}
	turns := conv.Turns()
	if len(turns) != 3 || len(turns[0]) != 3 || len(turns[1]) != 4 || len(turns[2]) != 1 {
		t.Fatalf("turns = %v", turns)
	}
	want := "[Turn 1]\nSystem: sys\nHuman: u1\nAI: a1\n\n[Turn 2]\nHuman: u2\nTools:\n  f: {}\nToolOutput: r\nAI: a2\n\n[Turn 3]\nHuman: u3"
	if got := conv.Numbered(); got != want {
		t.Errorf("Numbered =\n%s\nwant\n%s", got, want)
	}
	if len(Conversation{}.Turns()) != 0 {
		t.Error("empty conversation has turns")
	}
}

func TestPersonaText(t *testing.T) {
	expert := (&SimulatedUser{Persona: "expert"}).PersonaText()
	novice := (&SimulatedUser{Persona: "novice"}).PersonaText()
	if !strings.Contains(expert, "An expert in this domain") || !strings.Contains(novice, "A newcomer to this domain") {
		t.Fatalf("expert = %q, novice = %q", expert, novice)
	}
	tests := []struct{ in, want string }{
		{"expert", expert},
		{" EXPERT ", expert},
		{"novice", novice},
		{"non-expert", novice},
		{"non_expert", novice},
		{"Non-Expert", novice},
		{"nonexpert", novice},
		{"beginner", novice},
		{"", ""},
		{"  a grumpy retiree who types in capitals  ", "a grumpy retiree who types in capitals"},
	}
	for _, tt := range tests {
		if got := (&SimulatedUser{Persona: tt.in}).PersonaText(); got != tt.want {
			t.Errorf("PersonaText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
