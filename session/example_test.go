package session_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/agenteval/agenteval/session"
	_ "github.com/agenteval/agenteval/store/sqlite" // record runs in a SQLite file
)

// A Go program runs a suite as agenteval run does: the project file
// applied, the results file and JUnit written, the run recorded in the
// store.
func Example() {
	dir, _ := os.MkdirTemp("", "session-example")
	defer os.RemoveAll(dir)

	out, err := session.Run(context.Background(), session.Options{
		Output: filepath.Join(dir, "results.jsonl"),
		JUnit:  filepath.Join(dir, "junit.xml"),
		Store:  filepath.Join(dir, "runs.db"),
	}, "../examples/quickstart/suite.yaml")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d passed, %d failed against %s\n", out.Summary.Passed, out.Summary.Failed, out.Header.Target)
	// Output: 2 passed, 0 failed against replay
}
