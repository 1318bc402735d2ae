package suite

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"mime"
	"os"
	"path/filepath"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/jsonpos"
	"github.com/agenteval/agenteval/internal/messages"
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
// A message itself is read by package messages, the decoder datasets and
// traces use too, so a message means the same in all three: its content is
// a string, an object (sent as JSON), or a list of content blocks: strings
// and {type: text, value}, {type: file, value: path} (the file is read,
// relative to the eval file's folder, and inlined in a <file path="...">
// block, as AgentV gives it to a model) and {type: image, value: path}
// (kept as an image part). Assistant messages may carry tool_calls, as
// {tool|name, input|args|arguments, id, output}; a call's output becomes
// the tool message that answers it. What this file adds is where eval
// files differ: a message without a role takes the role of its place,
// arguments a person wrote must parse, unknown keys are reported as the
// rest of the file's are, and files and images are read from disk.

// messages reads a list of messages; a bare string is a user message.
// A system prompt may be written in two entries, [{role: system},
// {input: "..."}]: a role-only entry followed by an entry with only input
// or content is read as one message.
func (d *decoder) messages(n *yaml.Node, what string) agenteval.Conversation {
	return d.messagesAs(n, what, agenteval.RoleUser)
}

func (d *decoder) messagesAs(n *yaml.Node, what string, role agenteval.Role) agenteval.Conversation {
	return dropEmptySystem(d.readMessages(n, what, role))
}

// dropEmptySystem leaves out system messages with nothing to say: no
// text but blanks, no parts, no calls. AgentV sends none of them (its
// prompt builder skips a system message without visible text, and its
// model client sends no empty system prompt), so "${{ PROMPT }}" with
// PROMPT unset means no system message, not an empty one. The unset
// variable has its warning where it is read.
func dropEmptySystem(c agenteval.Conversation) agenteval.Conversation {
	out := c[:0:0]
	for _, m := range c {
		if m.Role == agenteval.RoleSystem && strings.TrimSpace(m.Content) == "" && len(m.Parts) == 0 && len(m.ToolCalls) == 0 {
			continue
		}
		out = append(out, m)
	}
	if len(out) == len(c) {
		return c
	}
	return out
}

func (d *decoder) readMessages(n *yaml.Node, what string, role agenteval.Role) agenteval.Conversation {
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
		if roleOnly(rn) {
			d.fail(rn, "%s: a message with a role needs content", what)
		}
		return d.message(rn, what, role)
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
		ms := d.message(it, what, role)
		if pendingRole && !hasKey(it, "role") && len(ms) == 1 {
			// The text of the role-only entry before it.
			out[len(out)-1].Content = ms[0].Content
			out[len(out)-1].Parts = ms[0].Parts
			pendingRole = false
			continue
		}
		out = append(out, ms...)
		pendingRole = roleOnly(it)
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

// roleOnly says whether a message mapping has a role and nothing it could
// say: the first entry of the two-entry form of messages.
func roleOnly(n *yaml.Node) bool {
	return hasKey(n, "role") && !hasKey(n, "content") && !hasKey(n, "input") && !hasKey(n, "tool_calls") && !hasKey(n, "function_call")
}

func hasKey(n *yaml.Node, key string) bool {
	n = resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return true
		}
	}
	return false
}

// message reads one message: the message, followed by the tool messages
// its calls' outputs make. A message without a role takes role.
func (d *decoder) message(n *yaml.Node, what string, role agenteval.Role) agenteval.Conversation {
	md := d.messageDecoder(n, role)
	ms := md.Message(nil, d.jsonValue(n))
	d.report(n, what, md.Problems)
	// Structured content (a mapping that is not a content block) reaches
	// the model as the file wrote it, keys in order: the decoder's maps
	// have none.
	if c := mappingField(resolve(n), "content"); c != nil && !hasKey(c, "type") && len(ms) > 0 {
		ms[0].Content = d.jsonText(c)
	}
	return ms
}

// blocks reads content blocks into text and parts, as a message's content.
func (d *decoder) blocks(items []*yaml.Node, what string) (string, []agenteval.Part) {
	n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: items}
	if len(items) > 0 {
		n.Line, n.Column = items[0].Line, items[0].Column
	}
	md := d.messageDecoder(n, agenteval.RoleUser)
	c := md.Content(nil, d.jsonValue(n))
	d.report(n, what, md.Problems)
	return c.Text, c.Parts
}

// messageDecoder is the message decoder as an eval file needs it, for
// values read from n: paths in its reports are below n.
func (d *decoder) messageDecoder(n *yaml.Node, role agenteval.Role) *messages.Decoder {
	return &messages.Decoder{Options: messages.Options{
		StrictArgs:  true,
		DefaultRole: role,
		UnknownKey: func(p jsonpos.Path, what string, known []string) {
			k, _ := p[len(p)-1].(jsonpos.KeyName)
			key := string(k)
			if strings.HasPrefix(key, "x-") {
				return // an extension key, as everywhere in the file
			}
			d.unknownKey(nodeAt(n, p), key, what, known)
		},
		Attach: func(p jsonpos.Path, kind, ref string) (string, agenteval.Part, bool) {
			at := nodeAt(n, p)
			if kind == "image" {
				part, ok := d.image(at, ref)
				return "", part, ok
			}
			text, abs, ok := d.readBlock(at, ref)
			if !ok {
				return "", agenteval.Part{}, false
			}
			return fmt.Sprintf("<file path=%q>\n%s\n</file>", ref, strings.TrimSpace(text)), agenteval.Part{Type: "file", Path: abs}, true
		},
		KeyOrder: func(p jsonpos.Path) map[string][]string {
			return keyOrderOf(nodeAt(n, p))
		},
	}}
}

// report files what the message decoder found, each at its node below n.
func (d *decoder) report(n *yaml.Node, what string, ps []messages.Problem) {
	for _, p := range ps {
		if p.Warning {
			d.warn(nodeAt(n, p.Path), "%s: %s", what, p.Msg)
		} else {
			d.fail(nodeAt(n, p.Path), "%s: %s", what, p.Msg)
		}
	}
}

// readBlock reads the file a content block names. A file that is not
// there is a warning, as in AgentV: the block is left out.
func (d *decoder) readBlock(n *yaml.Node, path string) (string, string, bool) {
	p, tried := d.findFile(path)
	if p == "" {
		d.warn(n, "file %s is not there (looked in %s); the block is left out", path, strings.Join(tried, ", "))
		return "", "", false
	}
	b, err := os.ReadFile(p)
	if err != nil {
		d.warn(n, "cannot read file %s: %v; the block is left out", path, err)
		return "", "", false
	}
	return strings.ReplaceAll(string(b), "\r\n", "\n"), p, true
}

// image reads an image block's file into a part, as a data URL.
func (d *decoder) image(n *yaml.Node, path string) (agenteval.Part, bool) {
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

// jsonValue decodes a node into the values JSON decodes to, as the message
// decoder reads them: numbers as json.Number, written as they are (1.50
// stays 1.50), so that a message reads the same from YAML as from JSON.
// Strings are interpolated from the environment, as d.value does.
func (d *decoder) jsonValue(n *yaml.Node) any { return d.walk(n, true) }

// nodeAt is the node at path p below n: a key's node for a final
// jsonpos.KeyName, else the value's. Where p leads nowhere, it stops at the
// deepest node found, so that a report still points near its cause.
func nodeAt(n *yaml.Node, p jsonpos.Path) *yaml.Node {
	cur := resolve(n)
	for _, e := range p {
		if cur == nil {
			return n
		}
		switch k := e.(type) {
		case string:
			_, v := mapEntry(cur, k)
			if v == nil {
				return cur
			}
			cur = resolve(v)
		case jsonpos.KeyName:
			key, _ := mapEntry(cur, string(k))
			if key == nil {
				return cur
			}
			return key
		case int:
			if cur.Kind != yaml.SequenceNode || k < 0 || k >= len(cur.Content) {
				return cur
			}
			cur = resolve(cur.Content[k])
		}
	}
	if cur == nil {
		return n
	}
	return cur
}

// mapEntry finds key in a mapping, its own keys first and then those it
// merges (<<), as YAML's merge rule has it.
func mapEntry(n *yaml.Node, key string) (k, v *yaml.Node) {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, nil
	}
	var merged []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn := n.Content[i]
		if kn.Value == "<<" && kn.Tag != "!!str" {
			merged = append(merged, n.Content[i+1])
			continue
		}
		if kn.Value == key {
			return kn, n.Content[i+1]
		}
	}
	for _, m := range merged {
		m = resolve(m)
		if m != nil && m.Kind == yaml.SequenceNode {
			for _, it := range m.Content {
				if k, v := mapEntry(resolve(it), key); k != nil {
					return k, v
				}
			}
			continue
		}
		if k, v := mapEntry(m, key); k != nil {
			return k, v
		}
	}
	return nil, nil
}

// keyOrderOf is agenteval.KeyOrderOf for arguments written in YAML: the
// written order of the keys of each mapping nested in n, for mappings of
// two keys or more.
func keyOrderOf(n *yaml.Node) map[string][]string {
	out := map[string][]string{}
	var walk func(n *yaml.Node, path string, top bool)
	walk = func(n *yaml.Node, path string, top bool) {
		n = resolve(n)
		if n == nil {
			return
		}
		switch n.Kind {
		case yaml.MappingNode:
			var keys []string
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i].Value
				if k == "<<" && n.Content[i].Tag != "!!str" {
					continue // merged keys have no written place here
				}
				keys = append(keys, k)
				walk(n.Content[i+1], agenteval.ChildPointer(path, k), false)
			}
			if !top && len(keys) > 1 {
				out[path] = keys
			}
		case yaml.SequenceNode:
			for i, it := range n.Content {
				walk(it, agenteval.ChildPointer(path, i), false)
			}
		}
	}
	walk(n, "", true)
	if len(out) == 0 {
		return nil
	}
	return out
}

// jsonText renders structured content as indented JSON, as AgentV shows
// it to a model (JSON.stringify(v, null, 2)): keys in the order the file
// wrote them, and <, > and & as they are.
func (d *decoder) jsonText(n *yaml.Node) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(d.orderedJSON(n)); err != nil {
		d.fail(n, "this content cannot be written as JSON: %v", err)
		return ""
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// orderedJSON is value with each mapping as an orderedObject, its keys in
// written order.
func (d *decoder) orderedJSON(n *yaml.Node) any {
	n = resolve(n)
	if n == nil {
		return nil
	}
	switch n.Kind {
	case yaml.MappingNode:
		var o orderedObject
		for _, f := range d.fields(n, "this mapping", nil) {
			o.keys = append(o.keys, f.key)
			o.vals = append(o.vals, d.orderedJSON(f.value))
		}
		return o
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, it := range n.Content {
			out = append(out, d.orderedJSON(it))
		}
		return out
	}
	return d.value(n)
}

// orderedObject is a JSON object that keeps its keys' order.
type orderedObject struct {
	keys []string
	vals []any
}

func (o orderedObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := enc.Encode(k); err != nil {
			return nil, err
		}
		b.Truncate(b.Len() - 1) // Encode's newline
		b.WriteByte(':')
		if err := enc.Encode(o.vals[i]); err != nil {
			return nil, err
		}
		b.Truncate(b.Len() - 1)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
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
