package suite

import (
	"errors"
	"strings"

	"github.com/agenteval/agenteval"
	"go.yaml.in/yaml/v4"
)

// ProjectFile is what a project file (agenteval.yaml) holds: the targets,
// mock tools, judge and simulated-user model that a project's eval files
// share, and defaults for runs. Package project finds the file and applies
// it; the keys are read here, with the same rules and messages as an eval
// file's.
type ProjectFile struct {
	File    string
	Targets []TargetSpec
	Tools   []ToolMock
	// MCPServers are MCP servers whose tools every model target uses.
	MCPServers []MCPServer
	Judge      *JudgeSpec
	Simulator  string
	// SystemPrompt, when set, is the system message a model target sends
	// when a test's conversation has none: AgentV's LLM targets send a
	// short instruction of their own then, agenteval sends this. Set to
	// "", it says no system prompt is meant. Nil leaves it unsaid: none
	// is sent, and a run of an AgentV file says that this differs.
	SystemPrompt *string
	Defaults     ProjectDefaults
	// Store is where runs are recorded: a postgres:// URL (a store the
	// team shares), or a SQLite file's path, relative to the project
	// file; "" means .agenteval/agenteval.db under the project's root.
	Store string
	// Warnings are problems that do not stop the file (an unset
	// environment variable is empty); Options.Strict makes them errors.
	Warnings []*agenteval.PosError
}

// ProjectDefaults apply where neither the command line nor the eval file
// (or test) says otherwise.
type ProjectDefaults struct {
	// Target names the target to run, as --target does.
	Target string
	// Threshold is the pass mark; nil means 0.8.
	Threshold *float64
	// Jobs is -j: conversations at once; 0 means 4 per CPU.
	Jobs int
	// Trials is how many times each test runs, unless it says.
	Trials int
}

var projectKeys = []string{"targets", "tools", "mcp_servers", "judge", "simulator", "system_prompt", "defaults", "store"}

// ParseProject reads a project file. The error, when not nil, joins every
// problem found, each a *agenteval.PosError. The environment is
// interpolated as in eval files.
func ParseProject(path string, data []byte, opt Options) (*ProjectFile, error) {
	env := opt.Env
	if env == nil {
		env = osEnv
	}
	d := &decoder{file: path, env: env, problems: &problems{}}
	p := &ProjectFile{File: path}
	root, ok := d.parse(data, "YAML")
	if ok && root != nil && !isNull(root) {
		for _, f := range d.fields(root, "the project file", projectKeys) {
			switch f.key {
			case "targets":
				p.Targets = d.targets(f.value)
			case "tools":
				p.Tools = d.tools(f.value)
			case "mcp_servers":
				p.MCPServers = d.mcpServers(f.value)
			case "judge":
				p.Judge = d.judge(f.value)
			case "simulator":
				p.Simulator = d.str(f.value, "simulator")
				if !strings.Contains(p.Simulator, ":") {
					d.fail(f.value, "simulator must be provider:model, such as openai:gpt-4o-mini")
				}
			case "system_prompt":
				sp := ""
				if rv := resolve(f.value); rv != nil && !isNull(rv) {
					sp = d.str(rv, "system_prompt")
				}
				p.SystemPrompt = &sp
			case "defaults":
				d.projectDefaults(f.value, p)
			case "store":
				p.Store = d.str(f.value, "store")
				if p.Store == "" && !isNull(f.value) {
					d.fail(f.value, "store must be a postgres:// URL or a SQLite file's path")
				}
				if literalPassword(f.value.Value) {
					d.warn(f.value, "store: the URL holds a password, and the project file is committed: write it as ${PGPASSWORD}, or leave it out and set PGPASSWORD")
				}
			}
		}
	}
	if opt.NoExec {
		d.refuseTargets(p.Targets)
		d.refuseMCP(p.MCPServers)
	}
	if p.Defaults.Target != "" && !strings.Contains(p.Defaults.Target, ":") {
		found := false
		for _, t := range p.Targets {
			found = found || t.Name == p.Defaults.Target
		}
		if !found && len(p.Targets) > 0 {
			d.errs = append(d.errs, &agenteval.PosError{File: path, Line: 1, Col: 1, Msg: "defaults.target " + p.Defaults.Target + " is not one of the project's targets"})
		}
	}
	sortPos(d.warns)
	if opt.Strict {
		for _, w := range d.warns {
			d.errs = append(d.errs, w)
		}
	} else {
		p.Warnings = d.warns
	}
	if len(d.errs) > 0 {
		sortErrors(d.errs)
		return p, errors.Join(d.errs...)
	}
	return p, nil
}

func (d *decoder) projectDefaults(n *yaml.Node, p *ProjectFile) {
	for _, f := range d.fields(n, "defaults", []string{"target", "threshold", "jobs", "trials"}) {
		switch f.key {
		case "target":
			p.Defaults.Target = d.str(f.value, "defaults.target")
		case "threshold":
			p.Defaults.Threshold = d.threshold(f.value)
		case "jobs":
			if v, ok := d.integer(f.value, "defaults.jobs"); ok {
				if v < 1 {
					d.fail(f.value, "defaults.jobs must be 1 or more")
				}
				p.Defaults.Jobs = v
			}
		case "trials":
			if v, ok := d.integer(f.value, "defaults.trials"); ok {
				checkTrials(d, f.value, "defaults.trials", v)
				p.Defaults.Trials = v
			}
		}
	}
}

// literalPassword reports whether a store URL as written holds a password
// itself, rather than through an environment variable.
func literalPassword(raw string) bool {
	_, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return false
	}
	userinfo, _, ok := strings.Cut(rest, "@")
	if !ok || strings.Contains(userinfo, "/") {
		return false
	}
	_, pw, ok := strings.Cut(userinfo, ":")
	return ok && pw != "" && !strings.HasPrefix(pw, "${")
}
