package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/evaltest"
	"github.com/agenteval/agenteval/internal/fakellm"
	"github.com/agenteval/agenteval/results"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// A suite that takes its target, tools and judge from agenteval.yaml gives
// the same results under go test (evaltest, no agent of its own) as under
// agenteval run: both load and run it through one session.
func TestEvaltestMatchesRun(t *testing.T) {
	// Each run gets a fake of its own, so both see tool call ids of the
	// same length (and so the same prompt sizes).
	fresh := func() {
		srv, err := fakellm.Start(fakellm.Options{CallTools: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(srv.Close)
		t.Setenv("OPENAI_BASE_URL", srv.URL)
	}
	t.Setenv("OPENAI_API_KEY", "k")
	t.Setenv("AGENTEVAL_JUDGE", "")
	dir := t.TempDir()
	write := func(name, text string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("agenteval.yaml", `judge: openai:fake
targets:
  - name: fake
    model: openai:fake
tools:
  - name: get_time
    description: The current time.
    parameters: {type: object, properties: {}}
    result: '{"time": "09:41"}'
defaults:
  threshold: 0.9
`)
	write("evals/suite.yaml", `tests:
  - id: tells-time
    input: What time is it?
    assertions:
      - type: tool_calls
        expected: [{name: get_time}]
      - The reply answers the question.
  - id: names-city
    mode: conversation
    turns:
      - input: Where am I?
        assertions: [The reply is polite.]
      - input: And now?
        assertions: [{type: contains, value: Lisbon}]
`)
	suitePath := filepath.Join(dir, "evals", "suite.yaml")
	out := filepath.Join(dir, "out.jsonl")
	fresh()
	var stdout, stderr bytes.Buffer
	code := Main([]string{"run", suitePath, "--no-store", "--no-cache", "-q", "-o", out}, nil, &stdout, &stderr)
	if code != exitFailed {
		t.Fatalf("agenteval run: exit %d, want %d (one test fails)\n%s", code, exitFailed, stderr.String())
	}
	var fromCLI []*agenteval.Result
	if _, err := results.ReadResults(out, func(r *agenteval.Result) error {
		fromCLI = append(fromCLI, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	fresh()
	fromGo, err := evaltest.Results(context.Background(), suitePath, nil, evaltest.Options{NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	// Compared as the results file holds them: numbers in details are
	// JSON's.
	for i, r := range fromGo {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		fromGo[i] = new(agenteval.Result)
		if err := json.Unmarshal(b, fromGo[i]); err != nil {
			t.Fatal(err)
		}
	}
	if len(fromCLI) != 2 {
		t.Fatalf("agenteval run wrote %d results, want 2", len(fromCLI))
	}
	// The order of results is the order tests finish in; timings,
	// conversation ids and the fake's call ids (numbered in the order
	// calls arrive) differ from run to run.
	opts := cmp.Options{
		cmpopts.SortSlices(func(a, b *agenteval.Result) bool { return a.TestID < b.TestID }),
		cmpopts.IgnoreFields(agenteval.Result{}, "DurationMS", "ConversationID"),
		cmpopts.IgnoreFields(agenteval.Usage{}, "WaitedMS"),
		cmpopts.IgnoreFields(agenteval.Score{}, "DurationMS"),
		cmpopts.IgnoreFields(agenteval.ToolCall{}, "ID"),
		cmpopts.IgnoreFields(agenteval.Message{}, "ToolCallID"),
		cmpopts.EquateEmpty(),
	}
	if diff := cmp.Diff(fromCLI, fromGo, opts); diff != "" {
		t.Errorf("evaltest differs from agenteval run (-run +evaltest):\n%s", diff)
	}
	for _, r := range fromGo {
		if r.Target != "fake" {
			t.Errorf("%s ran against %q, want the project's target fake", r.TestID, r.Target)
		}
	}
}
