package target

import (
	"crypto/rand"
	"crypto/sha1"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agenteval/agenteval"
)

// aguiMessage is a message as AG-UI writes it. Content is a string, or a
// list of input parts for a user message with images; an assistant
// message that only calls tools has none.
type aguiMessage struct {
	ID         string         `json:"id"`
	Role       string         `json:"role"`
	Content    any            `json:"content,omitempty"`
	Name       string         `json:"name,omitempty"`
	ToolCalls  []aguiToolCall `json:"toolCalls,omitempty"`
	ToolCallID string         `json:"toolCallId,omitempty"`
}

type aguiToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function aguiFunction `json:"function"`
}

type aguiFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// aguiMessages writes the history as AG-UI messages. Each gets the id the
// agent gave it (known, by fingerprint and occurrence) or else one made
// from the thread and the message, the same on every turn, so a server
// that merges messages by id sees each once. It returns the ids it sent.
//
// An assistant message whose id was already sent is the tail of one the
// reply split (aguiRun.reply moves unanswered calls last): its calls go
// back into the message they came from.
func aguiMessages(thread string, history agenteval.Conversation, known map[string]string) ([]aguiMessage, map[string]bool) {
	out := make([]aguiMessage, 0, len(history))
	sent := map[string]bool{}
	seen := map[string]int{}
	at := map[string]int{} // id -> index in out
	// Calls not yet answered, for tool messages that do not say which
	// call they answer.
	var open []aguiToolCall
	for _, m := range history {
		fp := aguiFingerprint(m)
		seen[fp]++
		key := fmt.Sprintf("%s#%d", fp, seen[fp])
		id := known[key]
		if id == "" {
			id = aguiNameUUID(thread + "\x00" + key)
		}
		am := aguiMessage{ID: id, Role: string(m.Role), Name: m.Name}
		switch m.Role {
		case agenteval.RoleAssistant:
			if m.Content != "" {
				am.Content = m.Content
			}
			for j, c := range m.ToolCalls {
				cid := c.ID
				if cid == "" {
					cid = "call_" + aguiNameUUID(fmt.Sprintf("%s\x00%d", id, j))[:8]
				}
				tc := aguiToolCall{ID: cid, Type: "function", Function: aguiFunction{Name: c.Name, Arguments: c.ArgsText()}}
				am.ToolCalls = append(am.ToolCalls, tc)
				open = append(open, tc)
			}
			if i, ok := at[id]; ok && out[i].Role == string(agenteval.RoleAssistant) {
				out[i].ToolCalls = append(out[i].ToolCalls, am.ToolCalls...)
				continue
			}
		case agenteval.RoleTool:
			am.Name = ""
			am.Content = m.Content
			am.ToolCallID = m.ToolCallID
			for i, c := range open {
				if (am.ToolCallID == "" && (m.Name == "" || m.Name == c.Function.Name)) || am.ToolCallID == c.ID {
					am.ToolCallID = c.ID
					open = append(open[:i:i], open[i+1:]...)
					break
				}
			}
		case agenteval.RoleUser:
			am.Content = aguiUserContent(m)
		default:
			am.Content = m.Content
		}
		at[id] = len(out)
		sent[id] = true
		out = append(out, am)
	}
	return out, sent
}

// aguiUserContent is a user message's text, or its text and images as
// AG-UI input parts.
func aguiUserContent(m agenteval.Message) any {
	var parts []map[string]any
	for _, p := range m.Parts {
		if p.Type != "image" || p.URL == "" {
			continue
		}
		if parts == nil && m.Content != "" {
			parts = append(parts, map[string]any{"type": "text", "text": m.Content})
		}
		src := map[string]any{"type": "url", "value": p.URL}
		if rest, ok := strings.CutPrefix(p.URL, "data:"); ok {
			if meta, data, ok := strings.Cut(rest, ","); ok && strings.HasSuffix(meta, ";base64") {
				src = map[string]any{"type": "data", "value": data, "mimeType": strings.TrimSuffix(meta, ";base64")}
			}
		}
		if p.MediaType != "" {
			src["mimeType"] = p.MediaType
		}
		parts = append(parts, map[string]any{"type": "image", "source": src})
	}
	if parts == nil {
		return m.Content
	}
	return parts
}

// aguiFingerprint names a message by what it says, so that the id the
// agent gave it is found again when the history comes back, even when a
// window drops the messages before it.
func aguiFingerprint(m agenteval.Message) string {
	h := sha1.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00", m.Role, m.ToolCallID, m.Content)
	for _, c := range m.ToolCalls {
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00", c.ID, c.Name, c.ArgsText())
	}
	return fmt.Sprintf("%x", h.Sum(nil))[:16]
}

// aguiThreadID is a conversation's threadId: a UUID made from its id, as
// some servers (LangGraph Platform's threads) accept only UUIDs; a random
// one when the caller names no conversation.
func aguiThreadID(conv string) string {
	if conv == "" {
		return aguiRandomUUID()
	}
	return aguiNameUUID("agenteval conversation\x00" + conv)
}

// aguiNameUUID is a name-based UUID (version 5 layout over SHA-1).
func aguiNameUUID(name string) string {
	sum := sha1.Sum([]byte(name))
	b := sum[:16]
	b[6] = b[6]&0x0f | 0x50
	b[8] = b[8]&0x3f | 0x80
	return formatUUID(b)
}

// aguiRandomUUID is a version 4 UUID.
func aguiRandomUUID() string {
	b := make([]byte, 16)
	rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return formatUUID(b)
}

func formatUUID(b []byte) string {
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// aguiText reads a message's content as the protocol writes it: a
// string, or input parts whose text parts are joined.
func aguiText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			if p.Type == "text" {
				b.WriteString(p.Text)
			}
		}
		return b.String()
	}
	return ""
}
