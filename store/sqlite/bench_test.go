package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/report"
	"github.com/agenteval/agenteval/store"
)

// BenchmarkAddResult stores results of a scored dataset row's size (one
// short conversation, two metrics), through the queue and the writer
// goroutine, and reports the CPU each costs and the bytes it takes on disk.
func BenchmarkAddResult(b *testing.B) {
	path := filepath.Join(b.TempDir(), "a.db")
	db, err := Open(path, Options{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	h := &report.Header{RunID: "bench", Started: time.Now()}
	db.StartRun(ctx, h)
	r := &agenteval.Result{Suite: "/home/someone/project/evals/datasets/restaurant.jsonl", Score: 0.5, Verdict: agenteval.VerdictFail,
		ExecutionStatus: agenteval.StatusQualityFailure, DurationMS: 0.05,
		Scores: []agenteval.Score{
			{Name: "tool_call_accuracy", Type: "tool_call_accuracy", Score: 0.5, Verdict: agenteval.VerdictFail, Weight: 1, Reason: "1 of 2 calls match",
				Assertions: []agenteval.Assertion{{Text: `call 2 is restaurant_book({"name":"Golden Dragon","time":"8pm"})`, Evidence: "1/2 arguments match (time: want 8pm, got 9pm)"}}},
			{Name: "tool_call_f1", Type: "tool_call_f1", Score: 0.5, Verdict: agenteval.VerdictFail, Weight: 1, Reason: "TP=1 FP=1 FN=1"},
		},
		Output: agenteval.Conversation{{Role: agenteval.RoleUser, Content: "Book a table at the best Chinese restaurant for 8pm"},
			{Role: agenteval.RoleAssistant, Content: "Let me search.", ToolCalls: []agenteval.ToolCall{{Name: "restaurant_search", Args: map[string]any{"cuisine": "Chinese", "time": "8pm"}}}},
			{Role: agenteval.RoleTool, Content: "Found: Golden Dragon, Jade Palace"},
			{Role: agenteval.RoleAssistant, Content: "Your table at Golden Dragon is booked for 9pm!"}}}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		c := *r
		c.TestID = fmt.Sprintf("row-%d", i)
		i++
		if err := db.AddResult(h.RunID, &c); err != nil {
			b.Fatal(err)
		}
	}
	if err := db.FinishRun(ctx, h.RunID, store.Finish{Status: store.Done}); err != nil {
		b.Fatal(err)
	}
	db.Close()
}
