package suite

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/agenteval/agenteval"
	"go.yaml.in/yaml/v4"
)

// AgentV's project configuration is .agentv/config.yaml, with
// config.local.yaml over it (mappings merge, the local file's values
// win). `agentv eval` looks for the pair in the working directory and each
// folder above it up to the repository root, else in $AGENTV_HOME
// (~/.agentv); agenteval looks in the same places, so that a run started
// from the same folder reads the same settings. Of it, agenteval applies:
//
//   - providers: the provider catalog (v5), inline or file://, which
//     comes before a targets file found from the eval file;
//   - defaults.provider: the target of an eval file that names none;
//   - defaults.grader: the judge, when the suite names none and its
//     target has no grader_target;
//   - execution.max_concurrency: tests at once, over the eval file's.
//
// Settings that would change what runs and are not applied (env_path,
// env_from, hooks) are recorded as differences; the rest (eval_patterns,
// results, tags, required_version, ...) tune AgentV's own tooling.
// A file AgentV refuses (targets: or graders: in it, execution.workers,
// defaults.target) is ignored whole, as AgentV ignores it.

// setting is one value of AgentV's config, where it is written and the
// decoder of its file, so that what is said about it names that file.
type setting[T any] struct {
	value T
	n     *yaml.Node
	d     *decoder
}

// agentvConfig is what AgentV's config gives an eval file's run.
type agentvConfig struct {
	provider, grader setting[string]
	maxConcurrency   setting[int]
	catalog          *targetCatalog
}

// agentvConfigFiles are the config.yaml and config.local.yaml AgentV's eval
// command reads (either may be missing), or "", "" when there are none.
func agentvConfigFiles(env func(string) (string, bool)) (string, string) {
	pair := func(dir string) (string, string, bool) {
		base, local := filepath.Join(dir, "config.yaml"), filepath.Join(dir, "config.local.yaml")
		return base, local, fileExists(base) || fileExists(local)
	}
	if wd, err := os.Getwd(); err == nil {
		for _, dir := range repoChain(wd) {
			if base, local, ok := pair(filepath.Join(dir, ".agentv")); ok {
				return base, local
			}
		}
	}
	home, ok := env("AGENTV_HOME")
	if !ok || home == "" || home == "undefined" {
		h, ok := env("HOME")
		if !ok || h == "" {
			return "", ""
		}
		home = filepath.Join(h, ".agentv")
	}
	if base, local, ok := pair(home); ok {
		return base, local
	}
	return "", ""
}

// repoChain is dir and each folder above it up to the repository root (the
// first with a .git); outside a repository, dir alone, as AgentV has it.
func repoChain(dir string) []string {
	var out []string
	for cur := dir; ; {
		out = append(out, cur)
		if _, err := os.Stat(filepath.Join(cur, ".git")); err == nil {
			return out
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return out[:1]
		}
		cur = parent
	}
}

// agentvConfig reads AgentV's config for the eval file's run.
func (d *decoder) agentvConfig() agentvConfig {
	var cfg agentvConfig
	base, local := agentvConfigFiles(d.env)
	for _, p := range []string{base, local} {
		if p == "" || !fileExists(p) {
			continue
		}
		if !d.readAgentVConfig(p, &cfg) {
			return agentvConfig{}
		}
	}
	return cfg
}

// readAgentVConfig reads one config file into cfg, over what cfg holds. It
// returns false for a file AgentV refuses, which makes AgentV ignore its
// whole config; a warning says so.
func (d *decoder) readAgentVConfig(path string, cfg *agentvConfig) bool {
	cd := d.sub(path)
	cd.lenient = true
	root := cd.configFile(path)
	if root == nil || root.Kind != yaml.MappingNode {
		if root != nil {
			cd.warn(root, "AgentV's config must be a mapping of keys to values; AgentV ignores it, and so does agenteval")
		}
		return true
	}
	refuse := func(n *yaml.Node, why string) bool {
		cd.warn(n, "AgentV ignores this whole config file: %s; agenteval ignores it too", why)
		return false
	}
	for _, f := range cd.fields(root, "AgentV's config", nil) {
		fd, v := cd.configRef(f)
		if v == nil {
			continue
		}
		switch f.key {
		case "targets":
			return refuse(f.keyN, "its targets: was replaced by providers:")
		case "graders":
			return refuse(f.keyN, "its graders: was removed (a grader is one of the providers, chosen by defaults.grader)")
		case "providers":
			if rv := resolve(v); rv != nil && rv.Kind == yaml.SequenceNode {
				cfg.catalog = &targetCatalog{defs: targetEntries(rv), d: fd}
			} else if rv != nil && rv.Kind == yaml.MappingNode {
				cfg.catalog = &targetCatalog{defs: targetEntries(resolve(mappingValue(rv, "providers"))), d: fd}
			}
		case "defaults":
			for _, g := range fd.fields(v, "defaults", nil) {
				switch g.key {
				case "target":
					return refuse(g.keyN, "defaults.target was renamed defaults.provider")
				case "provider":
					cfg.provider = setting[string]{fd.str(g.value, "defaults.provider"), g.value, fd}
				case "grader":
					cfg.grader = setting[string]{fd.str(g.value, "defaults.grader"), g.value, fd}
				}
			}
		case "execution":
			for _, g := range fd.fields(v, "execution", nil) {
				switch g.key {
				case "workers":
					return refuse(g.keyN, "execution.workers was renamed execution.max_concurrency")
				case "max_concurrency":
					if n, ok := fd.integer(g.value, "execution.max_concurrency"); ok && n >= 1 && n <= 50 {
						cfg.maxConcurrency = setting[int]{n, g.value, fd}
					} else if ok {
						fd.warn(g.value, "execution.max_concurrency must be 1 to 50; AgentV ignores it, and so does agenteval")
					}
				}
			}
		case "env_path", "env_from":
			fd.differ(f.keyN, f.key, "%s is not applied: AgentV sets environment variables from it before the run, agenteval does not; export them before running agenteval", f.key)
		case "hooks":
			fd.differ(f.keyN, f.key, "hooks are not run: AgentV runs before_session at its start and takes the variables it prints; agenteval runs no command of the config, so export them before running agenteval")
		}
	}
	return true
}

// configFile parses a config file. AgentV warns about a file it cannot
// read or parse and goes on without it: its problems are warnings here.
func (d *decoder) configFile(path string) *yaml.Node {
	data, err := os.ReadFile(path)
	if err != nil {
		d.warn(nil, "cannot read AgentV's config (%s); AgentV goes on without it, and so does agenteval", errText(err))
		return nil
	}
	pd := *d
	pd.problems = &problems{}
	root, ok := pd.parse(data, "YAML")
	for _, e := range pd.errs {
		if pe, isPos := e.(*agenteval.PosError); isPos {
			w := *pe
			w.Msg += "; AgentV goes on without this file, and so does agenteval"
			d.warns = append(d.warns, &w)
		}
	}
	if !ok || root == nil || isNull(root) {
		return nil
	}
	return root
}

// configRef is a config key's value, read from the file it names when it
// is a file:// reference (a path relative to the config file), and the
// decoder of the file the value is in.
func (d *decoder) configRef(f field) (*decoder, *yaml.Node) {
	rv := resolve(f.value)
	if rv == nil || rv.Kind != yaml.ScalarNode || !strings.HasPrefix(rv.Value, "file://") {
		return d, f.value
	}
	p := strings.TrimPrefix(d.str(rv, f.key), "file://")
	if !filepath.IsAbs(p) {
		p = filepath.Join(filepath.Dir(d.file), p)
	}
	if !fileExists(p) {
		d.warn(rv, "%s names %s, which is not there; AgentV stops here", f.key, p)
		return d, nil
	}
	rd := d.sub(p)
	rd.lenient = true
	return rd, rd.configFile(p)
}

// agentvJudge gives a suite with no judge of its own the judge AgentV would
// grade it with: its target's grader_target, else the config's
// defaults.grader, when that names a model target of the catalog. AgentV
// chooses per target and agenteval grades a suite with one judge, that of
// the target the suite runs by default; targets that name another are a
// difference. The judge's position is where it was chosen, so the run can
// say so.
func (d *decoder) agentvJudge(s *Suite, cfg agentvConfig, cat *targetCatalog, graders map[string]targetInfo) {
	if s.Judge != nil {
		return
	}
	runs := s.Matrix
	if len(runs) == 0 {
		runs = []string{s.DefaultTarget}
		if s.DefaultTarget == "" && len(s.Targets) > 0 {
			runs = []string{s.Targets[0].Name}
		}
	}
	var src targetInfo
	what := "grader_target"
	for _, r := range runs {
		info := graders[r]
		switch {
		case info.grader == "":
		case src.grader == "":
			src = info
		case info.grader != src.grader:
			info.d.differ(info.graderN, "grader_target", "the suite's targets name different graders (%s, %s): AgentV grades each target's tests with its own, agenteval grades the suite with one judge, %s; run the targets one at a time with --judge to grade each with its own", src.grader, info.grader, src.grader)
		}
	}
	if src.grader == "" && cfg.grader.value != "" {
		src, what = targetInfo{grader: cfg.grader.value, graderN: cfg.grader.n, d: cfg.grader.d}, "defaults.grader"
	}
	if src.grader == "" {
		return
	}
	if cat == nil {
		src.d.warn(src.graderN, "%s %s: there is no provider catalog to find it in; AgentV stops here (pass --judge provider:model)", what, src.grader)
		return
	}
	var chain []string
	spec, _, ok := cat.d.resolveTargetInfo(cat.defs, src.grader, &chain)
	if !ok {
		src.d.warn(src.graderN, "%s %s is not a target of %s; AgentV stops here (pass --judge provider:model)", what, src.grader, cat.d.file)
		return
	}
	if spec.Model == "" {
		why := spec.Unsupported
		if why == "" {
			why = "it is not a model"
		}
		src.d.differ(src.graderN, "grader", "%s %s does not grade here: %s; agenteval's judge is a model, so pass --judge provider:model", what, src.grader, why)
		return
	}
	s.Judge = &JudgeSpec{Model: spec.Model, Pos: src.d.pos(src.graderN), FromAgentV: true}
	if spec.BaseURL != "" || spec.APIKey != "" {
		src.d.differ(src.graderN, "grader_endpoint", "the judge is %s (%s %s), but not at its base_url or with its api_key: agenteval's judge uses the provider's own settings (for openai, OPENAI_BASE_URL and OPENAI_API_KEY); set those to the grader's, or pass --judge", spec.Model, what, src.grader)
	}
}

// testOptions reads a test's options (AgentV v5), its own or its
// default_test's. Of them agenteval applies default_test's rubric_prompt:
// the prompt of the test's llm-rubric graders that have none, as AgentV
// uses it. It returns what applies that prompt, to be called once the
// test's graders are read; every other option is a difference, said at
// the option, or at the test when it comes from default_test (whose file
// may be another).
func (d *decoder) testOptions(f field, t *agenteval.Test, c *testCtx) func() {
	nothing := func() {}
	var defaults []field
	if c != nil && c.s != nil {
		defaults = c.s.defaults
	}
	fromDefault := false
	for _, df := range defaults {
		fromDefault = fromDefault || df.keyN == f.keyN
	}
	// Where to say things: at the option; for default_test's, whose file
	// may not be the test's, at the test.
	at := func(n *yaml.Node) *yaml.Node { return n }
	if fromDefault {
		at = func(*yaml.Node) *yaml.Node { return &yaml.Node{Line: t.Pos.Line, Column: t.Pos.Col} }
	}
	where := "options"
	if fromDefault {
		where = "default_test.options"
	}
	var prompt *yaml.Node
	if !fromDefault {
		// A test's own options replace default_test's here, but AgentV
		// takes rubric_prompt from default_test all the same.
		for _, df := range defaults {
			if df.key == "options" {
				if rv := resolve(df.value); rv != nil && rv.Kind == yaml.MappingNode {
					prompt = mappingValue(rv, "rubric_prompt")
				}
			}
		}
	}
	rn := resolve(f.value)
	switch {
	case rn == nil || isNull(rn):
	case rn.Kind != yaml.MappingNode:
		d.warn(at(f.value), "%s must be a mapping; AgentV ignores it, and so does agenteval", where)
	default:
		for i := 0; i+1 < len(rn.Content); i += 2 {
			k, v := rn.Content[i], rn.Content[i+1]
			an := at(k)
			switch k.Value {
			case "rubric_prompt":
				if fromDefault {
					prompt = v
				} else {
					d.warn(an, "rubric_prompt on a test is ignored, by AgentV too: AgentV takes it from default_test.options only")
				}
			case "provider":
				d.differ(an, "options.provider", "%s.provider (the grader AgentV grades the test with) is not used: one judge grades the suite (judge:, --judge, grader_target or AgentV's defaults.grader)", where)
			default:
				d.differ(an, "options."+k.Value, "%s.%s is not applied by agenteval: the test runs as if it were not there", where, k.Value)
			}
		}
	}
	if prompt == nil || isNull(resolve(prompt)) {
		return nothing
	}
	return func() { d.useRubricPrompt(t, prompt) }
}

// useRubricPrompt makes prompt (default_test.options.rubric_prompt: text,
// a file's path, or {command}) the prompt of the test's llm-rubric graders
// that have none. A rubric list or plain-string criteria have no prompt of
// their own here (the rubrics grader's is fixed), while AgentV grades them
// with this one too: that is a difference, said at the grader.
func (d *decoder) useRubricPrompt(t *agenteval.Test, prompt *yaml.Node) {
	pd := d
	set := func(a *agenteval.AssertionSpec) bool { return false }
	rp := resolve(prompt)
	switch {
	case rp.Kind == yaml.ScalarNode:
		text := pd.str(rp, "rubric_prompt")
		set = func(a *agenteval.AssertionSpec) bool {
			a.Params["prompt"] = strings.TrimPrefix(text, "file://")
			return true
		}
	case rp.Kind == yaml.MappingNode && (mappingValue(rp, "command") != nil || mappingValue(rp, "script") != nil):
		cmd := mappingValue(rp, "command")
		if cmd == nil {
			cmd = mappingValue(rp, "script")
		}
		argv := pd.value(cmd)
		set = func(a *agenteval.AssertionSpec) bool {
			a.Params["prompt_command"] = argv
			return true
		}
	}
	apply := func(list []agenteval.AssertionSpec) {
		for i := range list {
			a := &list[i]
			switch {
			case a.Type == "llm_grader" && a.Params["rubric"] != nil && a.Params["prompt"] == nil && a.Params["prompt_command"] == nil:
				if !set(a) {
					d.sub(a.Pos.File).differ(&yaml.Node{Line: a.Pos.Line, Column: a.Pos.Col}, "rubric_prompt", "default_test.options.rubric_prompt is not used: agenteval takes a prompt as text, a file's path or {command: [...]}")
				}
			case a.Type == "rubrics" || a.Type == "" && a.Criterion != "":
				d.sub(a.Pos.File).differ(&yaml.Node{Line: a.Pos.Line, Column: a.Pos.Col}, "rubric_prompt", "default_test.options.rubric_prompt is not used for a rubric list or plain-string criteria: agenteval grades them with its rubric grader, whose prompt is fixed, and AgentV with this prompt; write the graders as type: llm-rubric with a text value to have it used")
			}
		}
	}
	apply(t.Assertions)
	for i := range t.Turns {
		apply(t.Turns[i].Assertions)
	}
}
