package session

import (
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/words"
	"github.com/agenteval/agenteval/results"
	"github.com/agenteval/agenteval/suite"
)

// doneKey names a suite's tests against one target in a resumed or rerun
// file's maps; results written before results named their target have "".
func doneKey(suite, target string) string { return suite + "\x00" + target }

// doneFor are the finished tests of a suite against a target, for
// run.Options.Done.
func (r *resumed) doneFor(suite, target string) map[string]agenteval.ExecutionStatus {
	m := r.done[doneKey(suite, target)]
	if old := r.done[doneKey(suite, "")]; target != "" && len(old) > 0 {
		merged := make(map[string]agenteval.ExecutionStatus, len(m)+len(old))
		for id, st := range old {
			merged[id] = st
		}
		for id, st := range m {
			merged[id] = st
		}
		return merged
	}
	return m
}

// note records a finished test.
func (r *resumed) note(res *agenteval.Result) {
	k := doneKey(res.Suite, res.Target)
	if r.done[k] == nil {
		r.done[k] = map[string]agenteval.ExecutionStatus{}
	}
	r.done[k][res.TestID] = res.ExecutionStatus
	r.n++
}

// readRerun reads an earlier results file for --rerun-failed (errorsOnly
// false: the tests that failed or ended in an error run again) or
// --retry-errors (errorsOnly: the tests that ended in an execution error,
// and those the file lacks, run again). The other results are kept, to be
// written into the new run as they are.
func readRerun(path string, errorsOnly bool) (*resumed, error) {
	r := &resumed{done: map[string]map[string]agenteval.ExecutionStatus{}}
	if !errorsOnly {
		r.again = map[string]map[string]bool{}
	}
	hdr, err := results.ReadResults(path, func(res *agenteval.Result) error {
		runAgain := res.ExecutionStatus == agenteval.StatusExecutionError
		if !errorsOnly {
			runAgain = runAgain || res.Verdict == agenteval.VerdictFail || res.Verdict == agenteval.VerdictError
		}
		if !runAgain {
			r.note(res)
			r.kept = append(r.kept, res)
			return nil
		}
		if r.again != nil {
			k := doneKey(res.Suite, res.Target)
			if r.again[k] == nil {
				r.again[k] = map[string]bool{}
			}
			r.again[k][res.TestID] = true
		}
		r.rerun++
		return nil
	})
	if err != nil {
		return nil, err
	}
	r.header = hdr
	return r, nil
}

// runsAgain says whether a test not finished in the earlier file runs in
// this one: with --rerun-failed only the tests that failed there do.
func (r *resumed) runsAgain(suite, target, id string) bool {
	if r == nil || r.again == nil {
		return true
	}
	return r.again[doneKey(suite, target)][id] || r.again[doneKey(suite, "")][id]
}

// rerunSource is the file --rerun-failed or --retry-errors names, and
// which of them did; it checks that at most one of them and --resume is
// given.
func (o *Options) rerunSource() (flag, path string, err error) {
	var given []string
	for _, g := range []struct{ flag, path string }{{"--resume", o.Resume}, {"--rerun-failed", o.RerunFailed}, {"--retry-errors", o.RetryErrors}} {
		if g.path != "" {
			given = append(given, g.flag)
			flag, path = g.flag, g.path
		}
	}
	if len(given) > 1 {
		return "", "", configErr("%s and %s both name a results file to continue from; give one", given[0], given[1])
	}
	if flag == "--resume" {
		return "", "", nil
	}
	return flag, path, nil
}

// startRerun reads the earlier file and says what this run does with it.
func (o *Options) startRerun(flag, path string, hdr *results.Header) (*resumed, error) {
	r, err := readRerun(path, flag == "--retry-errors")
	if err != nil {
		return nil, configErr("%s: %v", flag, err)
	}
	if old := r.header; old != nil {
		// The kept results were graded by the suites and settings as they
		// were then: carrying them into a run that differs would mix two
		// runs in one summary. --force does it anyway (when the change is
		// the fix for the failing tests), and says so.
		if p := resumeProblems(old, hdr); len(p) > 0 {
			if !o.Force {
				return nil, configErr("%s %s: %s.\nThe results carried over would be from a different run. Run the whole suite again, or pass --force to carry them over anyway", flag, path, strings.Join(p, "; "))
			}
			o.notef("agenteval: warning: %s %s: %s; the results carried over are from that run\n", flag, path, strings.Join(p, "; "))
		}
	}
	if !o.Quiet {
		what := "failed or errored"
		if flag == "--retry-errors" {
			what = "errored (or missing)"
		}
		if r.rerun == 0 && flag == "--rerun-failed" {
			o.logf("%s: no test failed in %s; nothing to run again\n", flag, path)
		} else {
			o.logf("running the %s tests of %s again (%d); %s carried over\n", what, path, r.rerun, words.Counted(len(r.kept), "result"))
		}
	}
	return r, nil
}

// carryOver writes the kept results into the new run: its writers, the
// summary and the counters.
func (r *resumed) carryOver(add func(*agenteval.Result) error) error {
	for _, res := range r.kept {
		if err := add(res); err != nil {
			return err
		}
	}
	r.kept = nil
	return nil
}

// plannedTotal counts the tests a run will report: for each target run of
// each suite, the selected tests already finished or to run again.
func plannedTotal(sp *SuitePlan, done *resumed) int {
	s := sp.Suite
	n := 0
	for _, tr := range sp.runs {
		name := tr.spec.Name
		sp.each(func(i int, t suite.TestInfo) {
			if !tr.selectsAt(sp, i, t) {
				return
			}
			if done == nil || done.again == nil {
				n++
				return
			}
			if _, finished := done.doneFor(SuiteName(s), name)[t.ID]; finished || done.runsAgain(SuiteName(s), name, t.ID) {
				n++
			}
		})
	}
	return n
}
