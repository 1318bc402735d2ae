package run_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/grade"
	"github.com/agenteval/agenteval/run"
	"github.com/agenteval/agenteval/suite"
)

// wordLimitOptions are the settings of word_limit: each field with a json
// name is a setting an eval file may write, and its doc tag describes it
// (for hints and the editor schema).
type wordLimitOptions struct {
	Max int `json:"max" doc:"the most words the reply may have"`
}

// wordLimit is a grader of the program's own, made the way the built-in
// ones are (grade.Length, say): a Definition and a function that checks
// the options and returns the grading function.
var wordLimit = grade.Define(grade.Definition{Name: "word_limit", Doc: "the reply has at most max words"}, nil,
	func(o wordLimitOptions, _ grade.Env) (grade.Func, error) {
		if o.Max <= 0 {
			return nil, errors.New("needs max: the most words the reply may have, above 0")
		}
		return func(_ context.Context, in *agenteval.GradeInput) (grade.Outcome, error) {
			n := len(strings.Fields(in.Output.LastAssistant()))
			if n > o.Max {
				return grade.Outcome{Score: 0, Reason: fmt.Sprintf("%d words, over %d", n, o.Max)}, nil
			}
			return grade.Outcome{Score: 1, Reason: fmt.Sprintf("%d words", n)}, nil
		}, nil
	})

const wordLimitEvals = `tests:
  - id: capital
    input: What is the capital of France?
    assertions:
      - type: word_limit
        max: 5
      - type: contains
        value: Paris
  - id: tell-me-more
    input: Tell me about Paris.
    assertions:
      - type: word_limit
        max: 5
`

// A program adds a grader of its own without forking: it appends its
// Definition to grade.All() and gives that list to both the loader, which
// then knows the type and checks its settings, and the runner.
func ExampleRunSuite_customGrader() {
	graders := append(grade.All(), wordLimit)

	dir, err := os.MkdirTemp("", "agenteval-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "evals.yaml")
	if err := os.WriteFile(path, []byte(wordLimitEvals), 0o644); err != nil {
		log.Fatal(err)
	}
	s, err := suite.Load(path, suite.Options{Graders: graders})
	if err != nil {
		log.Fatal(err)
	}

	// The agent under test: it answers briefly, unless told to say more.
	agent := agenteval.AgentFunc(func(_ context.Context, req *agenteval.AgentRequest) (*agenteval.AgentResponse, error) {
		reply := "The capital is Paris."
		if strings.HasPrefix(req.Messages[len(req.Messages)-1].Content, "Tell me") {
			reply = "Paris is the capital of France, on the Seine."
		}
		return &agenteval.AgentResponse{Messages: agenteval.Conversation{{Role: agenteval.RoleAssistant, Content: reply}}}, nil
	})

	// One conversation at a time, so results come in file order.
	opt := run.Options{Agent: agent, Graders: graders, Concurrency: 1}
	err = run.RunSuite(context.Background(), s, opt, func(r *agenteval.Result) error {
		fmt.Println(r.TestID, r.Verdict)
		for _, sc := range r.Scores {
			fmt.Printf("  %s %s: %s\n", sc.Name, sc.Verdict, sc.Reason)
		}
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// capital pass
	//   word_limit pass: 4 words
	//   contains pass: found in the reply
	// tell-me-more fail
	//   word_limit fail: 9 words, over 5
}
