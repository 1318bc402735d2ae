package session

import (
	"io"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/project"
	"github.com/agenteval/agenteval/suite"
	"github.com/agenteval/agenteval/target"
)

// Session is a loaded run: its options and the suites the eval files hold,
// each with its project file applied.
type Session struct {
	opt     Options
	Suites  []*suite.Suite
	configs map[*suite.Suite]*project.Config
	// closers are the opened targets that hold resources for the whole
	// run (MCP servers), closed when the run ends.
	closers []io.Closer
}

// Options are the options the session was loaded with.
func (s *Session) Options() *Options { return &s.opt }

// Config is the project file applied to a suite, or nil.
func (s *Session) Config(st *suite.Suite) *project.Config { return s.configs[st] }

// Load finds the eval files paths name (folders and globs expanded), parses
// them, and applies to each the project file that governs it, read once
// per project file. Every file is read before it returns, and a
// *LoadError lists every one that could not be; other problems are
// *ConfigError.
func Load(opt Options, paths ...string) (*Session, error) {
	if opt.Threshold != nil && !(*opt.Threshold >= 0 && *opt.Threshold <= 1) {
		return nil, configErr("--threshold %v is outside [0, 1]", *opt.Threshold)
	}
	if opt.Trials != 0 && (opt.Trials < 1 || opt.Trials > suite.MaxTrials) {
		return nil, configErr("--trials %d is outside 1..%d", opt.Trials, suite.MaxTrials)
	}
	if len(paths) == 0 {
		return nil, configErr("no eval file to run")
	}
	files, err := EvalFiles(paths)
	if err != nil {
		return nil, err
	}
	if opt.Root == "" && len(files) > 0 {
		opt.Root = RootOf(files[0])
	}
	if opt.Models.Root == "" {
		opt.Models.Root = opt.Root
	}
	// The reply cache is shared by every copy of the model settings made
	// below, so its counts cover the whole session.
	opt.Models.store()
	if _, err := opt.Models.PriceTable(); err != nil {
		return nil, err
	}
	s := &Session{opt: opt, configs: map[*suite.Suite]*project.Config{}}
	judgeAvailable := opt.JudgeModel != nil || opt.Models.JudgeSpec() != ""
	simulatorAvailable := opt.SimulatorModel != nil || opt.Models.Simulator != ""
	projects := projectFiles{explicit: opt.Config, noExec: opt.NoExec}
	var problems []string
	// A file read whole is parsed into a node tree several times its size,
	// which lives only until the tests are read out of it: collect garbage
	// eagerly meanwhile, so a large suite does not set the run's peak
	// memory. A streamed file's garbage is a chunk of it at a time, and
	// collecting that as eagerly costs more time than it saves memory (a
	// third of the load of 100,000 conversations).
	gc := debug.SetGCPercent(20)
	eager := true
	for _, p := range files {
		if msg := notTests(p); msg != "" {
			problems = append(problems, msg)
			continue
		}
		cfg, err := projects.forFile(p)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		lo := ProjectOptions(cfg, judgeAvailable, simulatorAvailable)
		lo.NoExec, lo.MaxFileBytes, lo.Strict = opt.NoExec, opt.MaxFileBytes, opt.Strict
		lo.Graders = opt.Graders
		lo.Stream = opt.Stream && opt.Select == nil
		if ext := strings.ToLower(filepath.Ext(p)); lo.Stream && eager == (ext == ".yaml" || ext == ".yml") {
			// YAML is streamed when its tests split, the common shape.
			eager = !eager
			if eager {
				debug.SetGCPercent(20)
			} else {
				debug.SetGCPercent(gc)
			}
		}
		st, err := suite.Load(p, lo)
		if st != nil && !opt.Quiet {
			for _, w := range st.Warnings {
				opt.logf("%s\n", Warning(w))
			}
		}
		if st != nil {
			// Said even under Quiet: the same file gives other results
			// here than in AgentV, and nobody must learn that from them.
			for _, d := range st.Differences {
				opt.logf("%s\n", d)
			}
		}
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		if st.Schema == suite.SchemaAgentVJSONL {
			opt.logf("%s: read as AgentV tests (JSONL), %d tests\n", p, st.NumTests())
		}
		if !HasTag(st, opt.Tags) {
			continue
		}
		project.Apply(cfg, st)
		if cfg != nil && cfg.Defaults.Trials > 0 && st.Streamed() {
			// project.Apply gives the tests in memory the project's
			// trials; a streamed suite's get them as they are read.
			trials := cfg.Defaults.Trials
			st.AmendTests(func(t *agenteval.Test) {
				if t.Trials == 0 {
					t.Trials = trials
				}
			})
		}
		s.configs[st] = cfg
		// Every target's credentials are secrets, whichever target runs:
		// a command target inherits the whole environment.
		target.NoteSecrets(st)
		s.Suites = append(s.Suites, st)
	}
	debug.SetGCPercent(gc)
	// And hand the pages the trees took back to the system now, rather
	// than as the scavenger gets to them while the run grows its own heap:
	// the two would add up to the run's peak.
	debug.FreeOSMemory()
	if len(problems) > 0 {
		return nil, &LoadError{Problems: problems}
	}
	if len(s.Suites) == 0 && len(opt.Tags) > 0 {
		return nil, configErr("no eval file has the tag %s", strings.Join(opt.Tags, " or "))
	}
	return s, nil
}

// RootOf is the root of the project a file or folder belongs to: the
// folder of the nearest agenteval.yaml at or above it, else the root of
// its git work tree, else the working directory's project.
func RootOf(path string) string {
	if path == "" || path == "-" {
		return project.Here()
	}
	root, err := project.Root(path)
	if err != nil {
		return project.Here()
	}
	return root
}

// projectFiles reads each project file once, however many eval files it
// governs.
type projectFiles struct {
	explicit string
	noExec   bool
	read     map[string]projectRead
}

type projectRead struct {
	cfg *project.Config
	err error
}

// forFile is the project file for an eval file: the explicit one, else the
// nearest agenteval.yaml at or above it. Under NoExec its command targets
// are refused, as an eval file's are.
func (p *projectFiles) forFile(file string) (*project.Config, error) {
	path := p.explicit
	if path == "" {
		var err error
		if path, err = project.Find(file); err != nil {
			return nil, err
		}
		if path == "" {
			return nil, nil
		}
	}
	if r, ok := p.read[path]; ok {
		return r.cfg, r.err
	}
	cfg, err := project.For(file, path, suite.Options{NoExec: p.noExec})
	if p.read == nil {
		p.read = map[string]projectRead{}
	}
	p.read[path] = projectRead{cfg, err}
	return cfg, err
}

// ProjectOptions are the loading options of an eval file under a project
// file: its judge and simulator count as configured.
func ProjectOptions(cfg *project.Config, judge, simulator bool) suite.Options {
	if cfg != nil {
		judge = judge || cfg.Judge != nil
		simulator = simulator || cfg.Simulator != ""
	}
	return suite.Options{JudgeAvailable: judge, SimulatorAvailable: simulator}
}

// Warning is an eval file's warning as the CLI prints it.
func Warning(pe *agenteval.PosError) string {
	w := *pe
	w.Msg = "warning: " + w.Msg
	return w.Error()
}

// SuiteName is the name results give a suite's tests.
func SuiteName(s *suite.Suite) string { return s.TestSuiteName() }
