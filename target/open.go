package target

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/agent"
	"github.com/agenteval/agenteval/internal/redact"
	"github.com/agenteval/agenteval/provider"
	"github.com/agenteval/agenteval/suite"
)

// Options adjust how a model target is opened.
type Options struct {
	// Configure, when set, adjusts a model target's provider config (the
	// CLI's timeouts, retries and prices).
	Configure func(*provider.Config)
	// SystemPrompt, when set and not blank, is what a model target sends
	// as the system message of a conversation that has none (the project
	// file's system_prompt), as AgentV's LLM targets send one of their own.
	SystemPrompt *string
}

// Open builds the agent a target spec describes. Relative paths (commands,
// replay files) start at the target's BaseDir, else the eval file's
// directory.
func Open(t suite.TargetSpec, s *suite.Suite, opt Options) (agenteval.Agent, error) {
	dir := "."
	switch {
	case t.BaseDir != "":
		dir = t.BaseDir
	case s != nil && s.File != "":
		dir = filepath.Dir(s.File)
	}
	switch {
	case t.Unsupported != "":
		return nil, fmt.Errorf("it cannot run here: %s", t.Unsupported)
	case t.Model != "":
		cfg, err := provider.ParseSpec(t.Model)
		if err != nil {
			return nil, err
		}
		if t.BaseURL != "" {
			cfg.BaseURL = t.BaseURL
		}
		if t.APIKey != "" {
			cfg.APIKey = t.APIKey
			redact.Add(t.APIKey)
		}
		cfg.API, cfg.Store = t.API, t.Store
		if opt.Configure != nil {
			opt.Configure(&cfg)
		}
		m, err := provider.Open(cfg)
		if err != nil {
			return nil, err
		}
		a := &agent.ToolLoop{Model: m, MaxIterations: t.MaxSteps, Temperature: t.Temperature, MaxTokens: t.MaxTokens}
		if sp := opt.SystemPrompt; sp != nil && strings.TrimSpace(*sp) != "" {
			// The loop sends it first when the history does not open
			// with a system message: AgentV's rule for its own.
			a.System = *sp
		}
		var servers []suite.MCPServer
		servers = append(servers, t.MCPServers...)
		if s != nil {
			a.Tools = MockTools(s.Tools)
			servers = append(servers, s.MCPServers...)
		}
		if len(servers) > 0 {
			// The servers start on the conversation's first turn, so that
			// opening a target for a dry run or a listing starts nothing.
			return withMCP(a, servers, dir)
		}
		return a, nil
	case t.A2A != nil:
		return NewA2A(*t.A2A, t.Timeout), nil
	case t.AGUI != nil:
		return withTools(NewAGUI(*t.AGUI, t.Timeout), t, s), nil
	case t.HTTP != nil:
		return withTools(&HTTPAgent{URL: t.HTTP.URL, Headers: t.HTTP.Headers, Timeout: t.Timeout}, t, s), nil
	case len(t.Command) > 0:
		// Paths given relative to the eval file still work when agenteval
		// runs from elsewhere (resolveArgv).
		argv := resolveArgv(t.Command, dir)
		wd := dir
		if t.Dir != "" {
			wd = filepath.Join(dir, t.Dir)
		}
		return withTools(&CommandAgent{Argv: argv, Env: t.Env, Dir: wd, Timeout: t.Timeout}, t, s), nil
	case t.Template != "":
		wd := dir
		if t.Dir != "" {
			wd = t.Dir
			if !filepath.IsAbs(wd) {
				wd = filepath.Join(dir, t.Dir)
			}
		}
		return &TemplateAgent{Command: t.Template, Argv: t.TemplateArgv, Dir: wd, FilesFormat: t.FilesFormat, Timeout: t.Timeout}, nil
	case t.Replay != "":
		p := t.Replay
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		return OpenReplay(p)
	}
	return nil, fmt.Errorf("target %q has no model, http, a2a, agui, command or replay", t.Name)
}

// withTools gives an http or command agent the suite's mock tools, when it
// has any (MockedTools).
func withTools(a agenteval.Agent, t suite.TargetSpec, s *suite.Suite) agenteval.Agent {
	if s == nil || len(s.Tools) == 0 {
		return a
	}
	return &MockedTools{Agent: a, Tools: s.Tools, MaxRounds: t.MaxSteps}
}

// Select picks the target to run: by name from the suite's targets, or a
// provider:model spec; with no choice, execution.target or the suite's
// first target.
func Select(s *suite.Suite, choice string) (suite.TargetSpec, error) {
	if choice == "" {
		choice = s.DefaultTarget
	}
	if choice == "" {
		if len(s.Targets) == 0 {
			return suite.TargetSpec{}, fmt.Errorf("no target: add targets: to %s, or pass --target provider:model (for example --target openai:gpt-4o-mini)", s.File)
		}
		return s.Targets[0], nil
	}
	for _, t := range s.Targets {
		if t.Name == choice {
			return t, nil
		}
	}
	if strings.Contains(choice, ":") {
		return suite.TargetSpec{Name: choice, Model: choice}, nil
	}
	var names []string
	for _, t := range s.Targets {
		names = append(names, t.Name)
	}
	if len(names) == 0 {
		return suite.TargetSpec{}, fmt.Errorf("unknown target %q: %s defines no targets; give a provider:model spec such as openai:gpt-4o-mini", choice, s.File)
	}
	return suite.TargetSpec{}, fmt.Errorf("unknown target %q; %s defines %s, or give a provider:model spec", choice, s.File, strings.Join(names, ", "))
}
