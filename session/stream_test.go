package session

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/google/go-cmp/cmp"
)

// replyAgent answers every turn with its user message.
var replyAgent = agenteval.AgentFunc(func(_ context.Context, req *agenteval.AgentRequest) (*agenteval.AgentResponse, error) {
	return &agenteval.AgentResponse{Messages: agenteval.Conversation{{Role: agenteval.RoleAssistant, Content: "reply to " + req.Messages[len(req.Messages)-1].Content}}}, nil
})

// runResults runs a session and returns its plan's total and its results,
// one line per result, in id order.
func runResults(t *testing.T, opt Options, path string) (int, []string) {
	t.Helper()
	var mu sync.Mutex
	var out []string
	opt.Agent, opt.NoStore, opt.RunID = replyAgent, true, "r1"
	opt.OnResult = func(r *agenteval.Result, _ bool) {
		mu.Lock()
		defer mu.Unlock()
		out = append(out, fmt.Sprintf("%s %s %s %.2f trials=%d %s", r.TestID, r.Verdict, r.ExecutionStatus, r.Score, len(r.Trials), r.Error))
	}
	s, err := Load(opt, path)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range s.Suites {
		if st.Streamed() != (opt.Stream && opt.Select == nil) {
			t.Fatalf("%s: streamed %v with Stream %v", st.File, st.Streamed(), opt.Stream)
		}
	}
	p, err := s.Plan()
	if err != nil {
		t.Fatal(err)
	}
	sink, err := p.OpenSink()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Run(context.Background(), sink); err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return p.Total, out
}

// A session whose files are streamed plans and runs what it would with
// the tests in memory: filters, shards, dependencies across chunks, the
// project's trials, the caller's selection.
func TestStreamedSessionRunsTheSame(t *testing.T) {
	var y strings.Builder
	y.WriteString("assertions: [{type: contains, value: reply}]\ntests:\n")
	for i := range 150 {
		fmt.Fprintf(&y, "  - id: t%03d\n    input: hi %d\n", i, i)
		switch i {
		case 3:
			y.WriteString("    depends_on: [t120]\n")
		case 120:
			y.WriteString("    depends_on: [t121]\n")
		case 7:
			y.WriteString("    trials: 3\n")
		case 9:
			y.WriteString("    workspace: {repos: [x]}\n")
		}
	}
	dir := write(t, map[string]string{
		"agenteval.yaml":  "defaults:\n  trials: 2\n",
		"evals/many.yaml": y.String(),
	})
	path := filepath.Join(dir, "evals/many.yaml")
	for _, opt := range []Options{
		{},
		{Filter: "t1*"},
		{Shard: "1/3"},
		{Shard: "3/3", Filter: "t0*"},
		{Select: func(t *agenteval.Test) bool { return t.ID != "t050" }},
	} {
		name := fmt.Sprintf("filter %q shard %q select %v", opt.Filter, opt.Shard, opt.Select != nil)
		wantTotal, want := runResults(t, opt, path)
		opt.Stream = true
		gotTotal, got := runResults(t, opt, path)
		if len(want) == 0 || wantTotal != len(want) {
			t.Fatalf("%s: %d results, total %d", name, len(want), wantTotal)
		}
		if gotTotal != wantTotal {
			t.Errorf("%s: streamed, total %d, want %d", name, gotTotal, wantTotal)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: streamed, results differ (-memory +streamed):\n%s", name, diff)
		}
		if opt.Filter == "" && opt.Shard == "" && opt.Select == nil && !strings.Contains(strings.Join(got, "\n"), "t000 pass ok 1.00 trials=2") {
			t.Errorf("the project's trials are not applied:\n%s", strings.Join(got[:3], "\n"))
		}
	}
}
