package suite

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/grade"
	"github.com/agenteval/agenteval/internal/suggest"
	"go.yaml.in/yaml/v4"
)

// Assertions, as AgentV v4 (assertions) and v5 (assert) write them, read
// into our graders. A plain string is a rubric criterion. A mapping has a
// type, AgentV's name or ours, and the settings that type takes; AgentV's
// names map onto ours:
//
//	code-grader, script                         -> script (its other keys are its config)
//	llm-grader, llm-rubric                      -> llm_grader
//	rubrics, rubric, g-eval                     -> rubrics
//	composite, assert-set                       -> composite
//	tool-trajectory, trajectory:tool-sequence,
//	trajectory:tool-args-match                  -> tool_calls
//	trajectory:tool-used                        -> tool_calls (minimums) or tool_call_count
//	field-accuracy, execution-metrics           -> field_accuracy, execution_metrics
//
// Graders that cannot run here (skill-trigger, custom TypeScript
// assertions, in-process JavaScript) make the test skip, with the reason.

// typeNames maps AgentV's and promptfoo's assertion types onto ours.
var typeNames = map[string]string{
	"code-grader": "script", "code_grader": "script", "code-judge": "script", "code_judge": "script",
	"script-grader": "script", "script_grader": "script",
	"llm-grader": "llm_grader", "llm-judge": "llm_grader", "llm_judge": "llm_grader", "llm-rubric": "llm_grader", "llm_rubric": "llm_grader",
	"rubric": "rubrics", "g-eval": "rubrics", "g_eval": "rubrics",
	"assert-set": "composite", "assert_set": "composite",
	"tool-trajectory": "tool_calls", "tool_trajectory": "tool_calls",
	"trajectory:tool-sequence": "tool_calls", "trajectory:tool-args-match": "tool_calls", "trajectory:tool-used": "tool_calls",
	"field-accuracy": "field_accuracy", "execution-metrics": "execution_metrics", "token-usage": "token_usage",
}

// unrunnable are assertion types agenteval cannot run, and why.
var unrunnable = map[string]string{
	"skill-trigger":              "a skill-trigger grader (it needs a coding agent's skill-use trace)",
	"skill-used":                 "a skill-used grader (it needs a coding agent's skill-use trace)",
	"similar":                    "a similar grader (it needs an embeddings provider)",
	"javascript":                 "a javascript assertion (code that runs inside AgentV)",
	"python":                     "a python assertion (code that runs inside AgentV)",
	"webhook":                    "a webhook assertion",
	"trajectory:step-count":      "a trajectory:step-count assertion (AgentV's trace steps)",
	"trajectory:goal-success":    "a trajectory:goal-success assertion",
	"agent-judge":                "an agent-judge grader (a coding agent grading a workspace)",
	"file-changes":               "a file-changes grader (it needs a coding-agent workspace)",
	"vitest-workspace-grader":    "a vitest workspace grader (it needs a coding-agent workspace)",
	"answer-relevance":           "a promptfoo answer-relevance assertion, which AgentV does not run either",
	"context-faithfulness":       "a promptfoo context-faithfulness assertion, which AgentV does not run either",
	"context-recall":             "a promptfoo context-recall assertion, which AgentV does not run either",
	"context-relevance":          "a promptfoo context-relevance assertion, which AgentV does not run either",
	"factuality":                 "a promptfoo factuality assertion, which AgentV does not run either",
	"model-graded-closedqa":      "a promptfoo model-graded-closedqa assertion, which AgentV does not run either",
	"model-graded-factuality":    "a promptfoo model-graded-factuality assertion, which AgentV does not run either",
	"moderation":                 "a promptfoo moderation assertion, which AgentV does not run either",
	"classifier":                 "a promptfoo classifier assertion, which AgentV does not run either",
	"perplexity":                 "a promptfoo perplexity assertion, which AgentV does not run either",
	"is-valid-openai-tools-call": "a promptfoo is-valid-openai-tools-call assertion, which AgentV does not run either",
}

// assertions reads a list of assertions for a test.
func (d *decoder) assertions(n *yaml.Node, c *testCtx) []agenteval.AssertionSpec {
	return d.assertionList(n, c, 0)
}

func (d *decoder) assertionList(n *yaml.Node, c *testCtx, depth int) []agenteval.AssertionSpec {
	rn := resolve(n)
	if rn == nil || isNull(rn) {
		return nil
	}
	if rn.Kind != yaml.SequenceNode {
		d.fail(n, "assertions must be a list (strings are rubric criteria, mappings have a type), not %s", kindName(n))
		return nil
	}
	var out []agenteval.AssertionSpec
	for _, item := range rn.Content {
		it := resolve(item)
		if it != nil && it.Kind == yaml.ScalarNode {
			a := agenteval.AssertionSpec{Pos: d.pos(it), Criterion: strings.TrimSpace(d.str(it, "assertion"))}
			if a.Criterion == "" {
				d.warn(it, "an assertion is empty; it is left out")
				continue
			}
			out = append(out, a)
			continue
		}
		if inc := includeOf(it); inc != "" {
			out = append(out, d.include(it, inc, c, depth)...)
			continue
		}
		if a, ok := d.assertion(it, c); ok {
			out = append(out, a)
		}
	}
	return out
}

// includeOf is the template an {include: name} entry names.
func includeOf(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.MappingNode || len(n.Content) != 2 || n.Content[0].Value != "include" {
		return ""
	}
	return resolve(n.Content[1]).Value
}

// include reads an assertion template: .agentv/templates/<name>.yaml found
// walking up from the eval file, or a path; its assertions: list.
func (d *decoder) include(n *yaml.Node, name string, c *testCtx, depth int) []agenteval.AssertionSpec {
	if depth >= 3 {
		d.fail(n, "assertion templates include each other more than 3 deep; is there a cycle?")
		return nil
	}
	rel := name
	if !strings.ContainsAny(name, "/\\") && !strings.HasPrefix(name, ".") {
		rel = filepath.Join(".agentv", "templates", name+".yaml")
	}
	p, tried := d.findFile(rel)
	if p == "" && strings.HasSuffix(rel, ".yaml") {
		p, _ = d.findFile(strings.TrimSuffix(rel, ".yaml") + ".yml")
	}
	if p == "" {
		d.fail(n, "assertion template %s is not there (looked in %s)", name, strings.Join(tried, ", "))
		return nil
	}
	data, err := os.ReadFile(p)
	if err != nil {
		d.fail(n, "read assertion template %s: %v", p, errText(err))
		return nil
	}
	td := d.sub(p)
	root, ok := td.parse(data, "YAML")
	if !ok || root == nil {
		return nil
	}
	list := mappingValue(root, "assertions")
	if list == nil {
		list = mappingValue(root, "assert")
	}
	if list == nil {
		td.fail(root, "an assertion template needs a top-level assertions: list")
		return nil
	}
	return td.assertionList(list, c, depth+1)
}

// assertion reads one assertion mapping.
func (d *decoder) assertion(n *yaml.Node, c *testCtx) (agenteval.AssertionSpec, bool) {
	a := agenteval.AssertionSpec{Pos: d.pos(n)}
	raw := map[string]*yaml.Node{}
	keys := map[string]*yaml.Node{}
	var order []string
	for _, f := range d.fields(n, "an assertion", nil) {
		raw[f.key], keys[f.key] = f.value, f.keyN
		order = append(order, f.key)
	}
	written := d.str(raw["type"], "type")
	if raw["type"] == nil || written == "" {
		d.fail(n, "an assertion mapping needs type (for example contains, regex, tool_calls, rubrics, llm_grader); a plain string is a rubric criterion")
		return a, false
	}
	typ := strings.ToLower(strings.TrimSpace(written))
	for _, p := range []string{"not-", "not_"} {
		if rest, ok := strings.CutPrefix(typ, p); ok {
			typ, a.Negate = rest, true
		}
	}
	own := d.ownGrader(typ)
	if why, ok := unrunnable[typ]; ok && !own {
		c.skipFor(why)
		return a, false
	}
	if canonical, ok := typeNames[typ]; ok && !own {
		a.Type = canonical
	} else {
		a.Type = strings.ReplaceAll(typ, "-", "_")
		if _, _, known := grade.Find(d.defs(), a.Type); !known {
			if p := d.customAssertion(typ); p != "" {
				c.skipFor(fmt.Sprintf("custom assertion type %s (%s, a TypeScript plugin that runs inside AgentV)", typ, p))
				return a, false
			}
			a.Type = written // the plan reports it, with a did-you-mean
		}
	}
	params := map[string]any{}
	config := map[string]any{}
	for _, k := range order {
		v := raw[k]
		switch k {
		case "type":
		case "name", "metric":
			if a.Name == "" || k == "metric" {
				a.Name = d.str(v, k)
			}
		case "id":
			if a.Name == "" {
				a.Name = d.str(v, "id")
			}
		case "weight":
			if w, ok := d.number(v, "weight"); ok {
				if w < 0 {
					d.fail(v, "weight must not be negative")
				}
				a.Weight = &w
			}
		case "required":
			// true, or AgentV's number: the score this grader must reach.
			if rv := resolve(v); rv != nil && (rv.Tag == "!!int" || rv.Tag == "!!float") {
				if x, ok := d.number(v, "required"); ok {
					if x <= 0 || x > 1 {
						d.fail(v, "required as a number is the score this grader must reach, in (0, 1]; got %v", x)
					}
					a.Required, a.Threshold = true, &x
				}
			} else {
				a.Required, _ = d.boolean(v, "required")
			}
		case "min_score":
			if x, ok := d.number(v, "min_score"); ok {
				if x <= 0 || x > 1 {
					d.fail(v, "min_score must be in (0, 1]; got %v", x)
				}
				a.Threshold = &x
			}
		case "negate":
			neg, _ := d.boolean(v, "negate")
			a.Negate = a.Negate != neg
		default:
			params[k] = d.param(a.Type, k, v, c)
		}
	}
	d.translate(&a, typ, params, config, keys, raw, c)
	if len(config) > 0 {
		params["config"] = config
	}
	if len(params) > 0 {
		a.Params = params
	}
	return a, true
}

// translate turns AgentV's settings of a type into ours.
func (d *decoder) translate(a *agenteval.AssertionSpec, typ string, p, config map[string]any, keys, raw map[string]*yaml.Node, c *testCtx) {
	move := func(from, to string) {
		if v, ok := p[from]; ok {
			delete(p, from)
			if _, taken := p[to]; !taken {
				p[to] = v
			}
		}
	}
	switch a.Type {
	case "script":
		d.codeGraderDifferences(keys["type"])
		move("script", "command")
		if cfg, ok := p["config"].(map[string]any); ok {
			for k, v := range cfg {
				config[k] = v
			}
			delete(p, "config")
		}
		for _, k := range []string{"target", "provider"} {
			if _, ok := p[k]; ok {
				c.skipFor("a code grader with target: (its script calls an LLM through AgentV's target proxy)")
				delete(p, k)
			}
		}
		if _, ok := p["preprocessors"]; ok {
			delete(p, "preprocessors")
			d.warn(keys["preprocessors"], "preprocessors convert files an agent returns; agenteval's targets reply with text, so they never run")
		}
		// Every other key is the script's config, as AgentV passes it.
		for k, v := range p {
			switch k {
			case "command", "cwd", "timeout":
			default:
				config[k] = v
				delete(p, k)
			}
		}
	case "llm_grader":
		if typ == "llm-rubric" || typ == "llm_rubric" {
			if list, ok := p["value"].([]any); ok && p["prompt"] == nil {
				// A list of criteria: AgentV v5's structured rubric.
				delete(p, "value")
				a.Type = "rubrics"
				p["criteria"] = list
				d.dropUnknown(a, p, keys)
				return
			}
			move("value", "rubric")
		}
		if pr, ok := p["prompt"].(map[string]any); ok {
			delete(p, "prompt")
			if cmd, ok := pr["command"]; ok {
				p["prompt_command"] = cmd
			} else if cmd, ok := pr["script"]; ok {
				p["prompt_command"] = cmd
			}
			if cfg, ok := pr["config"].(map[string]any); ok {
				for k, v := range cfg {
					config[k] = v
				}
			}
		}
		if s, ok := p["prompt"].(string); ok {
			if !strings.HasPrefix(s, "file://") && namesFile(d, s) {
				d.differ(keys["prompt"], "prompt-file", "prompt: %s names a file, which agenteval reads; AgentV reads a prompt as text unless it starts with file://, so its judge gets the words %q: write file://%s to mean the file in both", s, s, s)
			}
			p["prompt"] = strings.TrimPrefix(s, "file://")
		}
		if rubrics, ok := p["rubrics"]; ok && p["prompt"] == nil && p["prompt_command"] == nil {
			// A checklist without a prompt is a rubrics grader.
			delete(p, "rubrics")
			a.Type = "rubrics"
			p["criteria"] = rubrics
			return
		}
		for _, k := range []string{"target", "provider", "model", "max_steps", "maxSteps", "temperature"} {
			if _, ok := p[k]; ok {
				delete(p, k)
				d.warn(keys[k], "%s on an llm grader is not used: the run's judge (--judge) grades it", k)
			}
		}
		if _, ok := p["preprocessors"]; ok {
			delete(p, "preprocessors")
			d.warn(keys["preprocessors"], "preprocessors convert files an agent returns; agenteval's targets reply with text, so they never run")
		}
		if cfg, ok := p["config"].(map[string]any); ok {
			for k, v := range cfg {
				config[k] = v
			}
			delete(p, "config")
		}
		for k, v := range p {
			switch k {
			case "prompt", "output", "samples", "rubric", "prompt_command", "rubrics":
			default:
				config[k] = v
				delete(p, k)
			}
		}
	case "rubrics":
		move("rubrics", "criteria")
		if typ == "g-eval" || typ == "g_eval" {
			move("value", "criteria")
		}
		if s, ok := p["criteria"].(string); ok {
			p["criteria"] = []any{s}
		}
	case "composite":
		for _, k := range []string{"assertions", "assert", "evaluators", "graders"} {
			if v := raw[k]; v != nil {
				delete(p, k)
				p["assertions"] = d.memberSpecs(v, c)
			}
		}
	case "tool_calls":
		if list, ok := p["args_match"].([]any); ok {
			// AgentV's args_match as a list: compare only these fields.
			delete(p, "args_match")
			p["args_fields"] = list
		}
		d.trajectory(typ, p, keys)
		if cnt, ok := p["__count"].(map[string]any); ok {
			for k := range p {
				delete(p, k)
			}
			for k, v := range cnt {
				p[k] = v
			}
			a.Type = "tool_call_count"
		}
	case "latency":
		move("threshold", "max")
		move("max_ms", "max")
	case "cost":
		move("budget", "max")
		move("max_usd", "max")
	case "token_usage":
		move("max_total", "max")
	case "regex", "contains", "icontains", "equals", "starts_with", "ends_with":
		if v, ok := p["value"]; ok {
			if _, isStr := v.(string); !isStr && v != nil {
				p["value"] = varString(v)
			}
		}
	}
	if a.Type == "composite" && typ != "composite" {
		// assert-set: threshold is the share of members that must pass.
		if th, ok := p["threshold"]; ok {
			delete(p, "threshold")
			p["aggregator"] = map[string]any{"type": "threshold", "threshold": th}
		}
	}
	if agg, ok := p["aggregator"].(map[string]any); ok && a.Type == "composite" && a.Threshold == nil {
		// A threshold aggregator's share is also the composite's pass mark.
		if t, _ := agg["type"].(string); t == "threshold" {
			if x, ok := toFloat(agg["threshold"]); ok {
				a.Threshold = &x
			}
		}
	}
	if a.Type != "composite" && a.Type != "script" {
		if th, ok := p["threshold"]; ok && a.Threshold == nil {
			// Our own pass mark for this grader.
			delete(p, "threshold")
			if x, ok := toFloat(th); ok {
				a.Threshold = &x
			}
		}
	}
	d.dropUnknown(a, p, keys)
}

// commonSettings are the settings every assertion takes, read before its
// grader's own.
var commonSettings = []string{"type", "name", "metric", "id", "weight", "required", "min_score", "negate", "threshold"}

// dropUnknown warns about settings the grader does not take, and leaves
// them out, as AgentV ignores them; but a setting a letter or two from
// one the grader or every assertion takes is that one misspelt, and an
// error, since ignoring it would change what is checked.
func (d *decoder) dropUnknown(a *agenteval.AssertionSpec, p map[string]any, keys map[string]*yaml.Node) {
	def, _, ok := grade.Find(d.defs(), a.Type)
	if !ok {
		return
	}
	known := map[string]bool{"config": true}
	names := append([]string{"config"}, commonSettings...)
	for _, prm := range def.Params {
		known[prm.Name] = true
		names = append(names, prm.Name)
		for _, al := range prm.Aliases {
			known[al] = true
			names = append(names, al)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(p)) {
		if known[k] {
			continue
		}
		delete(p, k)
		kn := keys[k]
		if kn == nil {
			continue
		}
		if typo := suggest.Typo(k, names); typo != "" {
			d.fail(kn, "%s does not take %s; did you mean %s?", a.Type, k, typo)
			continue
		}
		d.warn(kn, "%s does not take %s; it is ignored", a.Type, k)
	}
}

// memberSpecs reads a composite's members into the settings maps the
// composite grader takes.
func (d *decoder) memberSpecs(n *yaml.Node, c *testCtx) []any {
	var out []any
	for _, m := range d.assertionList(n, c, 0) {
		out = append(out, SpecMap(m))
	}
	return out
}

// SpecMap writes an assertion as a settings map: its type, the settings
// every grader takes, and its own. A rubric criterion becomes a rubrics
// grader with that one criterion.
func SpecMap(a agenteval.AssertionSpec) map[string]any {
	m := map[string]any{}
	for k, v := range a.Params {
		m[k] = v
	}
	m["type"] = a.Type
	if a.Type == "" {
		m["type"] = "rubrics"
		m["criteria"] = []any{a.Criterion}
	}
	if a.Name != "" {
		m["name"] = a.Name
	}
	if a.Weight != nil {
		m["weight"] = *a.Weight
	}
	if a.Required {
		m["required"] = true
	}
	if a.Negate {
		m["negate"] = true
	}
	if a.Threshold != nil {
		m["threshold"] = *a.Threshold
	}
	return m
}

// trajectory reads AgentV's tool-trajectory and promptfoo's trajectory:*
// assertions into tool_calls settings.
func (d *decoder) trajectory(typ string, p map[string]any, keys map[string]*yaml.Node) {
	value, hasValue := p["value"]
	delete(p, "value")
	switch typ {
	case "trajectory:tool-used":
		min := map[string]any{}
		switch v := value.(type) {
		case string:
			min[v] = int64(1)
		case []any:
			for _, x := range v {
				min[varString(x)] = int64(1)
			}
		case map[string]any:
			name := varString(v["name"])
			if v["max"] != nil {
				// A ceiling is a count check of that tool.
				p["__count"] = map[string]any{"tool": name, "min": orDefault(v["min"], int64(1)), "max": v["max"]}
				return
			}
			min[name] = orDefault(v["min"], int64(1))
		}
		p["mode"], p["minimums"] = "any_order", min
	case "trajectory:tool-sequence":
		steps, mode := value, "in_order"
		if m, ok := value.(map[string]any); ok {
			steps = m["steps"]
			if s, ok := m["mode"].(string); ok && s != "" {
				mode = s
			}
		}
		var expected []any
		if list, ok := steps.([]any); ok {
			for _, s := range list {
				if m, ok := s.(map[string]any); ok {
					expected = append(expected, m)
				} else {
					expected = append(expected, map[string]any{"tool": varString(s)})
				}
			}
		}
		p["mode"], p["expected"] = mode, expected
	case "trajectory:tool-args-match":
		m, _ := value.(map[string]any)
		if m == nil {
			return
		}
		match := "superset"
		if mode, _ := m["mode"].(string); mode == "exact" {
			match = "exact"
		}
		p["mode"], p["args_match"] = "any_order", match
		p["expected"] = []any{map[string]any{"tool": varString(m["name"]), "args": m["args"]}}
	default:
		if hasValue {
			p["value"] = value
		}
	}
}

func orDefault(v, def any) any {
	if v == nil {
		return def
	}
	return v
}

// customAssertion finds AgentV's custom assertion of this type: a file
// .agentv/assertions/<type>.ts (or .js, .mts, .mjs) in the eval file's
// folder or one above it.
// defs are the graders assertion types are looked up in.
func (d *decoder) defs() []*grade.Definition {
	if d.graders == nil {
		return grade.All()
	}
	return d.graders
}

// ownGrader says whether typ names a grader the caller added to the list
// (one that is not built in). It comes before the names the loader reads
// as AgentV's or skips, so a Go program may supply a grader agenteval
// lacks (a similar grader, say) under its AgentV name.
func (d *decoder) ownGrader(typ string) bool {
	if !d.ownGraders {
		return false
	}
	def, _, ok := grade.Find(d.graders, strings.ReplaceAll(typ, "-", "_"))
	return ok && !slices.Contains(grade.All(), def)
}

func (d *decoder) customAssertion(typ string) string {
	for _, dir := range searchRoots(d.base()) {
		for _, ext := range []string{".ts", ".js", ".mts", ".mjs", ".cts", ".cjs"} {
			p := filepath.Join(dir, ".agentv", "assertions", typ+ext)
			if fileExists(p) {
				return p
			}
		}
	}
	return ""
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	}
	return 0, false
}

// namesFile says whether a grader's prompt text is the path of a file
// beside the eval file (as the grader reads it).
func namesFile(d *decoder, s string) bool {
	if s == "" || strings.Contains(s, "\n") || len(s) >= 300 {
		return false
	}
	p := s
	if !filepath.IsAbs(p) {
		p = filepath.Join(filepath.Dir(d.file), p)
	}
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
