package mcptools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/agenteval/agenteval/internal/proc"
)

// child is a server program. It is started here rather than by the SDK's
// CommandTransport, whose Close alone waits for the process: a program
// that dies mid-call must be reported with its exit status and stderr at
// once, and what it started must die with it (its process group).
type child struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *os.File
	stderr *tail
	done   chan struct{} // closed once the program is reaped
	err    error         // its exit, once done
}

func startChild(s Server) (*child, error) {
	// The program lives as long as the session, not one request: Close
	// and the program's own exit end it.
	cmd, err := proc.Command(context.Background(), s.Command)
	if err != nil {
		return nil, err
	}
	cmd.Dir = s.Dir
	cmd.Env = os.Environ()
	for k, v := range s.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	ch := &child{cmd: cmd, stderr: &tail{max: 4096}, done: make(chan struct{})}
	cmd.Stderr = ch.stderr
	if ch.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	// Our own pipe for its output, not StdoutPipe: Wait would close that
	// as soon as the program exits, losing the last answer it wrote.
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = w
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		ch.stdin.Close()
		return nil, fmt.Errorf("start %s: %w", s.Command[0], err)
	}
	w.Close()
	ch.stdout = r
	go func() {
		err := cmd.Wait()
		// What it started and left running goes with it, which also
		// closes the output they held.
		proc.Kill(cmd)
		ch.err = err
		close(ch.done)
	}()
	return ch, nil
}

// exited reports how the program ended, waiting up to d for it.
func (ch *child) exited(d time.Duration) (string, bool) {
	select {
	case <-ch.done:
	case <-time.After(d):
		return "", false
	}
	if ch.err == nil {
		return "exit status 0", true
	}
	var ee *exec.ExitError
	if errors.As(ch.err, &ee) {
		return ee.ProcessState.String(), true
	}
	return ch.err.Error(), true
}

// stderrNote is "; stderr: ..." with the end of what the program wrote
// there, or "".
func (ch *child) stderrNote() string {
	if s := ch.stderr.String(); s != "" {
		return "; stderr: " + s
	}
	return ""
}

// stop waits up to wait for the program to exit (the session's close
// closes its input), then kills its process group, and waits for it to be
// reaped.
func (ch *child) stop(wait time.Duration) error {
	deadline := time.After(wait)
	select {
	case <-ch.done:
		return nil
	case <-deadline:
	}
	// Its input may still be open if the session is stuck: close it too.
	ch.stdin.Close()
	proc.Kill(ch.cmd)
	select {
	case <-ch.done:
		return nil
	case <-time.After(proc.WaitDelay + 3*time.Second):
		return fmt.Errorf("process %d was killed and still not reaped", ch.cmd.Process.Pid)
	}
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
	cut bool
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
		t.cut = true
	}
	return len(p), nil
}

// String is the end of what was written, at most shown runes of it: a
// crash is told last.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := []rune(strings.TrimSpace(string(t.buf)))
	cut := t.cut
	if len(r) > shown {
		r, cut = r[len(r)-shown:], true
	}
	if cut && len(r) > 0 {
		return "…" + string(r)
	}
	return string(r)
}

// shown is how much of a program's stderr an error quotes.
const shown = 1000
