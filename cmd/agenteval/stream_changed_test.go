package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agenteval/agenteval/internal/fakellm"
)

// An eval file edited while a run reads it test by test stops the run at
// the changed test's line with exit 2, a configuration error, not 3 (no
// test failed to run), and keeps the results already written.
func TestRunStopsWhenTheEvalFileChanges(t *testing.T) {
	srv, err := fakellm.Start(fakellm.Options{Latency: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	t.Setenv("OPENAI_BASE_URL", srv.URL)
	t.Setenv("OPENAI_API_KEY", "k")
	dir := t.TempDir()
	suite := filepath.Join(dir, "suite.yaml")
	var b strings.Builder
	b.WriteString("tests:\n")
	// Three chunks of tests: the last is read again only when its first
	// test starts, seconds after the run's first result.
	for i := range 150 {
		fmt.Fprintf(&b, "  - id: t%d\n    input: question %d\n    assertions:\n      - type: contains\n        value: reply\n", i, i)
	}
	if err := os.WriteFile(suite, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(dir, "results.jsonl")
	var stdout, stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Main([]string{"run", suite, "--target", "openai:fake", "-j", "1", "--no-store", "--no-cache", "-q", "-o", results}, strings.NewReader(""), &stdout, &stderr)
	}()
	// Once the first result is out, the file has been loaded: change a
	// test of the last chunk.
	deadline := time.Now().Add(30 * time.Second)
	for {
		data, _ := os.ReadFile(results)
		if bytes.Count(data, []byte("\n")) >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no result after 30 s; stderr:\n%s", stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	changed := strings.Replace(b.String(), "question 140\n", "question one hundred and forty\n", 1)
	if err := os.WriteFile(suite, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	var code int
	select {
	case code = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the run did not stop within 60 s")
	}
	if code != exitUsage {
		t.Errorf("exit %d, want %d; stderr:\n%s", code, exitUsage, stderr.String())
	}
	if !strings.Contains(stderr.String(), "suite.yaml:") || !strings.Contains(stderr.String(), "the eval file has changed since it was loaded") || !strings.Contains(stderr.String(), "Stopped after ") {
		t.Errorf("stderr does not say where the file changed and how far the run got:\n%s", stderr.String())
	}
	data, err := os.ReadFile(results)
	if err != nil {
		t.Fatal(err)
	}
	kept := bytes.Count(data, []byte(`"test_id"`))
	if kept < 1 || kept >= 150 {
		t.Errorf("%d results kept, want the ones finished before the change (1 to 149)", kept)
	}
}
