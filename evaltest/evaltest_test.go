package evaltest

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/fakellm"
	"github.com/agenteval/agenteval/judge"
	"github.com/agenteval/agenteval/provider"
	_ "github.com/agenteval/agenteval/provider/openai" // the fake judge speaks OpenAI's protocol
)

// bookingAgent is a Go agent under test.
var bookingAgent = agenteval.AgentFunc(func(ctx context.Context, req *agenteval.AgentRequest) (*agenteval.AgentResponse, error) {
	last := req.Messages[len(req.Messages)-1].Content
	if strings.Contains(last, "book") {
		return &agenteval.AgentResponse{Messages: agenteval.Conversation{
			{Role: agenteval.RoleAssistant, ToolCalls: []agenteval.ToolCall{{ID: "1", Name: "book", Args: map[string]any{"time": "7pm"}}}},
			{Role: agenteval.RoleTool, ToolCallID: "1", Content: "ok"},
			{Role: agenteval.RoleAssistant, Content: "Booked for 7pm."},
		}}, nil
	}
	return &agenteval.AgentResponse{Messages: agenteval.Conversation{{Role: agenteval.RoleAssistant, Content: "Hello! " + last}}}, nil
})

func fakeJudge(t *testing.T, verdict bool) *judge.Judge {
	t.Helper()
	s, err := fakellm.Start(fakellm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	s.Add(&fakellm.Rule{Reply: fakellm.Reply{JSON: map[string]any{"c1": map[string]any{"reason": "the reply never states the time", "passed": verdict}}}})
	m, _ := provider.Open(provider.Config{Provider: "openai", Model: "fake", BaseURL: s.URL, APIKey: "k"})
	return &judge.Judge{Model: m, Name: "openai:fake"}
}

func TestRunPasses(t *testing.T) {
	Run(t, "testdata/booking.yaml", bookingAgent, Options{Judge: fakeJudge(t, true)})
}

// countingAgent is bookingAgent that notes each conversation it holds, by
// test and trial: the conversation id also names the run, which is new
// each time.
type countingAgent struct {
	mu    sync.Mutex
	convs map[string]bool
}

func (a *countingAgent) Respond(ctx context.Context, req *agenteval.AgentRequest) (*agenteval.AgentResponse, error) {
	a.mu.Lock()
	a.convs[fmt.Sprintf("%s#%d", req.TestID, req.Trial)] = true
	a.mu.Unlock()
	return bookingAgent(ctx, req)
}

// TestChildSuite is run by TestRunSelects in a child process, with a -run
// pattern that picks one subtest.
func TestChildSuite(t *testing.T) {
	if os.Getenv("EVALTEST_CHILD") == "" {
		t.Skip("run by TestRunSelects")
	}
	a := &countingAgent{convs: map[string]bool{}}
	t.Cleanup(func() { fmt.Printf("conversations: %v\n", slices.Sorted(maps.Keys(a.convs))) })
	Run(t, "testdata/booking.yaml", a, Options{Judge: fakeJudge(t, true)})
}

// TestRunSelects: go test -run Test/id runs that test's conversation
// only, and reports only its subtest.
func TestRunSelects(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary again")
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run", "^TestChildSuite$/^books$", "-test.v")
	cmd.Env = append(os.Environ(), "EVALTEST_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	text := string(out)
	for _, want := range []string{"--- PASS: TestChildSuite/books", "conversations: [books#1]"} {
		if !strings.Contains(text, want) {
			t.Errorf("child output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "TestChildSuite/greets") {
		t.Errorf("the unselected test ran:\n%s", text)
	}
}

// TestRunReportsFailures: a failing test fails its own subtest, with the
// explanation; the passing one passes.
func TestRunReportsFailures(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary again")
	}
	if os.Getenv("EVALTEST_CHILD") == "fail" {
		return
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run", "^TestChildFails$", "-test.v")
	cmd.Env = append(os.Environ(), "EVALTEST_CHILD=fail")
	out, _ := cmd.CombinedOutput()
	text := string(out)
	for _, want := range []string{"--- PASS: TestChildFails/greets", "--- FAIL: TestChildFails/books", "because: the reply never states the time"} {
		if !strings.Contains(text, want) {
			t.Errorf("child output lacks %q:\n%s", want, text)
		}
	}
}

func TestChildFails(t *testing.T) {
	if os.Getenv("EVALTEST_CHILD") != "fail" {
		t.Skip("run by TestRunReportsFailures")
	}
	Run(t, "testdata/booking.yaml", bookingAgent, Options{Judge: fakeJudge(t, false)})
}

func TestExplainNamesTurnCriterionAndReason(t *testing.T) {
	results, err := Results(t.Context(), "testdata/booking.yaml", bookingAgent, Options{Judge: fakeJudge(t, false)})
	if err != nil {
		t.Fatal(err)
	}
	books := results[1]
	if books.TestID != "books" || books.Verdict != agenteval.VerdictFail {
		t.Fatalf("books = %+v", books)
	}
	msg := Explain(books)
	for _, want := range []string{"books: fail (score 0.750)", "turn-1: fail", "✗ criterion-1: The assistant confirms the time", "because: the reply never states the time"} {
		if !strings.Contains(msg, want) {
			t.Errorf("Explain lacks %q:\n%s", want, msg)
		}
	}
}

// TestSimulatedUserInGoTest: a Go agent faces a simulated user inside go
// test, with the simulator and the judge both served by fakellm.
func TestSimulatedUserInGoTest(t *testing.T) {
	s, err := fakellm.Start(fakellm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	s.Add(
		&fakellm.Rule{Times: 1, Match: func(r *fakellm.Request) bool { return r.SchemaName() == "" }, Reply: fakellm.Reply{Content: "Please book a table for two at 7pm."}},
		&fakellm.Rule{Times: 1, Match: func(r *fakellm.Request) bool { return r.SchemaName() == "" }, Reply: fakellm.Reply{Content: "Thanks! ###STOP###"}},
	)
	m, _ := provider.Open(provider.Config{Provider: "openai", Model: "fake", BaseURL: s.URL, APIKey: "k"})
	opt := Options{Judge: &judge.Judge{Model: m, Name: "openai:fake"}, Simulator: m, SimulatorName: "openai:sim"}
	results, err := Results(t.Context(), "testdata/simulated.yaml", bookingAgent, opt)
	if err != nil {
		t.Fatal(err)
	}
	r := results[0]
	if r.Simulation == nil || r.Simulation.Turns != 1 || r.Simulation.EndReason != agenteval.EndStopMarker || r.Simulation.Model != "openai:sim" {
		t.Fatalf("simulation = %+v", r.Simulation)
	}
	if r.Verdict != agenteval.VerdictPass || len(r.Scores) != 3 {
		t.Errorf("result = %s %v", Explain(r), r.Scores)
	}
}

// TestResultsFilter: Options.Filter runs only the tests it names, so the
// agent holds no conversation for the others.
func TestResultsFilter(t *testing.T) {
	a := &countingAgent{convs: map[string]bool{}}
	rs, err := Results(t.Context(), "testdata/booking.yaml", a, Options{Judge: fakeJudge(t, true), Filter: "books"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].TestID != "books" {
		t.Fatalf("results = %d, want only books", len(rs))
	}
	if got := slices.Sorted(maps.Keys(a.convs)); !slices.Equal(got, []string{"books#1"}) {
		t.Errorf("conversations = %v, want [books#1]", got)
	}
}
