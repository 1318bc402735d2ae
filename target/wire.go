package target

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/dataset"
	"github.com/agenteval/agenteval/internal/strictjson"
)

// wireReply is what http and command agents answer.
type wireReply struct {
	Messages json.RawMessage `json:"messages"`
	Content  *string         `json:"content"`
	Output   *string         `json:"output"`
	Usage    *struct {
		InputTokens  int64 `json:"input_tokens"`
		OutputTokens int64 `json:"output_tokens"`
	} `json:"usage"`
	Error string `json:"error"`
}

// decodeReply reads an agent's reply. Anything unusable (not JSON, no
// messages, a message of the wrong role) is an error that quotes what the
// agent sent, so the result says what went wrong.
func decodeReply(data []byte) (*agenteval.AgentResponse, error) {
	text := strings.TrimSpace(string(data))
	if text == "" {
		return nil, fmt.Errorf("it returned nothing")
	}
	var r wireReply
	if err := strictjson.Decode([]byte(text), &r); err != nil {
		return nil, fmt.Errorf("the reply is not JSON {\"messages\": [...]} or {\"content\": \"...\"}: %q", snippet(text))
	}
	if r.Error != "" {
		return nil, fmt.Errorf("it reported an error: %s", r.Error)
	}
	resp := &agenteval.AgentResponse{}
	if r.Usage != nil {
		// Calls 1: the turn's tokens are known, even when they are 0
		// (Usage.TokensKnown).
		resp.Usage = agenteval.Usage{Calls: 1, InputTokens: r.Usage.InputTokens, OutputTokens: r.Usage.OutputTokens}
	}
	switch {
	case len(r.Messages) > 0 && string(r.Messages) != "null":
		msgs, err := dataset.DecodeMessages(r.Messages)
		if err != nil {
			return nil, fmt.Errorf("its messages are malformed: %v", err)
		}
		resp.Messages = msgs
	case r.Content != nil:
		resp.Messages = agenteval.Conversation{{Role: agenteval.RoleAssistant, Content: *r.Content}}
	case r.Output != nil:
		resp.Messages = agenteval.Conversation{{Role: agenteval.RoleAssistant, Content: *r.Output}}
	}
	if err := checkReply(resp.Messages); err != nil {
		return nil, err
	}
	return resp, nil
}

// checkReply rejects replies the conversation cannot continue from.
func checkReply(msgs agenteval.Conversation) error {
	if len(msgs) == 0 {
		return fmt.Errorf("it returned no messages")
	}
	for i, m := range msgs {
		if m.Role != agenteval.RoleAssistant && m.Role != agenteval.RoleTool {
			return fmt.Errorf("its message %d has role %q; a reply holds only assistant and tool messages", i, m.Role)
		}
	}
	if last := msgs[len(msgs)-1]; last.Role != agenteval.RoleAssistant || (strings.TrimSpace(last.Content) == "" && len(last.ToolCalls) == 0) {
		return fmt.Errorf("its reply does not end with an assistant message that says something")
	}
	return nil
}

func snippet(s string) string {
	r := []rune(s)
	if len(r) > 200 {
		return string(r[:199]) + "…"
	}
	return s
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}
