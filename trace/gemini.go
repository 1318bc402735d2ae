package trace

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agenteval/agenteval/internal/messages"
)

// Gemini CLI sessions: ~/.gemini/tmp/<project hash>/chats/
// session-<time>-<id>.json, one pretty-printed ConversationRecord per
// file: {sessionId, projectHash, startTime, lastUpdated, messages: [{id,
// timestamp, type, content, ...}], summary}. A message's type is user,
// gemini (the model), or info, error or warning (the CLI's notices). A
// gemini message may carry toolCalls: [{id, name, args, result, status,
// timestamp, displayName, description, resultDisplay}], each with its
// result inline (Gemini's functionResponse parts), thoughts: [{subject,
// description, timestamp}], tokens: {input, output, cached, thoughts,
// tool, total} and model. content is text in older files and a Gemini
// part list (PartListUnion: a string, a part, or parts such as {text}) in
// newer ones.
//
// A gemini message is the assistant's reply with its calls; each call's
// result follows as a tool message. Notices go to session_events.
//
// Source: google-gemini/gemini-cli, packages/core/src/services/
// chatRecordingService.ts (ConversationRecord, MessageRecord,
// ToolCallRecord, TokensSummary) and the @google/genai Part type.

func openGemini(in *input) (convReader, error) {
	r, err := in.reader()
	if err != nil {
		return nil, err
	}
	var fileWarn []problem
	return newPullReader(&fileWarn, func(yield func(*conv, error) bool) {
		var st geminiState
		var probs []problem
		seenMessages := false
		err := streamItems(r, []string{"messages"}, func(raw json.RawMessage, parent map[string]json.RawMessage, pos Pos, bad error) bool {
			if bad != nil {
				probs = append(probs, warnAt(pos, bad.Error()))
				return true
			}
			if parent == nil {
				// A document without a messages list: the record itself.
				st.record(raw, pos, &probs)
				return true
			}
			if !seenMessages {
				seenMessages = true
				st.header(parent, pos)
			}
			st.message(raw, pos, &probs)
			return true
		})
		c := st.finish("gemini")
		switch {
		case c == nil || len(c.sample.UserInput) == 0:
			fileWarn = append(fileWarn, probs...)
			if c != nil {
				fileWarn = append(fileWarn, warnAt(c.pos, "this Gemini CLI session holds no message of the conversation; no row is read from it"))
			}
		default:
			c.problems = append(probs, c.problems...)
			if !yield(c, nil) {
				return
			}
		}
		if err != nil {
			yield(nil, err)
		}
	}), nil
}

type geminiState struct {
	session
	ad argDecoder
}

// header reads the record's fields written before its messages.
func (st *geminiState) header(parent map[string]json.RawMessage, pos Pos) {
	var s string
	if json.Unmarshal(parent["sessionId"], &s) == nil {
		st.id = s
	}
	if json.Unmarshal(parent["projectHash"], &s) == nil && s != "" {
		st.meta("project_hash", s)
	}
	if !st.started {
		st.started, st.pos = true, pos
	}
}

// record reads a whole ConversationRecord given as one item (its
// messages list was not where streaming looks for it).
func (st *geminiState) record(raw json.RawMessage, pos Pos, probs *[]problem) {
	rec, err := st.ad.record(raw)
	if err != nil || rec == nil {
		*probs = append(*probs, warnAt(pos, notObject(raw, "a Gemini CLI session")))
		return
	}
	st.id = str(rec, "sessionId")
	if !st.started {
		st.started, st.pos = true, pos
	}
	if _, ok := rec["messages"]; !ok {
		*probs = append(*probs, warnAt(pos, "a Gemini CLI session has a messages list; this object has none"))
		return
	}
	for i, m := range list(rec["messages"]) {
		mm := obj(m)
		if mm == nil {
			*probs = append(*probs, warnAt(pos, fmt.Sprintf("messages[%d] is %s, not an object; left out", i, messages.KindOf(m))))
			continue
		}
		st.read(mm, pos, fmt.Sprintf("messages[%d].", i), probs)
	}
}

func (st *geminiState) message(raw json.RawMessage, pos Pos, probs *[]problem) {
	m, err := st.ad.record(raw)
	if err != nil || m == nil {
		*probs = append(*probs, warnAt(pos, notObject(raw, "a Gemini CLI message")))
		return
	}
	st.read(m, pos, "", probs)
}

func (st *geminiState) read(m map[string]any, pos Pos, where string, probs *[]problem) {
	st.line(m, pos)
	body := contentText(geminiParts(m["content"]), pos, where+"content", probs)
	switch typ := str(m, "type"); typ {
	case "user":
		if body.Text == "" && len(body.Parts) == 0 {
			return
		}
		st.s.add(msg{role: "user", content: body.Text, parts: body.Parts}, pos, probs)
	case "gemini", "model":
		st.model(str(m, "model"))
		if t := obj(m["tokens"]); t != nil {
			var u usage
			u.input, _ = intOf(t["input"])
			u.output, _ = intOf(t["output"])
			u.cacheRead, _ = intOf(t["cached"])
			u.set = true
			st.usage.add(u)
		}
		out := msg{role: "assistant", content: body.Text, parts: body.Parts, reasoning: body.Reasoning}
		var thoughts []string
		for _, th := range list(m["thoughts"]) {
			tm := obj(th)
			thoughts = append(thoughts, strings.TrimSpace(joinNonEmpty(str(tm, "subject"), str(tm, "description"))))
		}
		out.reasoning = joinNonEmpty(out.reasoning, strings.Join(thoughts, "\n"))
		calls := list(m["toolCalls"])
		var results []msg
		for j, tc := range calls {
			t := obj(tc)
			cw := fmt.Sprintf("%stoolCalls[%d]", where, j)
			if t == nil {
				*probs = append(*probs, warnAt(pos, cw+" is not an object; left out"))
				continue
			}
			c := st.ad.args(t["args"], pos, cw+".args", probs)
			c.id, c.name = str(t, "id"), str(t, "name")
			out.calls = append(out.calls, c)
			res, isErr := geminiResult(t["result"], &st.ad)
			status := str(t, "status")
			if status == "error" || status == "cancelled" {
				isErr = true
			}
			if _, has := t["result"]; !has || t["result"] == nil {
				if status == "" || status == "success" || status == "error" || status == "cancelled" {
					// A call the CLI finished records its result; none
					// here means it was cut off.
					res = joinNonEmpty(res, str(t, "resultDisplay"))
				}
				if res == "" {
					*probs = append(*probs, warnAt(pos, fmt.Sprintf("%s (%s) has no result (status %q); the call is kept without one", cw, c.name, status)))
					continue
				}
			}
			results = append(results, msg{content: res, callID: c.id, name: c.name, isError: isErr})
		}
		if out.content == "" && len(out.calls) == 0 && out.reasoning == "" {
			return
		}
		st.s.push(out, pos, probs)
		for _, r := range results {
			st.s.result(r, pos, probs)
		}
	case "info", "error", "warning":
		st.event(pos, typ, body.Text)
	default:
		st.left.add(fmt.Sprintf("messages of type %q", typ), pos)
	}
}

// geminiParts turns Gemini parts ({text}, {thought: true, text},
// {inlineData: {mimeType, data}}, {functionCall}, {functionResponse}) into
// the content blocks package messages reads; a string stays text.
func geminiParts(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return geminiParts([]any{x})
	case []any:
		out := make([]any, 0, len(x))
		for _, p := range x {
			pm := obj(p)
			switch {
			case pm == nil:
				out = append(out, p)
			case pm["thought"] == true:
				out = append(out, map[string]any{"type": "thinking", "thinking": str(pm, "text")})
			case pm["text"] != nil:
				out = append(out, map[string]any{"type": "text", "text": str(pm, "text")})
			case pm["inlineData"] != nil:
				d := obj(pm["inlineData"])
				out = append(out, map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": str(d, "mimeType"), "data": str(d, "data")}})
			case pm["functionCall"] != nil, pm["functionResponse"] != nil:
				// Calls and results are read from toolCalls.
			default:
				out = append(out, p)
			}
		}
		return out
	}
	return v
}

// geminiResult is the text of a tool call's result: the output (or
// error) of its functionResponse parts, or the parts' text.
func geminiResult(v any, ad *argDecoder) (string, bool) {
	var texts []string
	isErr := false
	parts := list(v)
	if parts == nil && v != nil {
		if _, ok := v.(string); ok {
			return v.(string), false
		}
		parts = []any{v}
	}
	for _, p := range parts {
		pm := obj(p)
		if fr := obj(pm["functionResponse"]); fr != nil {
			resp := fr["response"]
			if rm := obj(resp); rm != nil {
				switch {
				case rm["output"] != nil && len(rm) == 1:
					resp = rm["output"]
				case rm["error"] != nil && len(rm) == 1:
					resp, isErr = rm["error"], true
				}
			}
			texts = append(texts, ad.text(resp))
			continue
		}
		if t, ok := pm["text"].(string); ok {
			texts = append(texts, t)
			continue
		}
		if s, ok := p.(string); ok {
			texts = append(texts, s)
			continue
		}
		texts = append(texts, ad.text(p))
	}
	return strings.Join(texts, "\n"), isErr
}
