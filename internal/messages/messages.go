// Package messages decodes chat messages into agenteval.Message. It is the
// one decoder behind the messages of dataset rows (package dataset), of
// traces (package trace) and of eval files (package suite): it owns the
// shapes a message may take, which keys mean what, and what is wrong with
// a message and how wrong. The role names it accepts are the root
// package's table (agenteval.ParseRole), so there is one of those too.
//
// It reads generic JSON values (objects as map[string]any, lists as
// []any, numbers as json.Number) and reports problems by their path in
// those values; each caller turns a path into a place in its own input: a
// line and column of a row, a span's position, a YAML node.
//
// It may import the root package, internal/jsonpos (for paths),
// internal/strictjson (to read arguments written as JSON text) and the
// standard library.
package messages

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/jsonpos"
	"github.com/agenteval/agenteval/internal/strictjson"
)

// Problem is one thing wrong with a message, at its path. Warnings leave
// the message usable.
type Problem struct {
	Path    jsonpos.Path
	Msg     string
	Warning bool
}

// Options are the ways the readers of messages legitimately differ.
type Options struct {
	// Lenient is for messages recorded by someone else (traces): a message
	// that cannot be read (no known role, not an object) is left out with
	// a warning, and every other problem is a warning too. Otherwise
	// (datasets, eval files) they are errors and the message is kept, so
	// that every problem of a file is reported.
	Lenient bool
	// StrictArgs makes tool-call arguments that are not a JSON object an
	// error instead of raw text kept with a warning: arguments a person
	// wrote (eval files, reference calls) are a typo when they do not
	// parse, while a model's broken arguments are data to grade.
	StrictArgs bool
	// DefaultRole is the role of a message without one (eval files, where
	// an input's messages are the user's unless they say otherwise). A
	// message without a role that makes tool calls is the assistant's. With
	// no default, a message must name its role.
	DefaultRole agenteval.Role
	// UnknownKey is told of every key the decoder does not know, at the
	// key's path (ending in a jsonpos.KeyName), with what holds it ("a
	// message", "a tool call", "a tool call's function", "a content
	// block") and the keys it knows, so that each format reports unknown
	// keys as it reports the rest of its file. Nil ignores them: OpenAI
	// exports carry keys (refusal, annotations, audio) nothing reads.
	UnknownKey func(key jsonpos.Path, what string, known []string)
	// Attach reads a file or image block that names a path rather than a
	// URL (kind is "file" or "image"); ok false leaves the block out, the
	// caller having said why. Nil leaves such blocks out with a warning:
	// only eval files have a folder to read them from.
	Attach func(p jsonpos.Path, kind, ref string) (text string, part agenteval.Part, ok bool)
	// KeyOrder returns the written key order of the nested objects of the
	// arguments object at p (see agenteval.KeyOrderOf), for decoders that
	// still have the text the values came from. Arguments written as JSON
	// text are ordered without it.
	KeyOrder func(p jsonpos.Path) map[string][]string
}

// Decoder decodes messages and collects the problems it finds.
//
// These are its decisions, the same for datasets, traces and eval files
// unless an Option says otherwise:
//
//   - Roles: a message names its role in "role", or in "type" as Ragas
//     does. Every name of agenteval.ParseRole's table is accepted
//     everywhere (Gemini's "model" and Llama's "ipython" included): no
//     name there is ambiguous, so none is refused anywhere. "type":
//     "message" is the Responses API's item marker, not a role, and is
//     ignored. A role and a type that disagree are an error. An unknown
//     role is an error naming the roles to write, or, when Lenient, a
//     warning and the message is left out.
//   - Content is text; a number or a boolean, as its text; an object with
//     a "type", one content block; another object, structured content,
//     kept as indented JSON as AgentV shows it to a model; or a list of
//     strings and blocks. Text blocks ("text", "input_text",
//     "output_text", or no type with a "text" or "content") give their
//     "text", "value" or "content"; the pieces are joined with a newline,
//     or with a blank line when a file is inlined. "reasoning" and
//     "thinking" blocks go to Metadata["reasoning"]. Image blocks
//     ("image", "image_url", "input_image") become image parts when they
//     hold a URL (OpenAI's image_url, Anthropic's base64 source); file
//     blocks and image paths go to Options.Attach. Blocks of a tool call
//     are skipped, the calls being read from tool_calls, with a warning
//     unless Lenient; other blocks are left out with a warning.
//   - "input" is another name for "content" (AgentV); giving both is an
//     error.
//   - Tool calls come in every shape we read, in one list: OpenAI's {id,
//     type, function: {name, arguments}} with arguments as JSON text,
//     Ragas's {name, args}, AgentV's {tool, input, output, id,
//     duration_ms}, Inspect's {function: "name", arguments}, the
//     Responses API's call_id, and our export's raw_args. A name or
//     arguments given twice are an error. OpenAI's older function_call on
//     a message is one more call. A call's output becomes the tool message
//     that answers it, with the call's id (call_N when it has none). An
//     empty list of calls is no calls.
//   - Arguments are a JSON object, or JSON text of one. Text that is not
//     a JSON object is kept raw with a warning (a model wrote it), or is
//     an error with StrictArgs; arguments of another type are an error,
//     or kept as their JSON text with a warning when Lenient.
//   - tool_call_id links a tool result to its call; it and a call's id
//     may be a string or a number. Only an assistant message may make
//     tool calls (not checked when Lenient: a trace is what it is).
//   - A message without a role is an error, or left out with a warning
//     when Lenient, unless Options.DefaultRole gives it one.
//   - A problem is reported at the path of the value at fault, or of the
//     key for unknown keys; callers add their own place.
type Decoder struct {
	Options
	Problems []Problem

	// base is the path the exported method being run was given: the root
	// of the paths of its problems (see at).
	base jsonpos.Path
}

// at is where the value being decoded is, below Decoder.base: a chain of
// frames on the stack, made into a jsonpos.Path only when a problem, a
// callback or a relative path needs one, so that messages without
// problems cost no allocations for paths. The zero at is the base.
//
// Frames are never stored, and a path is made of copies of their keys
// (strings.Clone), not of the strings they hold: escape analysis does not
// tell a struct's fields apart, so a path holding a frame's string would
// make it think the frame's up pointer leaks, and every frame would move
// to the heap. TestValidMessagesAllocate keeps them off it.
type at struct {
	up   *at
	name string
	i    int
	kind atKind
}

type atKind uint8

const (
	atBase atKind = iota
	atKey
	atKeyName
	atIndex
)

func (a *at) key(k string) at     { return at{up: a, name: k, kind: atKey} }
func (a *at) keyName(k string) at { return at{up: a, name: k, kind: atKeyName} }
func (a *at) index(i int) at      { return at{up: a, i: i, kind: atIndex} }

// depth is how many elements a adds to the base.
func (a *at) depth() int {
	n := 0
	for x := a; x.kind != atBase; x = x.up {
		n++
	}
	return n
}

// path makes a's path, below base, with extra elements after it. With no
// element to add it is base itself, as a path given to an exported method
// is reported as it was given.
func (a *at) path(base jsonpos.Path, extra ...any) jsonpos.Path {
	n := a.depth()
	if n == 0 && len(extra) == 0 {
		return base
	}
	out := make(jsonpos.Path, len(base)+n, len(base)+n+len(extra))
	copy(out, base)
	j := len(out)
	for x := a; x.kind != atBase; x = x.up {
		j--
		switch x.kind {
		case atKey:
			out[j] = strings.Clone(x.name)
		case atKeyName:
			out[j] = jsonpos.KeyName(strings.Clone(x.name))
		case atIndex:
			out[j] = x.i
		}
	}
	return append(out, extra...)
}

// path is p's path.
func (d *Decoder) path(p *at) jsonpos.Path { return p.path(d.base) }

// enter sets the base of the paths of an exported method's problems to
// p, returning the base to restore when it is done (a callback may decode
// with the same decoder).
func (d *Decoder) enter(p jsonpos.Path) (restore jsonpos.Path) {
	restore, d.base = d.base, p
	return restore
}

// leave restores the base enter returned.
func (d *Decoder) leave(base jsonpos.Path) { d.base = base }

// Errors counts the problems that are not warnings.
func (d *Decoder) Errors() int {
	n := 0
	for _, p := range d.Problems {
		if !p.Warning {
			n++
		}
	}
	return n
}

// fail reports what is wrong: an error, or a warning when Lenient.
func (d *Decoder) fail(p *at, format string, a ...any) {
	d.Problems = append(d.Problems, Problem{Path: d.path(p), Msg: fmt.Sprintf(format, a...), Warning: d.Lenient})
}

func (d *Decoder) warn(p *at, format string, a ...any) {
	d.Problems = append(d.Problems, Problem{Path: d.path(p), Msg: fmt.Sprintf(format, a...), Warning: true})
}

// The keys each kind of object may have, for Options.UnknownKey.
var (
	MessageKeys  = []string{"role", "type", "content", "input", "name", "tool_call_id", "tool_calls", "function_call", "id", "metadata"}
	ToolCallKeys = []string{"id", "call_id", "tool_call_id", "type", "name", "tool", "function", "args", "arguments", "input", "raw_args", "output", "duration_ms", "timestamp"}
	FunctionKeys = []string{"name", "arguments"}
	BlockKeys    = []string{"type", "text", "value", "content", "path", "url", "source", "media_type", "image_url", "detail", "file", "reasoning", "thinking", "signature", "annotations"}
)

// unknown tells Options.UnknownKey about the keys of f not in known, in
// sorted order so that reports do not depend on map order.
func (d *Decoder) unknown(p *at, f map[string]any, what string, known []string) {
	if d.UnknownKey == nil {
		return
	}
	var keys []string
	for k := range f {
		if !contains(known, k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		d.UnknownKey(p.path(d.base, jsonpos.KeyName(k)), what, known)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// List decodes a list of messages. src[i] is the index in v of the message
// conv[i] came from: a call's output makes a tool message after the
// message that made the call.
func (d *Decoder) List(p jsonpos.Path, v any) (conv agenteval.Conversation, src []int) {
	defer d.leave(d.enter(p))
	return d.list(&at{}, v)
}

func (d *Decoder) list(p *at, v any) (conv agenteval.Conversation, src []int) {
	items, ok := v.([]any)
	if !ok {
		d.fail(p, "must be a list of messages, not %s", KindOf(v))
		return nil, nil
	}
	conv = make(agenteval.Conversation, 0, len(items))
	for i, it := range items {
		ip := p.index(i)
		n := len(conv)
		conv = d.message(&ip, it, conv)
		for range conv[n:] {
			if src == nil {
				src = make([]int, 0, len(items))
			}
			src = append(src, i)
		}
	}
	return conv, src
}

// Message decodes one message: the message, then the tool messages its
// calls' outputs make. It returns nothing for a value that is not a
// message object, and, when Lenient, for a message it cannot read.
func (d *Decoder) Message(p jsonpos.Path, v any) []agenteval.Message {
	defer d.leave(d.enter(p))
	return d.message(&at{}, v, nil)
}

// message appends what Message returns to conv.
func (d *Decoder) message(p *at, v any, conv agenteval.Conversation) agenteval.Conversation {
	f, ok := v.(map[string]any)
	if !ok {
		if d.Lenient {
			d.warn(p, "a message must be a JSON object, not %s; left out", KindOf(v))
		} else {
			d.fail(p, "a message must be a JSON object, not %s", KindOf(v))
		}
		return conv
	}
	role, explicit, ok := d.role(p, f)
	if !ok && d.Lenient {
		return conv
	}
	m := agenteval.Message{Role: role}
	var reasoning string
	content, hasContent := f["content"]
	if in, hasInput := f["input"]; hasInput {
		if hasContent && content != nil && in != nil {
			kp := p.keyName("input")
			d.fail(&kp, "a message has both content and input, two names for its text; keep one")
		} else if !hasContent || content == nil {
			content, hasContent = in, true
		}
	}
	if hasContent {
		cp := p.key(contentKey(f))
		c := d.content(&cp, content)
		m.Content, m.Parts, reasoning = c.Text, c.Parts, c.Reasoning
	}
	if v, ok := f["name"]; ok && v != nil {
		kp := p.key("name")
		m.Name = d.str(&kp, "name", v)
	}
	if v, ok := f["tool_call_id"]; ok && v != nil {
		kp := p.key("tool_call_id")
		m.ToolCallID = d.id(&kp, "tool_call_id", v)
	}
	// results are the tool messages of the calls' outputs, appended to
	// conv after m once m is complete.
	var results agenteval.Conversation
	if v, ok := f["tool_calls"]; ok && v != nil {
		kp := p.key("tool_calls")
		m.ToolCalls, results = d.toolCalls(&kp, v)
	}
	if v, ok := f["function_call"]; ok && v != nil {
		// OpenAI's older single call: {name, arguments}.
		kp := p.key("function_call")
		if c, res, ok := d.call(&kp, v, len(m.ToolCalls)); ok {
			m.ToolCalls = append(m.ToolCalls, c)
			results = append(results, res...)
		}
	}
	if v, ok := f["metadata"]; ok && v != nil {
		if md, ok := v.(map[string]any); ok {
			m.Metadata = md
		} else {
			kp := p.key("metadata")
			d.fail(&kp, "metadata must be a JSON object, not %s", KindOf(v))
		}
	}
	d.unknown(p, f, "a message", MessageKeys)
	if reasoning != "" {
		md := make(map[string]any, len(m.Metadata)+1)
		for k, v := range m.Metadata {
			md[k] = v
		}
		if _, set := md["reasoning"]; !set {
			md["reasoning"] = reasoning
		}
		m.Metadata = md
	}
	if len(m.ToolCalls) > 0 {
		switch {
		case !explicit && d.DefaultRole != "":
			m.Role = agenteval.RoleAssistant
		case explicit && m.Role != "" && m.Role != agenteval.RoleAssistant && !d.Lenient:
			kp := p.key("tool_calls")
			d.fail(&kp, "only assistant messages may make tool calls, this one is %s", m.Role)
		}
	}
	conv = append(conv, m)
	return append(conv, results...)
}

func contentKey(f map[string]any) string {
	if v, ok := f["content"]; ok && v != nil {
		return "content"
	}
	if _, ok := f["input"]; ok {
		return "input"
	}
	return "content"
}

// role reads a message's role from "role" and Ragas's "type". explicit
// says the message named it; ok false means it has none to use.
func (d *Decoder) role(p *at, f map[string]any) (role agenteval.Role, explicit, ok bool) {
	rr, hasRole := d.readRole(p, f, "role")
	if d.Lenient && rr != "" {
		// A recorded message's role is all a reader needs; formats put
		// other things under "type".
		return rr, true, true
	}
	var tr agenteval.Role
	hasType := false
	if !(d.Lenient && hasRole) {
		tr, hasType = d.readRole(p, f, "type")
	}
	switch {
	case rr != "" && tr != "" && rr != tr:
		kp := p.key("role")
		d.fail(&kp, "role %q disagrees with type %q; keep one of them", rr, tr)
		return "", true, false
	case rr != "":
		return rr, true, true
	case tr != "" && !hasRole:
		return tr, true, true
	case hasRole || hasType:
		// Named, but not with a role we know: already reported.
		return "", true, false
	case d.DefaultRole != "":
		return d.DefaultRole, false, true
	case d.Lenient:
		d.warn(p, "the message has no role; left out")
	default:
		d.fail(p, "message has no type or role; set \"type\" to human, ai or tool (Ragas) or \"role\" to user, assistant, tool or system")
	}
	return "", false, false
}

// readRole parses the role under one key of a message: named says the
// message gives it at all.
func (d *Decoder) readRole(p *at, f map[string]any, key string) (r agenteval.Role, named bool) {
	v, present := f[key]
	if !present || v == nil {
		return "", false
	}
	s, isStr := v.(string)
	if !isStr {
		kp := p.key(key)
		d.fail(&kp, "%s must be a string, not %s", key, KindOf(v))
		return "", true
	}
	if key == "type" && s == "message" {
		// The Responses API marks its message items so; not a role.
		return "", false
	}
	if strings.TrimSpace(s) == "" {
		return "", false
	}
	r, known := agenteval.ParseRole(s)
	if !known {
		kp := p.key(key)
		switch {
		case d.Lenient && key == "type":
			d.warn(&kp, "unknown message type %q; left out", s)
		case d.Lenient:
			d.warn(&kp, "unknown role %q; left out", s)
		case key == "type":
			d.fail(&kp, "unknown message type %q; use human, ai or tool", s)
		default:
			d.fail(&kp, "unknown role %q; use user, assistant, tool or system", s)
		}
	}
	return r, true
}

func (d *Decoder) str(p *at, what string, v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	}
	d.fail(p, "%s must be a string, not %s", what, KindOf(v))
	if d.Lenient {
		return Text(v)
	}
	return ""
}

// id reads an id, which formats write as a string or a number.
func (d *Decoder) id(p *at, what string, v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.Number, int, int64, float64:
		return Text(x)
	}
	d.fail(p, "%s must be a string or a number, not %s", what, KindOf(v))
	return ""
}

// ToolCalls decodes a list of tool calls, and the tool messages their
// outputs make.
func (d *Decoder) ToolCalls(p jsonpos.Path, v any) ([]agenteval.ToolCall, agenteval.Conversation) {
	defer d.leave(d.enter(p))
	return d.toolCalls(&at{}, v)
}

func (d *Decoder) toolCalls(p *at, v any) ([]agenteval.ToolCall, agenteval.Conversation) {
	if v == nil {
		return nil, nil
	}
	items, ok := v.([]any)
	if !ok {
		d.fail(p, "tool calls must be a list, not %s", KindOf(v))
		return nil, nil
	}
	var calls []agenteval.ToolCall
	var results agenteval.Conversation
	for i, it := range items {
		ip := p.index(i)
		c, res, ok := d.call(&ip, it, i)
		if !ok {
			continue
		}
		if calls == nil {
			calls = make([]agenteval.ToolCall, 0, len(items)-i)
		}
		calls = append(calls, c)
		results = append(results, res...)
	}
	return calls, results
}

// call decodes one tool call; i is its place among its message's calls,
// for the id of an output without one.
func (d *Decoder) call(p *at, v any, i int) (agenteval.ToolCall, agenteval.Conversation, bool) {
	var tc agenteval.ToolCall
	f, ok := v.(map[string]any)
	if !ok {
		if d.Lenient {
			d.warn(p, "a tool call must be a JSON object like {\"name\": ..., \"args\": {...}}, not %s; left out", KindOf(v))
		} else {
			d.fail(p, "a tool call must be a JSON object like {\"name\": ..., \"args\": {...}}, not %s", KindOf(v))
		}
		return tc, nil, false
	}
	// A name and arguments may each be written under several keys; they
	// are looked for in this order, so that a lenient read is stable.
	// There are three keys of a name and four of arguments: arrays keep
	// them on the stack, the values apart from the frames of their paths,
	// lest escape analysis, which does not tell fields apart, move the
	// frames to the heap with the values.
	var names, args [4]at
	var nameVs, argVs [4]any
	nn, na := 0, 0
	fp := p.key("function")
	if fv, ok := f["function"]; ok && fv != nil {
		switch fn := fv.(type) {
		case map[string]any:
			if n, ok := fn["name"]; ok && n != nil {
				names[nn], nameVs[nn] = fp.key("name"), n
				nn++
			}
			if a, ok := fn["arguments"]; ok {
				args[na], argVs[na] = fp.key("arguments"), a
				na++
			}
			d.unknown(&fp, fn, "a tool call's function", FunctionKeys)
		case string:
			// Inspect names the function so.
			names[nn], nameVs[nn] = fp, fn
			nn++
		default:
			d.fail(&fp, "function must be an object with name and arguments")
		}
	}
	for _, k := range [...]string{"name", "tool"} {
		if n, ok := f[k]; ok && n != nil {
			names[nn], nameVs[nn] = p.key(k), n
			nn++
		}
	}
	for _, k := range [...]string{"args", "arguments", "input"} {
		if a, ok := f[k]; ok {
			args[na], argVs[na] = p.key(k), a
			na++
		}
	}
	if nn > 0 {
		tc.Name = d.str(&names[0], "a tool's name", nameVs[0])
		for j := 1; j < nn; j++ {
			if s, _ := nameVs[j].(string); s != tc.Name {
				d.fail(&names[j], "the call's name is given twice (%s and %s); keep one", d.below(p, &names[0]), d.below(p, &names[j]))
			}
		}
	}
	if strings.TrimSpace(tc.Name) == "" {
		d.fail(p, "tool call has no name; give \"name\" (or function.name)")
	}
	argsAt := p
	var written any
	if na > 0 {
		argsAt, written = &args[0], argVs[0]
		for j := 1; j < na; j++ {
			d.fail(&args[j], "the call's arguments are given twice (%s and %s); keep one", d.below(p, &args[0]), d.below(p, &args[j]))
		}
	}
	tc.Args, tc.RawArgs, tc.KeyOrder = d.args(argsAt, written)
	for _, k := range [...]string{"id", "call_id", "tool_call_id"} {
		if v, ok := f[k]; ok && v != nil {
			kp := p.key(k)
			tc.ID = d.id(&kp, k, v)
			break
		}
	}
	if v, ok := f["raw_args"]; ok && v != nil {
		kp := p.key("raw_args")
		raw := d.str(&kp, "raw_args", v)
		if raw != "" && len(tc.Args) == 0 {
			if d.StrictArgs {
				d.fail(&kp, "raw_args keeps arguments a model wrote that did not parse; here write the arguments as a JSON object")
			} else {
				d.warn(&kp, "arguments were not valid JSON when recorded; kept as raw text, and every check of this call's arguments will fail")
				tc.Args, tc.RawArgs, tc.KeyOrder = nil, raw, nil
			}
		}
	}
	if v, ok := f["duration_ms"]; ok && v != nil {
		if ms, ok := number(v); ok {
			tc.DurationMS = ms
		} else {
			kp := p.key("duration_ms")
			d.fail(&kp, "duration_ms must be a number, not %s", KindOf(v))
		}
	}
	d.unknown(p, f, "a tool call", ToolCallKeys)
	out, hasOut := f["output"]
	if !hasOut {
		return tc, nil, true
	}
	if tc.ID == "" {
		tc.ID = "call_" + strconv.Itoa(i+1)
	}
	return tc, agenteval.Conversation{{Role: agenteval.RoleTool, ToolCallID: tc.ID, Name: tc.Name, Content: Text(out)}}, true
}

// below is the path of a below p, for naming one of a call's keys.
func (d *Decoder) below(p, a *at) jsonpos.Path {
	return d.path(a)[len(d.base)+p.depth():]
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case float64:
		return x, true
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		return f, err == nil
	}
	return 0, false
}

// Args decodes a call's arguments, written as an object or as JSON text
// of one: the object, or, when they are not one, nil and the raw text to
// keep. keyOrder is the written order of nested objects' keys, where it
// can be known.
func (d *Decoder) Args(p jsonpos.Path, v any) (args map[string]any, raw string, keyOrder map[string][]string) {
	defer d.leave(d.enter(p))
	return d.args(&at{}, v)
}

func (d *Decoder) args(p *at, v any) (args map[string]any, raw string, keyOrder map[string][]string) {
	switch x := v.(type) {
	case nil:
		return map[string]any{}, "", nil
	case map[string]any:
		if agenteval.HasNestedObjects(x) && d.KeyOrder != nil {
			keyOrder = d.KeyOrder(d.path(p))
		}
		return x, "", keyOrder
	case string:
		inner := strings.TrimSpace(x)
		if inner == "" {
			return map[string]any{}, "", nil
		}
		var decoded any
		err := strictjson.Decode([]byte(inner), &decoded)
		if m, ok := decoded.(map[string]any); ok && err == nil {
			if agenteval.HasNestedObjects(m) {
				keyOrder = agenteval.KeyOrderOf([]byte(inner))
			}
			return m, "", keyOrder
		}
		problem := "not valid JSON"
		if err == nil {
			problem = "JSON " + strings.TrimPrefix(strings.TrimPrefix(KindOf(decoded), "a "), "an ") + ", not an object"
		}
		if d.StrictArgs {
			d.fail(p, "arguments string is %s; write the arguments as a JSON object", problem)
			return nil, "", nil
		}
		// A model really wrote this: keep it, so that the call fails the
		// checks of its arguments instead of the whole row being dropped.
		d.warn(p, "arguments are %s; kept as raw text, and every check of this call's arguments will fail", problem)
		return nil, x, nil
	}
	if d.Lenient && !d.StrictArgs {
		d.warn(p, "arguments are %s, not a JSON object; kept as raw text, and every check of this call's arguments will fail", KindOf(v))
		return nil, Text(v), nil
	}
	d.fail(p, "arguments must be a JSON object, not %s", KindOf(v))
	return nil, "", nil
}

// Content is what a message's content decodes to.
type Content struct {
	Text      string
	Reasoning string
	Parts     []agenteval.Part
}

// Content decodes a message's content.
func (d *Decoder) Content(p jsonpos.Path, v any) Content {
	defer d.leave(d.enter(p))
	return d.content(&at{}, v)
}

func (d *Decoder) content(p *at, v any) Content {
	switch x := v.(type) {
	case nil:
		return Content{}
	case string:
		return Content{Text: x}
	case map[string]any:
		if t, ok := x["type"]; ok && t != nil {
			return d.blocks(p, []any{x}, true)
		}
		return Content{Text: indentedJSON(x)}
	case []any:
		return d.blocks(p, x, false)
	}
	// Numbers and booleans: YAML writes content: 42 without quotes.
	return Content{Text: Text(v)}
}

// blocks decodes a list of content blocks; one is a single block given
// as the content itself, whose path is p.
func (d *Decoder) blocks(p *at, items []any, one bool) Content {
	// Most content has a few pieces of text: the arrays keep their lists
	// off the heap.
	var textBuf, reasoningBuf [4]string
	texts, reasoning := textBuf[:0], reasoningBuf[:0]
	var parts []agenteval.Part
	files := false
	for i, it := range items {
		ip := *p
		if !one {
			ip = p.index(i)
		}
		switch b := it.(type) {
		case string:
			if b != "" {
				texts = append(texts, b)
			}
			continue
		case map[string]any:
			d.unknown(&ip, b, "a content block", BlockKeys)
			typ, isStr := b["type"].(string)
			if !isStr && b["type"] != nil {
				tp := ip.key("type")
				d.fail(&tp, "a content block's type must be a string, not %s", KindOf(b["type"]))
				continue
			}
			switch typ {
			case "text", "input_text", "output_text":
				if t := d.blockText(&ip, b, "text", "value", "content"); t != "" {
					texts = append(texts, t)
				}
			case "":
				// OpenAI's parts may leave out a text part's type; an
				// AgentV block without one ({value: ...}) could be a file.
				if !hasAny(b, "text", "content") {
					d.fail(&ip, "a content block needs a type: text, image or file")
					continue
				}
				if t := d.blockText(&ip, b, "text", "content"); t != "" {
					texts = append(texts, t)
				}
			case "reasoning", "thinking":
				if t := d.blockText(&ip, b, "reasoning", "thinking", "text", "content"); t != "" {
					reasoning = append(reasoning, t)
				}
			case "redacted_thinking":
				// Encrypted; there is no text to keep.
			case "tool_use", "tool_call", "function_call":
				if !d.Lenient {
					d.warn(&ip, "content block type %q is a tool call; write calls in tool_calls. Left out", typ)
				}
			case "image", "image_url", "input_image":
				if part, ok := d.image(&ip, b); ok {
					parts = append(parts, part)
				}
			case "file", "input_file":
				text, part, ok := d.file(&ip, b)
				if ok {
					files = true
					texts = append(texts, text)
					parts = append(parts, part)
				}
			default:
				d.warn(&ip, "content block type %q is not text, an image or a file; left out", typ)
			}
		default:
			d.fail(&ip, "a content part must be an object like {\"type\": \"text\", \"text\": ...}, not %s", KindOf(it))
		}
	}
	sep := "\n"
	if files {
		// A blank line sets an inlined file apart from the text around it.
		sep = "\n\n"
	}
	return Content{Text: strings.Join(texts, sep), Reasoning: strings.Join(reasoning, "\n"), Parts: parts}
}

func hasAny(m map[string]any, keys ...string) bool {
	for _, k := range keys {
		if v, ok := m[k]; ok && v != nil {
			return true
		}
	}
	return false
}

// blockText reads a block's text from the first of keys it has. The
// Assistants API writes text as {value, annotations}.
func (d *Decoder) blockText(p *at, b map[string]any, keys ...string) string {
	for _, k := range keys {
		v, ok := b[k]
		if !ok || v == nil {
			continue
		}
		switch x := v.(type) {
		case string:
			return x
		case map[string]any:
			if s, ok := x["value"].(string); ok {
				return s
			}
		}
		kp := p.key(k)
		return d.str(&kp, "a block's "+k, v)
	}
	return ""
}

// ref finds what a file or image block points at, and the key it is under.
func ref(b map[string]any) (string, string) {
	for _, k := range [...]string{"value", "path", "url", "image_url", "source", "file"} {
		switch x := b[k].(type) {
		case string:
			return x, k
		case map[string]any:
			if u, ok := x["url"].(string); ok {
				return u, k
			}
			// Anthropic's {type: base64, media_type, data}.
			if data, ok := x["data"].(string); ok {
				if mt, ok := x["media_type"].(string); ok {
					return "data:" + mt + ";base64," + data, k
				}
			}
			// OpenAI's file part: {file_data, filename}.
			if fd, ok := x["file_data"].(string); ok {
				return fd, k
			}
		}
	}
	return "", ""
}

func isURL(s string) bool {
	return strings.HasPrefix(s, "data:") || strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}

func (d *Decoder) image(p *at, b map[string]any) (agenteval.Part, bool) {
	r, key := ref(b)
	switch {
	case r == "":
		d.fail(p, "an image block needs value: the image's path or URL")
		return agenteval.Part{}, false
	case isURL(r):
		return agenteval.Part{Type: "image", URL: r, MediaType: dataMediaType(r)}, true
	case d.Attach == nil:
		d.warn(p, "image %s is a path, and only eval files read images from disk; left out", r)
		return agenteval.Part{}, false
	}
	kp := p.key(key)
	_, part, ok := d.Attach(d.path(&kp), "image", r)
	return part, ok
}

// dataMediaType is the media type a data: URL declares, or "".
func dataMediaType(url string) string {
	rest, ok := strings.CutPrefix(url, "data:")
	if !ok {
		return ""
	}
	if i := strings.IndexAny(rest, ";,"); i >= 0 {
		return rest[:i]
	}
	return ""
}

func (d *Decoder) file(p *at, b map[string]any) (string, agenteval.Part, bool) {
	if d.Attach == nil {
		d.warn(p, "a file block is left out: only eval files read files")
		return "", agenteval.Part{}, false
	}
	r, key := ref(b)
	if r == "" {
		d.fail(p, "a file block needs value: the file's path")
		return "", agenteval.Part{}, false
	}
	kp := p.key(key)
	return d.Attach(d.path(&kp), "file", r)
}

// KindOf names the JSON type of a decoded value, for messages.
func KindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number, int, int64, float64:
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}

// Text renders a value as message text: a string as it is, anything else
// as compact JSON.
func Text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.Number:
		return string(x)
	}
	return encode(v, false)
}

func indentedJSON(v any) string { return encode(v, true) }

// encode writes v as JSON without escaping <, > and &, which are text to a
// model, not HTML.
func encode(v any, indent bool) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if indent {
		enc.SetIndent("", "  ")
	}
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimRight(b.String(), "\n")
}
