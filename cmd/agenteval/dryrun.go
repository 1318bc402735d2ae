package main

import (
	"fmt"

	"github.com/agenteval/agenteval/internal/fakellm"
	"github.com/agenteval/agenteval/session"
)

// startFake starts the fake model in this process, on a loopback port, and
// makes it the judge and every simulated user; for a dry run (asAgent) it
// is the agent too (the suite's mock tools driven by a model), so nothing
// the suite names is started or called. Either way the run is not recorded
// and not cached, since its verdicts are the fake's. stop ends the fake.
func (f *runFlags) startFake(e *env, opt *session.Options, asAgent bool) (stop func(), err error) {
	if asAgent && len(opt.Targets) > 0 {
		return nil, usageErr("--dry-run replaces every target with the fake model; leave out --target")
	}
	var rules []*fakellm.Rule
	if f.dryScript != "" {
		if rules, err = fakellm.LoadScript(f.dryScript); err != nil {
			return nil, usageErr("--dry-run-script: %v", err)
		}
	}
	s, err := fakellm.Start(fakellm.Options{CallTools: true})
	if err != nil {
		return nil, fmt.Errorf("start the fake model: %w", err)
	}
	s.Add(rules...)
	if asAgent {
		// The graders' programs are the suite's too: they are not started
		// either, and score skips that name them.
		opt.Targets = []string{session.FakeModel}
		opt.DryRun = true
	}
	opt.Models.Judge, opt.Models.Simulator = session.FakeModel, session.FakeModel
	opt.Models.FakeURL, opt.Models.NoCache = s.URL, true
	opt.NoStore = true
	if opt.Quiet {
		return s.Close, nil
	}
	if !asAgent {
		fmt.Fprintf(e.stderr, "fake judge: a fake model at %s judges (every criterion passes) and plays the simulated users; the targets run as usual, and the run is not recorded\n", s.URL)
		return s.Close, nil
	}
	agent := "calls each offered tool once, then answers with a short text"
	if f.dryScript != "" {
		agent = "follows " + f.dryScript + " (and otherwise calls each offered tool once)"
	}
	fmt.Fprintf(e.stderr, "dry run: a fake model at %s plays the agent (it %s), the judge (every criterion passes) and the simulated users; nothing the suite names is started or called, and the run is not recorded\n", s.URL, agent)
	return s.Close, nil
}
