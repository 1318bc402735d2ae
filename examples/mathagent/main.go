// Command mathagent is the math tools agent of the Ragas "agent under test"
// pattern, in Go: a model solves arithmetic expressions one operation at a
// time with the tools add, sub, mul and div, and an experiment runs it over
// problems.csv and scores each answer.
//
//	OPENAI_API_KEY=... go run ./examples/mathagent --model openai:gpt-4o-mini
//	go run ./examples/mathagent --model ollama:llama3.2
//
// It saves experiments/mathagent.csv (question, answer, prediction,
// correctness and the trace log of each row) and prints
// "correctness: N/7 (R)".
//
// Like every example, it may import any public package of agenteval and the
// standard library.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"

	"github.com/agenteval/agenteval/agent"
	"github.com/agenteval/agenteval/experiment"
	"github.com/agenteval/agenteval/provider"
	_ "github.com/agenteval/agenteval/provider/anthropic"
	_ "github.com/agenteval/agenteval/provider/gemini"
	_ "github.com/agenteval/agenteval/provider/openai"
)

// system is the agent's instructions: our own words for the pattern's
// "decompose and use one tool per operation" strategy.
const system = `You are a careful calculator. Work out the expression the user gives you one operation at a time.
Use the tools for every arithmetic operation, even easy ones: add, sub, mul and div each take two numbers a and b.
Respect the usual precedence of operations and parentheses. Use each tool result in the next step.
When you have the final value, reply with a short sentence that ends with the number, and call no tool.`

type pair struct {
	A float64 `json:"a" jsonschema:"the first number"`
	B float64 `json:"b" jsonschema:"the second number"`
}

// Tools returns the four math tools. Results go back to the model as plain
// numbers, as in the pattern; dividing by zero is a tool error.
func Tools() []agent.Tool {
	op := func(name, desc string, f func(a, b float64) (float64, error)) agent.Tool {
		return agent.MustFunc(name, desc, func(_ context.Context, p pair) (float64, error) { return f(p.A, p.B) })
	}
	return []agent.Tool{
		op("add", "Add two numbers: a + b", func(a, b float64) (float64, error) { return a + b, nil }),
		op("sub", "Subtract b from a: a - b", func(a, b float64) (float64, error) { return a - b, nil }),
		op("mul", "Multiply two numbers: a * b", func(a, b float64) (float64, error) { return a * b, nil }),
		op("div", "Divide a by b: a / b", func(a, b float64) (float64, error) {
			if b == 0 {
				return 0, errors.New("division by zero")
			}
			return a / b, nil
		}),
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	_, self, _, _ := runtime.Caller(0)
	fs := flag.NewFlagSet("mathagent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	spec := fs.String("model", os.Getenv("MATHAGENT_MODEL"), "the model, as provider:model (for example openai:gpt-4o-mini)")
	data := fs.String("data", filepath.Join(filepath.Dir(self), "problems.csv"), "problems: a CSV with question and answer columns")
	out := fs.String("out", filepath.Join(".agenteval", "experiments"), "where results and trace logs go")
	jobs := fs.Int("j", 4, "problems solved at once")
	iters := fs.Int("max-iterations", 10, "model calls per problem")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *spec == "" {
		fmt.Fprintln(stderr, "mathagent: give the model with --model provider:model, for example --model openai:gpt-4o-mini")
		return 2
	}
	m, err := provider.OpenSpec(*spec)
	if err != nil {
		fmt.Fprintln(stderr, "mathagent:", provider.Redact(err.Error()))
		return 2
	}
	ds, err := experiment.Load(*data)
	if err != nil {
		fmt.Fprintln(stderr, "mathagent:", err)
		return 2
	}
	zero := 0.0
	loop := &agent.ToolLoop{
		Model: m, Name: "math_tools", System: system, Tools: Tools(), MaxIterations: *iters, Temperature: &zero,
		Prompt:   "Solve this mathematical expression step by step: %s",
		Extract:  func(answer string) (any, error) { return agent.LastNumber(answer) },
		TraceDir: filepath.Join(*out, "logs"),
	}
	correctness := experiment.Numeric{Name: "correctness", Min: 0, Max: 1}
	exp, err := experiment.Run(ctx, ds, func(ctx context.Context, row experiment.Row) (experiment.Outcome, error) {
		want, err := row.Float("answer")
		if err != nil {
			return experiment.Outcome{}, err
		}
		r := loop.Solve(ctx, row.String("question"))
		o := experiment.Outcome{Values: map[string]any{"log_file": r.LogFile, "end": string(r.Trace.End)}, Usage: r.Trace.Usage}
		pred, ok := r.Result.(float64)
		if !ok {
			o.Values["prediction"] = "ERROR"
			o.Metrics = map[string]experiment.MetricResult{"correctness": correctness.Result(0, fmt.Sprintf("no result: %v", r.Err))}
			return o, nil
		}
		o.Values["prediction"] = pred
		score := 0.0
		if math.Abs(pred-want) < 1e-5 {
			score = 1
		}
		o.Metrics = map[string]experiment.MetricResult{"correctness": correctness.Result(score, fmt.Sprintf("prediction %v, answer %v", pred, want))}
		return o, nil
	}, experiment.Options{Name: "mathagent", Concurrency: *jobs, Dir: *out})
	if err != nil {
		fmt.Fprintln(stderr, "mathagent:", err)
		return 1
	}
	path, err := exp.Save("csv")
	if err != nil {
		fmt.Fprintln(stderr, "mathagent:", err)
		return 1
	}
	sum := exp.Summary()
	right := 0
	for _, r := range exp.Records {
		if m := r.Outcome.Metrics["correctness"]; m.Value == 1.0 {
			right++
		}
	}
	fmt.Fprintf(stdout, "correctness: %d/%d (%.2f)\n", right, len(exp.Records), float64(right)/float64(max(1, len(exp.Records))))
	fmt.Fprintf(stdout, "results: %s; %d model calls, %d input + %d output tokens; %d errors\n", path, sum.Usage.Calls, sum.Usage.InputTokens, sum.Usage.OutputTokens, sum.Errors)
	if right < len(exp.Records) {
		return 1
	}
	return 0
}
