package run_test

import (
	"context"
	"fmt"
	"log"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/dataset"
	"github.com/agenteval/agenteval/grade"
	"github.com/agenteval/agenteval/run"
)

// ScoreDataset grades recorded conversations (Ragas MultiTurnSample JSONL,
// OpenAI-messages JSONL) with any graders, streaming: each result is
// emitted as soon as it and the ones before it are done.
func ExampleScoreDataset() {
	rows, err := dataset.Open("../examples/restaurant/restaurant.jsonl")
	if err != nil {
		log.Fatal(err)
	}
	defer rows.Close()
	accuracy, err := grade.New(grade.Spec{Type: "tool_call_accuracy"})
	if err != nil {
		log.Fatal(err)
	}
	calls, err := grade.New(grade.Spec{Type: "tool_calls", Options: grade.ToolCallsOptions{Mode: grade.ModeAnyOrder}})
	if err != nil {
		log.Fatal(err)
	}
	metrics := []run.Metric{{Name: "tool_call_accuracy", Grader: accuracy}, {Name: "tool_calls", Grader: calls}}
	err = run.ScoreDataset(context.Background(), rows, metrics, run.ScoreOptions{},
		func(r *agenteval.Result) error {
			fmt.Printf("%-22s %.2f %.2f %s\n", r.TestID, r.Scores[0].Score, r.Scores[1].Score, r.Verdict)
			return nil
		})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// golden-path            1.00 1.00 pass
	// wrong-argument         0.75 0.50 fail
	// wrong-order            0.00 1.00 fail
	// retried-call           0.00 1.00 fail
	// extra-call             0.00 1.00 fail
	// parallel-calls         0.78 1.00 pass
	// no-calls               0.00 0.00 fail
	// number-types           0.67 1.00 pass
	// no-calls-expected      1.00 1.00 pass
}
