// Package storetest is the contract every store.Store backend passes: call
// Run from the backend's tests with a Backend that opens empty stores.
//
// It imports the root package, results, store and the standard library.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/results"
	"github.com/agenteval/agenteval/store"
)

// Backend opens the stores of the contract tests.
type Backend struct {
	// Open opens a new, empty store for one test. The test closes it.
	Open func(t *testing.T) store.Store
	// Again opens another handle on the store that Open returned, as
	// another process would: the shards of one run on several machines.
	Again func(t *testing.T, s store.Store) store.Store
	// Reject, when set, makes the database of s refuse to write the
	// results of the test id given, as a database that fails would (a
	// trigger that raises an error). Without it, FailedWrite is skipped.
	Reject func(t *testing.T, s store.Store, testID string)
}

// Run runs the contract tests against stores made by b.
func Run(t *testing.T, b Backend) {
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, store.Store)
	}{
		{"RecordAndRead", testRecordAndRead},
		{"Totals", testTotals},
		{"Resume", testResume},
		{"Follow", testFollow},
		{"ListAndResolve", testListAndResolve},
		{"FailedRunIsNotLast", testFailedRunIsNotLast},
		{"Tags", testTags},
		{"Errors", testErrors},
		{"ConcurrentReaders", testConcurrentReaders},
		{"Matrix", testMatrix},
		{"Shards", testShards},
		{"ShardsAgree", testShardsAgree},
		{"NULInText", testNULInText},
		{"Labels", testLabels},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := b.Open(t)
			defer s.Close()
			tc.fn(t, s)
		})
	}
	t.Run("FailedWrite", func(t *testing.T) {
		if b.Reject == nil {
			t.Skip("the backend cannot make its database refuse a write")
		}
		s := b.Open(t)
		defer s.Close()
		testFailedWrite(t, s, b.Reject)
	})
	t.Run("ConcurrentShards", func(t *testing.T) {
		s := b.Open(t)
		defer s.Close()
		testConcurrentShards(t, s, b.Again(t, s))
	})
}

var t0 = time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)

func header(id string, at time.Duration) *results.Header {
	th := 0.75
	return &results.Header{RunID: id, AgentevalVersion: "test", Started: t0.Add(at), Command: "run",
		Suites: []results.SuiteFile{{Path: "evals/s.yaml", SHA256: "ab12", Name: "s"}}, Target: "replay", Judge: "openai:fake",
		Trials: 3, Threshold: &th, Git: &results.Git{Commit: "c0ffee", Dirty: true}}
}

func cost(c float64) *float64 { return &c }

func result(id string, v agenteval.Verdict, u *agenteval.Usage) *agenteval.Result {
	st := agenteval.StatusOK
	switch v {
	case agenteval.VerdictFail:
		st = agenteval.StatusQualityFailure
	case agenteval.VerdictError, agenteval.VerdictSkip:
		st = agenteval.StatusExecutionError
	}
	score := 1.0
	if v != agenteval.VerdictPass {
		score = 0.25
	}
	return &agenteval.Result{TestID: id, Suite: "s", Target: "replay", Score: score, Verdict: v, ExecutionStatus: st,
		Scores: []agenteval.Score{{Name: "turn-1", Type: "composite", Score: score, Verdict: v, Weight: 1, Reason: "because <b>" + id + "</b>",
			Assertions: []agenteval.Assertion{{Text: "calls book", Passed: v == agenteval.VerdictPass, Evidence: "called search"}}}},
		Output: agenteval.Conversation{{Role: agenteval.RoleUser, Content: "hi " + id}, {Role: agenteval.RoleAssistant, Content: "hello",
			ToolCalls: []agenteval.ToolCall{{ID: "c1", Name: "book", Args: map[string]any{"n": 2.0}}}}},
		Usage: u, DurationMS: 12.5}
}

func mustStart(t *testing.T, s store.Store, h *results.Header) {
	t.Helper()
	if err := s.StartRun(context.Background(), h); err != nil {
		t.Fatal(err)
	}
}

func mustAdd(t *testing.T, s store.Store, id string, rs ...*agenteval.Result) {
	t.Helper()
	for _, r := range rs {
		if err := s.AddResult(id, r); err != nil {
			t.Fatal(err)
		}
	}
}

func mustFinish(t *testing.T, s store.Store, id string, st store.Status, ms float64) {
	t.Helper()
	if err := s.FinishRun(context.Background(), id, store.Finish{Status: st, DurationMS: ms}); err != nil {
		t.Fatal(err)
	}
}

func collect(t *testing.T, s store.Store, id string, after int64) ([]*agenteval.Result, []int64) {
	t.Helper()
	var rs []*agenteval.Result
	var pos []int64
	err := s.Results(context.Background(), id, after, func(p int64, r *agenteval.Result) error {
		rs = append(rs, r)
		pos = append(pos, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return rs, pos
}

func ids(rs []*agenteval.Result) string {
	var out []string
	for _, r := range rs {
		out = append(out, r.TestID)
	}
	return strings.Join(out, ",")
}

// A run's header and results come back as they went in, in order.
func testRecordAndRead(t *testing.T, s store.Store) {
	h := header("aaaa00000001", 0)
	mustStart(t, s, h)
	in := []*agenteval.Result{result("b", agenteval.VerdictPass, nil), result("a", agenteval.VerdictFail, nil), result("c", agenteval.VerdictError, nil)}
	mustAdd(t, s, h.RunID, in...)
	mustFinish(t, s, h.RunID, store.Done, 1500)
	r, err := s.Run(context.Background(), h.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Header.RunID != h.RunID || r.Header.Target != "replay" || r.Header.Judge != "openai:fake" || r.Header.Trials != 3 ||
		r.Header.Threshold == nil || *r.Header.Threshold != 0.75 || r.Header.Git == nil || !r.Header.Git.Dirty ||
		len(r.Header.Suites) != 1 || r.Header.Suites[0].SHA256 != "ab12" || !r.Header.Started.Equal(h.Started) {
		t.Errorf("header = %+v", r.Header)
	}
	if !r.Started.Equal(h.Started) || r.Status != store.Done || r.Finished.IsZero() || r.DurationMS != 1500 {
		t.Errorf("run = %+v", r)
	}
	got, pos := collect(t, s, h.RunID, 0)
	if ids(got) != "b,a,c" {
		t.Fatalf("results in order %s, want b,a,c", ids(got))
	}
	for i := 1; i < len(pos); i++ {
		if pos[i] <= pos[i-1] {
			t.Errorf("positions do not increase: %v", pos)
		}
	}
	g := got[1]
	if g.Verdict != agenteval.VerdictFail || g.Score != 0.25 || g.ExecutionStatus != agenteval.StatusQualityFailure || g.DurationMS != 12.5 ||
		len(g.Scores) != 1 || g.Scores[0].Reason != "because <b>a</b>" || len(g.Scores[0].Assertions) != 1 ||
		len(g.Output) != 2 || g.Output[1].ToolCalls[0].Args["n"] != 2.0 {
		t.Errorf("result a = %+v", g)
	}
}

// Totals count verdicts, tokens and cost; an unknown price makes the cost
// unknown, never $0.
func testTotals(t *testing.T, s store.Store) {
	ctx := context.Background()
	h := header("bbbb00000001", 0)
	mustStart(t, s, h)
	mustAdd(t, s, h.RunID,
		result("p1", agenteval.VerdictPass, &agenteval.Usage{Calls: 2, InputTokens: 100, OutputTokens: 10, CostUSD: cost(0.5)}),
		result("p2", agenteval.VerdictPass, &agenteval.Usage{Calls: 1, CachedCalls: 3, InputTokens: 50, OutputTokens: 5, CostUSD: cost(0.25)}),
		result("f", agenteval.VerdictFail, nil),
		result("e", agenteval.VerdictError, nil),
		result("s", agenteval.VerdictSkip, nil))
	mustFinish(t, s, h.RunID, store.Done, 10)
	r, err := s.Run(ctx, h.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Total != 5 || r.Passed != 2 || r.Failed != 1 || r.Errored != 1 || r.Skipped != 1 {
		t.Errorf("counts = %d total, %d/%d/%d/%d", r.Total, r.Passed, r.Failed, r.Errored, r.Skipped)
	}
	u := r.Usage
	if u.Calls != 3 || u.CachedCalls != 3 || u.InputTokens != 150 || u.OutputTokens != 15 || u.CostUSD == nil || *u.CostUSD != 0.75 {
		t.Errorf("usage = %+v (cost %v)", u, u.CostUSD)
	}

	h2 := header("bbbb00000002", time.Minute)
	mustStart(t, s, h2)
	mustAdd(t, s, h2.RunID,
		result("p1", agenteval.VerdictPass, &agenteval.Usage{Calls: 1, InputTokens: 10, CostUSD: cost(0.5)}),
		result("p2", agenteval.VerdictPass, &agenteval.Usage{Calls: 1, InputTokens: 10}))
	mustFinish(t, s, h2.RunID, store.Done, 10)
	if r, _ := s.Run(ctx, h2.RunID); r.Usage.CostUSD != nil || r.Usage.InputTokens != 20 {
		t.Errorf("a result without a price: usage %+v, cost %v; want unknown", r.Usage, r.Usage.CostUSD)
	}

	// While a run goes on, its totals grow as results are stored.
	h3 := header("bbbb00000003", 2*time.Minute)
	mustStart(t, s, h3)
	mustAdd(t, s, h3.RunID, result("x", agenteval.VerdictFail, nil))
	waitFor(t, func() bool {
		r, err := s.Run(ctx, h3.RunID)
		return err == nil && r.Total == 1 && r.Failed == 1 && r.Status == store.Running
	}, "the running run counts its first result")
	mustFinish(t, s, h3.RunID, store.Interrupted, 5)
	if r, _ := s.Run(ctx, h3.RunID); r.Status != store.Interrupted || r.Total != 1 {
		t.Errorf("interrupted run = %+v", r)
	}
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A resumed run keeps its results, adds the new ones, and a repeated test
// replaces its earlier result; durations of the sessions add up.
func testResume(t *testing.T, s store.Store) {
	ctx := context.Background()
	h := header("cccc00000001", 0)
	mustStart(t, s, h)
	mustAdd(t, s, h.RunID, result("a", agenteval.VerdictPass, nil), result("b", agenteval.VerdictFail, nil))
	mustFinish(t, s, h.RunID, store.Interrupted, 100)
	mustStart(t, s, h)
	if r, _ := s.Run(ctx, h.RunID); r.Status != store.Running || !r.Finished.IsZero() {
		t.Errorf("a resumed run is running again: %+v", r)
	}
	mustAdd(t, s, h.RunID, result("c", agenteval.VerdictPass, nil), result("b", agenteval.VerdictPass, nil))
	mustFinish(t, s, h.RunID, store.Done, 50)
	r, err := s.Run(ctx, h.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Total != 3 || r.Passed != 3 || r.Status != store.Done || r.DurationMS != 150 {
		t.Errorf("resumed run = %+v", r)
	}
	got, _ := collect(t, s, h.RunID, 0)
	if ids(got) != "a,c,b" {
		t.Errorf("results %s, want a,c,b (the repeated b last)", ids(got))
	}
	if runs, _ := s.Runs(ctx, store.ListOptions{}); len(runs) != 1 {
		t.Errorf("resuming made %d runs", len(runs))
	}
}

// A reader follows a run in progress by asking for results after the last
// position it saw.
func testFollow(t *testing.T, s store.Store) {
	h := header("dddd00000001", 0)
	mustStart(t, s, h)
	mustAdd(t, s, h.RunID, result("a", agenteval.VerdictPass, nil))
	var last int64
	var seen []*agenteval.Result
	poll := func() {
		rs, pos := collect(t, s, h.RunID, last)
		seen = append(seen, rs...)
		if len(pos) > 0 {
			last = pos[len(pos)-1]
		}
	}
	waitFor(t, func() bool { poll(); return len(seen) == 1 }, "the first result is readable")
	mustAdd(t, s, h.RunID, result("b", agenteval.VerdictPass, nil), result("c", agenteval.VerdictPass, nil))
	waitFor(t, func() bool { poll(); return len(seen) == 3 }, "later results are readable")
	if ids(seen) != "a,b,c" {
		t.Errorf("followed %s", ids(seen))
	}
	mustFinish(t, s, h.RunID, store.Done, 1)
	poll()
	if len(seen) != 3 {
		t.Errorf("finishing repeated results: %s", ids(seen))
	}
	// Many results: more than a page of any reasonable size.
	h2 := header("dddd00000002", time.Second)
	mustStart(t, s, h2)
	for i := range 700 {
		mustAdd(t, s, h2.RunID, result(fmt.Sprintf("t%03d", i), agenteval.VerdictPass, nil))
	}
	mustFinish(t, s, h2.RunID, store.Done, 1)
	got, _ := collect(t, s, h2.RunID, 0)
	if len(got) != 700 || got[699].TestID != "t699" {
		t.Errorf("read %d of 700 results", len(got))
	}
	// fn's error stops the reading and comes back.
	stop := errors.New("enough")
	n := 0
	err := s.Results(context.Background(), h2.RunID, 0, func(int64, *agenteval.Result) error {
		n++
		if n == 5 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 5 {
		t.Errorf("stopping after 5: n=%d, err=%v", n, err)
	}
}

// Runs are listed newest first; RUN references resolve as documented.
func testListAndResolve(t *testing.T, s store.Store) {
	ctx := context.Background()
	if _, err := store.Resolve(ctx, s, "last"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("last of no runs: %v", err)
	}
	for i, id := range []string{"e1e100000001", "e1e200000002", "f00000000003"} {
		h := header(id, time.Duration(i)*time.Hour)
		mustStart(t, s, h)
		mustAdd(t, s, id, result("x", agenteval.VerdictPass, nil))
		mustFinish(t, s, id, store.Done, 1)
	}
	runs, err := s.Runs(ctx, store.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, r := range runs {
		order = append(order, r.ID)
	}
	if strings.Join(order, ",") != "f00000000003,e1e200000002,e1e100000001" {
		t.Errorf("order %v, want newest first", order)
	}
	if runs, _ := s.Runs(ctx, store.ListOptions{Limit: 1, Offset: 1}); len(runs) != 1 || runs[0].ID != "e1e200000002" {
		t.Errorf("limit 1 offset 1 = %v", runs)
	}
	if runs, _ := s.Runs(ctx, store.ListOptions{IDPrefix: "e1e"}); len(runs) != 2 {
		t.Errorf("prefix e1e: %d runs", len(runs))
	}
	if err := s.Tag(ctx, "e1e100000001", "baseline"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ ref, want, err string }{
		{"last", "f00000000003", ""},
		{"last~0", "f00000000003", ""},
		{"last~2", "e1e100000001", ""},
		{"last~3", "", "fewer than 4 runs"},
		{"last~x", "", "last~N"},
		{"f00000000003", "f00000000003", ""},
		{"f0", "f00000000003", ""},
		{"e1e2", "e1e200000002", ""},
		{"e1e", "", "ambiguous: it starts e1e200000002, e1e100000001"},
		{"baseline", "e1e100000001", ""},
		{"zzz", "", "no run id starts with it and no tag"},
		{"", "", "no run given"},
	} {
		got, err := store.Resolve(ctx, s, tc.ref)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Resolve(%q) = %q, %v; want error %q", tc.ref, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", tc.ref, got, err, tc.want)
		}
	}
	if _, err := s.Run(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown run: %v", err)
	}
}

// A run that failed before its first result (a rejected key, a broken
// configuration) is listed, and reached by its id or a tag, but last and
// last~N pass over it: it has nothing to compare.
func testFailedRunIsNotLast(t *testing.T, s store.Store) {
	ctx := context.Background()
	at := time.Duration(0)
	record := func(id string, st store.Status, rs ...*agenteval.Result) {
		t.Helper()
		at += time.Minute
		mustStart(t, s, header(id, at))
		mustAdd(t, s, id, rs...)
		mustFinish(t, s, id, st, 1)
	}
	record("f1a000000001", store.Failed)
	if _, err := store.Resolve(ctx, s, "last"); !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), "no run with results") {
		t.Errorf("last of one empty failed run: %v", err)
	}
	record("0de000000002", store.Done, result("x", agenteval.VerdictPass, nil))
	record("0de000000003", store.Done, result("x", agenteval.VerdictFail, nil))
	record("f1a000000004", store.Failed)
	// A run that failed after some tests finished has results to read.
	record("f1a000000005", store.Failed, result("x", agenteval.VerdictPass, nil))
	record("f1a000000006", store.Failed)
	for _, tc := range []struct{ ref, want, err string }{
		{"last", "f1a000000005", ""},
		{"last~1", "0de000000003", ""},
		{"last~2", "0de000000002", ""},
		{"last~3", "", "fewer than 4 runs are stored (not counting runs that failed before their first test"},
		{"f1a000000006", "f1a000000006", ""},
		{"f1a000000004", "f1a000000004", ""},
		{"f1a0000000", "", "ambiguous"},
		{"f1a000000001", "f1a000000001", ""},
	} {
		got, err := store.Resolve(ctx, s, tc.ref)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Resolve(%q) = %q, %v; want error %q", tc.ref, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", tc.ref, got, err, tc.want)
		}
	}
	// A tag reaches it too.
	if err := s.Tag(ctx, "f1a000000006", "broken"); err != nil {
		t.Fatal(err)
	}
	if got, err := store.Resolve(ctx, s, "broken"); err != nil || got != "f1a000000006" {
		t.Errorf("Resolve(broken) = %q, %v", got, err)
	}
	// The list keeps every run, the failed ones marked.
	runs, err := s.Runs(ctx, store.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range runs {
		got = append(got, r.ID+":"+string(r.Status))
	}
	want := "f1a000000006:failed,f1a000000005:failed,f1a000000004:failed,0de000000003:done,0de000000002:done,f1a000000001:failed"
	if strings.Join(got, ",") != want {
		t.Errorf("runs = %v, want %s", got, want)
	}
	if runs, _ := s.Runs(ctx, store.ListOptions{SkipEmptyFailed: true}); len(runs) != 3 {
		t.Errorf("SkipEmptyFailed lists %d runs, want 3", len(runs))
	}
}

// A tag names one run; tagging another moves it; a run may have several.
func testTags(t *testing.T, s store.Store) {
	ctx := context.Background()
	for i, id := range []string{"aa0000000001", "bb0000000002"} {
		mustStart(t, s, header(id, time.Duration(i)*time.Minute))
		mustFinish(t, s, id, store.Done, 1)
	}
	for _, tg := range []string{"baseline", "v1.2"} {
		if err := s.Tag(ctx, "aa0000000001", tg); err != nil {
			t.Fatal(err)
		}
	}
	if r, _ := s.Run(ctx, "aa0000000001"); strings.Join(r.Tags, ",") != "baseline,v1.2" {
		t.Errorf("tags = %v", r.Tags)
	}
	if err := s.Tag(ctx, "bb0000000002", "baseline"); err != nil {
		t.Fatal(err)
	}
	if id, _ := s.Tagged(ctx, "baseline"); id != "bb0000000002" {
		t.Errorf("baseline names %s after moving", id)
	}
	if r, _ := s.Run(ctx, "aa0000000001"); strings.Join(r.Tags, ",") != "v1.2" {
		t.Errorf("tags after the move = %v", r.Tags)
	}
	if err := s.Untag(ctx, "v1.2"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Tagged(ctx, "v1.2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("removed tag: %v", err)
	}
	if err := s.Untag(ctx, "v1.2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("removing it twice: %v", err)
	}
	if err := s.Tag(ctx, "nope", "x"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("tagging an unknown run: %v", err)
	}
	for _, bad := range []string{"", "last", "last~2", "has space", "a/b"} {
		if err := s.Tag(ctx, "aa0000000001", bad); err == nil {
			t.Errorf("tag %q was accepted", bad)
		}
	}
}

// Writes to unknown runs fail, at the latest when the run finishes.
func testErrors(t *testing.T, s store.Store) {
	ctx := context.Background()
	if err := s.FinishRun(ctx, "nope", store.Finish{Status: store.Done}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("finishing an unknown run: %v", err)
	}
	if err := s.AddResult("nope", result("a", agenteval.VerdictPass, nil)); err == nil {
		// Queued: the failure shows when the run finishes.
		if err := s.FinishRun(ctx, "nope", store.Finish{Status: store.Done}); err == nil {
			t.Error("a result for an unknown run was accepted")
		}
	}
	if err := s.StartRun(ctx, &results.Header{}); err == nil {
		t.Error("a run without an id was accepted")
	}
}

// Readers see committed results while a writer adds more.
func testConcurrentReaders(t *testing.T, s store.Store) {
	ctx := context.Background()
	h := header("ff0000000001", 0)
	mustStart(t, s, h)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	done := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				if _, err := s.Runs(ctx, store.ListOptions{}); err != nil {
					errs <- err
					return
				}
				if err := s.Results(ctx, h.RunID, 0, func(int64, *agenteval.Result) error { return nil }); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := range 300 {
		mustAdd(t, s, h.RunID, result(fmt.Sprintf("t%d", i), agenteval.VerdictPass, nil))
	}
	mustFinish(t, s, h.RunID, store.Done, 1)
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if r, _ := s.Run(ctx, h.RunID); r.Total != 300 {
		t.Errorf("total = %d, want 300", r.Total)
	}
}
