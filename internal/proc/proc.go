// Package proc starts the child processes agenteval runs (command agents,
// script graders) from an argv list, never through a shell. Each runs in a
// process group of its own, and the whole group is killed when its context
// ends or its owner kills it, so no grandchild outlives it; Wait returns
// soon after, even when a grandchild still holds the pipes.
//
// It imports only the standard library.
package proc

import (
	"context"
	"errors"
	"os/exec"
	"sync/atomic"
	"time"
)

// WaitDelay is how long Wait waits for the pipes once the process is gone
// (a grandchild may hold them open).
const WaitDelay = 2 * time.Second

var refused atomic.Pointer[string]

// Refuse makes every later Command fail with why: the CLI's --no-exec,
// for eval files from elsewhere. An empty why allows commands again.
func Refuse(why string) {
	if why == "" {
		refused.Store(nil)
		return
	}
	refused.Store(&why)
}

// ErrRefused is wrapped by the error of a command that Refuse forbids.
var ErrRefused = errors.New("running programs is turned off")

// Command prepares argv to run as a child we own: in its own process
// group, killed whole when ctx ends.
func Command(ctx context.Context, argv []string) (*exec.Cmd, error) {
	if len(argv) == 0 || argv[0] == "" {
		return nil, errors.New("no program to run")
	}
	if why := refused.Load(); why != nil {
		return nil, &refusedError{argv[0], *why}
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	ownGroup(cmd)
	cmd.Cancel = func() error {
		Kill(cmd)
		return nil
	}
	cmd.WaitDelay = WaitDelay
	return cmd, nil
}

// Kill kills cmd's whole process group.
func Kill(cmd *exec.Cmd) { killGroup(cmd) }

// Run runs cmd to the end, then kills what it left running in its group
// (a background child holding its output open), so nothing outlives it. A
// program that exited 0 but whose child kept the pipes past WaitDelay has
// still succeeded, with the output read until then.
func Run(cmd *exec.Cmd) error {
	err := cmd.Run()
	Kill(cmd)
	if errors.Is(err, exec.ErrWaitDelay) && cmd.ProcessState != nil && cmd.ProcessState.Success() {
		return nil
	}
	return err
}

// Buffer keeps at most Max bytes of what is written to it, and says
// whether more came.
type Buffer struct {
	Max int
	buf []byte
	// Over is set once more than Max bytes were written.
	Over bool
}

// Write keeps what fits; it never fails, so the writer is never blocked.
func (b *Buffer) Write(p []byte) (int, error) {
	n := len(p)
	if room := b.Max - len(b.buf); room < n {
		b.Over = true
		p = p[:max(room, 0)]
	}
	b.buf = append(b.buf, p...)
	return n, nil
}

// Bytes is what was kept.
func (b *Buffer) Bytes() []byte { return b.buf }

// String is what was kept, as text.
func (b *Buffer) String() string { return string(b.buf) }

type refusedError struct{ program, why string }

func (e *refusedError) Error() string {
	return "will not run " + e.program + ": " + ErrRefused.Error() + " (" + e.why + ")"
}

func (e *refusedError) Unwrap() error { return ErrRefused }
