package suite

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"mime"
	"os"
	"path/filepath"
	"strings"

	"github.com/agenteval/agenteval"
	"go.yaml.in/yaml/v4"
)

// Messages in an eval file, in every form AgentV accepts:
//
//   - a string: one message (a user message for input, an assistant
//     message for expected_output);
//   - an object with role: one message; an object without role:
//     structured content, sent as JSON;
//   - a list of messages (and strings, which are user messages).
//
// A message's content is a string, an object (sent as JSON), or a list of
// content blocks: strings and {type: text, value}, {type: file, value: path}
// (the file is read, relative to the eval file's folder, and inlined in a
// <file path="..."> block, as AgentV gives it to a model) and {type: image,
// value: path} (kept as an image part). Assistant messages may carry
// tool_calls, as {tool|name, input|args|arguments, id, output}; a call's
// output becomes the tool message that answers it.

var messageKeys = []string{"role", "content", "input", "name", "tool_call_id", "tool_calls", "id", "metadata"}

// messages reads a list of messages; role is the role of a bare string.
// AgentV's conversation-mode proposal, which examples/travel copies, writes
// a system prompt as [{role: system}, {input: "..."}]. So that such suites
// load unchanged, a role-only entry followed by an entry with only input or
// content is read as one message.
func (d *decoder) messages(n *yaml.Node, what string) agenteval.Conversation {
	return d.messagesAs(n, what, agenteval.RoleUser)
}

func (d *decoder) messagesAs(n *yaml.Node, what string, role agenteval.Role) agenteval.Conversation {
	rn := resolve(n)
	if rn == nil || isNull(rn) {
		return nil
	}
	switch rn.Kind {
	case yaml.ScalarNode:
		return agenteval.Conversation{{Role: role, Content: d.str(rn, what)}}
	case yaml.MappingNode:
		if !isMessage(rn) {
			// Structured content: an object the agent gets as JSON.
			return agenteval.Conversation{{Role: role, Content: d.jsonText(rn)}}
		}
		ms, roleOnly := d.message(rn, what, role)
		if roleOnly {
			d.fail(rn, "%s: a message with a role needs content", what)
		}
		return ms
	case yaml.SequenceNode:
	default:
		d.fail(n, "%s must be text or a list of messages, not %s", what, kindName(n))
		return nil
	}
	var out agenteval.Conversation
	pendingRole := false
	for _, item := range rn.Content {
		it := resolve(item)
		if it != nil && it.Kind == yaml.ScalarNode {
			out = append(out, agenteval.Message{Role: agenteval.RoleUser, Content: d.str(it, what)})
			pendingRole = false
			continue
		}
		if it != nil && it.Kind == yaml.MappingNode && !isMessage(it) {
			d.warn(it, "%s: this entry is not a message (it has no role, content or input) and is ignored", what)
			continue
		}
		ms, roleOnly := d.message(it, what, "")
		if pendingRole && len(ms) == 1 && ms[0].Role == "" {
			out[len(out)-1].Content = ms[0].Content
			out[len(out)-1].Parts = ms[0].Parts
			pendingRole = false
			continue
		}
		for i := range ms {
			if ms[i].Role == "" {
				ms[i].Role = role
			}
		}
		out = append(out, ms...)
		pendingRole = roleOnly
	}
	if pendingRole {
		d.fail(rn.Content[len(rn.Content)-1], "%s: a message with a role needs content", what)
	}
	return out
}

// isMessage says whether a mapping is a message rather than structured
// content.
func isMessage(n *yaml.Node) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		switch n.Content[i].Value {
		case "role", "content", "input", "tool_calls":
			return true
		}
	}
	return false
}

// message reads one {role, content} mapping: the message, followed by
// the tool messages its calls' outputs make. roleOnly reports a mapping
// with a role and nothing else, the first half of a split message.
func (d *decoder) message(n *yaml.Node, what string, role agenteval.Role) (out agenteval.Conversation, roleOnly bool) {
	m := agenteval.Message{Role: role}
	hasContent := false
	var results agenteval.Conversation
	explicitRole := false
	for _, f := range d.fields(n, "a message", messageKeys) {
		switch f.key {
		case "role":
			r := d.str(f.value, "role")
			rl, ok := agenteval.ParseRole(r)
			if !ok {
				d.fail(f.value, "unknown role %q; use system, user, assistant or tool", r)
			}
			m.Role, explicitRole = rl, true
		case "content", "input":
			m.Content, m.Parts = d.content(f.value, what)
			hasContent = true
		case "name":
			m.Name = d.str(f.value, "name")
		case "tool_call_id":
			m.ToolCallID = d.str(f.value, "tool_call_id")
		case "tool_calls":
			m.ToolCalls, results = d.toolCalls(f.value)
			hasContent = true
		case "metadata":
			if v, ok := d.value(f.value).(map[string]any); ok {
				m.Metadata = v
			}
		}
	}
	if len(m.ToolCalls) > 0 && m.Role != agenteval.RoleAssistant && explicitRole {
		d.fail(n, "%s: only an assistant message can have tool_calls", what)
	}
	return append(agenteval.Conversation{m}, results...), explicitRole && !hasContent
}

// content reads a message's content: text, an object (as JSON), or a
// list of content blocks.
func (d *decoder) content(n *yaml.Node, what string) (string, []agenteval.Part) {
	rn := resolve(n)
	if rn == nil || isNull(rn) {
		return "", nil
	}
	switch rn.Kind {
	case yaml.ScalarNode:
		return d.str(rn, what), nil
	case yaml.MappingNode:
		if blockType(rn) != "" {
			return d.blocks([]*yaml.Node{rn}, what)
		}
		return d.jsonText(rn), nil
	case yaml.SequenceNode:
		return d.blocks(rn.Content, what)
	}
	d.fail(n, "%s: content must be text, an object or a list of content blocks, not %s", what, kindName(n))
	return "", nil
}

func blockType(n *yaml.Node) string {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "type" {
			return n.Content[i+1].Value
		}
	}
	return ""
}

// blocks reads content blocks into the message's text and parts.
func (d *decoder) blocks(items []*yaml.Node, what string) (string, []agenteval.Part) {
	var texts []string
	var parts []agenteval.Part
	files := false
	for _, item := range items {
		it := resolve(item)
		if it != nil && it.Kind == yaml.ScalarNode {
			if s := d.str(it, what); s != "" {
				texts = append(texts, s)
			}
			continue
		}
		var typ, value string
		var valueN *yaml.Node
		for _, f := range d.fields(it, "a content block", []string{"type", "value", "text", "path", "media_type", "url", "source"}) {
			switch f.key {
			case "type":
				typ = d.str(f.value, "type")
			case "value", "text", "path", "url", "source":
				if valueN == nil {
					valueN = f.value
					value = d.str(f.value, f.key)
				}
			}
		}
		switch typ {
		case "text", "input_text":
			texts = append(texts, value)
		case "file":
			if text, abs, ok := d.readBlock(valueN, value, what); ok {
				files = true
				texts = append(texts, fmt.Sprintf("<file path=%q>\n%s\n</file>", value, strings.TrimSpace(text)))
				parts = append(parts, agenteval.Part{Type: "file", Path: abs})
			}
		case "image", "image_url", "input_image":
			if p, ok := d.image(valueN, value); ok {
				parts = append(parts, p)
			}
		case "":
			d.fail(it, "%s: a content block needs type: text, file or image", what)
		default:
			d.warn(it, "%s: content block type %q is not one agenteval sends (text, file, image); it is left out", what, typ)
		}
	}
	sep := " "
	if files {
		sep = "\n\n"
	}
	return strings.Join(texts, sep), parts
}

// readBlock reads the file a content block names. A file that is not
// there is a warning, as in AgentV: the block is left out.
func (d *decoder) readBlock(n *yaml.Node, path, what string) (string, string, bool) {
	if path == "" {
		d.fail(n, "%s: a file block needs value: the file's path", what)
		return "", "", false
	}
	p, tried := d.findFile(path)
	if p == "" {
		d.warn(n, "%s: file %s is not there (looked in %s); the block is left out", what, path, strings.Join(tried, ", "))
		return "", "", false
	}
	b, err := os.ReadFile(p)
	if err != nil {
		d.warn(n, "%s: cannot read file %s: %v; the block is left out", what, path, err)
		return "", "", false
	}
	return strings.ReplaceAll(string(b), "\r\n", "\n"), p, true
}

// image reads an image block into a part: a local file becomes a data URL;
// a URL stays a URL.
func (d *decoder) image(n *yaml.Node, path string) (agenteval.Part, bool) {
	if strings.HasPrefix(path, "data:") || strings.HasPrefix(path, "http://") || strings.HasPrefix(path, "https://") {
		return agenteval.Part{Type: "image", URL: path}, true
	}
	p, tried := d.findFile(path)
	if p == "" {
		d.warn(n, "image %s is not there (looked in %s); the block is left out", path, strings.Join(tried, ", "))
		return agenteval.Part{}, false
	}
	mt := mime.TypeByExtension(strings.ToLower(filepath.Ext(p)))
	if !strings.HasPrefix(mt, "image/") {
		d.warn(n, "%s is not an image agenteval knows (png, jpg, gif, webp, svg, bmp); the block is left out", path)
		return agenteval.Part{}, false
	}
	b, err := os.ReadFile(p)
	if err != nil {
		d.warn(n, "cannot read image %s: %v; the block is left out", path, err)
		return agenteval.Part{}, false
	}
	return agenteval.Part{Type: "image", MediaType: mt, Path: path, URL: "data:" + mt + ";base64," + base64.StdEncoding.EncodeToString(b)}, true
}

// toolCalls reads the tool calls of an input message, and the tool
// messages their outputs make.
func (d *decoder) toolCalls(n *yaml.Node) ([]agenteval.ToolCall, agenteval.Conversation) {
	rn := resolve(n)
	if rn == nil || isNull(rn) {
		return nil, nil
	}
	if rn.Kind != yaml.SequenceNode {
		d.fail(n, "tool_calls must be a list of {tool, input} calls, not %s", kindName(n))
		return nil, nil
	}
	var calls []agenteval.ToolCall
	var results agenteval.Conversation
	for i, item := range rn.Content {
		c := agenteval.ToolCall{}
		var output any
		hasOutput := false
		for _, f := range d.fields(item, "a tool call", []string{"tool", "name", "input", "args", "arguments", "id", "output", "function", "type", "duration_ms", "timestamp"}) {
			switch f.key {
			case "tool", "name":
				c.Name = d.str(f.value, f.key)
			case "input", "args", "arguments":
				c.Args, c.RawArgs = d.callArgs(f.value)
			case "function":
				for _, ff := range d.fields(f.value, "a tool call's function", []string{"name", "arguments"}) {
					switch ff.key {
					case "name":
						c.Name = d.str(ff.value, "function.name")
					case "arguments":
						c.Args, c.RawArgs = d.callArgs(ff.value)
					}
				}
			case "id":
				c.ID = d.str(f.value, "id")
			case "output":
				output, hasOutput = d.value(f.value), true
			case "duration_ms":
				if v, ok := d.number(f.value, "duration_ms"); ok {
					c.DurationMS = v
				}
			}
		}
		if c.Name == "" {
			d.fail(item, "tool call %d needs tool: the tool's name", i+1)
		}
		if c.ID == "" && hasOutput {
			c.ID = fmt.Sprintf("call_%d", i+1)
		}
		calls = append(calls, c)
		if hasOutput {
			results = append(results, agenteval.Message{Role: agenteval.RoleTool, ToolCallID: c.ID, Name: c.Name, Content: varString(output)})
		}
	}
	return calls, results
}

// callArgs reads a call's arguments: an object, or its JSON text.
func (d *decoder) callArgs(n *yaml.Node) (map[string]any, string) {
	switch v := d.value(n).(type) {
	case map[string]any:
		return v, ""
	case nil:
		return map[string]any{}, ""
	case string:
		var m map[string]any
		if err := json.Unmarshal([]byte(v), &m); err == nil {
			return m, ""
		}
		return nil, v
	default:
		d.fail(n, "a tool call's arguments must be an object")
		return nil, ""
	}
}

// jsonText renders structured content as indented JSON, as AgentV shows
// it to a model.
func (d *decoder) jsonText(n *yaml.Node) string {
	b, err := json.MarshalIndent(d.value(n), "", "  ")
	if err != nil {
		d.fail(n, "this content cannot be written as JSON: %v", err)
		return ""
	}
	return string(b)
}

// text reads an expected output, or any field that is text in the end: a
// string; an object, as JSON; a list of messages, whose last message is
// the reference (its text, or its content or tool calls as JSON), as
// AgentV's reference answer is.
func (d *decoder) text(n *yaml.Node, what string) string {
	rn := resolve(n)
	if rn == nil || rn.Kind == yaml.ScalarNode {
		return d.str(rn, what)
	}
	if rn.Kind == yaml.MappingNode && !isMessage(rn) {
		return d.jsonText(rn)
	}
	if rn.Kind == yaml.SequenceNode && len(rn.Content) > 0 {
		if first := resolve(rn.Content[0]); first != nil && first.Kind == yaml.MappingNode && !isMessage(first) {
			return d.jsonText(rn) // a list that is data, not messages
		}
	}
	ms := d.messagesAs(rn, what, agenteval.RoleAssistant)
	if len(ms) == 0 {
		return ""
	}
	last := ms[len(ms)-1]
	if last.Content == "" && len(last.ToolCalls) > 0 {
		b, _ := json.MarshalIndent(last.ToolCalls, "", "  ")
		return string(b)
	}
	return last.Content
}

// findFile resolves a path the eval file names: absolute, else relative to
// the eval file's folder, then each folder above it up to the repository
// root, then the working directory, as AgentV looks. It returns "" and the
// places tried when the file is in none.
func (d *decoder) findFile(path string) (string, []string) {
	path = strings.TrimPrefix(path, "file://")
	var tried []string
	if filepath.IsAbs(path) {
		if fileExists(path) {
			return path, nil
		}
		// AgentV reads /docs/x.md as the repository's docs/x.md too.
		tried = append(tried, path)
		path = strings.TrimLeft(path, `/\`)
	}
	for _, dir := range searchRoots(d.base()) {
		p := filepath.Join(dir, path)
		tried = append(tried, p)
		if fileExists(p) {
			return p, nil
		}
	}
	return "", tried
}

// base is the folder relative paths start from: the eval file's, also for
// the external files it loads tests from.
func (d *decoder) base() string {
	if d.root != "" {
		return filepath.Dir(d.root)
	}
	return filepath.Dir(d.file)
}

// searchRoots are the folders from dir up to the repository root (the
// first folder with a .git), then the working directory.
func searchRoots(dir string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if abs, err := filepath.Abs(p); err == nil && !seen[abs] {
			seen[abs] = true
			out = append(out, abs)
		}
	}
	cur, _ := filepath.Abs(dir)
	for cur != "" {
		add(cur)
		if _, err := os.Stat(filepath.Join(cur, ".git")); err == nil {
			break
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			break
		}
		cur = parent
	}
	add(".")
	return out
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}
