package run

import (
	"context"
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/grade"
	"github.com/agenteval/agenteval/suite"
)

// alwaysPasses is a grader of the caller's own, written by hand.
var alwaysPasses = &grade.Definition{Name: "always_passes", Doc: "passes whatever the reply",
	New: func(any, grade.Env) (grade.Func, error) {
		return func(context.Context, *agenteval.GradeInput) (grade.Outcome, error) {
			return grade.Outcome{Score: 1, Reason: "always"}, nil
		}, nil
	}}

// TestRunnerUsesCallersGraders: the runner builds the tests' graders from
// run.Options.Graders, the list the suite was loaded with.
func TestRunnerUsesCallersGraders(t *testing.T) {
	const yaml = "tests:\n  - id: a\n    input: hi\n    assertions:\n      - type: always_passes\n"
	own := append(grade.All(), alwaysPasses)
	s, err := suite.Parse("t.yaml", []byte(yaml), suite.Options{Graders: own})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		graders []*grade.Definition
		status  agenteval.ExecutionStatus
		verdict agenteval.Verdict
		wantErr string // in the result's error, or RunSuite's
	}{
		{"the caller's list", own, agenteval.StatusOK, agenteval.VerdictPass, ""},
		{"the default list", nil, agenteval.StatusExecutionError, agenteval.VerdictError, `unknown assertion type "always_passes"`},
		{"a duplicate name", append(own, alwaysPasses), "", "", `run: invalid grader definitions:`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var res *agenteval.Result
			err := RunSuite(context.Background(), s, Options{Agent: &echo{}, Graders: tt.graders}, func(r *agenteval.Result) error {
				res = r
				return nil
			})
			if tt.status == "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("RunSuite = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.ExecutionStatus != tt.status || res.Verdict != tt.verdict || !strings.Contains(res.Error, tt.wantErr) {
				t.Errorf("status %s, verdict %s, error %q; want %s, %s, %q", res.ExecutionStatus, res.Verdict, res.Error, tt.status, tt.verdict, tt.wantErr)
			}
		})
	}
}
