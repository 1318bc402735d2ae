package experiment_test

import (
	"context"
	"fmt"
	"log"
	"math"
	"strings"

	"github.com/agenteval/agenteval/experiment"
)

// Run calls a function on every row of a dataset (experiment.Load reads
// one from a .csv or .jsonl file) and scores each row with metrics whose
// values are checked.
func ExampleRun() {
	ds := experiment.New("squares", []map[string]any{
		{"question": "3", "answer": 9.0},
		{"question": "4", "answer": 16.0},
		{"question": "x", "answer": 0.0},
	})
	correctness := experiment.Numeric{Name: "correctness", Min: 0, Max: 1}
	exp, err := experiment.Run(context.Background(), ds, func(ctx context.Context, row experiment.Row) (experiment.Outcome, error) {
		var n float64
		if _, err := fmt.Sscan(row.String("question"), &n); err != nil {
			return experiment.Outcome{}, fmt.Errorf("not a number: %q", row.String("question"))
		}
		want, err := row.Float("answer")
		if err != nil {
			return experiment.Outcome{}, err
		}
		score := 0.0
		if math.Abs(n*n-want) < 1e-9 {
			score = 1
		}
		return experiment.Outcome{
			Values:  map[string]any{"prediction": n * n},
			Metrics: map[string]experiment.MetricResult{"correctness": correctness.Result(score, fmt.Sprintf("%v squared", n))},
		}, nil
	}, experiment.Options{Concurrency: 4})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range exp.Records { // in dataset order; exp.Save("csv") writes them
		if r.Err != nil {
			fmt.Printf("row %d: error: %v\n", r.Index, r.Err)
			continue
		}
		fmt.Printf("row %d: prediction %v, correctness %v\n", r.Index, r.Outcome.Values["prediction"], r.Outcome.Metrics["correctness"].Value)
	}
	sum := exp.Summary()
	fmt.Println(strings.Repeat("-", 10))
	fmt.Printf("mean correctness %.2f over %d rows, %d error\n", sum.Means["correctness"], sum.Rows, sum.Errors)
	// Output:
	// row 0: prediction 9, correctness 1
	// row 1: prediction 16, correctness 1
	// row 2: error: not a number: "x"
	// ----------
	// mean correctness 1.00 over 3 rows, 1 error
}
