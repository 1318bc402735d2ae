package suite

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/nunjucks"
	"go.yaml.in/yaml/v4"
)

// AgentV v5 writes suites in promptfoo-style keys: providers (the systems
// under test), prompts (Nunjucks templates rendered with each test's vars;
// vars.input is the input), tests[].vars, assert and default_test. They are read
// into the same tests as the v4 keys: one internal model, two spellings
// (validate --explain shows how each test was read).

// providers reads a suite's providers: names of targets defined in
// AgentV's providers file, provider:model specs, or {id, label, ...}
// objects. Each becomes a target; together they are the run's matrix.
func (d *decoder) providers(n *yaml.Node) ([]TargetSpec, []string) {
	items := oneOrMany(n)
	var specs []TargetSpec
	var names []string
	for _, item := range items {
		it := resolve(item)
		if it != nil && it.Kind == yaml.ScalarNode {
			names = append(names, d.str(it, "providers"))
			continue
		}
		label := scalarField(it, "label")
		if label == "" {
			label = scalarField(it, "id")
		}
		if label == "" {
			d.fail(item, "a provider needs id (the backend, such as openai:gpt-4o-mini) or label")
			continue
		}
		var chain []string
		spec, _ := d.resolveTarget(map[string]*yaml.Node{label: it}, label, &chain)
		spec.Name = label
		specs = append(specs, spec)
		names = append(names, label)
	}
	return specs, names
}

// providerRefs reads a test's provider or providers: the targets it runs
// against.
func (d *decoder) providerRefs(n *yaml.Node) []string {
	items := oneOrMany(n)
	var out []string
	for _, item := range items {
		it := resolve(item)
		if it != nil && it.Kind == yaml.ScalarNode {
			out = append(out, d.str(it, "provider"))
		} else if l := scalarField(it, "label"); l != "" {
			out = append(out, l)
		} else if id := scalarField(it, "id"); id != "" {
			out = append(out, id)
		}
	}
	return out
}

// prompt is one entry of a suite's prompts.
type prompt struct {
	label string
	node  *yaml.Node
	d     *decoder
}

// prompts reads a suite's prompts: strings, chat arrays, {id, label,
// prompt|raw} objects, or file:// references.
func (d *decoder) prompts(n *yaml.Node) []prompt {
	items := oneOrMany(n)
	var out []prompt
	for i, item := range items {
		p := prompt{label: fmt.Sprintf("prompt-%d", i+1), node: item, d: d}
		it := resolve(item)
		if it != nil && it.Kind == yaml.MappingNode && !isMessage(it) {
			for _, f := range d.fields(it, "a prompt", []string{"id", "label", "prompt", "raw", "content", "config", "file"}) {
				switch f.key {
				case "id":
					if p.label == fmt.Sprintf("prompt-%d", i+1) {
						p.label = d.str(f.value, "id")
					}
				case "label":
					p.label = d.str(f.value, "label")
				case "prompt", "raw", "content":
					p.node = f.value
				case "file":
					fn := *resolve(f.value)
					fn.Value = "file://" + strings.TrimPrefix(fn.Value, "file://")
					p.node = &fn
				}
			}
		}
		if pn := resolve(p.node); pn != nil && pn.Kind == yaml.ScalarNode && strings.HasPrefix(pn.Value, "file://") {
			p.node, p.d = d.promptFile(pn)
			if p.node == nil {
				continue
			}
		}
		out = append(out, p)
	}
	return out
}

// promptFile reads a prompt from a file: YAML or JSON holds a chat array;
// any other file is a text template.
func (d *decoder) promptFile(n *yaml.Node) (*yaml.Node, *decoder) {
	path := strings.TrimPrefix(n.Value, "file://")
	if strings.ContainsAny(path, ":") && !filepath.IsAbs(path) {
		d.warn(n, "prompt %s is a function in a JavaScript or Python file, which agenteval does not run; it is left out", n.Value)
		return nil, d
	}
	p, tried := d.findFile(path)
	if p == "" {
		d.fail(n, "prompt file %s is not there (looked in %s)", path, strings.Join(tried, ", "))
		return nil, d
	}
	b, err := os.ReadFile(p)
	if err != nil {
		d.fail(n, "read prompt file %s: %v", path, err)
		return nil, d
	}
	switch strings.ToLower(filepath.Ext(p)) {
	case ".yaml", ".yml", ".json":
		fd := d.sub(p)
		root, ok := fd.parse(b, "YAML")
		if !ok {
			return nil, d
		}
		return root, fd
	}
	// A text file is the template itself: its own decoder places what is
	// found in it at the file's line and column.
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: string(b), Line: 1, Column: 1}, d.sub(p)
}

// renderPrompt renders a prompt with a test's variables, as AgentV v5
// renders it (a Nunjucks template, nunjucks.go), and reads it as the
// test's input. A variable that is not set renders empty, as in AgentV,
// with a warning.
func (d *decoder) renderPrompt(p prompt, c *testCtx) agenteval.Conversation {
	sub := *c.vars
	notSet := func(at *yaml.Node, name string) {
		p.d.warn(at, "the prompt uses {{ %s }}, which test %q does not set in vars; it is empty", name, c.id)
	}
	rendered, ok := p.d.renderPromptNode(p.node, &sub, sub.templateContext(), notSet)
	if !ok {
		// The error is reported; an empty message keeps "no input" from
		// being said about the same template.
		return agenteval.Conversation{{Role: agenteval.RoleUser}}
	}
	// AgentV v5 renders the result once more: a variable's value may use
	// other variables. agenteval fills in those that are set, and keeps
	// the rest of a value's text as it is written (checkAsV5 says where
	// that differs).
	sub.promptResult, sub.testID = true, c.id
	// The environment was read before the template rendered; what the
	// variables bring in is their text, not references to read again.
	ld := *p.d
	ld.literal = true
	return ld.messages(sub.apply(rendered), "prompt")
}

// renderPromptNode renders each string of a prompt (a text, or a chat
// list's contents) as a template; a string that is one {{ variable }}
// takes the variable's value, a list of messages say, as AgentV v5 has
// it. ok is false when a template has an error, reported at its place.
func (d *decoder) renderPromptNode(n *yaml.Node, sub *substitution, ctx *nunjucks.Object, notSet func(*yaml.Node, string)) (*yaml.Node, bool) {
	n = resolve(n)
	if n == nil {
		return nil, true
	}
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag != "!!str" && n.Tag != "" {
			return n, true
		}
		c := *n
		c.Value = d.interpolate(n, n.Value)
		if !templateSyntax(c.Value) {
			return &c, true
		}
		if m := wholeSimpleRef.FindStringSubmatch(c.Value); m != nil {
			if v, ok := sub.wholeValue(m[1]); ok {
				if w := sub.writtenVar(m[1]); w != nil {
					return w, true
				}
				return valueNode(v, n), true
			}
		}
		out, ok := d.renderTemplate(n, c.Value, ctx, notSet)
		c.Value = out
		return &c, ok
	case yaml.MappingNode, yaml.SequenceNode:
		c := *n
		c.Content = make([]*yaml.Node, len(n.Content))
		ok := true
		for i, k := range n.Content {
			if n.Kind == yaml.MappingNode && i%2 == 0 {
				c.Content[i] = k
				continue
			}
			var itemOK bool
			c.Content[i], itemOK = d.renderPromptNode(k, sub, ctx, notSet)
			ok = ok && itemOK
		}
		return &c, ok
	}
	return n, true
}

// evaluateOptions reads v5's evaluate_options: repeat (trials) and
// max_concurrency.
func (d *decoder) evaluateOptions(n *yaml.Node, s *Suite, sc *suiteCtx) {
	for _, f := range d.fields(n, "evaluate_options", nil) {
		switch f.key {
		case "repeat":
			if rn := resolve(f.value); rn != nil && rn.Kind == yaml.MappingNode {
				// An older form: {count, strategy, early_exit}.
				var t agenteval.Test
				for _, rf := range d.fields(rn, "evaluate_options.repeat", []string{"count", "strategy", "early_exit"}) {
					switch rf.key {
					case "count":
						if v, ok := d.integer(rf.value, "repeat.count"); ok {
							checkTrials(d, rf.value, "repeat.count", v)
							t.Trials = v
						}
					case "strategy":
						switch st := d.str(rf.value, "repeat.strategy"); st {
						case "pass_any", "pass_at_k", "best":
							t.TrialStrategy = agenteval.ReducePassAtK
						case "pass_all", "min":
							t.TrialStrategy = agenteval.ReduceMin
						case "mean", "":
							t.TrialStrategy = agenteval.ReduceMean
						case "confidence_interval":
							t.TrialStrategy = agenteval.ReduceConfidenceInterval
						default:
							d.warn(rf.value, "repeat.strategy %q is not one agenteval knows (pass_any, pass_all, mean, confidence_interval); the mean is used", st)
						}
					case "early_exit":
						d.warn(rf.keyN, "repeat.early_exit is not used: every repetition runs")
					}
				}
				sc.trials, sc.strategy = t.Trials, t.TrialStrategy
				if sc.strategy == "" {
					sc.strategy = agenteval.ReduceMean
				}
				continue
			}
			if v, ok := d.integer(f.value, "evaluate_options.repeat"); ok {
				checkTrials(d, f.value, "evaluate_options.repeat", v)
				sc.trials, sc.strategy = v, agenteval.ReduceMean
			}
		case "max_concurrency":
			if v, ok := d.integer(f.value, "evaluate_options.max_concurrency"); ok && v >= 1 {
				s.Workers = v
			}
		case "budget_usd":
			d.warn(f.keyN, "evaluate_options.budget_usd is not enforced by agenteval: every test runs; the summary shows what the run cost")
		default:
			d.warn(f.keyN, "evaluate_options.%s is not used by agenteval and is ignored", f.key)
		}
	}
}

// scenarioItems expands v5's scenarios: each scenario's config rows cross
// its test rows; a row's vars are the config's under the test's.
func (d *decoder) scenarioItems(n *yaml.Node) []testItem {
	rn := resolve(n)
	if rn == nil || isNull(rn) {
		return nil
	}
	if rn.Kind != yaml.SequenceNode {
		d.fail(n, "scenarios must be a list of {config, tests}")
		return nil
	}
	var out []testItem
	for si, item := range rn.Content {
		sd := d
		it := resolve(item)
		if it != nil && it.Kind == yaml.ScalarNode {
			// A file of scenarios: its items are scenarios, not tests.
			for _, li := range d.loadCases(it, d.str(it, "scenarios")) {
				out = append(out, li.d.scenario(li.n, si)...)
			}
			continue
		}
		out = append(out, sd.scenario(it, si)...)
	}
	return out
}

func (d *decoder) scenario(n *yaml.Node, index int) []testItem {
	var configs, tests []*yaml.Node
	for _, f := range d.fields(n, "a scenario", []string{"description", "config", "tests"}) {
		switch f.key {
		case "config":
			if c := resolve(f.value); c != nil && c.Kind == yaml.SequenceNode {
				configs = c.Content
			}
		case "tests":
			if c := resolve(f.value); c != nil && c.Kind == yaml.SequenceNode {
				tests = c.Content
			}
		}
	}
	if len(configs) == 0 {
		configs = []*yaml.Node{{Kind: yaml.MappingNode}}
	}
	var out []testItem
	seen := map[string]bool{}
	for ci, cfg := range configs {
		rc := resolve(cfg)
		cfgID := scalarField(rc, "id")
		cfgVars := mappingField(rc, "vars")
		for ti, tn := range tests {
			t := resolve(tn)
			if t == nil || t.Kind != yaml.MappingNode {
				d.fail(tn, "a scenario test must be a mapping")
				continue
			}
			id := scenarioTestID(scalarField(t, "id"), cfgID, index, ci, ti, len(tests))
			if seen[id] {
				// AgentV gives a test's own id to its row under every
				// config; results here are keyed by id, so each row needs
				// its own.
				d.differ(tn, "scenario-duplicate-id", "scenario test %q runs under several configs, and AgentV gives each run the same id; agenteval adds __ and the config's id (or __config_N) to tell them apart", id)
				if cfgID != "" {
					id = id + "__" + cfgID
				} else {
					id = fmt.Sprintf("%s__config_%d", id, ci+1)
				}
			}
			seen[id] = true
			row := &yaml.Node{Kind: yaml.MappingNode, Line: t.Line, Column: t.Column}
			vars := &yaml.Node{Kind: yaml.MappingNode, Line: t.Line, Column: t.Column}
			if cfgVars != nil {
				vars.Content = append(vars.Content, cfgVars.Content...)
			}
			// The config's other keys apply where the test has none, and
			// its assertions come before the test's, as AgentV merges them.
			own := map[string]bool{}
			for i := 0; i+1 < len(t.Content); i += 2 {
				own[t.Content[i].Value] = true
			}
			var cfgAssert *yaml.Node
			if rc != nil && rc.Kind == yaml.MappingNode {
				for i := 0; i+1 < len(rc.Content); i += 2 {
					k := rc.Content[i].Value
					switch {
					case k == "id" || k == "vars" || k == "description":
					case k == "assert" || k == "assertions":
						cfgAssert = rc.Content[i+1]
					case !own[k]:
						row.Content = append(row.Content, rc.Content[i], rc.Content[i+1])
					}
				}
			}
			for i := 0; i+1 < len(t.Content); i += 2 {
				switch k := t.Content[i].Value; k {
				case "id":
				case "vars":
					if tv := resolve(t.Content[i+1]); tv != nil && tv.Kind == yaml.MappingNode {
						vars.Content = overrideKeys(vars.Content, tv.Content)
					}
				case "assert", "assertions":
					if cfgAssert != nil {
						row.Content = append(row.Content, t.Content[i], concatSeq(cfgAssert, t.Content[i+1]))
						cfgAssert = nil
						continue
					}
					row.Content = append(row.Content, t.Content[i], t.Content[i+1])
				default:
					row.Content = append(row.Content, t.Content[i], t.Content[i+1])
				}
			}
			if cfgAssert != nil {
				row.Content = append(row.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "assert"}, cfgAssert)
			}
			row.Content = append(row.Content,
				&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "id"}, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: id, Line: t.Line, Column: t.Column},
				&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "vars"}, vars)
			out = append(out, testItem{n: row, d: d})
		}
	}
	return out
}

func mappingField(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			if v := resolve(n.Content[i+1]); v != nil && v.Kind == yaml.MappingNode {
				return v
			}
		}
	}
	return nil
}

// overrideKeys sets the keys of over in a mapping's content, replacing
// those already there.
func overrideKeys(base, over []*yaml.Node) []*yaml.Node {
	out := append([]*yaml.Node(nil), base...)
	for i := 0; i+1 < len(over); i += 2 {
		replaced := false
		for j := 0; j+1 < len(out); j += 2 {
			if out[j].Value == over[i].Value {
				out[j+1] = over[i+1]
				replaced = true
			}
		}
		if !replaced {
			out = append(out, over[i], over[i+1])
		}
	}
	return out
}

// oneOrMany reads a key that holds one item or a list of them (promptfoo's
// providers, prompts and a test's provider): the items, or none for a
// missing or null value.
func oneOrMany(n *yaml.Node) []*yaml.Node {
	rn := resolve(n)
	if rn == nil || isNull(rn) {
		return nil
	}
	if rn.Kind == yaml.SequenceNode {
		return rn.Content
	}
	return []*yaml.Node{rn}
}

// scenarioTestID names a scenario's test under one config as AgentV v5
// does: the test's own id; else the config's id (with
// __scenario_test_N when the scenario has several tests); else
// scenario-S-C-T, all 1-based.
func scenarioTestID(testID, cfgID string, s, c, t, tests int) string {
	switch {
	case strings.TrimSpace(testID) != "":
		return testID
	case strings.TrimSpace(cfgID) != "" && tests > 1:
		return fmt.Sprintf("%s__scenario_test_%d", cfgID, t+1)
	case strings.TrimSpace(cfgID) != "":
		return cfgID
	}
	return fmt.Sprintf("scenario-%d-%d-%d", s+1, c+1, t+1)
}

// concatSeq is two assertion lists as one, a's first; a list that is not
// a sequence is taken as one item.
func concatSeq(a, b *yaml.Node) *yaml.Node {
	items := func(n *yaml.Node) []*yaml.Node {
		if r := resolve(n); r != nil && r.Kind == yaml.SequenceNode {
			return r.Content
		}
		return []*yaml.Node{n}
	}
	out := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Line: b.Line, Column: b.Column}
	out.Content = append(append(out.Content, items(a)...), items(b)...)
	return out
}
