package suite

import (
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v4"
)

var targetKeys = []string{"name", "model", "provider", "max_steps", "temperature", "max_tokens", "system_prompt", "http", "url", "headers", "command", "env", "dir", "replay", "timeout", "a2a", "agui", "api", "store", "mcp_servers"}

func (d *decoder) targets(n *yaml.Node) []TargetSpec {
	n = resolve(n)
	if n == nil || n.Kind != yaml.SequenceNode {
		d.fail(n, "targets must be a list of targets, not %s", kindName(n))
		return nil
	}
	var out []TargetSpec
	names := map[string]int{}
	for _, item := range n.Content {
		t := TargetSpec{Pos: d.pos(item)}
		var provider, model string
		kinds := 0
		for _, f := range d.fields(item, "a target", targetKeys) {
			switch f.key {
			case "name":
				t.Name = d.str(f.value, "name")
			case "model":
				model = d.str(f.value, "model")
			case "provider":
				provider = d.str(f.value, "provider")
			case "max_steps":
				t.MaxSteps, _ = d.integer(f.value, "max_steps")
			case "temperature":
				if v, ok := d.number(f.value, "temperature"); ok {
					t.Temperature = &v
				}
			case "max_tokens":
				t.MaxTokens, _ = d.integer(f.value, "max_tokens")
			case "system_prompt":
				sp := d.str(f.value, "system_prompt")
				t.SystemPrompt = &sp
			case "http":
				kinds++
				t.HTTP = &HTTPTarget{}
				hn := resolve(f.value)
				if hn != nil && hn.Kind == yaml.ScalarNode {
					t.HTTP.URL = d.str(hn, "http")
					continue
				}
				for _, h := range d.fields(f.value, "http", []string{"url", "headers"}) {
					switch h.key {
					case "url":
						t.HTTP.URL = d.str(h.value, "http.url")
					case "headers":
						t.HTTP.Headers = d.strMap(h.value, "http.headers")
					}
				}
			case "a2a":
				kinds++
				t.A2A = d.protocolTarget(f.value, "a2a")
			case "agui":
				kinds++
				t.AGUI = d.protocolTarget(f.value, "agui")
			case "api":
				t.API = d.str(f.value, "api")
				if t.API != "chat" && t.API != "responses" {
					d.fail(f.value, "api must be chat (Chat Completions, the default) or responses (OpenAI's Responses API), not %q", t.API)
				}
			case "store":
				if b, ok := d.boolean(f.value, "store"); ok {
					t.Store = &b
				}
			case "mcp_servers":
				t.MCPServers = d.mcpServers(f.value)
			case "url":
				kinds++
				t.HTTP = &HTTPTarget{URL: d.str(f.value, "url")}
			case "headers":
				if t.HTTP == nil {
					t.HTTP = &HTTPTarget{}
				}
				t.HTTP.Headers = d.strMap(f.value, "headers")
			case "command":
				kinds++
				t.Command = d.argv(f.value, "command")
				if len(t.Command) == 0 || t.Command[0] == "" {
					d.fail(f.value, "command needs the program and its arguments as a list, e.g. [python3, agent.py]")
				}
			case "env":
				t.Env = d.strMap(f.value, "env")
			case "dir":
				t.Dir = d.str(f.value, "dir")
			case "replay":
				kinds++
				t.Replay = d.str(f.value, "replay")
			case "timeout":
				t.Timeout, _ = d.duration(f.value, "timeout")
			}
		}
		if model != "" || provider != "" {
			kinds++
			t.Model = model
			if provider != "" && !strings.Contains(model, ":") {
				t.Model = provider + ":" + model
			}
			if !strings.Contains(t.Model, ":") {
				d.fail(item, "target %q: model must be provider:model, such as openai:gpt-4o-mini", t.Name)
			}
		}
		switch {
		case t.Name == "":
			d.fail(item, "a target needs a name, so that --target can pick it")
		case names[t.Name] > 0:
			d.fail(item, "target name %q is used twice (first on line %d)", t.Name, names[t.Name])
		default:
			names[t.Name] = item.Line
		}
		if kinds == 0 {
			d.fail(item, "target %q needs one of model, http, a2a, agui, command or replay", t.Name)
		} else if kinds > 1 {
			d.fail(item, "target %q has more than one of model, http, a2a, agui, command and replay; keep one", t.Name)
		}
		if t.Model == "" {
			if t.API != "" {
				d.fail(item, "target %q: api is for model targets; an http, a2a, agui, command or replay agent speaks its own", t.Name)
			}
			if len(t.MCPServers) > 0 {
				d.fail(item, "target %q: mcp_servers give tools to a model target; an http, a2a, agui, command or replay agent has its own tools", t.Name)
			}
		}
		if t.Store != nil && t.API != "responses" {
			d.fail(item, "target %q: store is a Responses API setting; add api: responses, or remove store", t.Name)
		}
		if t.HTTP != nil && t.HTTP.URL == "" {
			d.fail(item, "target %q: http needs a url", t.Name)
		}
		if t.SystemPrompt != nil && t.Model == "" {
			d.fail(item, "target %q: system_prompt is for model targets; an http, command or replay agent has its own", t.Name)
		}
		out = append(out, t)
	}
	return out
}

// protocolTarget reads an a2a or agui target: a URL, or {url, headers}.
func (d *decoder) protocolTarget(n *yaml.Node, what string) *ProtocolTarget {
	p := &ProtocolTarget{}
	if rn := resolve(n); rn != nil && rn.Kind == yaml.ScalarNode {
		p.URL = d.str(rn, what)
	} else {
		for _, f := range d.fields(n, what, []string{"url", "headers"}) {
			switch f.key {
			case "url":
				p.URL = d.str(f.value, what+".url")
			case "headers":
				p.Headers = d.strMap(f.value, what+".headers")
			}
		}
	}
	if p.URL == "" {
		d.fail(n, "%s needs a url, such as {url: http://127.0.0.1:9999}", what)
	} else if !strings.HasPrefix(p.URL, "http://") && !strings.HasPrefix(p.URL, "https://") {
		d.fail(n, "%s.url must be an http:// or https:// URL, not %q", what, p.URL)
	}
	return p
}

// mcpServers reads a list of MCP servers: {command: [...], env, dir} for a
// program speaking MCP on stdio, or {url, headers} for Streamable HTTP.
func (d *decoder) mcpServers(n *yaml.Node) []MCPServer {
	rn := resolve(n)
	if rn == nil || rn.Kind != yaml.SequenceNode {
		d.fail(n, "mcp_servers must be a list of servers, each {command: [program, args...]} or {url: http://...}, not %s", kindName(rn))
		return nil
	}
	var out []MCPServer
	for _, item := range rn.Content {
		m := MCPServer{Pos: d.pos(item), BaseDir: filepath.Dir(d.file)}
		for _, f := range d.fields(item, "an MCP server", []string{"name", "command", "env", "dir", "url", "headers", "tools"}) {
			switch f.key {
			case "name":
				m.Name = d.str(f.value, "mcp_servers.name")
			case "command":
				m.Command = d.argv(f.value, "mcp_servers.command")
				if len(m.Command) == 0 || m.Command[0] == "" {
					d.fail(f.value, "command needs the program and its arguments as a list, e.g. [node, tools-server.mjs]")
				}
			case "env":
				m.Env = d.strMap(f.value, "mcp_servers.env")
			case "dir":
				m.Dir = d.str(f.value, "mcp_servers.dir")
			case "url":
				m.URL = d.str(f.value, "mcp_servers.url")
				if !strings.HasPrefix(m.URL, "http://") && !strings.HasPrefix(m.URL, "https://") {
					d.fail(f.value, "mcp_servers.url must be an http:// or https:// URL (MCP's Streamable HTTP), not %q", m.URL)
				}
			case "headers":
				m.Headers = d.strMap(f.value, "mcp_servers.headers")
			case "tools":
				m.Tools = d.strList(f.value, "mcp_servers.tools")
			}
		}
		switch {
		case len(m.Command) > 0 && m.URL != "":
			d.fail(item, "an MCP server has a command (stdio) or a url (Streamable HTTP), not both")
		case len(m.Command) == 0 && m.URL == "":
			d.fail(item, "an MCP server needs command: [program, args...] (stdio) or url: http://... (Streamable HTTP)")
		case m.URL != "" && (len(m.Env) > 0 || m.Dir != ""):
			d.fail(item, "env and dir are for an MCP server started as a command; a url server runs on its own")
		case len(m.Command) > 0 && len(m.Headers) > 0:
			d.fail(item, "headers are for an MCP server reached by url; a command server is given env")
		}
		if m.Name == "" {
			m.Name = m.URL
			if len(m.Command) > 0 {
				m.Name = strings.Join(m.Command, " ")
			}
		}
		out = append(out, m)
	}
	return out
}

func (d *decoder) strMap(n *yaml.Node, what string) map[string]string {
	out := map[string]string{}
	for _, f := range d.fields(n, what, nil) {
		out[f.key] = d.str(f.value, what+"."+f.key)
	}
	return out
}

func (d *decoder) judge(n *yaml.Node) *JudgeSpec {
	j := &JudgeSpec{Pos: d.pos(n)}
	if rn := resolve(n); rn != nil && rn.Kind == yaml.ScalarNode {
		j.Model = d.str(rn, "judge")
	} else {
		var provider string
		for _, f := range d.fields(n, "judge", []string{"model", "provider", "samples", "api"}) {
			switch f.key {
			case "api":
				j.API = d.str(f.value, "judge.api")
				if j.API != "chat" && j.API != "responses" {
					d.fail(f.value, "judge.api must be chat (Chat Completions, the default) or responses (OpenAI's Responses API), not %q", j.API)
				}
			case "model":
				j.Model = d.str(f.value, "judge.model")
			case "provider":
				provider = d.str(f.value, "judge.provider")
			case "samples":
				j.Samples, _ = d.integer(f.value, "judge.samples")
				if j.Samples < 1 || j.Samples%2 == 0 {
					d.fail(f.value, "judge.samples must be a positive odd number, for a clear majority")
				}
			}
		}
		if provider != "" && !strings.Contains(j.Model, ":") {
			j.Model = provider + ":" + j.Model
		}
	}
	if !strings.Contains(j.Model, ":") {
		d.fail(n, "judge must be provider:model, such as openai:gpt-4o-mini")
	}
	return j
}

func (d *decoder) tools(n *yaml.Node) []ToolMock {
	n = resolve(n)
	if n == nil || n.Kind != yaml.SequenceNode {
		d.fail(n, "tools must be a list of tools, not %s", kindName(n))
		return nil
	}
	var out []ToolMock
	for _, item := range n.Content {
		t := ToolMock{Pos: d.pos(item)}
		for _, f := range d.fields(item, "a tool", []string{"name", "description", "parameters", "result", "results"}) {
			switch f.key {
			case "name":
				t.Name = d.str(f.value, "tool name")
			case "description":
				t.Description = d.str(f.value, "tool description")
			case "parameters":
				if m, ok := d.value(f.value).(map[string]any); ok {
					t.Parameters = m
				} else {
					d.fail(f.value, "parameters must be a JSON Schema object")
				}
			case "result":
				t.Result = d.value(f.value)
			case "results":
				rn := resolve(f.value)
				if rn == nil || rn.Kind != yaml.SequenceNode {
					d.fail(f.value, "results must be a list of {when: {...}, result: ...}")
					continue
				}
				for _, c := range rn.Content {
					mc := MockCase{}
					for _, cf := range d.fields(c, "a tool result case", []string{"when", "result"}) {
						switch cf.key {
						case "when":
							if m, ok := d.value(cf.value).(map[string]any); ok {
								mc.When = m
							} else {
								d.fail(cf.value, "when must map argument names to values")
							}
						case "result":
							mc.Result = d.value(cf.value)
						}
					}
					t.Cases = append(t.Cases, mc)
				}
			}
		}
		if t.Name == "" {
			d.fail(item, "a tool needs a name")
		}
		if t.Parameters == nil {
			t.Parameters = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		out = append(out, t)
	}
	return out
}
