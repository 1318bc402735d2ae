package session

import (
	"context"
	"io"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/grade"
	"github.com/agenteval/agenteval/provider"
	"github.com/agenteval/agenteval/results"
	"github.com/agenteval/agenteval/run"
	"github.com/agenteval/agenteval/suite"
	"github.com/agenteval/agenteval/target"
)

// Outcome is how a session's run ended.
type Outcome struct {
	// Summary counts every result of the run, carried-over ones included.
	Summary results.Summary
	// Header is the run's header, as its results file opens with it.
	Header *results.Header
	// Output is the results file written, if any.
	Output string
	// Recorded says the run is in the store.
	Recorded bool
}

// Run loads the eval files, plans the run, opens its sink and runs it, as
// agenteval run does. The outcome is returned with the error: a run that
// stops (Ctrl-C, a rejected key) keeps the results it finished.
func Run(ctx context.Context, opt Options, paths ...string) (*Outcome, error) {
	s, err := Load(opt, paths...)
	if err != nil {
		return nil, err
	}
	p, err := s.Plan()
	if err != nil {
		return nil, err
	}
	sink, err := p.OpenSink()
	if err != nil {
		return nil, err
	}
	return p.Run(ctx, sink)
}

// OpenSink opens the plan's sink (its results file appended to when the
// run resumes one) and writes the header.
//
// Every agent, judge and simulator the run needs is opened first, so a
// run whose configuration fails (a missing key, say) stops here, before
// anything is written or recorded.
func (p *Plan) OpenSink() (*Sink, error) {
	if err := p.open(); err != nil {
		return nil, err
	}
	opt := p.s.opt
	opt.Output = p.Output
	file := SinkFile{}
	if opt.Resume != "" {
		file.Append = true
		file.HasHeader = p.done != nil && (p.done.n > 0 || p.done.header != nil)
	}
	sink, err := NewSink(&opt, file)
	if err != nil {
		return nil, err
	}
	if err := sink.Start(p.Header); err != nil {
		sink.Abort()
		return nil, err
	}
	return sink, nil
}

// Run runs the plan into the sink and closes it. The results an earlier
// file holds join the run first; then each suite runs against each of
// its targets.
func (p *Plan) Run(ctx context.Context, sink *Sink) (*Outcome, error) {
	out := &Outcome{Header: p.Header, Output: p.Output}
	if err := p.takeOver(ctx, sink); err != nil {
		sink.Abort()
		return nil, err
	}
	start := time.Now()
	runErr := p.runAll(ctx, sink)
	sum, cerr := sink.Close(ctx, runErr, float64(time.Since(start).Microseconds())/1000)
	if runErr == nil {
		runErr = cerr
	}
	out.Summary = sum
	out.Recorded = sink.recorded()
	return out, runErr
}

// takeOver gives the sink the results of the earlier file: those
// --rerun-failed carries over, or those a resumed file already holds.
func (p *Plan) takeOver(ctx context.Context, sink *Sink) error {
	d := p.done
	switch {
	case d == nil:
		return nil
	case d.kept != nil:
		if err := d.carryOver(sink.carry); err != nil {
			return configErr("%s: %v", p.rerunFlag, err)
		}
	case d.n > 0:
		// The whole run is summed, reported and recorded, not only this
		// session's part of it.
		toStore := sink.rec.needsBackfill(ctx, p.Header, d.n)
		_, err := results.ReadResults(p.Output, func(r *agenteval.Result) error {
			return sink.archive(r, toStore)
		})
		if err != nil {
			return configErr("--resume: %v", err)
		}
	}
	return nil
}

// open builds the run options (agent, judge, simulator) of every suite
// against each of its targets, once. A suite's only target that cannot be
// opened is the run's error; one target of a matrix that cannot be is
// kept, to end its tests in execution_error.
func (p *Plan) open() error {
	if p.opened {
		return nil
	}
	for _, sp := range p.Suites {
		sp.opened = make([]openedRun, len(sp.runs))
		for i, tr := range sp.runs {
			ropt, err := p.s.options(sp.Suite, tr)
			// The agent's conversation ids name this run, so an agent that
			// keys its memory on them starts afresh in every run.
			ropt.RunID = p.Header.RunID
			if err != nil && len(sp.runs) == 1 {
				return err
			}
			sp.opened[i] = openedRun{opt: ropt, err: err}
		}
	}
	p.opened = true
	return nil
}

// openedRun is a target run's options, or why it cannot run.
type openedRun struct {
	opt run.Options
	err error
}

// runAll runs every suite against each of its targets.
func (p *Plan) runAll(ctx context.Context, sink *Sink) error {
	if err := p.open(); err != nil {
		return err
	}
	defer p.s.closeTargets()
	if p.s.opt.DryRun {
		ctx = grade.DryRun(ctx)
	}
	for _, sp := range p.Suites {
		for i, tr := range sp.runs {
			ropt, err := sp.opened[i].opt, sp.opened[i].err
			if err != nil {
				// One target of a matrix that cannot run: its tests end in
				// execution_error, naming why; the other targets run.
				werr := sp.Suite.EachTest(func(_ int, t *agenteval.Test) error {
					if !tr.selects(t) {
						return nil
					}
					return sink.Write(targetErrorResult(t, tr.spec.Name, err))
				})
				if werr != nil {
					return werr
				}
				continue
			}
			selects := tr.selectsID
			if d := p.done; d != nil {
				name, st := ropt.Target, sp.Suite
				ropt.Done = d.doneFor(SuiteName(st), name)
				if d.again != nil {
					selects = func(id string) bool {
						return tr.selectsID(id) && d.runsAgain(SuiteName(st), name, id)
					}
				}
			}
			if sp.Suite.Streamed() {
				// A streamed suite's tests are chosen by id, without
				// reading them.
				ropt.SelectInfo = func(ti suite.TestInfo) bool { return selects(ti.ID) }
			} else {
				ropt.Select = func(t *agenteval.Test) bool {
					return selects(t.ID) && (tr.pick == nil || tr.pick(t))
				}
			}
			if err := run.RunSuite(ctx, sp.Suite, ropt, sink.Write); err != nil {
				return err
			}
		}
	}
	return nil
}

// options builds a suite's run options against one target: its agent,
// its judge, and the options' overrides; the project file fills in what
// neither the options nor the suite say.
func (s *Session) options(st *suite.Suite, tr targetRun) (run.Options, error) {
	opt := &s.opt
	cfg := s.configs[st]
	jobs := opt.Jobs
	if jobs == 0 && st.Workers > 0 {
		jobs = st.Workers // execution.workers
	}
	if jobs == 0 && cfg != nil {
		jobs = cfg.Defaults.Jobs
	}
	// Each conversation has one agent call in flight, and its grading runs
	// beside it: a provider serving both needs room for twice -j.
	models := opt.Models
	models.Concurrency = max(32, 2*jobs)
	agent := opt.Agent
	if agent == nil {
		var err error
		sp := tr.spec.SystemPrompt
		if sp == nil {
			sp = systemPromptFor(cfg)
		}
		agent, err = target.Open(tr.spec, st, target.Options{SystemPrompt: sp, Configure: func(c *provider.Config) {
			// The agent's calls are priced and limited like the judge's,
			// so cost budgets and totals see the price table too.
			models.Configure(c)
		}})
		if err != nil {
			return run.Options{}, configErr("target %s: %s", tr.spec.Name, provider.Redact(err.Error()))
		}
		if c, ok := agent.(io.Closer); ok {
			s.closers = append(s.closers, c)
		}
	}
	if opt.WrapAgent != nil {
		agent = opt.WrapAgent(agent)
	}
	ro := run.Options{Agent: agent, Target: tr.spec.Name, Concurrency: jobs, Trials: opt.Trials, Filter: opt.Filter, Threshold: opt.Threshold, Graders: opt.Graders}
	j := opt.JudgeModel
	if j == nil {
		jm := models
		if jm.Judge == "" && st.Judge != nil {
			jm.Judge = st.Judge.Model
			if jm.JudgeAPI == "" {
				// The file's judge: speaks the api it names, unless
				// --judge-api says otherwise.
				jm.JudgeAPI = st.Judge.API
			}
		}
		var err error
		if j, err = jm.BuildJudge(); err != nil {
			return run.Options{}, err
		}
		if j != nil && st.Judge != nil && st.Judge.Samples > 0 {
			j.Samples = st.Judge.Samples
		}
	}
	ro.Judge = j
	if opt.SimulatorModel != nil {
		ro.Simulator, ro.SimulatorName = opt.SimulatorModel, opt.SimulatorName
	} else if sim := s.simulatorSpec(st); sim != "" {
		var err error
		if ro.Simulator, ro.SimulatorName, err = models.Open(sim, "simulator"); err != nil {
			return run.Options{}, err
		}
	}
	ro.OpenModel = func(spec string) (agenteval.Model, error) {
		m, _, err := models.Open(spec, "user.model")
		return m, err
	}
	return ro, nil
}

// closeTargets releases what the run's targets hold (MCP servers they
// started), once the run is over. A target that fails to close is
// reported on stderr: its results are already written.
func (s *Session) closeTargets() {
	for _, c := range s.closers {
		if err := c.Close(); err != nil {
			s.opt.logf("warning: closing a target: %s\n", provider.Redact(err.Error()))
		}
	}
	s.closers = nil
}
