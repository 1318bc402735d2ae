package simulate

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/cache"
	"github.com/agenteval/agenteval/judge"
)

//go:embed prompt.txt
var promptText string

var prompt = func() *judge.Template {
	t, err := judge.ParseTemplate("simulated_user", promptText)
	if err != nil {
		panic(err) // the embedded prompt is ours; a test renders it
	}
	return t
}()

// opening is the first message the simulated user's model sees: in its
// flipped view the agent speaks as the user, and the conversation has not
// started yet.
const opening = "(The chat window opens. Write your first message to the assistant.)"

// emptyReply stands for an agent reply with no text in it.
const emptyReply = "(The assistant's reply is empty.)"

// User is a simulated user.
type User struct {
	Model agenteval.Model
	// Name is the model as provider:model, for records and the cache key.
	Name string
	Spec agenteval.SimulatedUser
	// MaxRepairs is how many times an empty reply is asked again; 0 means
	// 2, negative means none.
	MaxRepairs int
}

// Reply is the simulated user's next message.
type Reply struct {
	// Content is the message without the stop marker.
	Content string
	// Stop reports that the user ended the conversation; Content is then
	// its closing remark (possibly empty), not to be sent.
	Stop  bool
	Usage agenteval.Usage
}

// stopMarker is the marker in effect.
func (u *User) stopMarker() string {
	if s := strings.TrimSpace(u.Spec.Stop); s != "" {
		return s
	}
	return agenteval.DefaultStopMarker
}

func (u *User) systemPrompt(nonce string) (string, error) {
	return prompt.Execute(nonce, map[string]string{
		"Instruction": strings.TrimSpace(u.Spec.Instruction),
		"Persona":     u.Spec.PersonaText(),
		"Stop":        u.stopMarker(),
		"Terminating": strings.TrimSpace(u.Spec.TerminatingCondition),
	})
}

// quoteAgent puts each of the agent's messages in the flipped view into a
// block under nonce, so that nothing the agent writes can pass for the
// role-play's instructions; the harness's own notes stay outside.
func quoteAgent(flipped agenteval.Conversation, nonce string) agenteval.Conversation {
	for i, m := range flipped {
		if m.Role == agenteval.RoleUser && m.Content != opening && m.Content != emptyReply {
			flipped[i].Content = judge.Quote("assistant_message", nonce, m.Content)
		}
	}
	return flipped
}

// flip renders a conversation from the simulated user's side: its own
// messages become the assistant's, the agent's text replies become the
// user's, and tool traffic, which a user never sees, is left out.
func flip(conv agenteval.Conversation) agenteval.Conversation {
	out := agenteval.Conversation{{Role: agenteval.RoleUser, Content: opening}}
	// silent marks a user turn the agent answered with no text the user
	// could read (only tool calls, or nothing).
	silent := func() {
		if out[len(out)-1].Role == agenteval.RoleAssistant {
			out = append(out, agenteval.Message{Role: agenteval.RoleUser, Content: emptyReply})
		}
	}
	for _, m := range conv {
		switch m.Role {
		case agenteval.RoleUser:
			silent()
			out = append(out, agenteval.Message{Role: agenteval.RoleAssistant, Content: m.Content})
		case agenteval.RoleAssistant:
			if strings.TrimSpace(m.Content) == "" {
				continue
			}
			if last := &out[len(out)-1]; last.Role == agenteval.RoleUser && last.Content != opening && last.Content != emptyReply {
				// Several text messages in one reply read as one.
				last.Content += "\n\n" + m.Content
				continue
			}
			out = append(out, agenteval.Message{Role: agenteval.RoleUser, Content: m.Content})
		}
	}
	silent()
	return out
}

// Next writes the user's next message, given the conversation so far from
// its first turn on (the agent's view, without the agent's system
// prompt). trial keeps the cached replies of independent trials apart.
func (u *User) Next(ctx context.Context, conv agenteval.Conversation, trial int) (Reply, error) {
	nonce := judge.NewNonce()
	system, err := u.systemPrompt(nonce)
	if err != nil {
		return Reply{}, fmt.Errorf("simulated user prompt: %w", err)
	}
	msgs := append(agenteval.Conversation{{Role: agenteval.RoleSystem, Content: system}}, quoteAgent(flip(conv), nonce)...)
	temp := 0.0
	if u.Spec.Temperature != nil {
		temp = *u.Spec.Temperature
	}
	// Independent trials may go differently; a caching model keeps them
	// apart. The nonce changes every call; the cache keys the messages
	// without it, so that a rerun is answered from the cache.
	ctx = cache.WithVariant(ctx, "trial "+strconv.Itoa(trial))
	ctx = cache.WithNonce(ctx, nonce)
	ctx = cache.WithCheck(ctx, func(r *agenteval.ModelResponse) bool {
		reply := u.parse(r.Message.Content)
		return reply.Stop || strings.TrimSpace(reply.Content) != ""
	})
	repairs := u.MaxRepairs
	if repairs == 0 {
		repairs = 2
	}
	var usage agenteval.Usage
	req := &agenteval.ModelRequest{Messages: msgs, Temperature: &temp}
	for attempt := 0; attempt <= max(repairs, 0); attempt++ {
		resp, err := u.Model.Generate(ctx, req)
		if err != nil {
			// A call that failed after its retries still spent them.
			usage.Add(agenteval.UsageOf(err))
			return Reply{Usage: usage}, fmt.Errorf("simulated user %s: %w", u.Name, err)
		}
		if resp == nil {
			return Reply{Usage: usage}, fmt.Errorf("simulated user %s: the model returned no reply and no error", u.Name)
		}
		usage.Add(&resp.Usage)
		content := resp.Message.Content
		r := u.parse(content)
		if r.Stop || strings.TrimSpace(r.Content) != "" {
			r.Usage = usage
			return r, nil
		}
		req.Messages = append(append(agenteval.Conversation(nil), msgs...),
			agenteval.Message{Role: agenteval.RoleAssistant, Content: content},
			agenteval.Message{Role: agenteval.RoleUser, Content: "(Your message was empty. Write the person's next message, or " + u.stopMarker() + " to end the conversation.)"})
	}
	return Reply{Usage: usage}, errors.New("simulated user " + u.Name + ": the model wrote an empty message " + fmt.Sprint(max(repairs, 0)+1) + " times")
}

// parse finds the stop marker: anything after it is dropped, and what
// comes before it is the closing remark.
func (u *User) parse(content string) Reply {
	marker := u.stopMarker()
	if i := strings.Index(content, marker); i >= 0 {
		return Reply{Content: strings.TrimSpace(content[:i]), Stop: true}
	}
	return Reply{Content: strings.TrimSpace(content)}
}
