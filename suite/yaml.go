package suite

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/agenteval/agenteval"
	"go.yaml.in/yaml/v4"
)

// suiteKeys are the top-level keys of an eval file: ours, AgentV v4's and
// AgentV v5's. Any other key is a warning and is ignored, as in AgentV.
var suiteKeys = []string{
	"name", "description", "input", "tests", "execution", "threshold", "targets", "judge", "tools", "mcp_servers", "metadata", "vars",
	// AgentV v4.
	"$schema", "suite", "category", "version", "author", "tags", "license", "requires", "input_files",
	"target", "assertions", "evaluators", "evaluator", "preprocessors", "workspace", "governance", "eval_cases", "evalcases",
	// AgentV v5 (promptfoo-style).
	"assert", "prompts", "providers", "default_test", "defaultTest", "evaluate_options", "timeout_seconds",
	"environment", "env", "extensions", "scenarios", "nunjucks_filters",
}

// What an eval file in AgentV's formats is read as (Suite.Schema).
const (
	SchemaAgentV5     = "AgentV v5 YAML (promptfoo-style keys)"
	SchemaAgentVJSONL = "AgentV JSONL tests"
)

// promptfooKeys mark a file written in AgentV v5's promptfoo-style keys.
var promptfooKeys = []string{"prompts", "providers", "default_test", "defaultTest", "evaluate_options", "assert", "scenarios", "environment", "extensions"}

// suiteCtx is what an eval file gives each of its tests.
type suiteCtx struct {
	d          *decoder
	input      *yaml.Node
	inputFiles *yaml.Node
	// asserts are the suite-level assertion lists (assertions, assert),
	// appended to every test's unless it sets execution.skip_defaults.
	asserts  []*yaml.Node
	metadata map[string]any
	// skip says why every test of the file cannot run here.
	skip []string
	// prompts (v5) make a test's input from its vars; prompt is the one
	// the test being read uses.
	prompts []prompt
	prompt  int
	// defaults are default_test's keys (v5) and the suite's vars.
	defaults []field
	trials   int
	strategy agenteval.Reduction
	// trialsRunAll and trialCost are execution.trials' run_all and
	// cost_limit_usd.
	trialsRunAll bool
	trialCost    float64
	// promptfoo is set for a file in AgentV v5's keys: its assertions
	// take test variables too, and a test may leave out its id.
	promptfoo bool
}

func (d *decoder) yamlSuite(data []byte) *Suite {
	lang := "YAML"
	if strings.EqualFold(filepath.Ext(d.file), ".json") {
		lang = "JSON"
	}
	if chunked && lang == "YAML" {
		if head, line, chunks, ok := splitTests(data); ok {
			// A trial on problems of its own: if the split turns out
			// wrong, what it found is dropped and the file is read whole.
			try := *d
			try.problems = &problems{}
			try.split = &splitTestsInfo{line: line, chunks: chunks}
			if root, ok := try.parse(head, lang); ok && root != nil {
				if s := try.suiteFrom(root, nil, false); !try.splitFailed {
					d.problems, d.readInChunks = try.problems, true
					return s
				}
			}
		}
	}
	root, ok := d.parse(data, lang)
	if !ok {
		return nil
	}
	if root == nil || isNull(root) {
		d.errs = append(d.errs, &agenteval.PosError{File: d.file, Line: 1, Col: 1, Msg: "the eval file is empty; it needs at least tests:"})
		return nil
	}
	return d.suiteFrom(root, nil, false)
}

// suiteFrom reads a suite's top-level keys from root (an eval file, or a
// JSONL file's sidecar, which hd reads), then its tests: from its tests
// key, or the given items (a JSONL file's lines).
func (d *decoder) suiteFrom(root *yaml.Node, lines []testItem, jsonl bool) *Suite {
	s := &Suite{File: d.file, Schema: SchemaYAML}
	if jsonl {
		s.Schema = SchemaAgentVJSONL
	}
	if root == nil {
		root = &yaml.Node{Kind: yaml.MappingNode, Line: 1, Column: 1}
	}
	sc := &suiteCtx{d: d}
	if root.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(root.Content); i += 2 {
			if contains(promptfooKeys, root.Content[i].Value) {
				sc.promptfoo = true
				if !jsonl {
					s.Schema = SchemaAgentV5
				}
			}
		}
	}
	var testsNode, scenarios *yaml.Node
	var execNode *yaml.Node
	for _, f := range d.fields(root, "the eval file", suiteKeys) {
		switch f.key {
		case "name":
			s.Name = d.str(f.value, "name")
		case "suite":
			if s.Name == "" {
				s.Name = d.str(f.value, "suite")
			}
		case "description":
			s.Description = d.str(f.value, "description")
		case "version":
			s.Version = d.str(f.value, "version")
		case "tags":
			s.Tags = d.tags(f.value)
		case "input":
			sc.input = f.value
		case "input_files":
			sc.inputFiles = f.value
		case "tests", "eval_cases", "evalcases":
			if f.key != "tests" {
				d.warn(f.keyN, "%s is AgentV's old name for tests; it is read as tests", f.key)
			}
			testsNode = f.value
		case "execution":
			execNode = f.value
		case "threshold":
			s.Threshold = d.threshold(f.value)
		case "targets":
			if rn := resolve(f.value); rn != nil && rn.Kind == yaml.ScalarNode {
				// A reference to a targets file (AgentV's config graph).
				s.Targets = append(s.Targets, d.targetsFrom(rn)...)
				continue
			}
			s.Targets = append(s.Targets, d.targets(f.value)...)
		case "providers":
			specs, names := d.providers(f.value)
			s.Targets = append(s.Targets, specs...)
			s.Matrix = append(s.Matrix, names...)
		case "target":
			if rn := resolve(f.value); rn != nil && rn.Kind == yaml.MappingNode {
				// An inline target: {name, extends or use_target, hooks}.
				name := scalarField(rn, "name")
				use := scalarField(rn, "extends")
				if use == "" {
					use = scalarField(rn, "use_target")
				}
				use = d.interpolate(rn, use)
				if mappingValue(rn, "hooks") != nil {
					d.warn(rn, "target hooks set up a coding agent's workspace; agenteval does not run them")
				}
				if name == "" {
					name = use
				}
				if use != "" && use != name {
					s.Targets = append(s.Targets, TargetSpec{Name: name, alias: use, Pos: d.pos(rn)})
				}
				s.DefaultTarget = name
				continue
			}
			s.DefaultTarget = d.str(f.value, "target")
		case "judge":
			s.Judge = d.judge(f.value)
		case "tools":
			s.Tools = d.tools(f.value)
		case "mcp_servers":
			s.MCPServers = d.mcpServers(f.value)
		case "metadata", "governance":
			m, ok := d.value(f.value).(map[string]any)
			if !ok {
				if !isNull(f.value) {
					d.warn(f.value, "%s must be a mapping; it is ignored", f.key)
				}
				continue
			}
			if f.key == "governance" {
				m = map[string]any{"governance": m}
			}
			sc.metadata = mergeMetadata(m, sc.metadata)
		case "vars":
			sc.defaults = append(sc.defaults, field{key: "vars", keyN: f.keyN, value: f.value})
		case "assertions", "assert", "evaluators":
			sc.asserts = append(sc.asserts, f.value)
		case "evaluator":
			d.warn(f.keyN, "evaluator is AgentV's old way to pick the default grader; it is ignored")
		case "preprocessors":
			d.preprocessors(f.value)
		case "workspace":
			if why := workspaceSkip(d, f.value); why != "" {
				sc.skip = append(sc.skip, why)
			}
		case "environment":
			if !isNull(f.value) {
				sc.skip = append(sc.skip, "environment (a coding-agent testbed: repositories, setup scripts, docker), which agenteval does not build")
			}
		case "extensions":
			if rn := resolve(f.value); rn != nil && !isNull(rn) && (rn.Kind != yaml.SequenceNode || len(rn.Content) > 0) {
				sc.skip = append(sc.skip, "extensions (JavaScript lifecycle hooks), which agenteval does not run")
			}
		case "prompts":
			sc.prompts = d.prompts(f.value)
		case "default_test", "defaultTest":
			dn, dd := f.value, d
			if rn := resolve(f.value); rn != nil && rn.Kind == yaml.ScalarNode {
				// A reference: file://default-test.yaml.
				items := d.loadCases(rn, d.str(rn, "default_test"))
				if len(items) != 1 {
					continue
				}
				dn, dd = items[0].n, items[0].d
			}
			sc.defaults = append(sc.defaults, dd.fields(dn, "default_test", testKeys)...)
		case "evaluate_options":
			d.evaluateOptions(f.value, s, sc)
		case "scenarios":
			scenarios = f.value
		case "timeout_seconds":
			d.warn(f.keyN, "timeout_seconds is not used by agenteval; targets have their own timeout (timeout:), and judge calls --timeout")
		case "env":
			d.warn(f.keyN, "env (provider environment overrides) is not used by agenteval; set the variables in the environment")
		case "nunjucks_filters":
			d.differ(f.keyN, "nunjucks_filters", "custom Nunjucks filters are JavaScript, which agenteval does not run; a template that uses one fails with \"unknown filter\"")
		case "$schema", "category", "author", "license", "requires":
			// Metadata for other tools.
		}
	}
	if execNode != nil {
		d.suiteExecution(execNode, s, sc)
	}
	// items are the tests' nodes, or where they are; the split's items
	// come first, a chunk of the file at a time, from chunks.
	items := lines
	var chunks []chunk
	chunked := 0
	switch {
	case d.split != nil:
		if !d.splitHolds(root, testsNode, d.split.line) {
			d.splitFailed = true
			return s
		}
		chunks = d.split.chunks
		for _, c := range chunks {
			chunked += c.count
		}
	case !jsonl:
		items = d.testItems(testsNode, root)
	}
	items = append(items, d.scenarioItems(scenarios)...)
	if testsNode == nil && scenarios == nil && !jsonl {
		d.fail(root, "the eval file has no tests:; add a list of tests, each with an id and an input")
		return s
	}
	if len(items)+chunked == 0 && testsNode != nil {
		if rn := resolve(testsNode); rn != nil && rn.Kind == yaml.SequenceNode {
			d.fail(rn, "tests is empty; add at least one test")
		}
	}
	name := s.Name
	if name == "" {
		name = defaultSuiteName(d.file)
	}
	// The node tree is several times the file's size (53 MB for a 4 MB
	// file of 10,000 conversations), so it is not kept beside the typed
	// suite: from here each test's nodes are held by items alone, and let
	// go once the test is read. (Aliases point at their anchors directly,
	// so a later test that uses an earlier one's anchor keeps just that.)
	if d.stream != nil && scenarios != nil {
		d.stream = nil // scenarios are not in the split's chunks
	}
	root, testsNode, scenarios, execNode = nil, nil, nil, nil
	emit := func(t *agenteval.Test) { s.Tests = append(s.Tests, *t) }
	if st := d.stream; st != nil {
		st.sc, st.name = sc, name
		s.stream = st
		d.check.judgeKnown = d.check.opt.JudgeAvailable || s.Judge != nil
		emit = func(t *agenteval.Test) {
			st.add(t)
			d.check.test(t)
			if d.check.opt.Visit != nil {
				d.check.opt.Visit(t)
			}
		}
	} else {
		s.Tests = make([]agenteval.Test, 0, (len(items)+chunked)*max(1, len(sc.prompts)))
	}
	i := 0
	for ci := range chunks {
		c := &chunks[ci]
		c.firstItem, c.firstTest = i, s.NumTests()
		for k := range c.count {
			n, ok := d.itemNode(testItem{d: d, chunk: c, index: k})
			if !ok {
				d.splitFailed = true
				return s
			}
			d.itemTests(n, i, sc, name, emit)
			i++
		}
		c.tests = s.NumTests() - c.firstTest
	}
	for j, it := range items {
		items[j] = testItem{}
		it.d.itemTests(it.n, i, sc, name, emit)
		i++
	}
	if s.stream != nil {
		s.stream.seal()
	}
	d.agentvTargets(s)
	d.dedupeWarnings()
	return s
}

// itemTests reads the tests of one item of tests: (one, or one for each
// of the suite's prompts) and gives each to emit.
func (d *decoder) itemTests(n *yaml.Node, i int, sc *suiteCtx, name string, emit func(*agenteval.Test)) {
	for pi := range max(1, len(sc.prompts)) {
		sc.prompt = pi
		t := d.test(n, i, sc)
		if t == nil {
			continue
		}
		if len(sc.prompts) > 1 {
			t.ID += "@" + sc.prompts[pi].label
		}
		t.Suite = name
		emit(t)
	}
}

// defaultSuiteName is the file's name without .eval.yaml, .yaml or .jsonl.
func defaultSuiteName(file string) string {
	base := filepath.Base(file)
	for _, ext := range []string{".eval.yaml", ".eval.yml", ".yaml", ".yml", ".jsonl", ".json"} {
		if strings.HasSuffix(strings.ToLower(base), ext) {
			return base[:len(base)-len(ext)]
		}
	}
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// tags reads tags: a list of names (v4), or a mapping (v5), whose entries
// become name=value.
func (d *decoder) tags(n *yaml.Node) []string {
	rn := resolve(n)
	if rn != nil && rn.Kind == yaml.MappingNode {
		var out []string
		for _, f := range d.fields(rn, "tags", nil) {
			out = append(out, f.key+"="+d.str(f.value, "tags."+f.key))
		}
		return out
	}
	return d.strList(n, "tags")
}

// withDefaults adds what default_test and the suite's vars give a test:
// their keys where the test has none; their vars and assertions before
// the test's own.
func (sc *suiteCtx) withDefaults(own []field) []field {
	if sc == nil || len(sc.defaults) == 0 {
		return own
	}
	has := map[string]bool{}
	for _, f := range own {
		has[f.key] = true
	}
	var out []field
	for _, f := range sc.defaults {
		switch f.key {
		case "vars", "assert", "assertions":
			out = append(out, f)
		default:
			if !has[f.key] {
				out = append(out, f)
			}
		}
	}
	return append(out, own...)
}

// inherit gives a test what its suite gives every test: the reasons it
// cannot run, its input from a prompt, the suite's input before its own,
// metadata, trials.
func (sc *suiteCtx) inherit(d *decoder, t *agenteval.Test, c *testCtx, skipDefaults bool, at map[string]*yaml.Node) {
	for _, why := range sc.skip {
		c.skipFor(why)
	}
	if len(sc.prompts) == 0 && len(t.Input) == 0 && t.User == nil && len(t.Turns) == 0 {
		// No prompts: vars.input is the input, as the prompt {{ input }}
		// would make it.
		if in, ok := t.Vars["input"]; ok {
			t.Input = sc.d.messages(valueNode(in, &yaml.Node{Line: t.Pos.Line, Column: t.Pos.Col}), "vars.input")
		}
	}
	if len(sc.prompts) > 0 {
		if len(t.Input) > 0 {
			if kn := at["input"]; kn != nil {
				d.warn(kn, "test %q has both input and the suite's prompts; its input is used", t.ID)
			}
		} else if _, hasInput := t.Vars["input"]; t.User == nil && t.Mode != agenteval.ModeConversation || hasInput {
			// A conversation's turns are its messages; a prompt opens it
			// only when the test gives vars.input.
			t.Input = sc.d.renderPrompt(sc.prompts[sc.prompt], c)
		}
	}
	if ref, ok := t.Vars["expected_output"]; ok && t.ExpectedOutput == "" && len(t.Turns) == 0 {
		// v5 keeps the reference answer in vars.
		t.ExpectedOutput = sc.d.text(c.vars.apply(valueNode(ref, &yaml.Node{Line: t.Pos.Line, Column: t.Pos.Col})), "vars.expected_output")
	}
	if sc.input != nil && !skipDefaults {
		in := sc.d.messages(c.vars.apply(sc.input), "input")
		t.Input = append(in, t.Input...)
	}
	if sc.metadata != nil {
		t.Metadata = mergeMetadata(t.Metadata, sc.metadata)
	}
	if t.Trials == 0 && sc.trials > 1 {
		t.Trials, t.TrialStrategy = sc.trials, sc.strategy
		t.TrialsRunAll, t.TrialCostLimit = sc.trialsRunAll, sc.trialCost
	}
}

// mergeMetadata merges suite metadata under a test's, as AgentV does:
// lists concatenate (suite first, without repeats), mappings merge, and
// the test's own values win.
func mergeMetadata(own, suite map[string]any) map[string]any {
	if suite == nil {
		return own
	}
	out := map[string]any{}
	for k, v := range own {
		out[k] = v
	}
	for k, sv := range suite {
		ov, ok := out[k]
		switch {
		case !ok:
			out[k] = sv
		case isList(sv) && isList(ov):
			seen := map[string]bool{}
			var merged []any
			for _, x := range append(append([]any(nil), sv.([]any)...), ov.([]any)...) {
				key := varString(x)
				if !seen[key] {
					seen[key] = true
					merged = append(merged, x)
				}
			}
			out[k] = merged
		case isMap(sv) && isMap(ov):
			out[k] = mergeMetadata(ov.(map[string]any), sv.(map[string]any))
		}
	}
	return out
}

func isList(v any) bool { _, ok := v.([]any); return ok }
func isMap(v any) bool  { _, ok := v.(map[string]any); return ok }

// dedupeWarnings drops repeated warnings: a test read once per prompt, a
// default read once per test.
func (d *decoder) dedupeWarnings() {
	seen := map[string]bool{}
	out := d.warns[:0]
	for _, w := range d.warns {
		if k := w.Error(); !seen[k] {
			seen[k] = true
			out = append(out, w)
		}
	}
	d.warns = out
}

// preprocessors checks AgentV's preprocessors (commands that turn a file
// the agent produced into text for graders). agenteval's targets answer
// with text, so there is nothing for them to convert: a warning says so.
func (d *decoder) preprocessors(n *yaml.Node) {
	rn := resolve(n)
	if rn == nil || isNull(rn) {
		return
	}
	if rn.Kind != yaml.SequenceNode {
		d.fail(n, "preprocessors must be a list of {type, command}")
		return
	}
	for _, item := range rn.Content {
		var typ string
		var cmd []string
		for _, f := range d.fields(item, "a preprocessor", []string{"type", "command"}) {
			switch f.key {
			case "type":
				typ = d.str(f.value, "type")
			case "command":
				cmd = d.strList(f.value, "command")
			}
		}
		if typ == "" || len(cmd) == 0 {
			d.fail(item, "a preprocessor needs type (a file type such as xlsx) and command")
		}
	}
	d.warn(n, "preprocessors convert files an agent returns into text for graders; agenteval's targets reply with text, so they never run")
}

// workspaceSkip says why a test with this AgentV workspace cannot run
// here, or "" for a workspace that asks for nothing.
func workspaceSkip(d *decoder, n *yaml.Node) string {
	rn := resolve(n)
	if rn == nil || isNull(rn) {
		return ""
	}
	if rn.Kind == yaml.ScalarNode {
		return fmt.Sprintf("workspace (a coding-agent workspace file, %s), which agenteval does not build", d.str(rn, "workspace"))
	}
	var parts []string
	for _, f := range d.fields(rn, "workspace", nil) {
		switch f.key {
		case "repos", "hooks", "docker", "template", "path", "mode", "isolation", "env", "scope":
			parts = append(parts, f.key)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "workspace (" + strings.Join(parts, ", ") + ": a coding-agent workspace), which agenteval does not build"
}
