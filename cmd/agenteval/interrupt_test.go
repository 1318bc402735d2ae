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
	os.WriteFile(suite, []byte("targets:\n  - {name: slow, command: [./slow.sh]}\nassertions: [{type: contains, value: ok}]\ntests:\n  - {id: fast, input: fast}\n  - {id: slow-1, input: slow}\n  - {id: slow-2, input: slow}\n"), 0o644)
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
	if !strings.Contains(stderr.String(), "interrupted: 1 finished test kept in "+results+"; continue with --resume") {
		t.Errorf("stderr = %s", stderr.String())
	}
	// The totals still end the log, as in CI they must.
	if !strings.Contains(stderr.String(), "1/3 tests · 1 passed · 0 failed · 0 errors") {
		t.Errorf("no totals line after Ctrl-C: %s", stderr.String())
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

// Ctrl-C ends a run whose script grader is stuck in a child process, and
// the child goes too.
func TestInterruptKillsScriptGrader(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "agenteval")
	if err := os.Symlink(self, bin); err != nil {
		t.Skip("cannot link the test binary:", err)
	}
	os.WriteFile(filepath.Join(dir, "agent.sh"), []byte("#!/bin/sh\nwhile read -r line; do echo '{\"content\": \"ok\"}'; done\n"), 0o755)
	marker := filepath.Join(dir, "grading")
	os.WriteFile(filepath.Join(dir, "grade.sh"), []byte("#!/bin/sh\nsleep 3000 &\necho $! > "+marker+"\nwait\n"), 0o755)
	suite := filepath.Join(dir, "suite.yaml")
	os.WriteFile(suite, []byte("targets:\n  - {name: a, command: [./agent.sh]}\ntests:\n  - id: t\n    input: hi\n    assertions:\n      - {type: script, command: [./grade.sh], timeout: 1h}\n"), 0o644)
	cmd := exec.Command(bin, "run", suite, "-o", filepath.Join(dir, "results.jsonl"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if b, _ := os.ReadFile(marker); len(bytes.TrimSpace(b)) > 0 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the grader never started; stderr: %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	start := time.Now()
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("still running 5s after Ctrl-C; stderr: %s", stderr.String())
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("took %v after Ctrl-C, want under 2s", took)
	}
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Errorf("exit = %v, want 130; stderr: %s", err, stderr.String())
	}
	pid, _ := os.ReadFile(marker)
	p := strings.TrimSpace(string(pid))
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		state, err := os.ReadFile("/proc/" + p + "/stat")
		if err != nil || strings.Contains(string(state), ") Z ") {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("the grader's child %s is still running", p)
			break
		}
	}
}
