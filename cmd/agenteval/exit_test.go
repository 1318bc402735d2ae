package main

import (
	"testing"

	"github.com/agenteval/agenteval/report"
)

func TestRunExit(t *testing.T) {
	tests := []struct {
		sum  report.Summary
		want int
	}{
		{report.Summary{Total: 4, Passed: 1, Failed: 1, Errored: 2}, exitExecution},
		{report.Summary{Failed: 1}, exitFailed},
		{report.Summary{Passed: 3}, exitOK},
		{report.Summary{}, exitOK},
	}
	for _, tt := range tests {
		if got := runExit(tt.sum); got != tt.want {
			t.Errorf("runExit(%+v) = %d, want %d", tt.sum, got, tt.want)
		}
	}
}
