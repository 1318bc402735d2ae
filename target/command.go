package target

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/proc"
	"github.com/agenteval/agenteval/internal/redact"
)

// CommandAgent runs one process per conversation, from an argv list (never
// through a shell), and speaks JSON lines with it: one request line per
// turn on its stdin, one reply line on its stdout. Its stderr is kept, and
// quoted when something goes wrong.
type CommandAgent struct {
	Argv []string
	Env  map[string]string
	Dir  string
	// Timeout bounds each turn; 0 means 120s.
	Timeout time.Duration

	mu    sync.Mutex
	procs map[string]*child
}

type child struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Reader
	stderr *tailBuffer
	done   chan struct{}
	err    error // set when the process ended
	mu     sync.Mutex
}

// tailBuffer keeps the last few kilobytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 4096 {
		t.buf = t.buf[len(t.buf)-4096:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}

func (a *CommandAgent) start(id string) (*child, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.procs == nil {
		a.procs = map[string]*child{}
	}
	if p, ok := a.procs[id]; ok {
		return p, nil
	}
	if len(a.Argv) == 0 {
		return nil, fmt.Errorf("command target has no command")
	}
	// The process lives as long as the conversation, not one call; Close
	// and kill end it.
	cmd, err := proc.Command(context.Background(), a.Argv)
	if err != nil {
		return nil, err
	}
	cmd.Dir = a.Dir
	cmd.Env = os.Environ()
	for k, v := range a.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
		if redact.SecretName(k) {
			redact.Add(v)
		}
	}
	p := &child{cmd: cmd, stderr: &tailBuffer{}, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p.out = bufio.NewReaderSize(stdout, 1<<20)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start agent %s: %w", a.Argv[0], err)
	}
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		close(p.done)
	}()
	a.procs[id] = p
	return p, nil
}

// Respond runs one turn of the conversation's process.
func (a *CommandAgent) Respond(ctx context.Context, req *agenteval.AgentRequest) (*agenteval.AgentResponse, error) {
	p, err := a.start(req.ConversationID)
	if err != nil {
		return nil, err
	}
	line, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	timeout := a.Timeout
	if timeout <= 0 {
		timeout = 120 * time.Second
	}
	type result struct {
		line []byte
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		if _, err := p.stdin.Write(append(line, '\n')); err != nil {
			ch <- result{err: err}
			return
		}
		l, err := p.out.ReadBytes('\n')
		ch <- result{l, err}
	}()
	var r result
	select {
	case r = <-ch:
	case <-time.After(timeout):
		a.kill(req.ConversationID)
		return nil, a.failure(p, fmt.Sprintf("gave no reply line within %s", timeout))
	case <-ctx.Done():
		a.kill(req.ConversationID)
		return nil, ctx.Err()
	}
	if r.err != nil && len(strings.TrimSpace(string(r.line))) == 0 {
		if errors.Is(r.err, io.EOF) || errors.Is(r.err, os.ErrClosed) || strings.Contains(r.err.Error(), "broken pipe") {
			select {
			case <-p.done:
			case <-time.After(2 * time.Second):
			}
			return nil, a.failure(p, "exited before replying")
		}
		return nil, a.failure(p, "could not be read: "+r.err.Error())
	}
	resp, err := decodeReply(r.line)
	if err != nil {
		return nil, a.failure(p, err.Error())
	}
	return resp, nil
}

// failure describes a broken agent process, with its exit status and the
// end of its stderr.
func (a *CommandAgent) failure(p *child, what string) error {
	msg := fmt.Sprintf("command %s: %s", a.name(), what)
	select {
	case <-p.done:
		p.mu.Lock()
		if p.err != nil {
			msg += fmt.Sprintf(" (%v)", p.err)
		} else {
			msg += " (exit status 0)"
		}
		p.mu.Unlock()
	default:
	}
	if s := p.stderr.String(); s != "" {
		msg += "; stderr: " + snippet(s)
	}
	return errors.New(msg)
}

// name is the command as messages show it: the program's base name and its
// arguments.
func (a *CommandAgent) name() string {
	parts := append([]string{filepath.Base(a.Argv[0])}, a.Argv[1:]...)
	return strings.Join(parts, " ")
}

func (a *CommandAgent) kill(id string) {
	a.mu.Lock()
	p := a.procs[id]
	delete(a.procs, id)
	a.mu.Unlock()
	if p != nil {
		proc.Kill(p.cmd)
	}
}

// CloseConversation ends the conversation's process: its stdin is closed,
// and it is killed if it has not exited a few seconds later.
func (a *CommandAgent) CloseConversation(id string) error {
	a.mu.Lock()
	p := a.procs[id]
	delete(a.procs, id)
	a.mu.Unlock()
	if p == nil {
		return nil
	}
	p.stdin.Close()
	select {
	case <-p.done:
	case <-time.After(3 * time.Second):
	}
	// Kill what is left: the agent if it did not exit, and anything it
	// started and left running.
	proc.Kill(p.cmd)
	<-p.done
	return nil
}
