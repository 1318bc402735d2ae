package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/dataset"
	"github.com/agenteval/agenteval/grade"
)

// Metric is a grader under the name its scores carry.
type Metric struct {
	Name   string
	Grader agenteval.Grader
}

// RowSource yields undecoded dataset rows; *dataset.Reader is one.
type RowSource interface {
	NextRaw() (dataset.RawRow, error)
}

// ScoreOptions configures ScoreDataset. The zero value works.
type ScoreOptions struct {
	// Concurrency is how many samples are graded at once; 0 means one per CPU.
	Concurrency int
	// Threshold is the test pass mark; nil means agenteval.DefaultThreshold.
	Threshold *float64
	// Suite is recorded in every result, usually the dataset's path.
	Suite string
	// OnProblem, when set, receives each row's errors and warnings, in row
	// order, before the row's result is emitted.
	OnProblem func(pe *agenteval.PosError, warning bool)
}

// ScoreDataset grades every row of src with every metric and calls emit
// once per row, in input order, as soon as the row and all rows before it
// are done. Rows are decoded and graded concurrently; at most a few times
// Concurrency rows are in memory at once, however long the file.
//
// A row that does not decode or validate still gets a result, with verdict
// error and the problems as its error, so no row is lost. A metric that
// cannot run on a row (a missing field, a judge failure) gets a score with
// verdict error; the row's other metrics are still scored.
//
// The returned error is for reading the source or for emit failing; when
// the context is cancelled, rows already being graded are finished and
// emitted before ScoreDataset returns the context's error. A source blocked
// in NextRaw is left behind: its goroutine ends when the source returns.
func ScoreDataset(ctx context.Context, src RowSource, metrics []Metric, opt ScoreOptions, emit func(*agenteval.Result) error) error {
	conc := opt.Concurrency
	if conc <= 0 {
		conc = runtime.GOMAXPROCS(0)
	}
	threshold := agenteval.DefaultThreshold
	if opt.Threshold != nil {
		threshold = *opt.Threshold
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	type job struct {
		seq int
		raw dataset.RawRow
	}
	type done struct {
		seq   int
		row   *dataset.Row
		res   *agenteval.Result
		fatal error
	}
	// fatal is set by the first row whose grading hit an error that every
	// later call would repeat (bad credentials): from then on nothing more
	// is emitted, and the run ends with that one error.
	var fatalOnce sync.Once
	var fatalErr error
	var fatalSeen atomic.Bool
	window := conc * 4
	tokens := make(chan struct{}, window)
	jobs := make(chan job)
	results := make(chan done, window)
	// The reader hands its error over a channel rather than a shared
	// variable: after a cancellation the workers stop without waiting for
	// it, so nothing else orders its write before the read at the end. The
	// buffer lets it send and exit even when no one is left to receive.
	readErrc := make(chan error, 1)

	go func() {
		defer close(jobs)
		for seq := 0; ; seq++ {
			select {
			case tokens <- struct{}{}:
			case <-ctx.Done():
				return
			}
			if ctx.Err() != nil {
				return // select may pick the token even when cancelled
			}
			raw, err := src.NextRaw()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					readErrc <- err
				}
				return
			}
			select {
			case jobs <- job{seq: seq, raw: raw}:
			case <-ctx.Done():
				return
			}
		}
	}()

	var wg sync.WaitGroup
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				// A reader blocked on an idle source (stdin) must not keep a
				// cancelled run alive, so workers also watch the context.
				var j job
				var ok bool
				select {
				case j, ok = <-jobs:
				case <-ctx.Done():
					return
				}
				if !ok {
					return
				}
				row := j.raw.Decode()
				res, fatal := scoreRow(ctx, row, metrics, threshold, opt.Suite)
				if fatal != nil {
					fatalOnce.Do(func() { fatalErr = fatal })
					fatalSeen.Store(true)
					cancel()
				}
				results <- done{seq: j.seq, row: row, res: res, fatal: fatal}
			}
		}()
	}
	go func() {
		wg.Wait()
		close(results)
	}()

	pending := map[int]done{}
	next := 0
	var emitErr error
	for d := range results {
		pending[d.seq] = d
		for {
			p, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			if emitErr != nil || fatalSeen.Load() {
				<-tokens
				continue
			}
			if opt.OnProblem != nil {
				for _, e := range p.row.Errors {
					opt.OnProblem(e, false)
				}
				for _, w := range p.row.Warnings {
					opt.OnProblem(w, true)
				}
			}
			redactResult(p.res)
			if err := emit(p.res); err != nil {
				emitErr = err
				cancel()
			}
			<-tokens
		}
	}
	// When the source ended the run, its error was sent before jobs was
	// closed, so it is here by now. When the run was cancelled instead, a
	// source still in NextRaw has nothing to say yet and the context's
	// error stands.
	var readErr error
	select {
	case readErr = <-readErrc:
	default:
	}
	switch {
	case fatalSeen.Load():
		return fatalErr
	case emitErr != nil:
		return emitErr
	case readErr != nil:
		return readErr
	}
	return context.Cause(ctx)
}

// scoreRow grades one decoded row with every metric. It also returns the
// first *agenteval.FatalError a grader hit, so the run can stop instead of
// repeating it for every row.
func scoreRow(ctx context.Context, row *dataset.Row, metrics []Metric, threshold float64, suite string) (*agenteval.Result, error) {
	start := time.Now()
	res := &agenteval.Result{TestID: row.TestID(), Suite: suite}
	if len(row.Errors) > 0 || row.Sample == nil {
		msgs := make([]string, len(row.Errors))
		for i, e := range row.Errors {
			msgs[i] = e.Error()
		}
		res.Verdict = agenteval.VerdictError
		res.ExecutionStatus = agenteval.StatusOf(res.Verdict)
		res.Error = "invalid row: " + strings.Join(msgs, "\n")
		res.Scores = []agenteval.Score{}
		return res, nil
	}
	res.Output = row.Sample.UserInput
	in := agenteval.InputFromSample(row.Sample)
	res.Scores = make([]agenteval.Score, 0, len(metrics))
	var errs []string
	var fatal error
	for _, m := range metrics {
		s, err := grade.Run(ctx, m.Grader, m.Name, m.Name, in)
		var fe *agenteval.FatalError
		if fatal == nil && errors.As(err, &fe) {
			fatal = fe
		}
		if s.Verdict == agenteval.VerdictError {
			errs = append(errs, fmt.Sprintf("%s: %s", s.Name, s.Reason))
		}
		if !s.Usage.IsZero() {
			if res.Usage == nil {
				res.Usage = &agenteval.Usage{}
			}
			res.Usage.Add(s.Usage)
		}
		res.Scores = append(res.Scores, s)
	}
	res.Score, res.Verdict = agenteval.Combine(res.Scores, threshold)
	if len(errs) > 0 {
		res.Error = strings.Join(errs, "\n")
	}
	res.ExecutionStatus = agenteval.StatusOf(res.Verdict)
	res.DurationMS = float64(time.Since(start).Microseconds()) / 1000
	return res, fatal
}
