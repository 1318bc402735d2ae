package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The test binary is also the stdio server of the tests: with
// MCPTOOLS_TEST_SERVER set it serves MCP on stdin and stdout, as the mode
// says, instead of running the tests.
const serverEnv = "MCPTOOLS_TEST_SERVER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(serverEnv); mode != "" {
		os.Exit(serve(mode))
	}
	os.Exit(m.Run())
}

// serverCommand is the argv that runs this binary as a server in mode.
func serverCommand(t *testing.T) []string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{exe, "-test.run=^$"}
}

func serve(mode string) int {
	ctx := context.Background()
	switch mode {
	case "tools":
		if err := newServer(2).Run(ctx, &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	case "mute":
		// Reads what it is sent and never answers: a server stuck before
		// initialize. It exits when its input closes.
		io.Copy(io.Discard, os.Stdin)
		return 0
	case "dies":
		fmt.Fprintln(os.Stderr, "cannot open tools.db: permission denied")
		return 2
	case "stubborn":
		// Serves, then outlives its input and SIGTERM, with a child of its
		// own: only a kill of the process group ends them.
		signal.Ignore(syscall.SIGTERM)
		sleep := exec.Command("sleep", "60")
		if err := sleep.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		os.WriteFile(os.Getenv("MCPTOOLS_PIDFILE"), []byte(strconv.Itoa(sleep.Process.Pid)), 0o644)
		newServer(0).Run(ctx, &mcp.StdioTransport{})
		select {}
	}
	fmt.Fprintln(os.Stderr, "unknown mode", mode)
	return 1
}

type weatherIn struct {
	City string `json:"city" jsonschema:"the city"`
}

type bookingIn struct {
	Party int    `json:"party"`
	Time  string `json:"time"`
	Prefs struct {
		Seating string   `json:"seating"`
		Notes   []string `json:"notes,omitempty"`
	} `json:"prefs"`
}

type slowIn struct {
	MS int `json:"ms"`
}

// newServer is the tools server of the tests, over any transport; pageSize
// > 0 makes tools/list answer in pages of that many.
func newServer(pageSize int) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "test-tools", Version: "1"}, &mcp.ServerOptions{PageSize: pageSize})
	mcp.AddTool(s, &mcp.Tool{Name: "get_weather", Description: "The weather in a city."},
		func(_ context.Context, _ *mcp.CallToolRequest, in weatherIn) (*mcp.CallToolResult, any, error) {
			return text("sunny in " + in.City), nil, nil
		})
	// book_table echoes its arguments as it received them.
	s.AddTool(&mcp.Tool{Name: "book_table", Description: "Book a table.", InputSchema: json.RawMessage(
		`{"type":"object","properties":{"party":{"type":"integer"},"time":{"type":"string"},` +
			`"prefs":{"type":"object","properties":{"seating":{"type":"string"},"notes":{"type":"array","items":{"type":"string"}}}}},` +
			`"required":["party","time"]}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("booked " + string(req.Params.Arguments)), nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Always fails."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return nil, nil, errors.New("the kitchen is closed")
		})
	s.AddTool(&mcp.Tool{Name: "stats", Description: "Structured only.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{}, StructuredContent: map[string]any{"tables": 12, "free": 3}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "menu", Description: "Text, an image and a resource.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "Today's menu:"},
				&mcp.ImageContent{MIMEType: "image/png", Data: []byte("\x89PNG....")},
				&mcp.ResourceLink{URI: "file:///menu.pdf", Name: "menu.pdf", MIMEType: "application/pdf"},
			}}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "Sleeps ms milliseconds."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in slowIn) (*mcp.CallToolResult, any, error) {
			select {
			case <-time.After(time.Duration(in.MS) * time.Millisecond):
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
			return text("slept"), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "Kills the server."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			fmt.Fprintln(os.Stderr, "panic: the oven exploded")
			os.Exit(3)
			return nil, nil, nil
		})
	return s
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}
