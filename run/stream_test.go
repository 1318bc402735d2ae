package run

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/suite"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// streamedFile writes an eval file of n tests over several chunks:
// dependencies within a chunk and across chunks, a skipped test, one that
// fails, trials, conversations.
func streamedFile(t *testing.T, n int) string {
	t.Helper()
	var y strings.Builder
	y.WriteString("assertions: [{type: contains, value: reply}]\ntests:\n")
	for i := range n {
		fmt.Fprintf(&y, "  - id: t%03d\n", i)
		switch {
		case i%17 == 3:
			fmt.Fprintf(&y, "    mode: conversation\n    turns:\n      - input: first %d\n      - input: second %d\n", i, i)
		case i%29 == 5:
			fmt.Fprintf(&y, "    input: hi %d\n    assertions: [{type: contains, value: nowhere}]\n", i)
		default:
			fmt.Fprintf(&y, "    input: hi %d\n", i)
		}
		switch {
		case i == 2:
			y.WriteString("    depends_on: [t150]\n") // a later chunk
		case i == 140:
			y.WriteString("    depends_on: [t001, t139]\n")
		case i == 7:
			y.WriteString("    trials: 3\n")
		case i == 9:
			y.WriteString("    workspace: {repos: [x]}\n") // skipped
		case i == 10:
			y.WriteString("    depends_on: [t009]\n")
		}
	}
	p := filepath.Join(t.TempDir(), "many.yaml")
	if err := os.WriteFile(p, []byte(y.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A streamed suite runs the same tests, with the same results, as the
// suite in memory: tests are read as they start, in file order, with
// their dependencies, skips and trials.
func TestStreamedSuiteRunsTheSame(t *testing.T) {
	path := streamedFile(t, 200)
	whole, err := suite.Load(path, suite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	streamed, err := suite.Load(path, suite.Options{Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	if !streamed.Streamed() || whole.Streamed() || streamed.NumTests() != 200 {
		t.Fatalf("streamed %v (%d tests), whole %v", streamed.Streamed(), streamed.NumTests(), whole.Streamed())
	}
	ignore := cmpopts.IgnoreFields(agenteval.Result{}, "DurationMS")
	ignoreTrial := cmpopts.IgnoreFields(agenteval.Trial{}, "DurationMS")
	ignoreScore := cmpopts.IgnoreFields(agenteval.Score{}, "DurationMS")
	for _, opt := range []Options{
		{Concurrency: 7},
		{Concurrency: 3, Filter: "t1*"},
		{Concurrency: 5, SelectInfo: func(ti suite.TestInfo) bool { return ti.ID != "t150" }},
		{Concurrency: 5, Select: func(t *agenteval.Test) bool { return len(t.Turns) == 0 }},
	} {
		opt.Agent, opt.RunID = &echo{}, "r1"
		a := runAll(t, whole, opt)
		opt.Agent = &echo{}
		b := runAll(t, streamed, opt)
		if len(a) == 0 {
			t.Fatalf("filter %q: no results", opt.Filter)
		}
		if diff := cmp.Diff(a, b, ignore, ignoreTrial, ignoreScore); diff != "" {
			t.Errorf("filter %q: results differ (-whole +streamed):\n%s", opt.Filter, diff)
		}
	}
}

// A file changed after it was loaded stops the run with an error that
// says so, instead of running some old tests and some new ones.
func TestStreamedFileChanged(t *testing.T) {
	path := streamedFile(t, 200)
	s, err := suite.Load(path, suite.Options{Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	data = []byte(strings.Replace(string(data), "hi 100\n", "hi 101\n", 1))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	n := 0
	err = RunSuite(context.Background(), s, Options{Agent: &echo{}, Concurrency: 1}, func(*agenteval.Result) error {
		n++
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "changed since it was loaded") {
		t.Fatalf("error %v", err)
	}
	if n < 60 || n >= 128 {
		t.Errorf("%d results before the changed chunk, want the first chunk's", n)
	}
}
