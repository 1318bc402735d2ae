// Package mcptools gives an agent the tools of MCP (Model Context Protocol)
// servers. Connect starts or reaches each server — a program speaking MCP
// on its stdin and stdout, or a Streamable HTTP endpoint — initializes a
// session, lists the server's tools, and returns them as agent.Tool values
// whose Run calls the tool on the server. A ToolLoop given these tools uses
// the servers' real tools, and its transcript records the calls.
//
// A program is started as agenteval starts every child process: from an
// argv list, never through a shell, in a process group of its own that is
// killed whole when the server is closed or exits, with the end of its
// stderr kept for error messages.
//
// It imports agent (the tool type), internal/proc (child processes), the
// official MCP Go SDK (github.com/modelcontextprotocol/go-sdk) and the
// standard library.
package mcptools

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agenteval/agenteval/agent"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Server says how to reach one MCP server: Command (stdio), URL
// (Streamable HTTP) or Transport (any other, such as in-memory).
type Server struct {
	// Name labels the server in messages; default its command or URL.
	Name string
	// Where, when set, says where the server was declared (file:line),
	// and is shown after its name in messages.
	Where string

	// Command is the argv of a program speaking MCP on stdin and stdout.
	// It runs in Dir with the process's environment plus Env.
	Command []string
	Env     map[string]string
	Dir     string

	// URL is a Streamable HTTP endpoint; Headers are sent with every
	// request (auth). HTTPClient, when set, is the client to send them
	// with; its Transport gets the headers added.
	URL        string
	Headers    map[string]string
	HTTPClient *http.Client

	// Transport, when set, is used as is (mcp.NewInMemoryTransports for a
	// server in the same program, or a transport of your own).
	Transport mcp.Transport

	// Tools, when set, offers only these of the server's tools; naming a
	// tool the server does not have is an error.
	Tools []string
}

// Options adjust Connect.
type Options struct {
	// Timeout bounds each step of connecting (starting the program,
	// initializing, listing the tools) and each tool call; 0 means 60s.
	Timeout time.Duration
	// ExitWait is how long Close waits for a program to exit once its
	// input is closed, before killing its process group; 0 means 2s.
	ExitWait time.Duration
	// ClientName is the client name sent in initialize; default
	// "agenteval".
	ClientName string
}

func (o *Options) timeout() time.Duration {
	if o == nil || o.Timeout <= 0 {
		return 60 * time.Second
	}
	return o.Timeout
}

func (o *Options) exitWait() time.Duration {
	if o == nil || o.ExitWait <= 0 {
		return 2 * time.Second
	}
	return o.ExitWait
}

// Client holds open sessions with a list of servers. Its tools may be called
// from many goroutines at once: calls to one server share its session, each
// its own JSON-RPC request, and the official SDKs' servers (Go and
// TypeScript at least) run them concurrently, over stdio too.
type Client struct {
	conns  []*conn
	tools  []agent.Tool
	server map[string]*conn // tool name → its server
	once   sync.Once
	err    error
}

// Connect connects to every server (at once), lists their tools and makes
// them agent tools. Two servers offering a tool of the same name is an
// error naming both. On any error the servers already connected are closed.
func Connect(ctx context.Context, servers []Server, opt *Options) (*Client, error) {
	c := &Client{server: map[string]*conn{}}
	c.conns = make([]*conn, len(servers))
	errs := make([]error, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Go(func() {
			c.conns[i], errs[i] = connect(ctx, s, opt)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		c.Close()
		return nil, err
	}
	for _, cn := range c.conns {
		for _, t := range cn.tools {
			if prev, ok := c.server[t.Name]; ok {
				c.Close()
				return nil, fmt.Errorf("tool %q is offered by both %s and %s; choose one with tools: [...] on either server", t.Name, prev.label(), cn.label())
			}
			c.server[t.Name] = cn
			c.tools = append(c.tools, t)
		}
	}
	return c, nil
}

// Tools are the servers' tools, server by server in the order given, each
// server's in its own order.
func (c *Client) Tools() []agent.Tool { return slices.Clone(c.tools) }

// ServerOf is the name of the server offering tool name, or "".
func (c *Client) ServerOf(name string) string {
	if cn, ok := c.server[name]; ok {
		return cn.name
	}
	return ""
}

// Close ends every session: calls still running are cancelled, each program
// has its input closed and, if it has not exited ExitWait later, its
// process group killed. It waits for the programs to be reaped.
func (c *Client) Close() error {
	c.once.Do(func() {
		errs := make([]error, len(c.conns))
		var wg sync.WaitGroup
		for i, cn := range c.conns {
			if cn != nil {
				wg.Go(func() { errs[i] = cn.close() })
			}
		}
		wg.Wait()
		c.err = errors.Join(errs...)
	})
	return c.err
}

// conn is the session with one server.
type conn struct {
	name, where string
	timeout     time.Duration
	exitWait    time.Duration
	session     *mcp.ClientSession
	child       *child // nil unless the server is a program
	tools       []agent.Tool
	// closing is cancelled by close, ending the calls still running.
	closing context.Context
	cancel  context.CancelFunc
}

func (cn *conn) label() string {
	s := fmt.Sprintf("MCP server %q", cn.name)
	if cn.where != "" {
		s += " (" + cn.where + ")"
	}
	return s
}

func connect(ctx context.Context, s Server, opt *Options) (*conn, error) {
	cn := &conn{name: s.Name, where: s.Where, timeout: opt.timeout(), exitWait: opt.exitWait()}
	if cn.name == "" {
		cn.name = s.URL
		if len(s.Command) > 0 {
			cn.name = strings.Join(s.Command, " ")
		}
	}
	cn.closing, cn.cancel = context.WithCancel(context.Background())
	var t mcp.Transport
	switch {
	case s.Transport != nil:
		t = s.Transport
	case len(s.Command) > 0:
		ch, err := startChild(s)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", cn.label(), err)
		}
		cn.child = ch
		t = &mcp.IOTransport{Reader: ch.stdout, Writer: ch.stdin}
	case s.URL != "":
		t = &mcp.StreamableClientTransport{
			Endpoint:   s.URL,
			HTTPClient: withHeaders(s.HTTPClient, s.Headers),
			// Only answers to our own calls are needed: no standing
			// stream for the server's notifications.
			DisableStandaloneSSE: true,
			MaxRetries:           -1,
		}
	default:
		return nil, fmt.Errorf("%s has no command, url or transport", cn.label())
	}
	name := "agenteval"
	if opt != nil && opt.ClientName != "" {
		name = opt.ClientName
	}
	client := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil)
	cctx, cancel := context.WithTimeout(ctx, cn.timeout)
	defer cancel()
	type connected struct {
		session *mcp.ClientSession
		err     error
	}
	ch := make(chan connected, 1)
	go func() {
		s, err := client.Connect(cctx, t, nil)
		ch <- connected{s, err}
	}()
	var r connected
	select {
	case r = <-ch:
	case <-cctx.Done():
		// The SDK may still be closing the half-open session: its notice
		// of the cancelled request has a timeout of its own, and a server
		// that answers nothing makes it wait that long. It is not waited
		// for.
		go func() {
			if r := <-ch; r.session != nil {
				r.session.Close()
			}
		}()
		r.err = cctx.Err()
	}
	if r.err != nil {
		err := cn.failure(cctx, "initialize", r.err)
		cn.close()
		return nil, err
	}
	cn.session = r.session
	if err := cn.list(ctx, s.Tools); err != nil {
		cn.close()
		return nil, err
	}
	return cn, nil
}

// list lists the server's tools (every page), keeps those filter names
// (all when it is empty), and makes them agent tools.
func (cn *conn) list(ctx context.Context, filter []string) error {
	lctx, cancel := context.WithTimeout(ctx, cn.timeout)
	defer cancel()
	var all []*mcp.Tool
	for t, err := range cn.session.Tools(lctx, nil) {
		if err != nil {
			return cn.failure(lctx, "tools/list", err)
		}
		all = append(all, t)
	}
	byName := map[string]*mcp.Tool{}
	for _, t := range all {
		byName[t.Name] = t
	}
	keep := all
	if len(filter) > 0 {
		keep = nil
		for _, n := range filter {
			t, ok := byName[n]
			if !ok {
				names := slices.Sorted(maps.Keys(byName))
				if len(names) == 0 {
					return fmt.Errorf("%s has no tool %q: it offers no tools", cn.label(), n)
				}
				return fmt.Errorf("%s has no tool %q; its tools are %s", cn.label(), n, strings.Join(names, ", "))
			}
			keep = append(keep, t)
		}
	}
	for _, t := range keep {
		params, err := schemaMap(t.InputSchema)
		if err != nil {
			return fmt.Errorf("%s: tool %q: input schema: %w", cn.label(), t.Name, err)
		}
		desc := t.Description
		if desc == "" {
			desc = t.Title
		}
		name := t.Name
		cn.tools = append(cn.tools, agent.Tool{
			Name: name, Description: desc, Parameters: params,
			Run: func(ctx context.Context, args map[string]any) (string, error) {
				return cn.call(ctx, name, args)
			},
		})
	}
	return nil
}

// call runs tools/call. A result with isError is the tool's failure, its
// text the error; a failed request says what happened to the server.
func (cn *conn) call(ctx context.Context, name string, args map[string]any) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, cn.timeout)
	defer cancel()
	stop := context.AfterFunc(cn.closing, cancel)
	defer stop()
	if args == nil {
		args = map[string]any{}
	}
	res, err := cn.session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		if cn.closing.Err() != nil {
			return "", fmt.Errorf("%s was closed during the call of %q", cn.label(), name)
		}
		return "", cn.failure(ctx, fmt.Sprintf("tools/call %q", name), err)
	}
	text := resultText(res)
	if res.IsError {
		if text == "" {
			text = "the tool failed and said nothing"
		}
		return "", errors.New(text)
	}
	return text, nil
}

// failure describes a failed request: its deadline, or the program's exit
// with its stderr, or the error as the SDK gives it.
func (cn *conn) failure(ctx context.Context, what string, err error) error {
	if ctx.Err() == context.DeadlineExceeded {
		msg := fmt.Sprintf("%s: no answer to %s within %s", cn.label(), what, cn.timeout)
		if cn.child != nil {
			msg += cn.child.stderrNote()
		}
		return errors.New(msg)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %s: %w", cn.label(), what, ctx.Err())
	}
	if cn.child != nil {
		// A program that died closes its output, which fails the request
		// before the exit is seen: give the exit a moment to arrive.
		if st, ok := cn.child.exited(time.Second); ok {
			return fmt.Errorf("%s: exited (%s) during %s%s", cn.label(), st, what, cn.child.stderrNote())
		}
		return fmt.Errorf("%s: %s: %v%s", cn.label(), what, err, cn.child.stderrNote())
	}
	return fmt.Errorf("%s: %s: %w", cn.label(), what, err)
}

// close ends the session, then the program.
func (cn *conn) close() error {
	cn.cancel()
	if cn.session == nil && cn.child != nil {
		// No session to close its input: a program that never finished
		// initializing is told to stop at once.
		cn.child.stdin.Close()
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if cn.session != nil {
			cn.session.Close()
		}
	}()
	var errs []error
	if cn.child != nil {
		// The session's close closes the program's input; a program that
		// does not exit then, or a session waiting on it, ends with a
		// kill of its process group.
		if err := cn.child.stop(cn.exitWait); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", cn.label(), err))
		}
	}
	select {
	case <-done:
	case <-time.After(cn.exitWait + 5*time.Second):
		errs = append(errs, fmt.Errorf("%s: the session did not close", cn.label()))
	}
	return errors.Join(errs...)
}
