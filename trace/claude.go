package trace

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/messages"
)

// Claude Code session logs: ~/.claude/projects/<project>/<session>.jsonl,
// one JSON object per line: {type, uuid, parentUuid, sessionId, cwd,
// version, gitBranch, isSidechain, userType, timestamp, message, ...}.
//
//   - Lines of type user and assistant hold an Anthropic message: content
//     is text or a list of blocks (text, image, thinking, tool_use {id,
//     name, input}, tool_result {tool_use_id, content, is_error}). A
//     streamed assistant message is written as several lines with the same
//     message.id, one block each. Tool results come back in user lines.
//   - Some user lines are not the user's turn: a compaction summary
//     (isCompactSummary, "This session is being continued from a previous
//     conversation…"), "[Request interrupted by user]", a slash command's
//     echo (<command-name>, <command-message>, <command-args>) and output
//     (<local-command-stdout>, <local-command-stderr>), a shell command run
//     with "!" (<bash-input>, <bash-stdout>, <bash-stderr>), and the caveat
//     the CLI puts before local command output. Assistant lines whose model
//     is "<synthetic>" (API errors, "No response requested.") were written
//     by the CLI, not the model. These, system lines (compact_boundary,
//     local_command, hook and error notices) and summary lines are kept in
//     the sample's metadata, under session_events, with their line.
//   - isMeta user lines are context the CLI gave the model (an expanded
//     command prompt, say): system messages.
//   - isSidechain lines belong to a subagent (the Task tool): counted in
//     metadata. A file that holds only sidechain lines (a subagent's own
//     log, agent-*.jsonl) is read as that subagent's conversation.
//   - file-history-snapshot and queue-operation lines are bookkeeping.
//
// Source: the transcripts Claude Code 1.0 to 2.0 write (the line fields
// above), the Anthropic Messages API content blocks, and the Claude Code
// documentation on sessions, slash commands and subagents.

func openClaude(in *input) (convReader, error) {
	st := &claudeState{}
	return perFile(in, st.add, st.done)
}

type claudeState struct {
	session
	ad      argDecoder
	lastMsg string // message.id of the assistant message being streamed
	usageBy map[string]usage
	// sideUsage is usageBy for sidechain lines: a subagent's spend.
	sideUsage map[string]usage
	// side is the conversation of sidechain lines, used when the file
	// holds nothing else.
	side      seq
	sideLines int
	agentIDs  []string
}

func (st *claudeState) add(raw json.RawMessage, pos Pos, probs *[]problem) {
	l, err := st.ad.record(raw)
	if err != nil || l == nil {
		*probs = append(*probs, warnAt(pos, notObject(raw, "a Claude Code log line")))
		return
	}
	st.line(l, pos)
	if st.id == "" {
		st.id = str(l, "sessionId")
	}
	if st.cwd == "" {
		st.cwd = str(l, "cwd")
	}
	typ := str(l, "type")
	switch typ {
	case "user", "assistant":
	case "system":
		st.system(l, pos)
		return
	case "summary":
		st.event(pos, "summary", str(l, "summary"))
		return
	case "file-history-snapshot", "queue-operation":
		return
	default:
		st.left.add(fmt.Sprintf("lines of type %q", typ), pos)
		return
	}
	m, ok := l["message"].(map[string]any)
	if !ok {
		what := "no message"
		if v, has := l["message"]; has {
			what = "a message that is " + messages.KindOf(v) + ", not an object"
		}
		*probs = append(*probs, warnAt(pos, fmt.Sprintf("a %s line with %s; left out", typ, what)))
		return
	}
	if l["isSidechain"] == true {
		st.sideLines++
		if id := str(l, "agentId"); id != "" && !contains(st.agentIDs, id) {
			st.agentIDs = append(st.agentIDs, id)
		}
		// Kept aside: a subagent's own log is nothing but these.
		if typ == "assistant" {
			st.assistant(&st.side, l, m, pos, probs)
		} else {
			st.user(&st.side, l, m, pos, probs)
		}
		return
	}
	if typ == "assistant" {
		st.assistant(&st.s, l, m, pos, probs)
		return
	}
	st.user(&st.s, l, m, pos, probs)
}

// system keeps a system line in the metadata: a compaction boundary, a
// slash command run as a local command, a hook's or an error's notice.
func (st *claudeState) system(l map[string]any, pos Pos) {
	content := str(l, "content")
	if cmd, ok := slashCommand(content); ok {
		st.command(pos, cmd)
		return
	}
	kind := "system"
	if sub := str(l, "subtype"); sub != "" {
		kind = "system:" + sub
	}
	ev := st.event(pos, kind, content)
	if cm := obj(l["compactMetadata"]); cm != nil {
		ev["compact"] = cm
	}
	if lv := str(l, "level"); lv != "" && lv != "info" {
		ev["level"] = lv
	}
}

func (st *claudeState) user(s *seq, l, m map[string]any, pos Pos, probs *[]problem) {
	st.lastMsg = ""
	content := m["content"]
	// The CLI's own lines, told apart by their flags and their text.
	whole := claudeText(content)
	switch {
	case l["isCompactSummary"] == true || strings.HasPrefix(whole, "This session is being continued from a previous conversation"):
		st.event(pos, "compaction_summary", whole)
		return
	case isInterrupt(whole):
		st.event(pos, "interrupt", whole)
		return
	case strings.HasPrefix(whole, "Caveat: The messages below were generated by the user while running local commands"):
		st.event(pos, "local_command_caveat", whole)
		return
	}
	if cmd, ok := slashCommand(whole); ok {
		st.command(pos, cmd)
		return
	}
	if l["isMeta"] == true {
		body := contentText(content, pos, "message.content", probs)
		if body.Text != "" || len(body.Parts) > 0 {
			s.add(msg{role: "system", content: body.Text, parts: body.Parts}, pos, probs)
		}
		return
	}
	blocks, ok := content.([]any)
	if !ok {
		if _, isStr := content.(string); !isStr && content != nil {
			*probs = append(*probs, warnAt(pos, fmt.Sprintf("message.content is %s, not text or a list of blocks; left out", messages.KindOf(content))))
			return
		}
		s.add(msg{role: "user", content: str(m, "content")}, pos, probs)
		return
	}
	var texts []string
	var parts []agenteval.Part
	for i, b := range blocks {
		bm := obj(b)
		where := fmt.Sprintf("message.content[%d]", i)
		if bm == nil {
			*probs = append(*probs, warnAt(pos, fmt.Sprintf("%s is %s, not a block; left out", where, messages.KindOf(b))))
			continue
		}
		if str(bm, "type") == "tool_result" {
			body := contentText(bm["content"], pos, where+".content", probs)
			s.result(msg{content: body.Text, parts: body.Parts, callID: str(bm, "tool_use_id"), isError: bm["is_error"] == true}, pos, probs)
			continue
		}
		body := contentText(bm, pos, where, probs)
		if body.Text != "" {
			texts = append(texts, body.Text)
		}
		parts = append(parts, body.Parts...)
	}
	if len(texts) > 0 || len(parts) > 0 {
		s.add(msg{role: "user", content: strings.Join(texts, "\n"), parts: parts}, pos, probs)
	}
}

func (st *claudeState) assistant(s *seq, l, m map[string]any, pos Pos, probs *[]problem) {
	id := str(m, "id")
	model := str(m, "model")
	if model == "<synthetic>" || l["isApiErrorMessage"] == true {
		// Written by the CLI (an API error, "No response requested."),
		// not by the model.
		kind := "synthetic_reply"
		if l["isApiErrorMessage"] == true {
			kind = "api_error"
		}
		st.event(pos, kind, claudeText(m["content"]))
		st.lastMsg = ""
		return
	}
	st.model(model)
	if u := obj(m["usage"]); u != nil && id != "" {
		by := &st.usageBy
		if s == &st.side {
			by = &st.sideUsage
		}
		if *by == nil {
			*by = map[string]usage{}
		}
		var us usage
		us.input, _ = intOf(u["input_tokens"])
		us.output, _ = intOf(u["output_tokens"])
		us.cacheRead, _ = intOf(u["cache_read_input_tokens"])
		us.set = true
		// Each streamed line repeats the message's usage so far; the last wins.
		(*by)[id] = us
	}
	out := msg{role: "assistant"}
	var texts, thinking []string
	// flush adds what the line holds so far: the next block of the message
	// being streamed, or a new message.
	flush := func() {
		out.content = strings.Join(texts, "\n")
		out.reasoning = strings.Join(thinking, "\n")
		n := len(s.msgs)
		if id != "" && id == st.lastMsg && n > 0 && s.msgs[n-1].role == "assistant" {
			s.extend(out, pos, probs)
		} else {
			s.push(out, pos, probs)
		}
		st.lastMsg = id
		out, texts, thinking = msg{role: "assistant"}, nil, nil
	}
	blocks, ok := m["content"].([]any)
	if !ok {
		texts = append(texts, str(m, "content"))
	}
	for i, b := range blocks {
		bm := obj(b)
		switch t := str(bm, "type"); t {
		case "text":
			texts = append(texts, str(bm, "text"))
		case "thinking":
			thinking = append(thinking, str(bm, "thinking"))
		case "redacted_thinking":
		case "tool_use", "server_tool_use":
			c := st.ad.args(bm["input"], pos, fmt.Sprintf("message.content[%d].input", i), probs)
			c.id, c.name = str(bm, "id"), str(bm, "name")
			out.calls = append(out.calls, c)
		case "web_search_tool_result", "web_fetch_tool_result", "code_execution_tool_result", "bash_code_execution_tool_result", "text_editor_code_execution_tool_result":
			// A server tool's result comes in the same message as its call.
			flush()
			s.result(msg{content: st.ad.text(bm["content"]), callID: str(bm, "tool_use_id")}, pos, probs)
		default:
			*probs = append(*probs, warnAt(pos, fmt.Sprintf("message.content[%d] has type %q; left out", i, t)))
		}
	}
	if len(texts) > 0 || len(thinking) > 0 || len(out.calls) > 0 {
		flush()
	}
}

// command notes a slash command's echo or output.
func (st *claudeState) command(pos Pos, c claudeCommand) {
	ev := st.event(pos, c.kind, c.text)
	if c.name != "" {
		ev["command"] = c.name
	}
	if c.args != "" {
		ev["args"] = c.args
	}
}

func (st *claudeState) done() *conv {
	var main, side usage
	for _, us := range st.usageBy {
		main.add(us)
	}
	for _, us := range st.sideUsage {
		side.add(us)
	}
	st.usage = main
	switch {
	case len(st.s.msgs) == 0 && len(st.side.msgs) > 0:
		// A subagent's own log.
		st.s, st.usage = st.side, side
		st.meta("subagent", true)
		if len(st.agentIDs) > 0 {
			st.meta("agent_ids", st.agentIDs)
		}
	case st.sideLines > 0:
		sc := map[string]any{"lines": st.sideLines}
		if side.set {
			sc["usage"] = usageMeta(side)
		}
		if len(st.agentIDs) > 0 {
			sc["agent_ids"] = st.agentIDs
		}
		st.meta("sidechain", sc)
	}
	return st.finish("claude")
}

// claudeText is the text of message content given as a string or as a
// list of blocks, for telling the CLI's own lines apart.
func claudeText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	var texts []string
	for _, b := range list(v) {
		if bm := obj(b); str(bm, "type") == "text" {
			texts = append(texts, str(bm, "text"))
		}
	}
	return strings.Join(texts, "\n")
}

func isInterrupt(s string) bool {
	s = strings.TrimSpace(s)
	return strings.HasPrefix(s, "[Request interrupted by user") && strings.HasSuffix(s, "]")
}

type claudeCommand struct {
	kind, name, args, text string
}

var (
	claudeTagRE   = regexp.MustCompile(`(?s)<(command-name|command-message|command-args|local-command-stdout|local-command-stderr|bash-input|bash-stdout|bash-stderr)>(.*?)</(?:command-name|command-message|command-args|local-command-stdout|local-command-stderr|bash-input|bash-stdout|bash-stderr)>`)
	claudeTagOnly = regexp.MustCompile(`(?s)^\s*(?:<(command-name|command-message|command-args|local-command-stdout|local-command-stderr|bash-input|bash-stdout|bash-stderr)>.*?</(?:command-name|command-message|command-args|local-command-stdout|local-command-stderr|bash-input|bash-stdout|bash-stderr)>\s*)+$`)
)

// slashCommand recognizes text made only of the tags Claude Code writes
// for a slash command (its echo, or its output) or a "!" shell command.
func slashCommand(text string) (claudeCommand, bool) {
	if !strings.Contains(text, "</") || !claudeTagOnly.MatchString(text) {
		return claudeCommand{}, false
	}
	c := claudeCommand{kind: "command", text: strings.TrimSpace(text)}
	var outs []string
	for _, m := range claudeTagRE.FindAllStringSubmatch(text, -1) {
		v := strings.TrimSpace(m[2])
		switch m[1] {
		case "command-name":
			c.name = v
		case "command-args":
			c.args = v
		case "bash-input":
			c.name, c.kind = "!"+v, "shell_command"
		case "local-command-stdout", "local-command-stderr", "bash-stdout", "bash-stderr":
			if v != "" {
				outs = append(outs, v)
			}
		}
	}
	if c.name == "" && c.kind == "command" {
		c.kind = "command_output"
		c.text = strings.Join(outs, "\n")
	}
	return c, true
}

// notObject says why a line that is not a JSON object was left out.
func notObject(raw json.RawMessage, what string) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return fmt.Sprintf("malformed JSON (%v); %s must be an object; left out", err, what)
	}
	return fmt.Sprintf("%s must be a JSON object, not %s; left out", what, messages.KindOf(v))
}
