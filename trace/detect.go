package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/agenteval/agenteval"
)

// shape is what detection learns from the first JSON value of a file: its
// top-level keys, and a few of their values when they are short strings.
type shape struct {
	array  bool // the file opens with '['
	keys   map[string]bool
	order  []string // the keys, as written
	str    map[string]string
	first  *shape // the first element, for an array or a "data"/"messages" list
	inList string // the key whose list first describes
}

// detect picks the format of a file from its first bytes. What it cannot
// place is left to the dataset reader, whose errors say what a row needs.
func detect(head []byte) *Format {
	if isZip(head) {
		// Inspect's .eval log is the zip agenteval reads; the reader
		// says so clearly when a zip is something else.
		f, _ := LookupFormat("inspect")
		return f
	}
	sh := sniff(head)
	name := "ragas"
	switch {
	case sh == nil:
	case isSpanDump(sh):
		name = "otlp"
	case sh.array && sh.first != nil:
		e := sh.first
		switch {
		case e.has("resourceSpans", "resource_spans", "resourceLogs", "resource_logs"):
			name = "otlp"
		case e.str["object"] == "trace" || e.str["object"] == "trace.span":
			name = "openai-agents"
		case isLangChainMessage(e):
			name = "langchain"
		case e.has("schema_version") && strings.HasPrefix(e.str["schema_version"], "ATIF"):
			name = "atif"
		case isLangSmithRun(e):
			name = "langsmith"
		}
	case sh.has("resourceSpans", "resource_spans", "resourceLogs", "resource_logs", "batches"):
		name = "otlp"
	case sh.str["object"] == "trace" || sh.str["object"] == "trace.span":
		name = "openai-agents"
	case sh.inList == "data" && sh.first != nil && (sh.first.str["object"] == "trace" || sh.first.str["object"] == "trace.span"):
		name = "openai-agents"
	case strings.HasPrefix(sh.str["schema_version"], "ATIF"):
		name = "atif"
	case sh.has("eval") && (sh.has("samples") || sh.has("status") || sh.has("version")):
		name = "inspect"
	case sh.has("projectHash") && (sh.has("sessionId") || sh.has("messages")):
		name = "gemini"
	case (sh.inList == "post" || sh.inList == "patch" || sh.inList == "runs") && (sh.first == nil || isLangSmithRun(sh.first)):
		name = "langsmith"
	case isLangSmithRun(sh):
		name = "langsmith"
	case sh.inList == "messages" && sh.first != nil && isLangChainMessage(sh.first):
		name = "langchain"
	case sh.has("payload") && isCodexType(sh.str["type"]):
		name = "codex"
	case sh.has("data") && isCopilotType(sh.str["type"]):
		name = "copilot"
	case isClaudeLine(sh):
		name = "claude"
	}
	f, _ := LookupFormat(name)
	return f
}

func (s *shape) has(keys ...string) bool {
	for _, k := range keys {
		if s.keys[k] {
			return true
		}
	}
	return false
}

// isLangChainMessage matches messages_to_dict output: {type, data: {content}}.
func isLangChainMessage(s *shape) bool {
	switch s.str["type"] {
	case "human", "ai", "system", "tool", "function", "chat", "HumanMessage", "AIMessage", "SystemMessage", "ToolMessage",
		"HumanMessageChunk", "AIMessageChunk":
		return s.has("data")
	}
	// LangChain's dumpd form: {lc: 1, type: "constructor", id: [...], kwargs}.
	return s.has("lc") && s.has("kwargs")
}

// isLangSmithRun matches a LangSmith run: {id, name, run_type, inputs,
// outputs, parent_run_id, trace_id, dotted_order, ...}.
func isLangSmithRun(s *shape) bool {
	switch s.str["run_type"] {
	case "llm", "chain", "tool", "retriever", "embedding", "prompt", "parser":
		return s.has("id", "trace_id", "dotted_order", "parent_run_id", "inputs")
	}
	return false
}

func isCodexType(t string) bool {
	switch t {
	case "session_meta", "response_item", "event_msg", "turn_context", "compacted":
		return true
	}
	return false
}

func isCopilotType(t string) bool {
	return strings.HasPrefix(t, "session.") || strings.HasPrefix(t, "user.") || strings.HasPrefix(t, "assistant.") || strings.HasPrefix(t, "tool.")
}

func isClaudeLine(s *shape) bool {
	switch s.str["type"] {
	case "user", "assistant", "system", "summary", "file-history-snapshot", "queue-operation":
		return s.has("sessionId", "uuid", "leafUuid", "parentUuid", "messageId", "snapshot")
	}
	return false
}

// sniff reads the top-level keys of the first JSON value in head, which
// may be cut short. It also looks one level into an array, and into a
// "data" or "messages" list, at the first element.
func sniff(head []byte) *shape {
	head = bytes.TrimPrefix(head, []byte{0xEF, 0xBB, 0xBF})
	dec := json.NewDecoder(bytes.NewReader(head))
	tok, err := dec.Token()
	if err != nil {
		return nil
	}
	switch tok {
	case json.Delim('['):
		s := &shape{array: true}
		if dec.More() {
			if t, err := dec.Token(); err == nil && t == json.Delim('{') {
				s.first = sniffObject(dec, 1)
			}
		}
		return s
	case json.Delim('{'):
		return sniffObject(dec, 0)
	}
	return nil
}

// sniffObject reads an object's keys after its opening brace; depth
// limits how far it looks into lists.
func sniffObject(dec *json.Decoder, depth int) *shape {
	s := &shape{keys: map[string]bool{}, str: map[string]string{}}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return s
		}
		k, ok := t.(string)
		if !ok {
			return s
		}
		if !s.keys[k] {
			s.order = append(s.order, k)
		}
		s.keys[k] = true
		if depth == 0 && sniffList[k] && s.first == nil {
			t, err := dec.Token()
			if err != nil {
				return s
			}
			if t == json.Delim('[') {
				if dec.More() {
					t, err := dec.Token()
					if err != nil {
						return s
					}
					if t == json.Delim('{') {
						s.first = sniffObject(dec, depth+1)
						s.inList = k
					} else if !skipAfter(dec, t) {
						return s
					}
				}
				if !skipRest(dec, 1) {
					return s
				}
				continue
			}
			if !skipAfter(dec, t) {
				return s
			}
			continue
		}
		t, err = dec.Token()
		if err != nil {
			return s
		}
		if v, ok := t.(string); ok {
			if len(v) <= 64 {
				s.str[k] = v
			}
			continue
		}
		if !skipAfter(dec, t) {
			return s
		}
	}
	dec.Token() // the closing brace
	return s
}

// sniffList are the keys whose list's first element detection looks at.
var sniffList = map[string]bool{"data": true, "messages": true, "post": true, "patch": true, "runs": true}

// skipAfter skips the rest of a value whose first token was t.
func skipAfter(dec *json.Decoder, t json.Token) bool {
	if d, ok := t.(json.Delim); ok && (d == '{' || d == '[') {
		return skipRest(dec, 1)
	}
	return true
}

// skipRest reads tokens until depth open containers are closed.
func skipRest(dec *json.Decoder, depth int) bool {
	for depth > 0 {
		t, err := dec.Token()
		if err != nil {
			return false
		}
		if d, ok := t.(json.Delim); ok {
			switch d {
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
		}
	}
	return true
}

// checkDocument refuses, with one clear problem, a file that is one
// JSON object spread over lines (pretty-printed) that no reader knows:
// read as JSON lines, it would give an error for every line. It reads the
// whole document's top-level keys when the head does not hold them all.
// err is for a file that cannot be read.
func checkDocument(in *input) (problem *agenteval.PosError, err error) {
	head := bytes.TrimLeft(bytes.TrimPrefix(in.head(), []byte{0xEF, 0xBB, 0xBF}), " \t\r\n")
	if len(head) == 0 || head[0] != '{' {
		return nil, nil
	}
	if i := bytes.IndexByte(head, '\n'); i < 0 || json.Valid(bytes.TrimSpace(head[:i])) {
		return nil, nil // JSON lines, or a single line: the dataset reader's
	}
	keys := sniff(head).order
	complete := json.Valid(head)
	if !complete {
		r, err := in.reader()
		if err != nil {
			return nil, err
		}
		var bad *agenteval.PosError
		keys, bad = topKeys(r)
		if bad != nil {
			return bad, nil
		}
	}
	shown := keys
	if len(shown) > 12 {
		shown = append(append([]string(nil), shown[:12]...), fmt.Sprintf("… %d more", len(keys)-12))
	}
	what := "no keys"
	if len(shown) > 0 {
		what = "keys: " + strings.Join(shown, ", ")
	}
	msg := fmt.Sprintf("a JSON document of unknown shape (%s); formats read: %s", what, formatTitles())
	for _, k := range keys {
		if k == "user_input" || k == "messages" || k == "conversation" || k == "turns" {
			msg += "; a Ragas or OpenAI-messages dataset holds one row per line (JSONL), or a JSON array of rows"
			break
		}
	}
	return &agenteval.PosError{Msg: msg}, nil
}

// formatTitles lists the formats for messages.
func formatTitles() string {
	var out []string
	for _, f := range Formats {
		out = append(out, f.Title)
	}
	return strings.Join(out, "; ")
}

// topKeys reads the top-level keys of the JSON object r holds, skipping
// the values token by token, so that memory stays small whatever the
// document's size.
func topKeys(r io.Reader) ([]string, *agenteval.PosError) {
	lr := newLineReader(bufio.NewReaderSize(r, 1<<20))
	dec := json.NewDecoder(lr)
	fail := func(err error) *agenteval.PosError {
		p := lr.pos(dec.InputOffset())
		var se *json.SyntaxError
		if errors.As(err, &se) {
			p = lr.pos(se.Offset)
		}
		msg := fmt.Sprintf("not valid JSON: %v", err)
		if errors.Is(err, io.ErrUnexpectedEOF) || err == io.EOF {
			msg = "the file ends in the middle of a JSON document"
		}
		return &agenteval.PosError{Line: p.Line, Col: p.Col, Msg: msg}
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fail(err)
	}
	var keys []string
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, fail(err)
		}
		k, _ := t.(string)
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
		v, err := dec.Token()
		if err != nil {
			return nil, fail(err)
		}
		if !skipAfter(dec, v) {
			return nil, fail(io.ErrUnexpectedEOF)
		}
	}
	return keys, nil
}
