package storetest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/results"
	"github.com/agenteval/agenteval/store"
)

// A matrix runs a test once per target: the store keeps each; a repeated
// result of one target replaces that target's.
func testMatrix(t *testing.T, s store.Store) {
	h := header("ab0000000001", 0)
	mustStart(t, s, h)
	a, b := result("x", agenteval.VerdictPass, nil), result("x", agenteval.VerdictFail, nil)
	a.Target, b.Target = "openai:a", "openai:b"
	again := result("x", agenteval.VerdictPass, nil)
	again.Target = "openai:b"
	mustAdd(t, s, h.RunID, a, b, again)
	mustFinish(t, s, h.RunID, store.Done, 1)
	got, _ := collect(t, s, h.RunID, 0)
	var seen []string
	for _, r := range got {
		seen = append(seen, r.TestID+"@"+r.Target+"="+string(r.Verdict))
	}
	if strings.Join(seen, ",") != "x@openai:a=pass,x@openai:b=pass" {
		t.Errorf("results %v, want x for each target, b's replaced", seen)
	}
	if r, _ := s.Run(context.Background(), h.RunID); r.Total != 2 || r.Passed != 2 {
		t.Errorf("run = %d total, %d passed; want 2, 2", r.Total, r.Passed)
	}
}

func shardHeader(id string, i, n, tests int) *results.Header {
	h := header(id, 0)
	h.Shard = &results.Shard{Index: i, Count: n, Tests: tests}
	return h
}

// A run split into shards is running until every shard has ended; then it
// ends as the worst of them, as long as the longest. It is stored as the
// whole run, not as the shard that started it.
func testShards(t *testing.T, s store.Store) {
	ctx := context.Background()
	id := "5a0000000001"
	mustStart(t, s, shardHeader(id, 2, 3, 1))
	mustAdd(t, s, id, result("b", agenteval.VerdictPass, nil))
	if err := s.FinishRun(ctx, id, store.Finish{Status: store.Done, DurationMS: 300, Shard: 2}); err != nil {
		t.Fatal(err)
	}
	r, err := s.Run(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != store.Running || !r.Finished.IsZero() || r.Shards != 3 || r.ShardsDone != 1 || r.Total != 1 {
		t.Errorf("after shard 2 of 3: %s, finished %v, shards %d/%d, total %d; want running, 1/3 done", r.Status, r.Finished, r.ShardsDone, r.Shards, r.Total)
	}
	if r.Header.Shard != nil || r.Header.Shards != 3 {
		t.Errorf("stored header: shard %+v, shards %d; want the whole run's (no shard, 3 shards)", r.Header.Shard, r.Header.Shards)
	}
	for _, i := range []int{1, 3} {
		mustStart(t, s, shardHeader(id, i, 3, 1))
	}
	mustAdd(t, s, id, result("a", agenteval.VerdictPass, nil), result("c", agenteval.VerdictFail, nil))
	if err := s.FinishRun(ctx, id, store.Finish{Status: store.Interrupted, DurationMS: 500, Shard: 3}); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishRun(ctx, id, store.Finish{Status: store.Done, DurationMS: 100, Shard: 1}); err != nil {
		t.Fatal(err)
	}
	r, _ = s.Run(ctx, id)
	if r.Status != store.Interrupted || r.Finished.IsZero() || r.ShardsDone != 3 || r.DurationMS != 500 || r.Total != 3 || r.Failed != 1 {
		t.Errorf("after all shards: %s, shards %d/%d, %v ms, total %d, failed %d; want interrupted (the worst), 3/3, 500 ms (the longest), 3, 1",
			r.Status, r.ShardsDone, r.Shards, r.DurationMS, r.Total, r.Failed)
	}
	// Shard 3 resumes and finishes: the run is done.
	mustStart(t, s, shardHeader(id, 3, 3, 1))
	if r, _ := s.Run(ctx, id); r.Status != store.Running || r.ShardsDone != 2 {
		t.Errorf("a resumed shard: %s, %d/3 done; want running, 2/3", r.Status, r.ShardsDone)
	}
	if err := s.FinishRun(ctx, id, store.Finish{Status: store.Done, DurationMS: 200, Shard: 3}); err != nil {
		t.Fatal(err)
	}
	if r, _ := s.Run(ctx, id); r.Status != store.Done || r.DurationMS != 700 {
		t.Errorf("resumed shard finished: %s, %v ms; want done, 700 (shard 3's two sessions)", r.Status, r.DurationMS)
	}
	// A finish for a shard that never started is refused.
	if err := s.FinishRun(ctx, id, store.Finish{Status: store.Done, Shard: 4}); err == nil {
		t.Error("finishing shard 4 of 3 was accepted")
	}
}

// The shards of a run agree on n, and a whole run is not reopened as a
// shard (nor a shard's run as a whole one); a merged run (the whole run,
// from agenteval merge) may be recorded over its shards.
func testShardsAgree(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustStart(t, s, shardHeader("5b0000000001", 1, 4, 10))
	// A job of a matrix of models that shares the pipeline's run id.
	otherModel := shardHeader("5b0000000001", 2, 4, 10)
	otherModel.Target = "openai:other"
	for _, tc := range []struct {
		h    *results.Header
		want string
	}{
		{shardHeader("5b0000000001", 2, 3, 10), "is not part of it: it has 4 shards, this is shard 2/3"},
		{header("5b0000000001", 0), "split into 4 shards; run it with --shard i/4"},
		{shardHeader("5b0000000001", 5, 4, 10), "shard 5 of 4"},
		{otherModel, `their targets are "replay" and "openai:other"`},
	} {
		if err := s.StartRun(ctx, tc.h); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("StartRun(%+v) = %v; want %q", tc.h.Shard, err, tc.want)
		}
	}
	mustStart(t, s, header("5c0000000001", 0))
	if err := s.StartRun(ctx, shardHeader("5c0000000001", 1, 2, 1)); err == nil || !strings.Contains(err.Error(), "it is not split into shards, this is shard 1/2") {
		t.Errorf("a whole run reopened as a shard: %v", err)
	}
	merged := header("5b0000000001", 0)
	merged.Shards = 4
	mustStart(t, s, merged)
	mustAdd(t, s, merged.RunID, result("a", agenteval.VerdictPass, nil))
	mustFinish(t, s, merged.RunID, store.Done, 0)
	if r, _ := s.Run(ctx, merged.RunID); r.Status != store.Done || r.Total != 1 {
		t.Errorf("merged run = %s, %d results", r.Status, r.Total)
	}
}

// Two shards of one run write through two handles (two processes) at the
// same time, while a reader follows the run: nothing is lost, nothing is
// counted twice, and the reader sees every result once, in order of
// position. A shard that writes its results again (run again after a
// failure) changes nothing.
func testConcurrentShards(t *testing.T, a, b store.Store) {
	defer b.Close()
	ctx := context.Background()
	const n = 1000
	id := "cc0000000001"
	start := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for i, s := range []store.Store{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if err := s.StartRun(ctx, shardHeader(id, i+1, 2, n)); err != nil {
				errs <- err
				return
			}
			v := []agenteval.Verdict{agenteval.VerdictPass, agenteval.VerdictFail}[i]
			for k := range n {
				if err := s.AddResult(id, result(fmt.Sprintf("s%d-%04d", i+1, k), v, &agenteval.Usage{Calls: 1, InputTokens: 10})); err != nil {
					errs <- err
					return
				}
			}
			errs <- s.FinishRun(ctx, id, store.Finish{Status: store.Done, DurationMS: float64(100 * (i + 1)), Shard: i + 1})
		}()
	}
	// The follower reads through a third view: a's handle, while both
	// write.
	seen := map[string]int{}
	var last int64
	follow := func() (int, error) {
		k := 0
		err := a.Results(ctx, id, last, func(pos int64, r *agenteval.Result) error {
			if pos <= last {
				return fmt.Errorf("position %d after %d", pos, last)
			}
			last = pos
			seen[r.TestID]++
			k++
			return nil
		})
		return k, err
	}
	close(start)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	polls := 0
	for running := true; running; polls++ {
		select {
		case <-done:
			running = false
		case <-time.After(5 * time.Millisecond):
		}
		if _, err := follow(); err != nil {
			t.Fatal(err)
		}
	}
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	r, err := a.Run(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	dups := 0
	for _, c := range seen {
		dups += c - 1
	}
	t.Logf("2 shards × %d results written at once: stored %d (%d passed, %d failed, %d calls), status %s, shards %d/%d; the follower read %d distinct in %d polls, %d twice",
		n, r.Total, r.Passed, r.Failed, r.Usage.Calls, r.Status, r.ShardsDone, r.Shards, len(seen), polls, dups)
	if r.Total != 2*n || r.Passed != n || r.Failed != n || r.Usage.Calls != 2*n || r.Status != store.Done || r.ShardsDone != 2 || r.DurationMS != 200 {
		t.Errorf("run = %d total (%d passed, %d failed), %d calls, %s, %d/%d shards, %v ms; want %d (%d, %d), %d, done, 2/2, 200",
			r.Total, r.Passed, r.Failed, r.Usage.Calls, r.Status, r.ShardsDone, r.Shards, r.DurationMS, 2*n, n, n, 2*n)
	}
	if len(seen) != 2*n || dups != 0 {
		t.Errorf("the follower read %d distinct results, %d twice; want %d, none", len(seen), dups, 2*n)
	}
	all, _ := collect(t, b, id, 0)
	if len(all) != 2*n {
		t.Errorf("%d results stored, want %d", len(all), 2*n)
	}

	// Shard 2 runs again and writes 100 of its results a second time.
	mustStart(t, b, shardHeader(id, 2, 2, n))
	for k := range 100 {
		mustAdd(t, b, id, result(fmt.Sprintf("s2-%04d", k), agenteval.VerdictFail, &agenteval.Usage{Calls: 1, InputTokens: 10}))
	}
	if err := b.FinishRun(ctx, id, store.Finish{Status: store.Done, DurationMS: 50, Shard: 2}); err != nil {
		t.Fatal(err)
	}
	if r, _ := a.Run(ctx, id); r.Total != 2*n || r.Failed != n || r.Usage.Calls != 2*n || r.Status != store.Done {
		t.Errorf("after shard 2 wrote 100 results again: %d total, %d failed, %d calls, %s; want %d, %d, %d, done", r.Total, r.Failed, r.Usage.Calls, r.Status, 2*n, n, 2*n)
	}
}
