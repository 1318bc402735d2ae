package suite

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"go.yaml.in/yaml/v4"
)

// AgentV keeps its targets in .agentv/targets.yaml (v5: providers.yaml),
// found by walking up from the eval file to the repository root, then in
// the working directory. A target the eval file names but does not define
// is looked up there. LLM providers become model targets; AgentV's cli
// provider becomes a command-template target; coding agents (codex,
// claude, copilot, ...) cannot run here, which is an error only when that
// target is chosen.

var targetFiles = []string{
	"targets.yaml", "targets.yml", filepath.Join(".agentv", "targets.yaml"), filepath.Join(".agentv", "targets.yml"),
	filepath.Join(".agentv", "providers.yaml"), filepath.Join(".agentv", "providers.yml"),
}

// FindTargetsFile finds AgentV's targets file for an eval file, as AgentV
// does: in the eval file's folder and each one above it up to the
// repository root, then in the working directory. It returns "" when
// there is none.
func FindTargetsFile(evalFile string) string {
	for _, dir := range searchRoots(filepath.Dir(evalFile)) {
		for _, name := range targetFiles {
			if p := filepath.Join(dir, name); fileExists(p) {
				return p
			}
		}
	}
	return ""
}

// agentvTargets adds to the suite the targets it names (execution.target,
// execution.targets, providers, tests' targets) and does not define, from
// AgentV's provider catalog: the providers of .agentv/config.yaml when it
// has them (AgentV v5), else the targets file found from the eval file.
// It then applies the rest of AgentV's configuration: the default
// provider, the judge (the target's grader_target, else defaults.grader)
// and the execution defaults.
func (d *decoder) agentvTargets(s *Suite) {
	resolveAliases(s)
	cfg := d.agentvConfig()
	wanted := append([]string{s.DefaultTarget}, s.Matrix...)
	for i := range s.NumTests() {
		wanted = append(wanted, s.Info(i).Targets...)
	}
	defined := map[string]bool{}
	for _, t := range s.Targets {
		defined[t.Name] = true
	}
	var missing []string
	for _, w := range wanted {
		if w != "" && !defined[w] && !strings.Contains(w, ":") {
			missing = append(missing, w)
			defined[w] = true
		}
	}
	fallback := ""
	if s.DefaultTarget == "" && len(s.Targets) == 0 && len(s.Matrix) == 0 {
		// AgentV runs defaults.provider, else "default", when the file
		// names no target.
		fallback = "default"
		if cfg.provider.value != "" {
			fallback = cfg.provider.value
		}
		if !defined[fallback] {
			missing = append(missing, fallback)
		}
	}
	cat := cfg.catalog
	if cat == nil && (len(missing) > 0 || hasAlias(s) || cfg.grader.value != "") {
		if path := FindTargetsFile(d.file); path != "" {
			cat = &targetCatalog{defs: d.readTargetsFile(path), d: d.sub(path)}
		}
	}
	graders := map[string]targetInfo{}
	if cat != nil {
		td := cat.d
		td.lenient = true
		for _, name := range missing {
			var chain []string
			spec, info, ok := td.resolveTargetInfo(cat.defs, name, &chain)
			if !ok {
				if name == fallback && name != "default" {
					cfg.provider.d.warn(cfg.provider.n, "defaults.provider %s is not a provider of %s; AgentV stops here", name, cat.d.file)
				}
				continue
			}
			spec.Name = name
			if name == fallback {
				s.DefaultTarget = name
			}
			s.Targets = append(s.Targets, spec)
			graders[name] = info
		}
		// Aliases from execution.targets' use_target.
		for i := range s.Targets {
			if a := s.Targets[i].alias; a != "" {
				var chain []string
				if spec, info, ok := td.resolveTargetInfo(cat.defs, a, &chain); ok {
					spec.Name = s.Targets[i].Name
					s.Targets[i] = spec
					graders[spec.Name] = info
				}
			}
		}
	}
	d.agentvJudge(s, cfg, cat, graders)
	if cfg.maxConcurrency.value > 0 {
		// AgentV takes the config's max_concurrency over the eval file's.
		s.Workers = cfg.maxConcurrency.value
	}
}

// resolveAliases makes a target that stands for another (use_target,
// extends) that target, when the suite defines it.
func resolveAliases(s *Suite) {
	for i := range s.Targets {
		a := s.Targets[i].alias
		if a == "" {
			continue
		}
		for _, o := range s.Targets {
			if o.Name == a && o.alias == "" {
				name, pos := s.Targets[i].Name, s.Targets[i].Pos
				s.Targets[i] = o
				s.Targets[i].Name, s.Targets[i].Pos = name, pos
				break
			}
		}
	}
}

func hasAlias(s *Suite) bool {
	for _, t := range s.Targets {
		if t.alias != "" {
			return true
		}
	}
	return false
}

// targetCatalog is AgentV's targets (v5: providers) by name, and the
// decoder of the file that holds them, so that what is said about an
// entry names that file.
type targetCatalog struct {
	defs map[string]*yaml.Node
	d    *decoder
}

// readTargetsFile reads a targets file into its entries by name: v4's
// {targets: [{name, provider, ...}]} or v5's list of {id, label, ...}.
func (d *decoder) readTargetsFile(path string) map[string]*yaml.Node {
	td := d.sub(path)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	root, ok := td.parse(data, "YAML")
	if !ok || root == nil {
		return nil
	}
	list := root
	if root.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(root.Content); i += 2 {
			if k := root.Content[i].Value; k == "targets" || k == "providers" {
				list = resolve(root.Content[i+1])
			}
		}
	}
	return targetEntries(list)
}

// targetEntries are a list's targets by name: name (v4), else label, else
// id (v5); a v5 entry may be just its id ("openai:gpt-4.1").
func targetEntries(list *yaml.Node) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	if list == nil || list.Kind != yaml.SequenceNode {
		return out
	}
	for _, item := range list.Content {
		it := resolve(item)
		if it != nil && it.Kind == yaml.ScalarNode && it.Value != "" {
			out[it.Value] = &yaml.Node{Kind: yaml.MappingNode, Line: it.Line, Column: it.Column, Content: []*yaml.Node{
				{Kind: yaml.ScalarNode, Tag: "!!str", Value: "id", Line: it.Line, Column: it.Column}, it,
			}}
			continue
		}
		if it == nil || it.Kind != yaml.MappingNode {
			continue
		}
		name := scalarField(it, "name")
		if name == "" {
			name = scalarField(it, "label")
		}
		if name == "" {
			name = scalarField(it, "id")
		}
		if name != "" {
			out[name] = it
		}
	}
	return out
}

func scalarField(n *yaml.Node, key string) string {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			if v := resolve(n.Content[i+1]); v != nil && v.Kind == yaml.ScalarNode {
				return v.Value
			}
		}
	}
	return ""
}

// targetInfo is what a targets-file entry says beside the target itself.
type targetInfo struct {
	// grader is the entry's grader_target: the target AgentV grades this
	// target's tests with. graderN is where it is written, d the file.
	grader  string
	graderN *yaml.Node
	d       *decoder
}

// resolveTarget turns a targets-file entry into a target spec, following
// use_target. A grader_target here (on a provider written in the eval
// file) is not followed: the suite's judge grades.
func (d *decoder) resolveTarget(defs map[string]*yaml.Node, name string, chain *[]string) (TargetSpec, bool) {
	t, info, ok := d.resolveTargetInfo(defs, name, chain)
	if info.grader != "" {
		info.d.differ(info.graderN, "grader_target", "grader_target on a provider written in the eval file is not followed: the suite's judge grades (judge:, --judge, or grader_target in AgentV's targets file)")
	}
	return t, ok
}

// ignoredByAgentV are target keys that look like settings but that AgentV
// does not read (or refuses); agenteval ignores them too, and says why.
// Any other unknown key AgentV passes through and ignores, as agenteval
// does.
var ignoredByAgentV = map[string]string{
	"max_tokens":     "AgentV reads max_output_tokens, not max_tokens",
	"apiBaseUrl":     "AgentV reads base_url (or endpoint), not apiBaseUrl",
	"baseUrl":        "AgentV refuses camelCase baseUrl; write base_url",
	"apiKey":         "AgentV refuses camelCase apiKey; write api_key",
	"maxTokens":      "AgentV refuses camelCase maxTokens; write max_output_tokens",
	"deploymentName": "AgentV refuses deploymentName; write model",
	"resourceName":   "AgentV refuses resourceName; write endpoint",
	"judge_target":   "AgentV removed judge_target; write grader_target",
}

// resolveTargetInfo is resolveTarget with what the entry says beside the
// target. AgentV v5 keeps an entry's settings under config: ({id:
// openai:gpt-4.1, config: {temperature: 0}}); they read as if written on
// the entry, whose own keys win, and a model in config wins over the one
// in the id.
func (d *decoder) resolveTargetInfo(defs map[string]*yaml.Node, name string, chain *[]string) (TargetSpec, targetInfo, bool) {
	info := targetInfo{d: d}
	n, ok := defs[name]
	if !ok {
		return TargetSpec{}, info, false
	}
	for _, c := range *chain {
		if c == name {
			return TargetSpec{Name: name, Unsupported: "its use_target chain loops: " + strings.Join(append(*chain, name), " -> "), Pos: d.pos(n)}, info, true
		}
	}
	*chain = append(*chain, name)
	t := TargetSpec{Name: name, Pos: d.pos(n)}
	var provider, model, deployment, variant, endpoint, resource, version, apiFormat string
	var cmd *yaml.Node
	var top, inConfig []field
	for _, f := range d.fields(n, "a target", nil) {
		if f.key == "config" {
			inConfig = d.fields(f.value, "config", nil)
			continue
		}
		top = append(top, f)
	}
	// The entry's own keys come last, so that they win.
	for _, f := range append(inConfig, top...) {
		switch f.key {
		case "use_target":
			use := d.str(f.value, "use_target")
			if use == "" {
				t.Unsupported = "its use_target is empty (an unset variable?)"
				return t, info, true
			}
			if spec, used, ok := d.resolveTargetInfo(defs, use, chain); ok {
				return spec, used, true
			}
			t.Unsupported = fmt.Sprintf("its use_target %q is not defined in %s", use, d.file)
			return t, info, true
		case "provider":
			provider = d.str(f.value, "provider")
		case "id":
			if provider == "" {
				provider = d.str(f.value, "id")
			}
		case "model":
			model = d.str(f.value, "model")
		case "deployment":
			deployment = d.str(f.value, "deployment")
		case "variant":
			variant = d.str(f.value, "variant")
		case "base_url":
			t.BaseURL = d.str(f.value, f.key)
		case "endpoint":
			endpoint = d.str(f.value, f.key)
		case "resource":
			resource = d.str(f.value, f.key)
		case "version", "api_version":
			version = d.str(f.value, f.key)
		case "api_format":
			apiFormat = d.str(f.value, f.key)
		case "api_key":
			t.APIKey = d.str(f.value, "api_key")
		case "command":
			cmd = f.value // read once the provider is known (a cli's)
		case "cwd":
			t.Dir = d.str(f.value, "cwd")
		case "timeout_seconds":
			if v, ok := d.number(f.value, "timeout_seconds"); ok {
				t.Timeout = secondsDuration(v)
			}
		case "temperature":
			if v, ok := d.number(f.value, "temperature"); ok {
				t.Temperature = &v
			}
		case "max_output_tokens":
			t.MaxTokens, _ = d.integer(f.value, f.key)
		case "files_format":
			t.FilesFormat = d.str(f.value, "files_format")
		case "grader_target":
			info.grader, info.graderN = d.str(f.value, f.key), f.value
		case "thinking_budget":
			d.differ(f.keyN, "thinking_budget", "thinking_budget is not sent: agenteval asks the model without extended thinking, so the target answers as with thinking off")
		case "system_prompt":
			d.warn(f.keyN, "system_prompt here is ignored, by AgentV too: AgentV sends it to coding agents, not to LLM providers; to send a system prompt to a model target, set system_prompt in agenteval.yaml")
		default:
			if why, ok := ignoredByAgentV[f.key]; ok {
				d.warn(f.keyN, "%s is ignored: %s", f.key, why)
			}
		}
	}
	if t.Dir != "" && !filepath.IsAbs(t.Dir) {
		// A targets file's cwd is relative to the targets file.
		t.Dir = filepath.Join(filepath.Dir(d.file), t.Dir)
	}
	kind, sub, _ := strings.Cut(provider, ":")
	switch strings.ToLower(kind) {
	case "openai", "azure", "anthropic", "gemini", "google", "openrouter", "ollama":
		p := strings.ToLower(kind)
		// AgentV's model: model, else deployment, else variant (Azure
		// reads deployment first), else the id's part after the colon.
		names := []string{model, deployment, variant, sub}
		if p == "azure" {
			names = []string{deployment, model, variant, sub}
		}
		model = ""
		for _, m := range names {
			if model == "" {
				model = m
			}
		}
		if model == "" {
			t.Unsupported = fmt.Sprintf("provider %s has no model (an unset variable?); give it model:, in config: or after the colon (%s:gpt-4.1)", provider, kind)
			return t, info, true
		}
		if endpoint != "" {
			t.BaseURL = endpoint // AgentV reads endpoint before base_url
		}
		switch p {
		case "google":
			p = "gemini"
		case "azure":
			p = "openai"
			if t.BaseURL == "" {
				t.BaseURL = resource
			}
			if t.BaseURL != "" && !strings.Contains(t.BaseURL, "/openai/") {
				t.BaseURL = strings.TrimRight(ensureHTTPS(t.BaseURL), "/") + "/openai/v1"
			}
			if v := strings.TrimSpace(version); v != "" && v != "v1" {
				d.differ(n, "azure_version", "Azure API version %s is not used: agenteval calls Azure's v1 API (/openai/v1), as AgentV does when no version is given", v)
			}
		case "openrouter":
			p = "openai"
			if t.BaseURL == "" {
				t.BaseURL = "https://openrouter.ai/api/v1"
			}
		}
		if strings.EqualFold(apiFormat, "responses") {
			d.differ(n, "api_format", "api_format: responses is not followed: agenteval calls the chat completions API; the model is the same, the request format differs")
		}
		t.Model = p + ":" + model
	case "cli":
		argv, text, ok := d.cliCommand(cmd)
		if !ok {
			t.Unsupported = "its cli provider has no command"
			if rc := resolve(cmd); rc != nil && !isNull(rc) {
				t.Unsupported = "its cli provider's command is refused (see the error at its line)"
			}
			return t, info, true
		}
		t.Template, t.TemplateArgv = text, argv
	case "":
		t.Unsupported = "it names no provider"
	default:
		t.Unsupported = fmt.Sprintf("its provider %s is a coding agent or service that AgentV drives and agenteval cannot run; pick another target with --target (a provider:model, or a target of kind openai, azure, anthropic, gemini, openrouter or cli)", provider)
	}
	return t, info, true
}

func ensureHTTPS(host string) string {
	if strings.HasPrefix(host, "http://") || strings.HasPrefix(host, "https://") {
		return host
	}
	return "https://" + host + ".openai.azure.com"
}

// targetsFrom reads every target of a targets file an eval file names
// (targets: file://targets.yaml).
func (d *decoder) targetsFrom(n *yaml.Node) []TargetSpec {
	path, tried := d.findFile(d.str(n, "targets"))
	if path == "" {
		d.fail(n, "targets file %s is not there (looked in %s)", n.Value, strings.Join(tried, ", "))
		return nil
	}
	defs := d.readTargetsFile(path)
	td := d.sub(path)
	td.lenient = true
	names := make([]string, 0, len(defs))
	for name := range defs {
		names = append(names, name)
	}
	sort.Strings(names)
	var out []TargetSpec
	for _, name := range names {
		var chain []string
		if spec, info, ok := td.resolveTargetInfo(defs, name, &chain); ok {
			spec.Name = name
			out = append(out, spec)
			if info.grader != "" {
				info.d.differ(info.graderN, "grader_target", "grader_target in a targets file the eval file names (targets: file://...) is not followed: the suite's judge grades (judge:, --judge, or grader_target in AgentV's own targets file)")
			}
		}
	}
	return out
}
