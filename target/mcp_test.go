package target

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/fakellm"
	"github.com/agenteval/agenteval/internal/proc"
	"github.com/agenteval/agenteval/internal/redact"
	"github.com/agenteval/agenteval/provider"
	"github.com/agenteval/agenteval/suite"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// buildMCPServer builds the test MCP server (testdata/mcp/server, on the
// official Go SDK) into dir.
func buildMCPServer(t *testing.T, dir string) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to build the test MCP server with")
	}
	cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "mcpserver"), "./testdata/mcp/server")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build the test MCP server: %v\n%s", err, out)
	}
}

// mcpHTTP serves the restaurant tools over Streamable HTTP, for requests
// with the bearer token.
func mcpHTTP(t *testing.T, token string) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "bookings"}, nil)
	type booking struct {
		Party int    `json:"party"`
		Time  string `json:"time"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "book_table", Description: "Book a table."},
		func(_ context.Context, _ *mcp.CallToolRequest, b booking) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "booked at " + b.Time}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "cancel_table", Description: "Cancel a booking."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "cancelled"}}}, nil, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// openMCP loads src as dir/suite.yaml and opens its first target against
// the fake model.
func openMCP(t *testing.T, dir, src string, env map[string]string, fake *fakellm.Server, opt suite.Options) (agenteval.Agent, *suite.Suite) {
	t.Helper()
	path := filepath.Join(dir, "suite.yaml")
	opt.Env = func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	s, err := suite.Parse(path, []byte(src), opt)
	if err != nil {
		t.Fatal(err)
	}
	a, err := Open(s.Targets[0], s, Options{Configure: func(c *provider.Config) { c.BaseURL, c.APIKey = fake.URL, "k" }})
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := a.(interface{ Close() error }); ok {
		t.Cleanup(func() { c.Close() })
	}
	return a, s
}

func mcpReq(turn int, text string) *agenteval.AgentRequest {
	return &agenteval.AgentRequest{ConversationID: "c1", Turn: turn, Messages: agenteval.Conversation{{Role: agenteval.RoleUser, Content: text}}}
}

// TestMCPServers: a model target's tools come from a stdio server (a
// program built from testdata) and a Streamable HTTP one, beside its mock
// tools, and the calls run on the servers for real.
func TestMCPServers(t *testing.T) {
	dir := t.TempDir()
	buildMCPServer(t, dir)
	fake, err := fakellm.Start(fakellm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	url := mcpHTTP(t, "tools-tok-5150")
	env := map[string]string{"TOOLS_URL": url, "TOOLS_TOKEN": "tools-tok-5150"}
	const src = `
targets:
  - name: gpt
    model: openai:gpt-4o-mini
    mcp_servers:
      - command: [./mcpserver]
        tools: [get_weather, crash]
      - name: bookings
        url: ${{ TOOLS_URL }}
        headers: {Authorization: "Bearer ${{ TOOLS_TOKEN }}"}
        tools: [book_table]
tools:
  - {name: check_availability, result: free}
tests: [{id: a, input: hi, assertions: [{type: contains, value: x}]}]
`
	where := filepath.Join(dir, "suite.yaml") + ":6:9"

	t.Run("calls", func(t *testing.T) {
		fake.Reset()
		fake.Add(&fakellm.Rule{Times: 1, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{
			{Name: "get_weather", Arguments: `{"city": "Paris"}`},
			{Name: "book_table", Arguments: `{"time": "7pm", "party": 2}`},
			{Name: "check_availability", Arguments: `{}`},
		}}}, &fakellm.Rule{Reply: fakellm.Reply{Content: "Booked."}})
		a, _ := openMCP(t, dir, src, env, fake, suite.Options{})
		resp, err := a.Respond(context.Background(), mcpReq(1, "book"))
		if err != nil {
			t.Fatal(err)
		}
		got := resp.Messages
		if len(got) != 5 || len(got[0].ToolCalls) != 3 || got[4].Content != "Booked." {
			t.Fatalf("messages = %+v", got)
		}
		want := []struct{ content, server string }{
			{"sunny in Paris, 21C", "./mcpserver"},
			{"booked at 7pm", "bookings"},
			{"free", ""},
		}
		for i, w := range want {
			m := got[i+1]
			if m.Role != agenteval.RoleTool || m.Content != w.content || m.ToolCallID != got[0].ToolCalls[i].ID {
				t.Errorf("tool message %d = %+v, want %q", i, m, w.content)
			}
			if s, _ := m.Metadata["mcp_server"].(string); s != w.server {
				t.Errorf("tool message %d: mcp_server %q, want %q", i, s, w.server)
			}
		}
		// The model was offered the mock tool and the servers' tools the
		// filters keep.
		var offered []string
		for _, tl := range fake.Requests()[0].Tools {
			offered = append(offered, tl.Function.Name)
		}
		if strings.Join(offered, ",") != "check_availability,get_weather,crash,book_table" {
			t.Errorf("offered %v", offered)
		}
		// The header's token is a secret now.
		if got := redact.String("token tools-tok-5150"); strings.Contains(got, "5150") {
			t.Errorf("the header is not redacted: %q", got)
		}

		// A server that dies mid-call is the tool's failure, for the model
		// to read; the turn goes on.
		fake.Reset()
		fake.Add(&fakellm.Rule{Times: 1, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "crash", Arguments: `{}`}}}},
			&fakellm.Rule{Reply: fakellm.Reply{Content: "Sorry."}})
		resp, err = a.Respond(context.Background(), mcpReq(2, "crash"))
		if err != nil {
			t.Fatal(err)
		}
		wantErr := `error: MCP server "./mcpserver" (` + where + `): exited (exit status 3) during tools/call "crash"; stderr: panic: the oven exploded`
		if len(resp.Messages) != 3 || resp.Messages[1].Content != wantErr {
			t.Errorf("messages = %+v\nwant the tool's result %s", resp.Messages, wantErr)
		}
		start := time.Now()
		if err := a.(interface{ Close() error }).Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("Close took %s", d)
		}
		if _, err := a.Respond(context.Background(), mcpReq(3, "again")); err == nil {
			t.Errorf("a closed target answered")
		}
	})

	t.Run("a server that fails fails every turn", func(t *testing.T) {
		fake.Reset()
		bad := strings.Replace(src, "command: [./mcpserver]", `command: [./mcpserver, -die, "cannot open tools.db"]`, 1)
		a, _ := openMCP(t, dir, bad, env, fake, suite.Options{})
		want := `MCP server "./mcpserver -die cannot open tools.db" (` + where + `): exited (exit status 2) during initialize; stderr: cannot open tools.db`
		for turn := 1; turn <= 2; turn++ {
			if _, err := a.Respond(context.Background(), mcpReq(turn, "hi")); err == nil || err.Error() != want {
				t.Errorf("turn %d: %v\nwant %s", turn, err, want)
			}
		}
		if fake.Calls() != 0 {
			t.Errorf("the model was called %d times", fake.Calls())
		}
	})

	t.Run("a tool named like a mock", func(t *testing.T) {
		clash := strings.Replace(src, "{name: check_availability, result: free}", "{name: get_weather, result: rainy}", 1)
		a, _ := openMCP(t, dir, clash, env, fake, suite.Options{})
		_, err := a.Respond(context.Background(), mcpReq(1, "hi"))
		want := `tool "get_weather" of MCP server "./mcpserver" (` + where + `) has the name of a tool of the file's tools: (a mock)`
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("got  %v\nwant %s...", err, want)
		}
	})

	t.Run("wrong token", func(t *testing.T) {
		a, _ := openMCP(t, dir, src, map[string]string{"TOOLS_URL": url, "TOOLS_TOKEN": "nope"}, fake, suite.Options{})
		_, err := a.Respond(context.Background(), mcpReq(1, "hi"))
		if err == nil || !strings.Contains(err.Error(), `MCP server "bookings" (`) || !strings.Contains(err.Error(), "Unauthorized") {
			t.Errorf("got %v", err)
		}
	})

	t.Run("no-exec", func(t *testing.T) {
		// Refused where it is written, for an eval file's servers...
		_, err := suite.Parse(filepath.Join(dir, "suite.yaml"), []byte(src), suite.Options{NoExec: true, Env: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
		if err == nil || !strings.Contains(err.Error(), "suite.yaml:6:9: MCP server \"./mcpserver\" runs ./mcpserver: refused under --no-exec") {
			t.Errorf("eval file: %v", err)
		}
		// ...and a project file's,
		_, err = suite.ParseProject(filepath.Join(dir, "agenteval.yaml"), []byte("mcp_servers:\n  - command: [node, tools.mjs]\n"), suite.Options{NoExec: true})
		if err == nil || !strings.Contains(err.Error(), "agenteval.yaml:2:5: MCP server \"node tools.mjs\" runs node: refused under --no-exec") {
			t.Errorf("project file: %v", err)
		}
		// ...and by the process rules if one gets through.
		proc.Refuse("--no-exec")
		defer proc.Refuse("")
		a, _ := openMCP(t, dir, src, env, fake, suite.Options{})
		_, err = a.Respond(context.Background(), mcpReq(1, "hi"))
		if err == nil || !strings.Contains(err.Error(), "will not run ") || !strings.Contains(err.Error(), "running programs is turned off (--no-exec)") {
			t.Errorf("at run time: %v", err)
		}
	})
}

// TestMCPPaths: a server's relative command and dir start at the folder
// of the file that declared it.
func TestMCPPaths(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tools.mjs"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got := mcpServer(suite.MCPServer{Name: "n", Command: []string{"node", "tools.mjs", "--flag"}, Dir: "sub", BaseDir: dir,
		Pos: agenteval.Pos{File: "x.yaml", Line: 3, Col: 5}}, "elsewhere")
	if got.Command[1] != filepath.Join(dir, "tools.mjs") || got.Command[0] != "node" || got.Command[2] != "--flag" {
		t.Errorf("command = %v", got.Command)
	}
	if got.Dir != filepath.Join(dir, "sub") || got.Where != "x.yaml:3:5" {
		t.Errorf("dir %q, where %q", got.Dir, got.Where)
	}
	got = mcpServer(suite.MCPServer{Command: []string{"./bin/server"}}, dir)
	if got.Command[0] != filepath.Join(dir, "bin", "server") || got.Dir != dir {
		t.Errorf("command %v in %q", got.Command, got.Dir)
	}
}
