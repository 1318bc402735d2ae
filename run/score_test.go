package run

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/dataset"
)

func rows(n int, bad map[int]bool) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if bad[i] {
			fmt.Fprintf(&b, "{\"id\": \"r%d\", \"user_input\": [{\"type\": \"robot\"}]}\n", i)
			continue
		}
		fmt.Fprintf(&b, "{\"id\": \"r%d\", \"user_input\": [{\"type\": \"human\", \"content\": \"%d\"}]}\n", i, i)
	}
	return b.String()
}

// slowGrader takes longer on early rows, so that rows finish out of order.
var slowGrader = agenteval.GraderFunc(func(ctx context.Context, in *agenteval.GradeInput) (agenteval.Score, error) {
	var n int
	fmt.Sscan(in.Transcript[0].Content, &n)
	if n%7 == 1 {
		time.Sleep(2 * time.Millisecond)
	}
	return agenteval.Score{Name: "slow", Score: 1, Verdict: agenteval.VerdictPass, Weight: 1}, nil
})

func TestScoreDatasetKeepsInputOrder(t *testing.T) {
	src := dataset.NewReader(strings.NewReader(rows(200, map[int]bool{5: true, 77: true})), "d.jsonl")
	var ids []string
	var problems []string
	err := ScoreDataset(context.Background(), src, []Metric{{Name: "slow", Grader: slowGrader}}, ScoreOptions{
		Concurrency: 8,
		OnProblem:   func(pe *agenteval.PosError, warning bool) { problems = append(problems, pe.Error()) },
	}, func(r *agenteval.Result) error {
		ids = append(ids, r.TestID)
		if r.TestID == "r5" && (r.Verdict != agenteval.VerdictError || r.ExecutionStatus != agenteval.StatusExecutionError || !strings.Contains(r.Error, "robot")) {
			t.Errorf("bad row result = %+v", r)
		}
		if r.TestID == "r6" && (r.Verdict != agenteval.VerdictPass || r.Score != 1) {
			t.Errorf("good row result = %+v", r)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 200 {
		t.Fatalf("got %d results, want 200", len(ids))
	}
	for i, id := range ids {
		if id != fmt.Sprintf("r%d", i+1) {
			t.Fatalf("result %d is %s: order lost", i, id)
		}
	}
	if len(problems) != 2 || !strings.HasPrefix(problems[0], "d.jsonl:5:") || !strings.HasPrefix(problems[1], "d.jsonl:77:") {
		t.Errorf("problems = %v", problems)
	}
}

func TestScoreDatasetErrorsAndPanics(t *testing.T) {
	failing := agenteval.GraderFunc(func(ctx context.Context, in *agenteval.GradeInput) (agenteval.Score, error) {
		return agenteval.Score{}, errors.New("judge unreachable")
	})
	panicking := agenteval.GraderFunc(func(ctx context.Context, in *agenteval.GradeInput) (agenteval.Score, error) {
		panic("boom")
	})
	src := dataset.NewReader(strings.NewReader(rows(3, nil)), "d.jsonl")
	var got []*agenteval.Result
	err := ScoreDataset(context.Background(), src, []Metric{{Name: "ok", Grader: slowGrader}, {Name: "down", Grader: failing}, {Name: "bad", Grader: panicking}}, ScoreOptions{}, func(r *agenteval.Result) error {
		got = append(got, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	r := got[0]
	if len(r.Scores) != 3 || r.Scores[0].Verdict != agenteval.VerdictPass || r.Scores[1].Verdict != agenteval.VerdictError || r.Scores[2].Verdict != agenteval.VerdictError {
		t.Fatalf("scores = %+v", r.Scores)
	}
	if r.Scores[1].Name != "down" || r.Scores[1].Reason != "judge unreachable" || !strings.Contains(r.Scores[2].Reason, "panicked: boom") {
		t.Errorf("error scores = %+v", r.Scores[1:])
	}
	if r.ExecutionStatus != agenteval.StatusExecutionError || r.Verdict != agenteval.VerdictError || !strings.Contains(r.Error, "down: judge unreachable") {
		t.Errorf("result = %+v", r)
	}
}

func TestScoreDatasetStopsOnEmitError(t *testing.T) {
	src := dataset.NewReader(strings.NewReader(rows(1000, nil)), "d.jsonl")
	var n atomic.Int64
	diskFull := errors.New("disk full")
	err := ScoreDataset(context.Background(), src, []Metric{{Name: "slow", Grader: slowGrader}}, ScoreOptions{Concurrency: 2}, func(r *agenteval.Result) error {
		if n.Add(1) == 10 {
			return diskFull
		}
		return nil
	})
	if !errors.Is(err, diskFull) {
		t.Fatalf("err = %v, want disk full", err)
	}
	if n.Load() != 10 {
		t.Errorf("emit called %d times after failing, want it to stop at 10", n.Load())
	}
}

func TestScoreDatasetCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	src := dataset.NewReader(strings.NewReader(rows(100000, nil)), "d.jsonl")
	var n int
	err := ScoreDataset(ctx, src, []Metric{{Name: "slow", Grader: slowGrader}}, ScoreOptions{Concurrency: 4}, func(r *agenteval.Result) error {
		n++
		if n == 50 {
			cancel()
		}
		if r.TestID != fmt.Sprintf("r%d", n) {
			t.Fatalf("result %d is %s", n, r.TestID)
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if n < 50 || n > 50+4*4 {
		t.Errorf("emitted %d results; after cancelling at 50 only rows already read should finish", n)
	}
}

type errSource struct{ n int }

func (s *errSource) NextRaw() (dataset.RawRow, error) {
	s.n++
	if s.n > 3 {
		return dataset.RawRow{}, errors.New("read failed")
	}
	return dataset.RawRow{File: "x", N: s.n, Line: s.n, Col: 1, Data: []byte(`{"user_input":[{"type":"human","content":"1"}]}`)}, nil
}

func TestScoreDatasetReadError(t *testing.T) {
	var n int
	err := ScoreDataset(context.Background(), &errSource{}, []Metric{{Name: "slow", Grader: slowGrader}}, ScoreOptions{}, func(r *agenteval.Result) error {
		n++
		return nil
	})
	if err == nil || err.Error() != "read failed" || n != 3 {
		t.Errorf("err = %v after %d results; want the read error after the 3 rows read", err, n)
	}
}

// blockingSource yields nothing: its first NextRaw blocks until ctx is
// cancelled, then fails, the way a reader of an idle pipe does when the
// run is interrupted.
type blockingSource struct {
	ctx     context.Context
	started chan struct{}
}

func (s *blockingSource) NextRaw() (dataset.RawRow, error) {
	close(s.started)
	<-s.ctx.Done()
	return dataset.RawRow{}, fmt.Errorf("source closed: %w", context.Cause(s.ctx))
}

// A source that fails after the run was cancelled hands its error to the
// reader goroutine while ScoreDataset, whose workers stopped on the
// cancellation, may already be choosing what to return. Under -race this
// test catches an error passed between them without synchronisation.
func TestScoreDatasetCancelWhileReading(t *testing.T) {
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	src := &blockingSource{ctx: ctx, started: make(chan struct{})}
	go func() {
		<-src.started
		cancel()
	}()
	err := ScoreDataset(ctx, src, []Metric{{Name: "slow", Grader: slowGrader}}, ScoreOptions{Concurrency: 2}, func(r *agenteval.Result) error {
		t.Errorf("emitted %s from a source with no rows", r.TestID)
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	// The reader goroutine may outlive ScoreDataset; wait for it so that
	// its handling of the source's error happens while the test still runs
	// and the race detector can see it.
	for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > before; {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines still running, want %d: the reader did not end after the source returned", runtime.NumGoroutine(), before)
		}
		time.Sleep(time.Millisecond)
	}
}
