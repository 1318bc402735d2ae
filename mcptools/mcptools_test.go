package mcptools

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agenteval/agenteval/agent"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// httpServer serves the test tools over Streamable HTTP on 127.0.0.1; a
// request without the Authorization header token gets 401.
func httpServer(t *testing.T, token string) string {
	t.Helper()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return newServer(0) }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if token != "" && r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

func connectT(t *testing.T, opt *Options, servers ...Server) *Client {
	t.Helper()
	c, err := Connect(context.Background(), servers, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func names(tools []agent.Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Name)
	}
	return out
}

func tool(t *testing.T, c *Client, name string) agent.Tool {
	t.Helper()
	for _, tl := range c.Tools() {
		if tl.Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %q in %v", name, names(c.Tools()))
	return agent.Tool{}
}

var allTools = []string{"get_weather", "book_table", "fail", "stats", "menu", "slow", "crash"}

// TestCalls runs every kind of call over both transports: the same server
// over stdio (this binary) and over Streamable HTTP with an auth header.
func TestCalls(t *testing.T) {
	for _, tr := range []string{"stdio", "http"} {
		t.Run(tr, func(t *testing.T) {
			s := Server{Name: "tools", Command: serverCommand(t), Env: map[string]string{serverEnv: "tools"}}
			if tr == "http" {
				s = Server{Name: "tools", URL: httpServer(t, "s3cret"), Headers: map[string]string{"Authorization": "Bearer s3cret"}}
			}
			c := connectT(t, nil, s)
			// Listing: every tool, in the server's order (the stdio
			// server answers in pages of two), with its schema.
			got := names(c.Tools())
			if !slices.Equal(sorted(got), sorted(allTools)) {
				t.Errorf("tools = %v, want %v", got, allTools)
			}
			w := tool(t, c, "get_weather")
			if w.Description != "The weather in a city." {
				t.Errorf("description = %q", w.Description)
			}
			props, _ := w.Parameters["properties"].(map[string]any)
			if city, _ := props["city"].(map[string]any); city["type"] != "string" || city["description"] != "the city" {
				t.Errorf("parameters = %v", w.Parameters)
			}
			if c.ServerOf("get_weather") != "tools" || c.ServerOf("nope") != "" {
				t.Errorf("ServerOf = %q, %q", c.ServerOf("get_weather"), c.ServerOf("nope"))
			}
			ctx := context.Background()
			cases := []struct {
				tool    string
				args    map[string]any
				want    string
				wantErr string
			}{
				{"get_weather", map[string]any{"city": "Paris"}, "sunny in Paris", ""},
				// Nested arguments reach the server whole.
				{"book_table", map[string]any{"party": 4, "time": "8pm", "prefs": map[string]any{"seating": "terrace", "notes": []any{"birthday", "no nuts"}}},
					`booked {"party":4,"prefs":{"notes":["birthday","no nuts"],"seating":"terrace"},"time":"8pm"}`, ""},
				// isError is the tool's failure, in its own words.
				{"fail", nil, "", "the kitchen is closed"},
				{"stats", nil, `{"free":3,"tables":12}`, ""},
				{"menu", nil, "Today's menu:\n[image: image/png, 8 bytes]\n[resource link: file:///menu.pdf (menu.pdf, application/pdf)]", ""},
				// Arguments the server's schema refuses are its answer too.
				{"get_weather", map[string]any{"city": 7}, "", "city"},
			}
			for _, tc := range cases {
				got, err := tool(t, c, tc.tool).Run(ctx, tc.args)
				if tc.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
						t.Errorf("%s(%v) = %q, %v; want an error with %q", tc.tool, tc.args, got, err, tc.wantErr)
					}
					continue
				}
				if err != nil || got != tc.want {
					t.Errorf("%s(%v) = %q, %v; want %q", tc.tool, tc.args, got, err, tc.want)
				}
			}
		})
	}
}

func sorted(s []string) []string { return slices.Sorted(slices.Values(s)) }

func TestFilterAndClashes(t *testing.T) {
	url := httpServer(t, "")
	c := connectT(t, nil, Server{URL: url, Tools: []string{"menu", "get_weather"}})
	if got := names(c.Tools()); !slices.Equal(got, []string{"menu", "get_weather"}) {
		t.Errorf("filtered tools = %v", got)
	}
	if c.ServerOf("menu") != url {
		t.Errorf("a server's default name is its URL: %q", c.ServerOf("menu"))
	}
	_, err := Connect(context.Background(), []Server{{Name: "t", Where: "suite.yaml:4:7", URL: url, Tools: []string{"get_wether"}}}, nil)
	if err == nil || err.Error() != `MCP server "t" (suite.yaml:4:7) has no tool "get_wether"; its tools are book_table, crash, fail, get_weather, menu, slow, stats` {
		t.Errorf("unknown tool in the filter: %v", err)
	}
	_, err = Connect(context.Background(), []Server{{Name: "a", URL: url}, {Name: "b", URL: url, Tools: []string{"stats"}}}, nil)
	if err == nil || !strings.Contains(err.Error(), `tool "stats" is offered by both MCP server "a" and MCP server "b"`) {
		t.Errorf("clash: %v", err)
	}
}

func TestHTTPFailures(t *testing.T) {
	ctx := context.Background()
	url := httpServer(t, "s3cret")
	_, err := Connect(ctx, []Server{{Name: "auth", URL: url, Headers: map[string]string{"Authorization": "Bearer wrong"}}}, nil)
	if err == nil || !strings.Contains(err.Error(), `MCP server "auth": initialize: `) || !strings.Contains(err.Error(), "Unauthorized") {
		t.Errorf("wrong token: %v", err)
	}
	if err != nil && strings.Contains(err.Error(), "wrong") {
		t.Errorf("the error shows the header: %v", err)
	}
	// A server that takes the request and never answers.
	stop := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	defer hang.Close()
	defer close(stop)
	start := time.Now()
	_, err = Connect(ctx, []Server{{Name: "hang", URL: hang.URL}}, &Options{Timeout: 300 * time.Millisecond})
	if err == nil || err.Error() != `MCP server "hang": no answer to initialize within 300ms` {
		t.Errorf("hanging server: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("gave up after %s", d)
	}
	// Nothing listening.
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	_, err = Connect(ctx, []Server{{Name: "dead", URL: dead.URL}}, nil)
	if err == nil || !strings.Contains(err.Error(), `MCP server "dead": initialize: `) || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("nothing listening: %v", err)
	}
}

func TestStdioFailures(t *testing.T) {
	ctx := context.Background()
	cmd := serverCommand(t)
	t.Run("exits at start", func(t *testing.T) {
		_, err := Connect(ctx, []Server{{Name: "db", Where: "suite.yaml:3:5", Command: cmd, Env: map[string]string{serverEnv: "dies"}}}, nil)
		want := `MCP server "db" (suite.yaml:3:5): exited (exit status 2) during initialize; stderr: cannot open tools.db: permission denied`
		if err == nil || err.Error() != want {
			t.Errorf("got  %v\nwant %s", err, want)
		}
	})
	t.Run("no such program", func(t *testing.T) {
		_, err := Connect(ctx, []Server{{Command: []string{"./no-such-server"}, Dir: t.TempDir()}}, nil)
		if err == nil || !strings.Contains(err.Error(), `MCP server "./no-such-server": start ./no-such-server: `) {
			t.Errorf("got %v", err)
		}
	})
	t.Run("never answers initialize", func(t *testing.T) {
		start := time.Now()
		_, err := Connect(ctx, []Server{{Name: "mute", Command: cmd, Env: map[string]string{serverEnv: "mute"}}}, &Options{Timeout: 300 * time.Millisecond})
		if err == nil || err.Error() != `MCP server "mute": no answer to initialize within 300ms` {
			t.Errorf("got %v", err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("gave up after %s", d)
		}
	})
	t.Run("crash mid-call", func(t *testing.T) {
		c := connectT(t, nil, Server{Name: "oven", Command: cmd, Env: map[string]string{serverEnv: "tools"}})
		start := time.Now()
		_, err := tool(t, c, "crash").Run(ctx, nil)
		want := `MCP server "oven": exited (exit status 3) during tools/call "crash"; stderr: panic: the oven exploded`
		if err == nil || err.Error() != want {
			t.Errorf("got  %v\nwant %s", err, want)
		}
		// Later calls fail at once, saying the same.
		_, err = tool(t, c, "get_weather").Run(ctx, map[string]any{"city": "Oslo"})
		if err == nil || !strings.Contains(err.Error(), "exited (exit status 3)") {
			t.Errorf("call after the crash: %v", err)
		}
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("took %s", d)
		}
	})
}

// TestCallTimeoutAndCancel: a call ends at its timeout, or when its context
// does, and the server is still usable.
func TestCallTimeoutAndCancel(t *testing.T) {
	c := connectT(t, &Options{Timeout: 300 * time.Millisecond}, Server{Name: "s", Command: serverCommand(t), Env: map[string]string{serverEnv: "tools"}})
	slow := tool(t, c, "slow")
	_, err := slow.Run(context.Background(), map[string]any{"ms": 5000})
	if err == nil || err.Error() != `MCP server "s": no answer to tools/call "slow" within 300ms` {
		t.Errorf("timeout: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = slow.Run(ctx, map[string]any{"ms": 5000})
	if err == nil || time.Since(start) > time.Second {
		t.Errorf("cancelled call: %v after %s", err, time.Since(start))
	}
	if got, err := slow.Run(context.Background(), map[string]any{"ms": 1}); err != nil || got != "slept" {
		t.Errorf("after: %q, %v", got, err)
	}
}

// TestConcurrentCalls: calls from many conversations share one stdio
// session, and the server runs them at once.
func TestConcurrentCalls(t *testing.T) {
	c := connectT(t, nil, Server{Command: serverCommand(t), Env: map[string]string{serverEnv: "tools"}})
	slow, weather := tool(t, c, "slow"), tool(t, c, "get_weather")
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, 16)
	for i := range 16 {
		wg.Go(func() {
			if i%2 == 0 {
				_, errs[i] = slow.Run(context.Background(), map[string]any{"ms": 300})
				return
			}
			city := "c" + strconv.Itoa(i)
			got, err := weather.Run(context.Background(), map[string]any{"city": city})
			if err == nil && got != "sunny in "+city {
				err = errors.New("wrong answer " + got)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("8 calls of 300ms took %s: run one after another", d)
	}
}

// TestCloseKillsTheProcessGroup: a server that outlives its input and
// SIGTERM, with a child of its own, is killed whole and reaped.
func TestCloseKillsTheProcessGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	c, err := Connect(context.Background(), []Server{{Command: serverCommand(t),
		Env: map[string]string{serverEnv: "stubborn", "MCPTOOLS_PIDFILE": pidFile}}}, &Options{ExitWait: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	server := c.conns[0].child.cmd.Process.Pid
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	grandchild, _ := strconv.Atoi(string(b))
	start := time.Now()
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Close took %s", d)
	}
	// Reaped: not even a zombie is left.
	if err := syscall.Kill(server, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the server (pid %d) is still there: %v", server, err)
	}
	if alive(grandchild) {
		t.Errorf("the server's child (pid %d) outlived it", grandchild)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

var zombie = regexp.MustCompile(`^\d+ \(.*\) Z`)

// alive reports whether pid runs: it exists and is not a zombie waiting
// for a parent other than us.
func alive(pid int) bool {
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return false
		}
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil && zombie.Match(b) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// TestStderrTail: errors quote the end of a program's stderr, bounded.
func TestStderrTail(t *testing.T) {
	tl := &tail{max: 4096}
	for i := range 1000 {
		tl.Write([]byte("log line " + strconv.Itoa(i) + "\n"))
	}
	tl.Write([]byte("Error: cannot find module 'zod'\n"))
	got := tl.String()
	if !strings.HasPrefix(got, "…") || !strings.HasSuffix(got, "Error: cannot find module 'zod'") || len([]rune(got)) != shown+1 {
		t.Errorf("tail = %d runes: %q", len([]rune(got)), got)
	}
	if len(tl.buf) > 4096 {
		t.Errorf("kept %d bytes", len(tl.buf))
	}
	short := &tail{max: 4096}
	short.Write([]byte("  boom\n"))
	if short.String() != "boom" {
		t.Errorf("short tail = %q", short.String())
	}
}
