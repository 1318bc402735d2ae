package session

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/judge"
	"github.com/agenteval/agenteval/results"
	"github.com/agenteval/agenteval/run"
	"github.com/agenteval/agenteval/suite"
)

// RegradeOptions configure Regrade.
type RegradeOptions struct {
	// Options are the session's. Regrade uses the judge (Models,
	// JudgeModel), Threshold, Jobs, Filter, where results go (Output,
	// JUnit, HTML, Writers, NoStore, Store), RunID, Root, Config, Graders,
	// NoExec, MaxFileBytes, Version, Log, Quiet and OnResult. Targets,
	// Agent, Trials, Shard, Resume and the rerun options are not used:
	// the targets, trials and transcripts are the recorded run's.
	Options
	// Header is the recorded run's header; nil for a results file that
	// has none (the eval files must then be given).
	Header *results.Header
	// Label names the recorded run in messages: its id, a tag, a file.
	Label string
	// Results are the recorded run's results, in order; a test recorded
	// twice (a resumed run) counts as its later result.
	Results []*agenteval.Result
	// Samples, when above 0, is how many times the judge is asked each
	// decision (a majority vote), instead of the suites' judge: samples.
	Samples int
}

// Regrade grades the recorded transcripts of a run again, with the judge
// and grader settings of opt and the eval files as they are now, into a
// new run whose header names the recorded one (RegradedFrom). Neither the
// agent nor a simulated user is called (see run.RegradeSuite).
//
// The eval files are paths, or else the ones the recorded run's header
// names. A file whose content changed since the run is said on the log;
// each of its tests is checked against its transcript, and a test whose
// turns no longer match it is refused (an execution_error that says where)
// rather than graded against turns it never had. Problems with the files
// or settings are *ConfigError or *LoadError; a regrade that stops keeps
// the results it finished, as Run does.
func Regrade(ctx context.Context, ro RegradeOptions, paths ...string) (*Outcome, error) {
	label := ro.Label
	if label == "" && ro.Header != nil {
		label = ro.Header.RunID
	}
	if ro.Header != nil && ro.Header.Command == "score" {
		return nil, configErr("run %s scored a dataset (agenteval score), which has no eval file to grade by; score the file again with the other judge", label)
	}
	if len(ro.Results) == 0 {
		return nil, configErr("run %s holds no results to regrade", label)
	}
	if len(paths) == 0 {
		var err error
		if paths, err = recordedSuites(ro.Header, label); err != nil {
			return nil, err
		}
	}
	// The files' warnings, and how AgentV would run them, were said when
	// the run ran; a regrade runs nothing.
	lo := ro.Options
	lo.Log = nil
	s, err := Load(lo, paths...)
	if err != nil {
		return nil, err
	}
	s.opt.Log = ro.Log
	opt := &s.opt
	rec := indexRecorded(ro.Results)
	h, err := s.regradeHeader(ro.Header, label, rec)
	if err != nil {
		return nil, err
	}
	var problems []string
	judges := map[*suite.Suite]*judge.Judge{}
	for _, st := range s.Suites {
		for _, err := range checkModels(st, s.judgeSpec(st), "", nil) {
			problems = append(problems, err.Error())
		}
		if len(problems) > 0 {
			continue
		}
		if judges[st], err = s.regradeJudge(st, ro.Samples); err != nil {
			return nil, err
		}
	}
	if len(problems) > 0 {
		return nil, &LoadError{Problems: problems}
	}
	changed := map[*suite.Suite]bool{}
	if ro.Header != nil {
		for _, st := range s.Suites {
			if was, ok := recordedFile(ro.Header, st); ok && was.SHA256 != "" {
				now, err := results.HashFile(st.File)
				if err == nil && now != was.SHA256 {
					changed[st] = true
					opt.logf("agenteval: %s has changed since run %s: each test is checked against its transcript, and one whose turns no longer match it is not regraded\n", st.File, label)
				}
			}
		}
	}
	sink, err := NewSink(opt, SinkFile{})
	if err != nil {
		return nil, err
	}
	if err := sink.Start(h); err != nil {
		sink.Abort()
		return nil, err
	}
	out := &Outcome{Header: h, Output: opt.Output}
	start := time.Now()
	runErr := s.regradeAll(ctx, ro, label, rec, judges, changed, sink)
	sum, cerr := sink.Close(ctx, runErr, float64(time.Since(start).Microseconds())/1000)
	if runErr == nil {
		runErr = cerr
	}
	out.Summary = sum
	out.Recorded = sink.recorded()
	if runErr == nil {
		if left := rec.unused(); len(left) > 0 {
			more := ""
			if len(left) > 5 {
				left, more = left[:5], fmt.Sprintf(" and %d more", len(left)-5)
			}
			why := "the eval files no longer hold them"
			if opt.Filter != "" {
				why += ", or --filter leaves them out"
			}
			opt.logf("agenteval: not regraded, as %s: %s%s\n", why, strings.Join(left, ", "), more)
		}
	}
	return out, runErr
}

// regradeAll grades each suite's recordings, target by target.
func (s *Session) regradeAll(ctx context.Context, ro RegradeOptions, label string, rec *recordings, judges map[*suite.Suite]*judge.Judge, changed map[*suite.Suite]bool, sink *Sink) error {
	opt := &s.opt
	threshold := opt.Threshold
	if threshold == nil && ro.Header != nil {
		threshold = ro.Header.Threshold
	}
	for _, st := range s.Suites {
		name := SuiteName(st)
		jobs := opt.Jobs
		if jobs == 0 && st.Workers > 0 {
			jobs = st.Workers
		}
		if cfg := s.configs[st]; jobs == 0 && cfg != nil {
			jobs = cfg.Defaults.Jobs
		}
		for _, target := range rec.targets(name) {
			rgo := run.RegradeOptions{
				Options: run.Options{Target: target, Judge: judges[st], Concurrency: jobs, Threshold: threshold, Filter: opt.Filter, Select: opt.Select, Graders: opt.Graders, RunID: ro.RunID},
				Source:  label,
				Recorded: func(t *agenteval.Test) *agenteval.Result {
					return rec.take(t.Suite, t.ID, target)
				},
				Changed: changed[st],
				Note: func(t *agenteval.Test, msg string) {
					who := t.Suite + "/" + t.ID
					if len(rec.targets(name)) > 1 {
						who += " on " + target
					}
					opt.logf("agenteval: %s: %s\n", who, msg)
				},
			}
			if err := run.RegradeSuite(ctx, st, rgo, sink.Write); err != nil {
				return err
			}
		}
	}
	return nil
}

// recordedSuites are the eval files a run's header names, each checked to
// be here.
func recordedSuites(h *results.Header, label string) ([]string, error) {
	if h == nil {
		return nil, configErr("%s has no run header naming its eval files; give them: agenteval regrade %s EVAL...", label, label)
	}
	var paths []string
	for _, sf := range h.Suites {
		if sf.Path == "" || sf.Path == "-" {
			continue
		}
		if _, err := os.Stat(sf.Path); err != nil {
			return nil, configErr("run %s ran %s, which is not here (another working directory, or the file moved); give the eval files: agenteval regrade %s EVAL...", label, sf.Path, label)
		}
		paths = append(paths, sf.Path)
	}
	if len(paths) == 0 {
		return nil, configErr("run %s names no eval file it ran (it read standard input); give them: agenteval regrade %s EVAL...", label, label)
	}
	return paths, nil
}

// recordedFile is the header's entry for a suite: by name, else by path.
func recordedFile(h *results.Header, st *suite.Suite) (results.SuiteFile, bool) {
	name := SuiteName(st)
	for _, sf := range h.Suites {
		if sf.Name != "" && sf.Name == name {
			return sf, true
		}
	}
	abs, _ := filepath.Abs(st.File)
	for _, sf := range h.Suites {
		if p, err := filepath.Abs(sf.Path); err == nil && p == abs {
			return sf, true
		}
	}
	return results.SuiteFile{}, false
}

// regradeHeader describes the regrade: the recorded run's target,
// simulator and trials, the judge it grades with now, and the run it
// comes from.
func (s *Session) regradeHeader(src *results.Header, label string, rec *recordings) (*results.Header, error) {
	opt := &s.opt
	h := NewHeader("regrade", opt.Version, opt.Root)
	if opt.RunID != "" {
		if !validRunID(opt.RunID) {
			return nil, configErr("--run-id %q: use 1 to 64 letters, digits, '.', '_' or '-'", opt.RunID)
		}
		h.RunID = opt.RunID
	}
	h.RegradedFrom = label
	var judges []string
	for _, st := range s.Suites {
		sf, err := SuiteFile(st.File, SuiteName(st))
		if err != nil {
			return nil, configErr("%v", err)
		}
		h.Suites = append(h.Suites, sf)
		judges = append(judges, s.judgeSpec(st))
	}
	h.Judge = joinUnique(judges)
	h.Target = joinUnique(rec.allTargets)
	if src != nil {
		h.RegradedFrom = src.RunID
		h.Target, h.Simulator, h.Trials = src.Target, src.Simulator, src.Trials
		h.Threshold = src.Threshold
	}
	if opt.Threshold != nil {
		th := *opt.Threshold
		h.Threshold = &th
	}
	return h, nil
}

// regradeJudge is the judge a suite is regraded by, as Run would open it,
// with samples instead of the suite's when given.
func (s *Session) regradeJudge(st *suite.Suite, samples int) (*judge.Judge, error) {
	j := s.opt.JudgeModel
	if j == nil {
		jm := s.opt.Models
		jm.Concurrency = max(32, 2*s.opt.Jobs)
		if jm.Judge == "" && st.Judge != nil {
			jm.Judge = st.Judge.Model
			if jm.JudgeAPI == "" {
				jm.JudgeAPI = st.Judge.API
			}
		}
		var err error
		if j, err = jm.BuildJudge(); err != nil {
			return nil, err
		}
		if j != nil && st.Judge != nil && st.Judge.Samples > 0 {
			j.Samples = st.Judge.Samples
		}
	}
	if j != nil && samples > 0 {
		c := *j
		c.Samples = samples
		j = &c
	}
	return j, nil
}

// recordings are a run's results by suite, test and target.
type recordings struct {
	mu   sync.Mutex
	byID map[[3]string]*agenteval.Result
	// order is the keys in the order first recorded; used, those taken.
	order      [][3]string
	used       map[[3]string]bool
	bySuite    map[string][]string // suite → its targets, in order
	allTargets []string
}

func indexRecorded(rs []*agenteval.Result) *recordings {
	rec := &recordings{byID: map[[3]string]*agenteval.Result{}, used: map[[3]string]bool{}, bySuite: map[string][]string{}}
	seen := map[string]bool{}
	for _, r := range rs {
		k := [3]string{r.Suite, r.TestID, r.Target}
		if _, dup := rec.byID[k]; !dup {
			rec.order = append(rec.order, k)
			if !contains(rec.bySuite[r.Suite], r.Target) {
				rec.bySuite[r.Suite] = append(rec.bySuite[r.Suite], r.Target)
			}
			if !seen[r.Target] {
				seen[r.Target] = true
				rec.allTargets = append(rec.allTargets, r.Target)
			}
		}
		rec.byID[k] = r
	}
	return rec
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func (rec *recordings) targets(suite string) []string { return rec.bySuite[suite] }

// take returns a recorded result and marks it graded.
func (rec *recordings) take(suite, test, target string) *agenteval.Result {
	k := [3]string{suite, test, target}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	r := rec.byID[k]
	if r != nil {
		rec.used[k] = true
	}
	return r
}

// unused lists the recorded tests no suite took, as suite/test.
func (rec *recordings) unused() []string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var out []string
	seen := map[string]bool{}
	for _, k := range rec.order {
		if rec.used[k] {
			continue
		}
		n := k[1]
		if k[0] != "" {
			n = k[0] + "/" + n
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}
