package simulate

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/attack"
	"github.com/agenteval/agenteval/internal/fakellm"
	"github.com/agenteval/agenteval/internal/golden"
	"github.com/agenteval/agenteval/judge"
)

// TestPromptKeepsTheAgentInItsBlocks: the agent's replies (and the eval
// file's instruction and persona) carry every attack; the request the
// simulated user's model gets keeps all of it inside blocks, and matches
// its golden file (UPDATE_GOLDEN=1 rewrites it) with the nonce masked.
func TestPromptKeepsTheAgentInItsBlocks(t *testing.T) {
	a := attack.Text(attack.WrongNonce)
	u, s := fakeUser(t, agenteval.SimulatedUser{Instruction: "You want a table for two at 8pm. " + a, Persona: "Terse. " + a, TerminatingCondition: "The table is booked. " + a})
	s.Add(&fakellm.Rule{Reply: fakellm.Reply{Func: func(r *fakellm.Request) fakellm.Reply {
		if err := fakellm.CheckStructure(r, attack.Canaries...); err != nil {
			return fakellm.Reply{Status: 422, ErrorMessage: err.Error()}
		}
		return fakellm.Reply{Content: "Great, thanks. " + agenteval.DefaultStopMarker}
	}}})
	// The agent's side: the simulated user's own messages are plain, the
	// agent's replies and tool traffic are attacked.
	conv := attack.Booking(true, attack.WrongNonce)
	conv[3].Content = "8pm."
	r, err := u.Next(context.Background(), conv[1:], 0)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Stop || r.Content != "Great, thanks." {
		t.Errorf("reply = %+v", r)
	}
	req := s.Requests()[0]
	nonce := nonceOf(t, req.Messages[0].Text())
	var b strings.Builder
	for _, m := range req.Messages {
		b.WriteString("=== " + m.Role + " ===\n" + judge.Normalize(m.Text(), nonce) + "\n")
	}
	got := b.String()
	golden.Check(t, filepath.Join("testdata", "prompt.golden"), []byte(got))
	if strings.Contains(got, "book {") || strings.Contains(got, `"booked": true`) {
		t.Error("tool traffic reached the simulated user")
	}
	// The control: without neutralisation the check fails.
	var system string
	var others []string
	for i, m := range req.Messages {
		text := strings.ReplaceAll(m.Text(), "&lt;", "<")
		if i == 0 {
			system = text
		} else if m.Role == "user" {
			others = append(others, text)
		}
	}
	if fakellm.CheckPrompt(system, others, attack.Canaries...) == nil {
		t.Error("the structure check passed the prompt with its neutralisation undone")
	}
}
