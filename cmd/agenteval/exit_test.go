package main

import (
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/results"
)

func TestRunExit(t *testing.T) {
	tests := []struct {
		sum  results.Summary
		want int
	}{
		{results.Summary{Total: 4, Passed: 1, Failed: 1, Errored: 2}, exitExecution},
		{results.Summary{Failed: 1}, exitFailed},
		{results.Summary{Passed: 3}, exitOK},
		{results.Summary{}, exitOK},
	}
	for _, tt := range tests {
		if got := runExit(tt.sum); got != tt.want {
			t.Errorf("runExit(%+v) = %d, want %d", tt.sum, got, tt.want)
		}
	}
}

// TestProblemsCollapse: the same problem on every row is shown ten times,
// then counted.
func TestProblemsCollapse(t *testing.T) {
	var b strings.Builder
	p := newProblemPrinter(&b)
	for i := range 10000 {
		p.print(&agenteval.PosError{File: "d.jsonl", Line: i + 1, Col: 1, Msg: "user_input: must be a list of messages, not a string"}, false)
	}
	p.print(&agenteval.PosError{File: "d.jsonl", Line: 1, Col: 5, Msg: "other"}, false)
	p.finish()
	out := b.String()
	if n := strings.Count(out, "must be a list of messages"); n != 11 {
		t.Errorf("%d lines name the problem:\n%s", n, out)
	}
	if !strings.Contains(out, "(9990 more errors like: user_input: must be a list of messages, not a string)") || !strings.Contains(out, "d.jsonl:1:5: other") {
		t.Errorf("output:\n%s", out)
	}
}
