package run

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/grade"
	"github.com/agenteval/agenteval/judge"
	"github.com/agenteval/agenteval/suite"
)

// Options configure RunSuite. Agent is required; the rest have defaults.
type Options struct {
	Agent agenteval.Agent
	// Target names the agent in results.
	Target string
	Judge  *judge.Judge
	// Concurrency is how many conversations talk to the agent at once
	// (agent conversations in flight); 0 means 4 per CPU. A conversation
	// gives its slot back when its last agent call returns, and its
	// grading finishes beside the next conversation: up to Concurrency
	// conversations more may be being graded. The judge's calls are held
	// to its provider's own limit, not to this one.
	Concurrency int
	// Threshold, Trials and TrialStrategy override the suite's and tests'.
	Threshold *float64
	Trials    int
	// Filter selects tests by id, with path.Match syntax (* ? [..]).
	Filter string
	// Select, when set, runs only the tests it accepts (the tests of one
	// target of a matrix). SelectInfo does the same by what the suite
	// knows of each test without reading it, which for a streamed suite
	// (suite.Options.Stream) saves reading every test once more to ask.
	Select     func(*agenteval.Test) bool
	SelectInfo func(suite.TestInfo) bool
	// Done lists tests already finished (from --resume), by id, with the
	// status their dependents should see.
	Done map[string]agenteval.ExecutionStatus

	// Simulator plays simulated users (user: in a test) unless a test
	// names its own model; nil means the judge's model plays them.
	Simulator     agenteval.Model
	SimulatorName string
	// OpenModel opens a test's user.model (provider:model). Models are
	// opened once per spec and shared.
	OpenModel func(spec string) (agenteval.Model, error)

	// Graders are the grader definitions the tests' assertion types are
	// looked up in: the list the suite was loaded with
	// (suite.Options.Graders), such as grade.All() with graders of the
	// caller's own appended. Nil means grade.All().
	Graders []*grade.Definition

	// RunID names the run in the conversation ids the agent gets
	// (AgentRequest.ConversationID), which an agent may key its memory
	// on: give the results header's run id, so that an id can be traced
	// back to its run. Empty means a new random id for this call, so
	// that ids never repeat across runs either way.
	RunID string
}

type suiteRunner struct {
	s   *suite.Suite
	opt Options
	dir string
	// runID is opt.RunID, or the random id made for this run.
	runID string

	fatalOnce sync.Once
	fatal     atomic.Pointer[agenteval.FatalError]
	cancel    context.CancelFunc

	modelsMu sync.Mutex
	models   map[string]openedModel // user.model specs, opened or not
}

func (r *suiteRunner) setFatal(fe *agenteval.FatalError) {
	r.fatalOnce.Do(func() {
		r.fatal.Store(fe)
		r.cancel()
	})
}

// fatalFrom stops the run when err carries a FatalError (rejected
// credentials): every later call would fail the same way.
func (r *suiteRunner) fatalFrom(err error) {
	var fe *agenteval.FatalError
	if errors.As(err, &fe) {
		r.setFatal(fe)
	}
}

func (r *suiteRunner) threshold(t *agenteval.Test) float64 {
	switch {
	case r.opt.Threshold != nil:
		return *r.opt.Threshold
	case t.Threshold != nil:
		return *t.Threshold
	case r.s.Threshold != nil:
		return *r.s.Threshold
	}
	return agenteval.DefaultThreshold
}

// Selected returns the tests a filter selects, in file order: of Tests,
// so none of a streamed suite's (see suite.Options.Stream) until it is
// loaded with LoadTests.
func Selected(s *suite.Suite, filter string) ([]*agenteval.Test, error) {
	var out []*agenteval.Test
	for i := range s.Tests {
		t := &s.Tests[i]
		ok, err := matchFilter(filter, t.ID)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, t)
		}
	}
	return out, nil
}

// SelectedIndexes returns the indexes of the tests a filter selects, in
// file order, from what the suite knows of each without reading it (so
// a streamed suite's too); nil when there is no filter, which selects
// them all.
func SelectedIndexes(s *suite.Suite, filter string) ([]int, error) {
	if filter == "" {
		return nil, nil
	}
	out := []int{}
	for i := range s.NumTests() {
		ok, err := matchFilter(filter, s.Info(i).ID)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, i)
		}
	}
	return out, nil
}

// matchFilter says whether a filter ("" for none) selects a test id.
func matchFilter(filter, id string) (bool, error) {
	if filter == "" {
		return true, nil
	}
	ok, err := path.Match(filter, id)
	if err != nil {
		return false, fmt.Errorf("--filter %q: %v", filter, err)
	}
	return ok, nil
}

// RunSuite runs the selected tests of a suite against the agent and calls
// emit once per test, as each finishes (so results stream in completion
// order). Tests wait for their depends_on; several conversations run at
// once; each trial of a test is its own conversation.
//
// One dispatcher hands out conversation slots in file order (test, then
// trial) to tests whose dependencies are done. A slot is for talking to
// the agent: a conversation gives it back after its last agent call, and
// its grading goes on beside the next conversation, with at most as many
// conversations being graded that way as there are slots. A test's
// graders are built when it starts and dropped when its result is out, so
// memory follows the conversations in flight, not the size of the suite.
//
// When the context is cancelled, tests still running are abandoned and not
// emitted; RunSuite returns the context's error once the finished ones are
// out. A FatalError (rejected credentials) stops the run the same way and is
// returned.
func RunSuite(ctx context.Context, s *suite.Suite, opt Options, emit func(*agenteval.Result) error) error {
	if opt.Agent == nil {
		return fmt.Errorf("run: no agent to test")
	}
	if opt.Graders != nil {
		if err := grade.Validate(opt.Graders); err != nil {
			return fmt.Errorf("run: %w", err)
		}
	}
	reader := s.NewTestReader()
	sel, err := selectedIndexes(s, opt, reader)
	if err != nil {
		return err
	}
	conc := opt.Concurrency
	if conc <= 0 {
		conc = 4 * runtime.GOMAXPROCS(0)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r := &suiteRunner{s: s, opt: opt, dir: filepath.Dir(s.File), cancel: cancel, runID: opt.RunID}
	if r.runID == "" {
		r.runID = newRunID()
	}
	// suite.Load has built every grader once already, so settings are known
	// to be good; a Go caller's hand-made suite that is not gets an
	// execution_error for the test concerned.
	d := newDispatcher(r, s, reader, sel, conc)
	return d.run(ctx, emit)
}

// selectedIndexes are the indexes of the tests that run, in file order:
// those the filter and the options' selections accept; nil means all.
func selectedIndexes(s *suite.Suite, opt Options, reader *suite.TestReader) ([]int, error) {
	filtered, err := SelectedIndexes(s, opt.Filter)
	if err != nil || opt.SelectInfo == nil && opt.Select == nil {
		return filtered, err
	}
	n := len(filtered)
	if filtered == nil {
		n = s.NumTests()
	}
	out := []int{}
	for k := range n {
		i := k
		if filtered != nil {
			i = filtered[k]
		}
		if opt.SelectInfo != nil && !opt.SelectInfo(s.Info(i)) {
			continue
		}
		if opt.Select != nil {
			t, err := reader.Test(i)
			if err != nil {
				return nil, err
			}
			if !opt.Select(t) {
				continue
			}
		}
		out = append(out, i)
	}
	return out, nil
}

// testState is the dispatcher's record of a test from the start of its
// first trial until its result is out. A test not started yet has none,
// so the dispatcher's memory follows the tests in flight, not the suite.
type testState struct {
	test     *agenteval.Test
	plan     *grade.Plan
	planErr  error
	trials   []agenteval.Trial
	next     int // next trial to start
	running  int // trials started and not finished
	finished int
	// oneByOne runs the trials one after another, because a trial's
	// outcome decides whether the next one runs (stopAfter).
	oneByOne bool
	// cost is what the trials run so far cost, for TrialCostLimit.
	cost float64
}

// depState links a test to its dependencies and dependents. Only the
// tests of a depends_on have one.
type depState struct {
	waiting    int      // dependencies not yet done
	dependents []int    // tests waiting for this one
	failedDeps []string // dependencies that ended in execution_error
}

// sequentialTrials says whether t's trials must run one at a time:
// pass_at_k stops at the first passing trial and cost_limit_usd once the
// trials run have cost that much, as in AgentV, so each trial's outcome
// decides whether the next starts.
func sequentialTrials(t *agenteval.Test, n int) bool {
	return n > 1 && (t.TrialStrategy == agenteval.ReducePassAtK && !t.TrialsRunAll || t.TrialCostLimit > 0)
}

// stopAfter adds tr's cost to the test's and says whether its trials end
// with tr, the last to finish (one-by-one trials only).
func (st *testState) stopAfter(tr agenteval.Trial) bool {
	t := st.test
	if tr.Usage != nil && tr.Usage.CostUSD != nil {
		st.cost += *tr.Usage.CostUSD
	}
	if t.TrialCostLimit > 0 && st.cost >= t.TrialCostLimit {
		return true
	}
	return t.TrialStrategy == agenteval.ReducePassAtK && !t.TrialsRunAll && tr.Verdict == agenteval.VerdictPass
}

// dispatcher hands out conversation slots. Tests without depends_on start
// from a cursor that walks the file; the others, and the next trial of a
// one-by-one test, wait in ready until they may start. Whichever comes
// first in the file starts first. Every step costs the same however large
// the suite, and the dispatcher keeps state only for the tests in flight
// and those linked by depends_on.
type dispatcher struct {
	r *suiteRunner
	// s is the suite, sel the indexes of its tests that run: the
	// dispatcher's test i is the suite's sel[i], or its i when sel is nil
	// (all of them); n is how many. A test is read (for a streamed
	// suite, from its file) only when it starts or ends.
	s      *suite.Suite
	sel    []int
	n      int
	reader *suite.TestReader
	// readErr is a test that could not be read: the run stops.
	readErr error
	// cursor is the first test not yet considered in file order.
	cursor int
	ready  []int // tests readied by their dependencies or for their next trial, sorted
	settle []int // tests that end without running: skipped, or a dependency failed
	deps   map[int]*depState
	active map[int]*testState
	// remaining counts the tests whose result is not out yet.
	remaining int
	free      int // conversation slots free
	freed     chan struct{}
	// grading holds a token for each conversation that gave its slot
	// back and is still being graded.
	grading chan struct{}
	done    chan trialDone
	// inflight counts trials started and not yet reported done.
	inflight int
}

type trialDone struct {
	test  int
	trial agenteval.Trial
}

func newDispatcher(r *suiteRunner, s *suite.Suite, reader *suite.TestReader, sel []int, conc int) *dispatcher {
	n := len(sel)
	if sel == nil {
		n = s.NumTests()
	}
	d := &dispatcher{r: r, s: s, sel: sel, n: n, reader: reader, free: conc, freed: make(chan struct{}, conc), grading: make(chan struct{}, conc),
		done: make(chan trialDone, conc), active: map[int]*testState{}}
	// index finds the tests that others depend on, by id (the last with
	// an id, as a map of every test would); -1 is an id no test has.
	var index map[string]int
	for i := range n {
		for _, dep := range d.info(i).DependsOn {
			if index == nil {
				index = map[string]int{}
				d.deps = map[int]*depState{}
			}
			index[dep] = -1
		}
	}
	for i := range n {
		t := d.info(i)
		if _, wanted := index[t.ID]; wanted {
			index[t.ID] = i
		}
		if _, ok := r.opt.Done[t.ID]; !ok {
			d.remaining++
		}
	}
	for i := range n {
		t := d.info(i)
		if _, ok := r.opt.Done[t.ID]; ok {
			continue
		}
		if len(t.DependsOn) == 0 {
			if t.Skip != "" {
				d.settle = append(d.settle, i)
			}
			continue // the cursor starts it
		}
		ds := d.dep(i)
		for _, dep := range t.DependsOn {
			j := index[dep]
			if j < 0 {
				continue
			}
			if status, done := r.opt.Done[dep]; done {
				if status == agenteval.StatusExecutionError {
					ds.failedDeps = append(ds.failedDeps, dep)
				}
				continue
			}
			ds.waiting++
			dj := d.dep(j)
			dj.dependents = append(dj.dependents, i)
		}
	}
	for i := range n {
		if t := d.info(i); len(t.DependsOn) > 0 {
			if _, ok := r.opt.Done[t.ID]; !ok && d.deps[i].waiting == 0 {
				d.readyOrSettle(i)
			}
		}
	}
	return d
}

// at is the suite's index of test i.
func (d *dispatcher) at(i int) int {
	if d.sel == nil {
		return i
	}
	return d.sel[i]
}

// info is what the suite knows of test i without reading it.
func (d *dispatcher) info(i int) suite.TestInfo { return d.s.Info(d.at(i)) }

// test reads test i; a test that cannot be read stops the run.
func (d *dispatcher) test(i int) (*agenteval.Test, bool) {
	t, err := d.reader.Test(d.at(i))
	if err != nil {
		if d.readErr == nil {
			d.readErr = err
			d.r.cancel()
		}
		return nil, false
	}
	return t, true
}

// dep is test i's depState, made when first needed.
func (d *dispatcher) dep(i int) *depState {
	ds := d.deps[i]
	if ds == nil {
		ds = &depState{}
		d.deps[i] = ds
	}
	return ds
}

// fromCursor says whether the cursor starts test i: it has no
// depends_on, is not skipped, and did not finish before this run.
func (d *dispatcher) fromCursor(i int) bool {
	t := d.info(i)
	if len(t.DependsOn) > 0 || t.Skip != "" {
		return false
	}
	_, done := d.r.opt.Done[t.ID]
	return !done
}

// run dispatches until every test is done or the run is stopped.
func (d *dispatcher) run(ctx context.Context, emit func(*agenteval.Result) error) error {
	var emitErr error
	out := func(i int, res *agenteval.Result) {
		d.remaining--
		redactResult(res)
		if emitErr == nil {
			if err := emit(res); err != nil {
				emitErr = err
				d.r.cancel()
			}
		}
		d.finish(i, res.ExecutionStatus)
	}
	for d.remaining > 0 {
		// Tests skipped or failed for their dependencies need no slot.
		for len(d.settle) > 0 {
			i := d.settle[0]
			d.settle = d.settle[1:]
			t, ok := d.test(i)
			if !ok {
				d.remaining--
				continue
			}
			if t.Skip != "" {
				out(i, d.r.skipResult(t))
			} else {
				out(i, d.r.dependencyResult(t, d.deps[i].failedDeps))
			}
		}
		if d.remaining == 0 {
			break
		}
		stopped := ctx.Err() != nil || emitErr != nil || d.readErr != nil
		if !stopped {
			d.launch(ctx)
		}
		if d.inflight == 0 {
			if len(d.settle) > 0 {
				continue
			}
			// Nothing runs, and nothing more will start.
			break
		}
		select {
		case <-d.freed:
			d.free++
		case td := <-d.done:
			d.inflight--
			// A trial gives its slot back before it reports done, so its
			// release is already queued: count it now, or the loop could
			// think nothing runs while no slot looks free.
			for len(d.freed) > 0 {
				<-d.freed
				d.free++
			}
			st := d.active[td.test]
			st.trials[td.trial.Trial-1] = td.trial
			st.running--
			st.finished++
			if st.oneByOne && st.finished < len(st.trials) {
				if !st.stopAfter(td.trial) {
					d.makeReady(td.test)
					continue
				}
				// The trials not run are not part of the result.
				st.trials = st.trials[:st.finished]
			}
			if st.finished < len(st.trials) || st.running > 0 {
				continue
			}
			delete(d.active, td.test)
			res := d.result(st)
			if ctx.Err() != nil {
				// Interrupted: a half-run test is not a result.
				d.remaining--
				continue
			}
			out(td.test, res)
		}
	}
	if fe := d.r.fatal.Load(); fe != nil {
		return fe
	}
	if emitErr != nil {
		return emitErr
	}
	if d.readErr != nil {
		return d.readErr
	}
	return context.Cause(ctx)
}

// pick is the test whose trial starts next: the first in the file of the
// ready tests and the cursor's.
func (d *dispatcher) pick() (i int, fromReady, ok bool) {
	for d.cursor < d.n && !d.fromCursor(d.cursor) {
		d.cursor++
	}
	if len(d.ready) > 0 && (d.cursor >= d.n || d.ready[0] < d.cursor) {
		return d.ready[0], true, true
	}
	return d.cursor, false, d.cursor < d.n
}

// launch starts trials in file order while slots are free.
func (d *dispatcher) launch(ctx context.Context) {
	for d.free > 0 {
		i, fromReady, ok := d.pick()
		if !ok {
			return
		}
		st := d.active[i]
		if st == nil {
			t, ok := d.test(i)
			if !ok {
				return
			}
			n := d.r.trialCount(t)
			st = &testState{test: t, trials: make([]agenteval.Trial, n), oneByOne: sequentialTrials(t, n)}
			st.plan, st.planErr = d.r.planTest(t)
			d.active[i] = st
		}
		planErr, p := st.planErr, st.plan
		trial := st.next + 1
		st.next++
		st.running++
		if st.next == len(st.trials) || st.oneByOne {
			// A one-by-one test is ready again when this trial ends
			// and another is due.
			if fromReady {
				d.ready = d.ready[1:]
			} else {
				d.cursor++
			}
		}
		d.free--
		d.inflight++
		go d.runTrial(ctx, i, p, planErr, trial)
	}
}

// runTrial runs one trial of test i in its slot and reports it done.
//
// The slot is for talking to the agent: runTrial gives it back after the
// last agent call, so grading the last turn does not hold up the next
// conversation. The conversations being graded after their slot is back
// are bounded by the slots too: a trial waits for room among them before
// it gives its slot back, so that a judge slower than the agent holds up
// new conversations rather than piling up finished ones in memory.
func (d *dispatcher) runTrial(ctx context.Context, i int, p *grade.Plan, planErr error, trial int) {
	released, grading := false, false
	release := func() {
		if released {
			return
		}
		released = true
		select {
		case d.grading <- struct{}{}:
			grading = true
		case <-ctx.Done():
		}
		d.freed <- struct{}{}
	}
	var tr agenteval.Trial
	func() {
		// An agent, model or grader written in Go may panic; that
		// ends its trial, not the run.
		defer func() {
			if v := recover(); v != nil {
				tr = errorTrial(trial, fmt.Sprintf("internal error: panic: %v", v))
			}
		}()
		if planErr != nil {
			tr = errorTrial(trial, "graders: "+planErr.Error())
		} else {
			tr = d.r.runTrial(ctx, p, trial, release)
		}
	}()
	if !released {
		d.freed <- struct{}{}
	}
	d.done <- trialDone{test: i, trial: tr}
	if grading {
		<-d.grading
	}
}

// errorTrial is a trial that could not run at all.
func errorTrial(trial int, why string) agenteval.Trial {
	return agenteval.Trial{Trial: trial, Verdict: agenteval.VerdictError, ExecutionStatus: agenteval.StatusExecutionError, Scores: []agenteval.Score{}, Error: why}
}

// result combines a finished test's trials and lets go of its graders.
func (d *dispatcher) result(st *testState) *agenteval.Result {
	t := st.test
	res := &agenteval.Result{TestID: t.ID, Suite: t.Suite, Target: d.r.opt.Target, ConversationID: t.ConversationID, Tags: Tags(t), Scores: []agenteval.Score{}}
	combineTrials(res, t, st.trials, d.r.threshold(t))
	// Trials run side by side: the test took as long as its longest, not
	// counting the wait for a free slot.
	for _, tr := range st.trials {
		res.DurationMS = max(res.DurationMS, tr.DurationMS)
	}
	st.plan, st.planErr, st.trials = nil, nil, nil
	return res
}

// finish readies the tests that waited for test i, which ended with
// status.
func (d *dispatcher) finish(i int, status agenteval.ExecutionStatus) {
	ds := d.deps[i]
	if ds == nil {
		return
	}
	for _, j := range ds.dependents {
		dep := d.deps[j]
		if status == agenteval.StatusExecutionError {
			dep.failedDeps = append(dep.failedDeps, d.info(i).ID)
		}
		dep.waiting--
		if dep.waiting == 0 {
			d.readyOrSettle(j)
		}
	}
}

// readyOrSettle queues test j, whose dependencies are done: to run, or to
// end without running when it is skipped or a dependency failed
// (on_dependency_failure skip or fail).
func (d *dispatcher) readyOrSettle(j int) {
	t := d.info(j)
	if t.Skip != "" || len(d.deps[j].failedDeps) > 0 && t.OnDependencyFailure != "run" {
		d.settle = append(d.settle, j)
		return
	}
	d.makeReady(j)
}

// makeReady queues test j to start its next trial, in file order.
func (d *dispatcher) makeReady(j int) {
	k := sort.SearchInts(d.ready, j)
	d.ready = append(d.ready, 0)
	copy(d.ready[k+1:], d.ready[k:])
	d.ready[k] = j
}

// dependencyResult is the result of a test that does not run because a
// dependency ended in execution_error.
func (r *suiteRunner) dependencyResult(t *agenteval.Test, failedDeps []string) *agenteval.Result {
	res := &agenteval.Result{TestID: t.ID, Suite: t.Suite, Target: r.opt.Target, ConversationID: t.ConversationID, Tags: Tags(t), Scores: []agenteval.Score{}}
	res.Verdict = agenteval.VerdictSkip
	res.Error = fmt.Sprintf("skipped because its dependency %v ended in execution_error (on_dependency_failure: skip)", failedDeps)
	if t.OnDependencyFailure == "fail" {
		res.Verdict = agenteval.VerdictFail
		res.Error = fmt.Sprintf("failed because its dependency %v ended in execution_error (on_dependency_failure: fail)", failedDeps)
	}
	res.ExecutionStatus = agenteval.StatusOf(res.Verdict)
	return res
}

// skipResult is the result of a test that needs a feature agenteval does
// not run (Test.Skip). It did not fail and did not err: its execution
// status is ok, so its dependents run.
func (r *suiteRunner) skipResult(t *agenteval.Test) *agenteval.Result {
	return &agenteval.Result{TestID: t.ID, Suite: t.Suite, Target: r.opt.Target, ConversationID: t.ConversationID, Tags: Tags(t),
		Scores: []agenteval.Score{}, Verdict: agenteval.VerdictSkip, ExecutionStatus: agenteval.StatusOK, Error: "skipped: " + t.Skip}
}

// trialCount is how many times a test runs.
func (r *suiteRunner) trialCount(t *agenteval.Test) int {
	if r.opt.Trials > 0 {
		return r.opt.Trials
	}
	return max(t.Trials, 1)
}

// combineTrials sets the test's result from its trials. With one trial the
// result is that trial. With several, the score follows the strategy (mean,
// min, max, or pass_at_k: the best trial), trials that errored are left out
// unless all did, and pass@k and pass^k are reported for k = 1..n.
func combineTrials(res *agenteval.Result, t *agenteval.Test, trials []agenteval.Trial, threshold float64) {
	if len(trials) == 1 {
		tr := trials[0]
		res.Score, res.Verdict, res.ExecutionStatus = tr.Score, tr.Verdict, tr.ExecutionStatus
		res.Scores, res.Output, res.Usage, res.Error = tr.Scores, tr.Output, tr.Usage, tr.Error
		res.Simulation = tr.Simulation
		return
	}
	res.Trials = trials
	var ok []agenteval.Trial
	var usage agenteval.Usage
	var errs []string
	passed := 0
	for _, tr := range trials {
		usage.Add(tr.Usage)
		if tr.ExecutionStatus == agenteval.StatusExecutionError {
			errs = append(errs, fmt.Sprintf("trial %d: %s", tr.Trial, tr.Error))
			continue
		}
		ok = append(ok, tr)
		if tr.Verdict == agenteval.VerdictPass {
			passed++
		}
	}
	if !usage.IsZero() {
		res.Usage = &usage
	}
	res.PassAtK = agenteval.PassAtKFor(len(trials), passed)
	if len(ok) == 0 {
		first := trials[0]
		res.Verdict = agenteval.VerdictError
		res.ExecutionStatus = agenteval.StatusOf(res.Verdict)
		res.Scores, res.Output, res.Simulation = first.Scores, first.Output, first.Simulation
		res.Error = fmt.Sprintf("all %d trials failed to run: %s", len(trials), errs[0])
		return
	}
	scores := make([]float64, len(ok))
	for i, tr := range ok {
		scores[i] = tr.Score
	}
	res.Score = t.TrialStrategy.Reduce(scores)
	// The trial shown is the one whose score is the result (min, max,
	// pass_at_k), else the first.
	rep := ok[0]
	if t.TrialStrategy != agenteval.ReduceMean && t.TrialStrategy != "" {
		for _, tr := range ok {
			if tr.Score == res.Score {
				rep = tr
				break
			}
		}
	}
	res.Scores, res.Output, res.Simulation = rep.Scores, rep.Output, rep.Simulation
	res.Verdict = agenteval.VerdictFor(res.Score, threshold)
	res.ExecutionStatus = agenteval.StatusOf(res.Verdict)
	if len(errs) > 0 {
		res.Error = fmt.Sprintf("%d of %d trials failed to run and were left out: %s", len(errs), len(trials), errs[0])
	}
}
