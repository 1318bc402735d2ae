package storetest

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/store"
)

// A NUL byte is text like any other in a result: in its test id, suite,
// target, output and reasons. The result is stored, counted, and reads
// back equal; a test id that differs from it only past the NUL is another
// test. (PostgreSQL's text cannot hold NUL, so its store has to carry it
// some other way.)
func testNULInText(t *testing.T, s store.Store) {
	ctx := context.Background()
	h := header("0a0000000001", 0)
	mustStart(t, s, h)
	nul := result("a\x00b", agenteval.VerdictFail, nil)
	nul.Suite, nul.Target = "s\x00uite", "re\x00play"
	nul.Output[1].Content = "hello\x00world"
	nul.Scores[0].Reason = "why\x00not"
	other := result("a\x00c", agenteval.VerdictPass, nil)
	other.Suite, other.Target = nul.Suite, nul.Target
	in := []*agenteval.Result{nul, other}
	// Test ids spelled like an escaped NUL must not meet the NUL one.
	for _, id := range []string{`a\0b`, `a\u0000b`, "a\x010b", "a\x01\x00b"} {
		r := result(id, agenteval.VerdictPass, nil)
		r.Suite, r.Target = nul.Suite, nul.Target
		in = append(in, r)
	}
	in = append(in, result("a", agenteval.VerdictPass, nil))
	wantIDs := ids(in[1:])
	want, err := equalCopy(nul)
	if err != nil {
		t.Fatal(err)
	}
	mustAdd(t, s, h.RunID, in...)
	if err := s.FinishRun(ctx, h.RunID, store.Finish{Status: store.Done, DurationMS: 1}); err != nil {
		t.Fatalf("finish: %v", err)
	}
	r, err := s.Run(ctx, h.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != store.Done || r.Total != len(in) || r.Failed != 1 || r.Passed != len(in)-1 {
		t.Errorf("run %s, %d total, %d failed, %d passed; want done, %d, 1, %d", r.Status, r.Total, r.Failed, r.Passed, len(in), len(in)-1)
	}
	got, _ := collect(t, s, h.RunID, 0)
	if len(got) != len(in) {
		t.Fatalf("%d results read back (%q), want %d", len(got), ids(got), len(in))
	}
	if !reflect.DeepEqual(got[0], want) {
		t.Errorf("the result with NULs reads back as\n%+v\nwant\n%+v", got[0], want)
	}
	if g := ids(got[1:]); g != wantIDs {
		t.Errorf("the other results: %q, want %q", g, wantIDs)
	}
	// Stored again, it replaces itself: the key with a NUL is the same key.
	again := result("a\x00b", agenteval.VerdictPass, nil)
	again.Suite, again.Target = nul.Suite, nul.Target
	mustStart(t, s, h)
	mustAdd(t, s, h.RunID, again)
	mustFinish(t, s, h.RunID, store.Done, 1)
	if r, _ := s.Run(ctx, h.RunID); r.Total != len(in) || r.Passed != len(in) {
		t.Errorf("after storing a\\x00b again: %d total, %d passed; want %d, %d", r.Total, r.Passed, len(in), len(in))
	}
}

// equalCopy is r as a store reads it back: through its JSON.
func equalCopy(r *agenteval.Result) (*agenteval.Result, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	var c agenteval.Result
	return &c, json.Unmarshal(b, &c)
}

// A result the database refuses loses only itself, and the store says so:
// the run (or the shard) ends failed, not done, and FinishRun says the run
// is not complete in the store. This holds whether the refused write was
// committed with the finish or before it.
func testFailedWrite(t *testing.T, s store.Store, reject func(*testing.T, store.Store, string)) {
	ctx := context.Background()
	reject(t, s, "refused")
	h := header("0b0000000001", 0)
	mustStart(t, s, h)
	mustAdd(t, s, h.RunID, result("a", agenteval.VerdictPass, nil), result("refused", agenteval.VerdictPass, nil), result("c", agenteval.VerdictPass, nil))
	err := s.FinishRun(ctx, h.RunID, store.Finish{Status: store.Done, DurationMS: 1})
	if err == nil || !strings.Contains(err.Error(), "not complete in the store") || !strings.Contains(err.Error(), "refused") {
		t.Errorf("finishing a run that lost a result: %v; want it to say the run is not complete in the store", err)
	}
	if r, _ := s.Run(ctx, h.RunID); r == nil || r.Status != store.Failed || r.Total != 2 {
		t.Errorf("the run that lost a result: %+v; want failed, with 2 results", r)
	}

	// A shard whose refused write was committed well before its end.
	id := "0b0000000002"
	mustStart(t, s, shardHeader(id, 1, 2, 2))
	mustStart(t, s, shardHeader(id, 2, 2, 1))
	mustAdd(t, s, id, result("refused", agenteval.VerdictPass, nil), result("b", agenteval.VerdictPass, nil))
	waitFor(t, func() bool {
		r, err := s.Run(ctx, id)
		return err == nil && r.Total == 1
	}, "the shard's other result is stored")
	err = s.FinishRun(ctx, id, store.Finish{Status: store.Done, DurationMS: 1, Shard: 1})
	if err == nil || !strings.Contains(err.Error(), "not complete in the store") {
		t.Errorf("finishing a shard that lost a result: %v", err)
	}
	mustAdd(t, s, id, result("c", agenteval.VerdictPass, nil))
	if err := s.FinishRun(ctx, id, store.Finish{Status: store.Done, DurationMS: 1, Shard: 2}); err != nil {
		t.Errorf("the other shard: %v", err)
	}
	if r, _ := s.Run(ctx, id); r == nil || r.Status != store.Failed || r.Total != 2 || r.ShardsDone != 2 {
		t.Errorf("the run of a shard that lost a result: %+v; want failed, 2 results, 2 shards ended", r)
	}
}
