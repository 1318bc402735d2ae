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
// AgentV's targets file.
func (d *decoder) agentvTargets(s *Suite) {
	resolveAliases(s)
	wanted := append([]string{s.DefaultTarget}, s.Matrix...)
	for _, t := range s.Tests {
		wanted = append(wanted, t.Targets...)
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
	if s.DefaultTarget == "" && len(s.Targets) == 0 && len(s.Matrix) == 0 {
		// AgentV runs "default" when the file names no target.
		missing = append(missing, "default")
	}
	if len(missing) == 0 && !hasAlias(s) {
		return
	}
	path := FindTargetsFile(d.file)
	if path == "" {
		return
	}
	defs := d.readTargetsFile(path)
	td := d.sub(path)
	td.lenient = true
	for _, name := range missing {
		var chain []string
		spec, ok := td.resolveTarget(defs, name, &chain)
		if !ok {
			continue
		}
		spec.Name = name
		if name == "default" && s.DefaultTarget == "" && len(s.Matrix) == 0 && len(s.Targets) == 0 {
			s.DefaultTarget = "default"
		}
		s.Targets = append(s.Targets, spec)
	}
	// Aliases from execution.targets' use_target.
	for i := range s.Targets {
		if a := s.Targets[i].alias; a != "" {
			var chain []string
			if spec, ok := td.resolveTarget(defs, a, &chain); ok {
				spec.Name = s.Targets[i].Name
				s.Targets[i] = spec
			}
		}
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
	out := map[string]*yaml.Node{}
	if list == nil || list.Kind != yaml.SequenceNode {
		return out
	}
	for _, item := range list.Content {
		it := resolve(item)
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

// resolveTarget turns a targets-file entry into a target spec, following
// use_target.
func (d *decoder) resolveTarget(defs map[string]*yaml.Node, name string, chain *[]string) (TargetSpec, bool) {
	n, ok := defs[name]
	if !ok {
		return TargetSpec{}, false
	}
	for _, c := range *chain {
		if c == name {
			return TargetSpec{Name: name, Unsupported: "its use_target chain loops: " + strings.Join(append(*chain, name), " -> "), Pos: d.pos(n)}, true
		}
	}
	*chain = append(*chain, name)
	t := TargetSpec{Name: name, Pos: d.pos(n)}
	var provider, model string
	var cmd *yaml.Node
	for _, f := range d.fields(n, "a target", nil) {
		switch f.key {
		case "use_target":
			use := d.str(f.value, "use_target")
			if use == "" {
				t.Unsupported = "its use_target is empty (an unset variable?)"
				return t, true
			}
			if spec, ok := d.resolveTarget(defs, use, chain); ok {
				return spec, true
			}
			t.Unsupported = fmt.Sprintf("its use_target %q is not defined in %s", use, d.file)
			return t, true
		case "provider":
			provider = d.str(f.value, "provider")
		case "id":
			if provider == "" {
				provider = d.str(f.value, "id")
			}
		case "model":
			model = d.str(f.value, "model")
		case "base_url", "endpoint":
			t.BaseURL = d.str(f.value, f.key)
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
		case "files_format":
			t.FilesFormat = d.str(f.value, "files_format")
		}
	}
	if t.Dir != "" && !filepath.IsAbs(t.Dir) {
		// A targets file's cwd is relative to the targets file.
		t.Dir = filepath.Join(filepath.Dir(d.file), t.Dir)
	}
	kind, sub, _ := strings.Cut(provider, ":")
	switch strings.ToLower(kind) {
	case "openai", "azure", "anthropic", "gemini", "google", "openrouter", "ollama":
		if sub != "" && model == "" {
			model = sub
		}
		if model == "" {
			t.Unsupported = fmt.Sprintf("provider %s has no model (an unset variable?)", provider)
			return t, true
		}
		p := strings.ToLower(kind)
		switch p {
		case "google":
			p = "gemini"
		case "azure":
			p = "openai"
			if t.BaseURL != "" && !strings.Contains(t.BaseURL, "/openai/") {
				t.BaseURL = strings.TrimRight(ensureHTTPS(t.BaseURL), "/") + "/openai/v1"
			}
		case "openrouter":
			p = "openai"
			if t.BaseURL == "" {
				t.BaseURL = "https://openrouter.ai/api/v1"
			}
		}
		t.Model = p + ":" + model
	case "cli":
		argv, text, ok := d.cliCommand(cmd)
		if !ok {
			t.Unsupported = "its cli provider has no command"
			if rc := resolve(cmd); rc != nil && !isNull(rc) {
				t.Unsupported = "its cli provider's command is refused (see the error at its line)"
			}
			return t, true
		}
		t.Template, t.TemplateArgv = text, argv
	case "":
		t.Unsupported = "it names no provider"
	default:
		t.Unsupported = fmt.Sprintf("its provider %s is a coding agent or service that AgentV drives and agenteval cannot run; pick another target with --target (a provider:model, or a target of kind openai, azure, anthropic, gemini, openrouter or cli)", provider)
	}
	return t, true
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
		if spec, ok := td.resolveTarget(defs, name, &chain); ok {
			spec.Name = name
			out = append(out, spec)
		}
	}
	return out
}
