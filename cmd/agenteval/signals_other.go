//go:build !unix

package main

import "os"

// stopSignals end a run as Ctrl-C does.
var stopSignals = []os.Signal{os.Interrupt}
