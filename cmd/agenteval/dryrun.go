package main

import (
	"fmt"

	"github.com/agenteval/agenteval/internal/fakellm"
	"github.com/agenteval/agenteval/provider"
)

// dryModel is the provider:model the fake answers as in a dry run.
const dryModel = "openai:fake"

// startDryRun starts the fake model in this process, on a loopback port,
// and makes it the agent (the suite's mock tools driven by a model), the
// judge and every simulated user. Nothing the suite names is started or
// called: no command, no endpoint, no real provider. The run is not
// recorded and not cached. stop ends the fake.
func (f *runFlags) startDryRun(e *env) (stop func(), err error) {
	if len(f.targets) > 0 {
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
	f.targets = []string{dryModel}
	f.judge.spec, f.simulator = dryModel, dryModel
	f.judge.dryURL, f.judge.noCache = s.URL, true
	f.noStore = true
	if !f.quiet {
		agent := "calls each offered tool once, then answers with a short text"
		if f.dryScript != "" {
			agent = "follows " + f.dryScript + " (and otherwise calls each offered tool once)"
		}
		fmt.Fprintf(e.stderr, "dry run: a fake model at %s plays the agent (it %s), the judge (every criterion passes) and the simulated users; nothing the suite names is started or called, and the run is not recorded\n", s.URL, agent)
	}
	return s.Close, nil
}

// dryRun points a model's configuration at the dry run's fake, whatever
// provider it named.
func (f *judgeFlags) dryRun(cfg *provider.Config) {
	if f.dryURL == "" {
		return
	}
	cfg.Provider, cfg.Model, cfg.BaseURL, cfg.APIKey = "openai", "fake", f.dryURL, "dry-run"
}
