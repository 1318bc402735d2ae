package session

import (
	"os"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/bytesize"
	"github.com/agenteval/agenteval/results"
	"github.com/agenteval/agenteval/run"
	"github.com/agenteval/agenteval/suite"
)

// Plan is what a session will run: each suite's selected tests against
// each of its targets, in this shard, less what an earlier results file
// already has; and the header the run's results open with.
type Plan struct {
	Header *results.Header
	Suites []*SuitePlan
	// Total is how many results the run will report, those carried over
	// or already in a resumed file included.
	Total int
	// Output is the results file: Options.Output, or the file Resume
	// continues.
	Output string
	// Resumed is how many results the resumed file already holds.
	Resumed int

	s         *Session
	done      *resumed
	rerunFlag string
	opened    bool
}

// SuitePlan is one suite's part of a plan.
type SuitePlan struct {
	Suite *suite.Suite
	// Tests are the tests the filter selects, in file order; none for a
	// streamed suite (Options.Stream), whose tests stay in its file.
	Tests []*agenteval.Test
	// sel are the indexes of the tests the filter selects, in file
	// order; nil means all of them.
	sel    []int
	runs   []targetRun
	opened []openedRun
}

// each calls f with the index of each test the filter selects, and what
// the suite knows of it, in file order.
func (sp *SuitePlan) each(f func(i int, ti suite.TestInfo)) {
	if sp.sel == nil {
		for i := range sp.Suite.NumTests() {
			f(i, sp.Suite.Info(i))
		}
		return
	}
	for _, i := range sp.sel {
		f(i, sp.Suite.Info(i))
	}
}

// Targets are the names of the targets the suite runs against, in order.
func (sp *SuitePlan) Targets() []string {
	out := make([]string, len(sp.runs))
	for i, tr := range sp.runs {
		out[i] = tr.spec.Name
		if tr.err != nil {
			out[i] = tr.target
		}
	}
	return out
}

// Plan decides what the session runs. Problems (a bad filter, shard, run
// id, resume file) are *ConfigError.
func (s *Session) Plan() (*Plan, error) {
	opt := &s.opt
	p := &Plan{s: s, Output: opt.Output}
	for _, st := range s.Suites {
		idx, err := run.SelectedIndexes(st, opt.Filter)
		if err != nil {
			return nil, configErr("%v", err)
		}
		sp := &SuitePlan{Suite: st, sel: idx}
		if !st.Streamed() {
			sel, err := run.Selected(st, opt.Filter)
			if err != nil {
				return nil, configErr("%v", err)
			}
			sp.Tests = sel
		}
		if opt.Agent == nil {
			sp.runs = targetRuns(opt.Targets, st, s.Suites, opt.logf)
		} else {
			name := opt.AgentName
			if name == "" {
				name = "go"
			}
			sp.runs = []targetRun{{target: name}}
			sp.runs[0].spec.Name = name
		}
		p.Suites = append(p.Suites, sp)
	}
	hdr, err := s.header(p)
	if err != nil {
		return nil, err
	}
	p.Header = hdr
	sharding, err := parseShard(opt.Shard, s.Suites)
	if err != nil {
		return nil, err
	}
	matched := 0
	for _, sp := range p.Suites {
		keep := sharding.keeps(sp.Suite)
		for i := range sp.runs {
			sp.runs[i].keep, sp.runs[i].pick = keep, opt.Select
		}
		for _, tr := range sp.runs {
			only := targetRun{only: tr.only}
			sp.each(func(_ int, ti suite.TestInfo) {
				if only.selectsID(ti.ID) {
					matched++
				}
			})
		}
	}
	if matched == 0 && opt.Filter != "" {
		return nil, configErr("%s", noMatch(opt.Filter, s.Suites))
	}
	shardTests := 0
	for _, sp := range p.Suites {
		for _, tr := range sp.runs {
			sp.each(func(i int, ti suite.TestInfo) {
				if tr.selectsAt(sp, i, ti) {
					shardTests++
				}
			})
		}
	}
	sharding.label(opt, hdr, opt.Resume != "", shardTests)
	if err := s.check(p); err != nil {
		return nil, err
	}
	// Said even under -q, as each file's differences are.
	for _, n := range runDifferences(p) {
		opt.logf("%s\n", n)
	}
	for _, n := range judgeNotes(p) {
		opt.notef("%s\n", n)
	}
	if err := p.continueFrom(); err != nil {
		return nil, err
	}
	for _, sp := range p.Suites {
		p.Total += plannedTotal(sp, p.done)
	}
	return p, nil
}

// continueFrom reads the earlier results file of --rerun-failed,
// --retry-errors or --resume, and checks that this run may continue it.
func (p *Plan) continueFrom() error {
	opt := &p.s.opt
	flag, path, err := opt.rerunSource()
	if err != nil {
		return err
	}
	if flag != "" {
		// The file is read whole before -o, which may name it, is
		// started afresh.
		if p.done, err = opt.startRerun(flag, path, p.Header); err != nil {
			return err
		}
		p.rerunFlag = flag
	}
	if opt.Resume == "" {
		return nil
	}
	if p.Output != "" && p.Output != opt.Resume {
		return configErr("--resume %s and -o %s differ; a resumed run appends to the file it resumes", opt.Resume, p.Output)
	}
	p.Output = opt.Resume
	done, err := readResumed(opt.Resume)
	if err != nil {
		return configErr("--resume: %v", err)
	}
	p.done, p.Resumed = done, done.n
	if done.cut > 0 {
		opt.logf("agenteval: warning: %s ended in a cut-off line (%s, from a run that was killed); it was removed, and that test runs again\n", opt.Resume, bytesize.Format(done.cut))
	}
	if old := done.header; old != nil {
		if err := checkResume(opt.Resume, old, p.Header); err != nil && !opt.Force {
			return configErr("%v", err)
		}
		if opt.RunID != "" && opt.RunID != old.RunID {
			return configErr("--run-id %s: %s holds run %s; a resumed run keeps its id", opt.RunID, opt.Resume, old.RunID)
		}
		// The file's run goes on, under its own id.
		p.Header.RunID, p.Header.Started = old.RunID, old.Started
	}
	return nil
}

// header describes the run about to start.
func (s *Session) header(p *Plan) (*results.Header, error) {
	opt := &s.opt
	command := opt.Command
	if command == "" {
		command = "run"
	}
	h := NewHeader(command, opt.Version, opt.Root)
	if opt.RunID != "" {
		if !validRunID(opt.RunID) {
			return nil, configErr("--run-id %q: use 1 to 64 letters, digits, '.', '_' or '-'", opt.RunID)
		}
		h.RunID = opt.RunID
	}
	var targets, judges, simulators []string
	for _, sp := range p.Suites {
		st := sp.Suite
		simulators = append(simulators, s.simulatorSpec(st))
		sf, err := SuiteFile(st.File, SuiteName(st))
		if err != nil {
			return nil, configErr("%v", err)
		}
		h.Suites = append(h.Suites, sf)
		for _, tr := range sp.runs {
			if tr.err != nil {
				return nil, configErr("%v", tr.err)
			}
			targets = append(targets, tr.spec.Name)
		}
		judges = append(judges, s.judgeSpec(st))
	}
	h.Target, h.Judge, h.Simulator, h.Trials = joinUnique(targets), joinUnique(judges), joinUnique(simulators), opt.Trials
	if opt.Threshold != nil {
		th := *opt.Threshold
		h.Threshold = &th
	}
	return h, nil
}

// judgeSpec is the judge a suite is graded by: the options', else the
// suite's judge:, else $AGENTEVAL_JUDGE.
func (s *Session) judgeSpec(st *suite.Suite) string {
	if s.opt.JudgeModel != nil {
		return s.opt.JudgeModel.Name
	}
	j := s.opt.Models.Judge
	if j == "" && st.Judge != nil {
		j = st.Judge.Model
	}
	if j == "" {
		j = os.Getenv("AGENTEVAL_JUDGE")
	}
	return j
}

// simulatorSpec is the model that plays a suite's simulated users, if one
// is named.
func (s *Session) simulatorSpec(st *suite.Suite) string {
	if s.opt.SimulatorModel != nil {
		return s.opt.SimulatorName
	}
	sim := s.opt.Models.Simulator
	if cfg := s.configs[st]; sim == "" && cfg != nil {
		sim = cfg.Simulator
	}
	return sim
}

// check refuses, before anything starts, the models no run could open:
// every problem of every suite at once.
func (s *Session) check(p *Plan) error {
	if s.opt.Models.FakeURL != "" {
		return nil // every model is the fake
	}
	var problems []string
	for _, sp := range p.Suites {
		st := sp.Suite
		var targets []suite.TargetSpec
		if s.opt.Agent == nil {
			for _, tr := range sp.runs {
				targets = append(targets, tr.spec)
			}
		}
		judge, sim := s.judgeSpec(st), s.simulatorSpec(st)
		if s.opt.JudgeModel != nil {
			judge = "" // the caller's own, opened already
		}
		if s.opt.SimulatorModel != nil {
			sim = ""
		}
		for _, err := range checkModels(st, judge, sim, targets) {
			problems = append(problems, err.Error())
		}
	}
	if len(problems) > 0 {
		return &LoadError{Problems: problems}
	}
	return nil
}
