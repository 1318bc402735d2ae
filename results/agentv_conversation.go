package results

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/jsonvalue"
)

// An AgentV test's conversation is in one of these places, tried in this
// order: the row's trace.messages (rows written while a run goes: the
// input and every message after it); a list of messages as the row's
// output (older rows); the transcript file the row names (v4:
// transcript.jsonl, one message a line; v5: transcript.json, turns of
// content blocks); else the input (the row's, or input.md) and the final
// answer (the row's output text, or answer.md) alone. agenteval's
// results hold the same: the input, then every message of the agent.

// avConversation builds a test's conversation from what the row holds or
// names, noting where something could not be read. A v5 row of several
// samples names no transcript of its own: its conversation is that of its
// best sample, whose result AgentV makes the row's.
func (rd *Reader) avConversation(ln int, row *avRow, trials []agenteval.Trial) agenteval.Conversation {
	if len(row.Trace) > 0 {
		var tr struct {
			Messages []json.RawMessage `json:"messages"`
		}
		if json.Unmarshal(row.Trace, &tr) == nil && len(tr.Messages) > 0 {
			return rd.avMessages(ln, tr.Messages)
		}
	}
	var outMsgs []json.RawMessage
	if len(row.Output) > 0 && row.Output[0] == '[' && json.Unmarshal(row.Output, &outMsgs) == nil {
		return append(rd.avInput(ln, row), rd.avMessages(ln, outMsgs)...)
	}
	if row.TranscriptPath != "" {
		if b, ok := rd.avFile(ln, "transcript", row.TranscriptPath); ok {
			if conv, ok := rd.avTranscript(ln, row.TranscriptPath, b); ok {
				return conv
			}
		}
	}
	conv := rd.avInput(ln, row)
	answer, have := "", false
	if len(row.Output) > 0 && row.Output[0] == '"' {
		have = json.Unmarshal(row.Output, &answer) == nil
	}
	if !have {
		for _, p := range []string{row.OutputPath, row.AnswerPath, row.ResponsePath} {
			if p == "" {
				continue
			}
			if b, ok := rd.avFile(ln, "answer", p); ok {
				answer, have = strings.TrimRight(string(b), " \t\r\n"), true
			}
			break
		}
	}
	if have && answer != "" {
		conv = append(conv, agenteval.Message{Role: agenteval.RoleAssistant, Content: answer})
	}
	if len(conv) == 0 && len(trials) > 0 {
		best := 0
		for i, t := range trials {
			if t.Score > trials[best].Score {
				best = i
			}
		}
		conv = trials[best].Output
	}
	if len(conv) == 0 && len(trials) == 0 && row.TranscriptPath == "" && row.InputPath == "" && row.AnswerPath == "" && row.OutputPath == "" {
		rd.notes.add(ln, "no-conversation", "the row records no conversation and names no file that holds one; the test shows no messages")
	}
	return conv
}

// avInput is the input sent to the agent: the row's input messages, or
// the input.md it names.
func (rd *Reader) avInput(ln int, row *avRow) agenteval.Conversation {
	var msgs []json.RawMessage
	if len(row.Input) > 0 && json.Unmarshal(row.Input, &msgs) == nil {
		return rd.avMessages(ln, msgs)
	}
	var text string
	if len(row.Input) > 0 && json.Unmarshal(row.Input, &text) == nil && text != "" {
		return agenteval.Conversation{{Role: agenteval.RoleUser, Content: text}}
	}
	if row.InputPath == "" {
		return nil
	}
	b, ok := rd.avFile(ln, "input", row.InputPath)
	if !ok {
		return nil
	}
	return rd.markdownMessages(ln, string(b))
}

// mdRole matches the "@[role]:" line that opens each message of AgentV's
// input.md.
var mdRole = regexp.MustCompile(`(?m)^@\[(.+?)\]:\n`)

// markdownMessages reads input.md: messages each opened by "@[role]:" on
// a line of its own, or, without one, one user message, as AgentV reads
// it back.
func (rd *Reader) markdownMessages(ln int, text string) agenteval.Conversation {
	text = strings.TrimSpace(text)
	locs := mdRole.FindAllStringSubmatchIndex(text, -1)
	if !strings.HasPrefix(text, "@[") || len(locs) == 0 {
		if text == "" {
			return nil
		}
		return agenteval.Conversation{{Role: agenteval.RoleUser, Content: text}}
	}
	var conv agenteval.Conversation
	for i, l := range locs {
		end := len(text)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		name := text[l[2]:l[3]]
		role, ok := agenteval.ParseRole(name)
		if !ok {
			rd.notes.add(ln, "role "+name, "a message of role %q is left out: agenteval knows no such role", name)
			continue
		}
		conv = append(conv, agenteval.Message{Role: role, Content: strings.TrimRight(text[l[1]:end], " \t\r\n")})
	}
	return conv
}

// avFile reads a file a row names, relative to the run's folder. A path
// that leaves the folder is not read: a results file names its run's own
// files, and show would otherwise print any file a row named.
func (rd *Reader) avFile(ln int, what, rel string) ([]byte, bool) {
	if rd.dir == "" {
		rd.notes.add(ln, "no-dir", "the %s is in %s, which is not read: the results came without their folder", what, rel)
		return nil, false
	}
	local := filepath.FromSlash(rel)
	if !filepath.IsLocal(local) {
		rd.notes.add(ln, "outside", "the %s is said to be in %s, outside the run's folder; it is not read", what, rel)
		return nil, false
	}
	b, err := os.ReadFile(filepath.Join(rd.dir, local))
	if err != nil {
		// One note for every file of the run that is gone: a run folder
		// copied without its test folders misses them all.
		rd.notes.add(ln, "missing", "a file the row names cannot be read (%v); tests whose files are missing show what their rows hold", err)
		return nil, false
	}
	return b, true
}

// avTranscript reads a transcript file: v5's transcript.json (an object
// with turns) or v4's transcript.jsonl (a message a line).
func (rd *Reader) avTranscript(ln int, rel string, b []byte) (agenteval.Conversation, bool) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return nil, false
	}
	var doc struct {
		Turns []avTurn `json:"turns"`
	}
	// A transcript.json is one object; a transcript.jsonl of several
	// lines is not one JSON value.
	if json.Unmarshal(b, &doc) == nil && doc.Turns != nil {
		return rd.avTurns(ln, doc.Turns), true
	}
	var msgs []json.RawMessage
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<30)
	i := 0
	for sc.Scan() {
		i++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if !json.Valid(line) {
			rd.notes.add(ln, "transcript-bad", "line %d of the transcript %s is not JSON; the test shows what the row itself holds", i, rel)
			return nil, false
		}
		msgs = append(msgs, append([]byte(nil), line...))
	}
	return rd.avMessages(ln, msgs), true
}

// avMsg is AgentV's message, as trace.messages, transcript.jsonl lines and
// inputs write it.
type avMsg struct {
	Role      string          `json:"role"`
	Name      string          `json:"name"`
	Content   json.RawMessage `json:"content"`
	ToolCalls []avToolCall    `json:"tool_calls"`
	Metadata  map[string]any  `json:"metadata"`
}

// avToolCall is a call with, when it ran, its output: AgentV keeps a
// tool's result in the call, agenteval in a tool message that answers it.
type avToolCall struct {
	Tool       string          `json:"tool"`
	Input      json.RawMessage `json:"input"`
	Output     json.RawMessage `json:"output"`
	ID         json.RawMessage `json:"id"`
	DurationMS *float64        `json:"duration_ms"`
}

// avMessages maps AgentV's messages.
func (rd *Reader) avMessages(ln int, raws []json.RawMessage) agenteval.Conversation {
	var conv agenteval.Conversation
	calls := 0
	for _, raw := range raws {
		var m avMsg
		if err := json.Unmarshal(raw, &m); err != nil {
			rd.notes.add(ln, "message-bad", "a message does not read (%v); it is left out", err)
			continue
		}
		role, ok := agenteval.ParseRole(m.Role)
		if !ok {
			rd.notes.add(ln, "role "+m.Role, "a message of role %q is left out: agenteval knows no such role", m.Role)
			continue
		}
		msg := agenteval.Message{Role: role, Name: m.Name}
		msg.Content, msg.Parts = rd.avContent(ln, m.Content, &msg)
		var answers agenteval.Conversation
		for _, c := range m.ToolCalls {
			calls++
			tc := agenteval.ToolCall{Name: c.Tool, ID: idText(c.ID)}
			tc.Args, tc.RawArgs = avArgs(c.Input)
			if c.DurationMS != nil {
				tc.DurationMS = *c.DurationMS
			}
			if len(c.Output) == 0 || string(c.Output) == "null" {
				msg.ToolCalls = append(msg.ToolCalls, tc)
				continue
			}
			if tc.ID == "" {
				tc.ID = "call_" + strconv.Itoa(calls)
			}
			msg.ToolCalls = append(msg.ToolCalls, tc)
			answers = append(answers, agenteval.Message{Role: agenteval.RoleTool, ToolCallID: tc.ID, Name: tc.Name, Content: jsonvalue.Text(c.Output)})
		}
		conv = append(conv, msg)
		conv = append(conv, answers...)
	}
	return conv
}

// avContent is a message's text and the parts that are not text: content
// is a string, a list of blocks (text, image, file), or another value,
// shown as its JSON as AgentV shows it to a model.
func (rd *Reader) avContent(ln int, raw json.RawMessage, msg *agenteval.Message) (string, []agenteval.Part) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var blocks []map[string]any
	if raw[0] != '[' || json.Unmarshal(raw, &blocks) != nil {
		return jsonvalue.Text(raw), nil
	}
	var texts []string
	var parts []agenteval.Part
	for _, b := range blocks {
		t, _ := b["type"].(string)
		switch t {
		case "text":
			if s, ok := b["text"].(string); ok {
				texts = append(texts, s)
			}
		case "image":
			src, _ := b["source"].(string)
			mt, _ := b["media_type"].(string)
			parts = append(parts, agenteval.Part{Type: "image", MediaType: mt, URL: src})
		case "file":
			p, _ := b["path"].(string)
			mt, _ := b["media_type"].(string)
			parts = append(parts, agenteval.Part{Type: "file", MediaType: mt, Path: p})
		case "thinking", "reasoning":
			if s, ok := b["text"].(string); ok {
				addReasoning(msg, s)
			}
		default:
			j, _ := json.Marshal(b)
			texts = append(texts, string(j))
			rd.notes.add(ln, "block "+t, "a content block of type %q is shown as its JSON", t)
		}
	}
	return strings.Join(texts, "\n"), parts
}

func addReasoning(msg *agenteval.Message, s string) {
	if msg.Metadata == nil {
		msg.Metadata = map[string]any{}
	}
	if prev, ok := msg.Metadata["reasoning"].(string); ok && prev != "" {
		s = prev + "\n" + s
	}
	msg.Metadata["reasoning"] = s
}

// avTurn is a turn of v5's transcript.json.
type avTurn struct {
	Type    string           `json:"type"`
	Content []map[string]any `json:"content"`
}

// avTurns maps v5's turns: text, image, thinking and tool_use blocks,
// whose result becomes the tool message that answers the call.
func (rd *Reader) avTurns(ln int, turns []avTurn) agenteval.Conversation {
	var conv agenteval.Conversation
	calls := 0
	for _, t := range turns {
		role, ok := agenteval.ParseRole(t.Type)
		if !ok {
			rd.notes.add(ln, "role "+t.Type, "a turn of type %q is left out: agenteval knows no such role", t.Type)
			continue
		}
		msg := agenteval.Message{Role: role}
		var texts []string
		var answers agenteval.Conversation
		for _, b := range t.Content {
			bt, _ := b["type"].(string)
			switch bt {
			case "text":
				if s, ok := b["text"].(string); ok {
					texts = append(texts, s)
				}
			case "thinking":
				if s, ok := b["text"].(string); ok {
					addReasoning(&msg, s)
				}
			case "image":
				src, _ := b["source"].(string)
				mt, _ := b["mime_type"].(string)
				msg.Parts = append(msg.Parts, agenteval.Part{Type: "image", MediaType: mt, URL: src})
			case "tool_use":
				calls++
				tc := agenteval.ToolCall{}
				tc.Name, _ = b["name"].(string)
				tc.ID, _ = b["id"].(string)
				in, _ := json.Marshal(b["input"])
				tc.Args, tc.RawArgs = avArgs(in)
				if tc.ID == "" {
					tc.ID = "call_" + strconv.Itoa(calls)
				}
				if res, ok := b["result"].(map[string]any); ok {
					if ms, ok := res["duration_ms"].(float64); ok {
						tc.DurationMS = ms
					}
					out, _ := json.Marshal(res["output"])
					answers = append(answers, agenteval.Message{Role: agenteval.RoleTool, ToolCallID: tc.ID, Name: tc.Name, Content: jsonvalue.Text(out)})
				}
				msg.ToolCalls = append(msg.ToolCalls, tc)
			default:
				j, _ := json.Marshal(b)
				texts = append(texts, string(j))
				rd.notes.add(ln, "block "+bt, "a content block of type %q is shown as its JSON", bt)
			}
		}
		msg.Content = strings.Join(texts, "\n")
		conv = append(conv, msg)
		conv = append(conv, answers...)
	}
	return conv
}

// avArgs reads a call's input: an object is its arguments; JSON text of
// an object too; anything else is kept as raw text, as agenteval keeps
// arguments that are not an object.
func avArgs(raw json.RawMessage) (map[string]any, string) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return map[string]any{}, ""
	}
	var args map[string]any
	if json.Unmarshal(raw, &args) == nil {
		return args, ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if json.Unmarshal([]byte(s), &args) == nil {
			return args, ""
		}
		return nil, s
	}
	return nil, string(raw)
}

// idText is an id written as a string or a number.
func idText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return fmt.Sprint(strings.TrimSpace(string(raw)))
}
