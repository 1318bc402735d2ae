package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agenteval/agenteval/store"
	"github.com/agenteval/agenteval/store/sqlite"
)

// Ctrl-C keeps the finished results, prints a summary and exits 130.
func TestInterruptKeepsFinishedResults(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// testscript.Main dispatches on the program name, so a link named
	// agenteval runs the CLI.
	bin := filepath.Join(dir, "agenteval")
	if err := os.Symlink(self, bin); err != nil {
		t.Skip("cannot link the test binary:", err)
	}
	agent := filepath.Join(dir, "slow.sh")
	os.WriteFile(agent, []byte("#!/bin/sh\nwhile read -r line; do case \"$line\" in *fast*) ;; *) sleep 5;; esac; echo '{\"content\": \"ok\"}'; done\n"), 0o755)
	suite := filepath.Join(dir, "suite.yaml")
	os.WriteFile(suite, []byte("targets:\n  - {name: slow, command: [./slow.sh]}\ntests:\n  - {id: fast, input: fast}\n  - {id: slow-1, input: slow}\n  - {id: slow-2, input: slow}\n"), 0o644)
	results := filepath.Join(dir, "results.jsonl")
	cmd := exec.Command(bin, "run", suite, "-o", results, "-j", "1")
	// The temporary folder is the project root: the store goes there.
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait for the fast test to be written, then interrupt.
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(results)
		if bytes.Contains(b, []byte(`"test_id":"fast"`)) {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the fast test never finished; stderr: %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	err = cmd.Wait()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 130 {
		t.Fatalf("exit = %v, want 130; stderr: %s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "interrupted: 1 finished tests kept in "+results+"; continue with --resume") {
		t.Errorf("stderr = %s", stderr.String())
	}
	b, _ := os.ReadFile(results)
	if n := bytes.Count(b, []byte(`{"test_id"`)); n != 1 || !bytes.HasPrefix(b, []byte(`{"record":"run"`)) {
		t.Errorf("results hold %d results, want the header and the 1 finished test:\n%s", n, b)
	}
	// The store knows the run was interrupted, with its one result.
	db, err := sqlite.Open(filepath.Join(dir, ".agenteval", "agenteval.db"), sqlite.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	runs, err := db.Runs(context.Background(), store.ListOptions{})
	if err != nil || len(runs) != 1 || runs[0].Status != store.Interrupted || runs[0].Total != 1 {
		t.Errorf("stored runs = %+v, %v; want one interrupted run with 1 result", runs, err)
	}
}
