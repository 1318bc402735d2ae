// Command server is the MCP server of agenteval's tests and testscripts,
// built on the official Go SDK: a few restaurant tools over stdio (the
// default) or Streamable HTTP (-http ADDR).
//
//	server                                   # stdio
//	server -http 127.0.0.1:0 -env-file mcp.env -token T
//	server -wait mcp.env                     # until the file exists
//
// With -http it writes MCP_URL=http://ADDR/mcp to the -env-file once it
// listens, so that a script can pass it to agenteval with --env-file.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	addr := flag.String("http", "", "serve Streamable HTTP on this loopback address instead of stdio")
	envFile := flag.String("env-file", "", "with -http: write MCP_URL=... here once listening")
	token := flag.String("token", "", "with -http: require the header Authorization: Bearer TOKEN")
	die := flag.String("die", "", "write this to stderr and exit 2 at once")
	wait := flag.String("wait", "", "wait up to 20s for this file to exist, then exit")
	flag.Parse()
	switch {
	case *wait != "":
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if _, err := os.Stat(*wait); err == nil {
				return
			}
		}
		fmt.Fprintf(os.Stderr, "%s did not appear\n", *wait)
		os.Exit(1)
	case *die != "":
		fmt.Fprintln(os.Stderr, *die)
		os.Exit(2)
	case *addr != "":
		if err := serveHTTP(*addr, *envFile, *token); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	default:
		if err := newServer().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}

func serveHTTP(addr, envFile, token string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return newServer() }, nil)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if token != "" && r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}), ReadHeaderTimeout: 10 * time.Second}
	if envFile != "" {
		// Whole or absent: written aside, then renamed into place.
		tmp := filepath.Join(filepath.Dir(envFile), ".tmp-"+filepath.Base(envFile))
		if err := os.WriteFile(tmp, fmt.Appendf(nil, "MCP_URL=http://%s/mcp\n", ln.Addr()), 0o644); err != nil {
			return err
		}
		if err := os.Rename(tmp, envFile); err != nil {
			return err
		}
	}
	return srv.Serve(ln)
}

type weatherIn struct {
	City string `json:"city" jsonschema:"the city"`
}

type bookingIn struct {
	Party int    `json:"party" jsonschema:"how many people"`
	Time  string `json:"time" jsonschema:"like 7pm"`
	Prefs *struct {
		Seating string `json:"seating,omitempty"`
	} `json:"prefs,omitempty"`
}

func newServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "restaurant-tools", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "get_weather", Description: "The weather in a city."},
		func(_ context.Context, _ *mcp.CallToolRequest, in weatherIn) (*mcp.CallToolResult, any, error) {
			return text("sunny in " + in.City + ", 21C"), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "book_table", Description: "Book a table."},
		func(_ context.Context, req *mcp.CallToolRequest, in bookingIn) (*mcp.CallToolResult, any, error) {
			if in.Party > 12 {
				return nil, nil, fmt.Errorf("no table for %d", in.Party)
			}
			b, _ := json.Marshal(in)
			return text("booked " + string(b)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "Stops the server."},
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
