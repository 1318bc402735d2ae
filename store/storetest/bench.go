package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/results"
	"github.com/agenteval/agenteval/store"
)

// benchResult is a result of a scored dataset row's size: one short
// conversation, two metrics.
var benchResult = agenteval.Result{Suite: "/home/someone/project/evals/datasets/restaurant.jsonl", Score: 0.5, Verdict: agenteval.VerdictFail,
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

// Bench stores b.N results into one run through the queue and the writer
// goroutine, from every store in stores at once, each a shard of the run
// with its own handle (as shards on several machines), and reports results
// stored per second, counting the wait until the last is committed.
func Bench(b *testing.B, stores []store.Store) {
	ctx := context.Background()
	id := fmt.Sprintf("bench-%d", time.Now().UnixNano())
	n := len(stores)
	for i, s := range stores {
		h := &results.Header{RunID: id, Started: time.Now()}
		if n > 1 {
			h.Shard = &results.Shard{Index: i + 1, Count: n}
		}
		if err := s.StartRun(ctx, h); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	begin := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i, s := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := i; k < b.N; k += n {
				c := benchResult
				c.TestID = fmt.Sprintf("row-%d", k)
				if err := s.AddResult(id, &c); err != nil {
					errs <- err
					return
				}
			}
			shard := 0
			if n > 1 {
				shard = i + 1
			}
			errs <- s.FinishRun(ctx, id, store.Finish{Status: store.Done, Shard: shard})
		}()
	}
	wg.Wait()
	elapsed := time.Since(begin)
	close(errs)
	for err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "results/s")
	if r, err := stores[0].Run(ctx, id); err != nil || r.Total != b.N {
		b.Fatalf("stored %v of %d results: %v", r, b.N, err)
	}
}
