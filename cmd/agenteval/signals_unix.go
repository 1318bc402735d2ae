//go:build unix

package main

import (
	"os"
	"syscall"
)

// stopSignals end a run as Ctrl-C does.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}
