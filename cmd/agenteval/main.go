// Command agenteval evaluates multi-turn, tool-using AI agents: it runs
// eval files, scores recorded conversations and validates both. Each
// subcommand lives in a file of its own; the work is the library's
// (session runs a suite), and this package keeps the flags, the terminal's
// progress and the exit codes.
//
// It may import every package of the module, and the CLI's third-party
// libraries.
package main

import (
	"os"
)

func main() {
	os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
