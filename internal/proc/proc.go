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
	if why := refused.Load(); why != nil {
		return nil, &refusedError{argv[0], *why}
	}
	if len(argv) == 0 || argv[0] == "" {
		return nil, errors.New("no program to run")
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

type refusedError struct{ program, why string }

func (e *refusedError) Error() string {
	return "will not run " + e.program + ": " + ErrRefused.Error() + " (" + e.why + ")"
}

func (e *refusedError) Unwrap() error { return ErrRefused }
