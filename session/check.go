package session

import (
	"fmt"

	"github.com/agenteval/agenteval/project"
	"github.com/agenteval/agenteval/provider"
	"github.com/agenteval/agenteval/suite"
)

// Check finds what would stop a run of a loaded suite (its project file
// applied) before anything runs: a model named as provider:model (a
// target's, the judge, the simulator, a test's user.model) that is
// malformed or names a provider this program lacks. (Which target runs
// may be the command line's choice, so a suite without one is fine.) validate and Plan both call it, so a file
// that validates is a file whose run starts. Judge and simulator are the
// command line's, if given.
func Check(st *suite.Suite, cfg *project.Config, judge, simulator string) []error {
	if judge == "" && st.Judge != nil {
		judge = st.Judge.Model
	}
	if simulator == "" && cfg != nil {
		simulator = cfg.Simulator
	}
	return checkModels(st, judge, simulator, st.Targets)
}

// checkModels checks the model specs of the targets given, the judge and
// the simulator as they will be opened, and the tests' user.model.
func checkModels(st *suite.Suite, judge, simulator string, targets []suite.TargetSpec) []error {
	var errs []error
	bad := func(what, spec string) {
		if spec == "" {
			return
		}
		if _, err := provider.ParseSpec(spec); err != nil {
			errs = append(errs, fmt.Errorf("%s: %s: %v", st.File, what, err))
		}
	}
	for _, t := range targets {
		if t.Unsupported == "" {
			bad("target "+t.Name, t.Model)
		}
		// Only the OpenAI adapter (and the servers it reaches) speaks the
		// Responses API; say so before the run, where the target is.
		if cfg, err := provider.ParseSpec(t.Model); err == nil && t.Model != "" && cfg.Provider != "openai" && cfg.Provider != "ollama" {
			if err := provider.ChatOnly(provider.Config{Provider: cfg.Provider, API: t.API, Store: t.Store}); err != nil {
				errs = append(errs, t.Pos.Errorf(fmt.Sprintf("target %s: %v", t.Name, err)))
			}
		}
	}
	bad("judge", judge)
	bad("simulator", simulator)
	seen := map[string]bool{}
	for i := range st.NumTests() {
		if t := st.Info(i); t.UserModel != "" && !seen[t.UserModel] {
			seen[t.UserModel] = true
			bad("test "+t.ID+": user.model", t.UserModel)
		}
	}
	return errs
}
