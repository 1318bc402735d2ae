package evaltest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/grade"
)

type shoutOptions struct {
	Word string `json:"word" doc:"the word the reply must shout"`
}

// shout is a grader of the test's own: the reply holds the word in
// capitals.
var shout = grade.Define(grade.Definition{Name: "shouts", Doc: "the reply holds word in capitals"}, nil,
	func(o shoutOptions, _ grade.Env) (grade.Func, error) {
		return func(_ context.Context, in *agenteval.GradeInput) (grade.Outcome, error) {
			if strings.Contains(in.Output.LastAssistant(), strings.ToUpper(o.Word)) {
				return grade.Outcome{Score: 1}, nil
			}
			return grade.Outcome{Score: 0, Reason: "no " + strings.ToUpper(o.Word)}, nil
		}, nil
	})

// A Go test's own grader is known to the loader and used by the runner.
func TestResultsWithOwnGrader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "evals.yaml")
	suite := "tests:\n  - id: greets\n    input: hi\n    assertions:\n      - {type: shouts, word: hello}\n"
	if err := os.WriteFile(path, []byte(suite), 0o644); err != nil {
		t.Fatal(err)
	}
	agent := agenteval.AgentFunc(func(context.Context, *agenteval.AgentRequest) (*agenteval.AgentResponse, error) {
		return &agenteval.AgentResponse{Messages: agenteval.Conversation{{Role: agenteval.RoleAssistant, Content: "HELLO there"}}}, nil
	})
	if _, err := Results(context.Background(), path, agent, Options{}); err == nil || !strings.Contains(err.Error(), `"shouts"`) {
		t.Fatalf("without the grader: got %v, want an unknown type \"shouts\"", err)
	}
	rs, err := Results(context.Background(), path, agent, Options{Graders: append(grade.All(), shout)})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].Verdict != agenteval.VerdictPass {
		t.Fatalf("got %+v, want one pass", rs)
	}
}
