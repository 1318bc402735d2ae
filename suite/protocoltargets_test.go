package suite

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestProtocolTargets: a2a, agui, api, store and mcp_servers read as the
// target contract says.
func TestProtocolTargets(t *testing.T) {
	src := `
mcp_servers:
  - command: [node, shared.mjs]
targets:
  - name: travel
    a2a: {url: http://127.0.0.1:9999, headers: {Authorization: Bearer x}}
  - name: copilot
    agui: http://127.0.0.1:8000/agent
  - name: gpt
    model: openai:gpt-4.1-mini
    api: responses
    store: false
    mcp_servers:
      - command: [node, tools-server.mjs]
        env: {A: b}
      - url: http://127.0.0.1:7000/mcp
        headers: {Authorization: Bearer t}
        tools: [search]
judge: {model: openai:gpt-4.1-mini, api: responses}
tests:
  - {id: a, input: hi, expected_output: hello}
`
	s, err := parse(t, src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	no := false
	want := []TargetSpec{
		{Name: "travel", A2A: &ProtocolTarget{URL: "http://127.0.0.1:9999", Headers: map[string]string{"Authorization": "Bearer x"}}},
		{Name: "copilot", AGUI: &ProtocolTarget{URL: "http://127.0.0.1:8000/agent"}},
		{Name: "gpt", Model: "openai:gpt-4.1-mini", API: "responses", Store: &no, MCPServers: []MCPServer{
			{Name: "node tools-server.mjs", Command: []string{"node", "tools-server.mjs"}, Env: map[string]string{"A": "b"}},
			{Name: "http://127.0.0.1:7000/mcp", URL: "http://127.0.0.1:7000/mcp", Headers: map[string]string{"Authorization": "Bearer t"}, Tools: []string{"search"}},
		}},
	}
	ignore := cmpopts.IgnoreFields(TargetSpec{}, "Pos", "alias")
	if diff := cmp.Diff(want, s.Targets, ignore, cmpopts.IgnoreFields(MCPServer{}, "Pos", "BaseDir")); diff != "" {
		t.Errorf("targets (-want +got):\n%s", diff)
	}
	if len(s.MCPServers) != 1 || s.MCPServers[0].Command[1] != "shared.mjs" {
		t.Errorf("file's mcp_servers = %+v", s.MCPServers)
	}
	if s.Judge == nil || s.Judge.API != "responses" {
		t.Errorf("judge = %+v, want api responses", s.Judge)
	}
}

func TestProtocolTargetErrors(t *testing.T) {
	tests := []struct{ name, targets, want string }{
		{"a2a without url", `{name: a, a2a: {headers: {X: y}}}`, "a2a needs a url"},
		{"agui not http", `{name: a, agui: ws://x}`, `agui.url must be an http:// or https:// URL, not "ws://x"`},
		{"two kinds", `{name: a, a2a: http://x, model: openai:m}`, "has more than one of model, http, a2a, agui"},
		{"api value", `{name: a, model: openai:m, api: assistants}`, `api must be chat (Chat Completions, the default) or responses`},
		{"api on a2a", `{name: a, a2a: http://x, api: responses}`, "api is for model targets"},
		{"store without responses", `{name: a, model: openai:m, store: false}`, "store is a Responses API setting"},
		{"mcp on http", `{name: a, http: http://x, mcp_servers: [{url: http://y}]}`, "mcp_servers give tools to a model target"},
		{"mcp both", `{name: a, model: openai:m, mcp_servers: [{url: http://y, command: [x]}]}`, "a command (stdio) or a url (Streamable HTTP), not both"},
		{"mcp neither", `{name: a, model: openai:m, mcp_servers: [{name: x}]}`, "an MCP server needs command"},
		{"mcp typo", `{name: a, model: openai:m, mcp_servers: [{comand: [x]}]}`, `did you mean "command"?`},
		{"mcp headers on stdio", `{name: a, model: openai:m, mcp_servers: [{command: [x], headers: {A: b}}]}`, "headers are for an MCP server reached by url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse(t, "targets:\n  - "+tt.targets+"\ntests:\n  - {id: a, input: hi, expected_output: hello}\n", Options{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse = %v, want the error %q", err, tt.want)
			}
		})
	}
}

// TestNoExecRefusesStdioMCP: under --no-exec an MCP server that is a
// program is refused where it is declared; one reached by url is not.
func TestNoExecRefusesStdioMCP(t *testing.T) {
	src := `
targets:
  - name: gpt
    model: openai:m
    mcp_servers:
      - url: http://127.0.0.1:7000/mcp
      - command: [node, tools.mjs]
tests:
  - {id: a, input: hi, expected_output: hello}
`
	_, err := parse(t, src, Options{NoExec: true})
	if err == nil || !strings.Contains(err.Error(), `evals.yaml:6:9: MCP server "node tools.mjs" runs node: refused under --no-exec`) {
		t.Fatalf("Parse = %v, want the stdio server refused at 6:9", err)
	}
	if strings.Contains(err.Error(), "7000") {
		t.Errorf("the url server was refused too: %v", err)
	}
}
