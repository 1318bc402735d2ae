package suite

import (
	"encoding/json"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v4"
)

// Test variables (AgentV's per-test vars): {{ name }} and {{ vars.name }},
// with dotted paths ({{ user.name }}), are replaced when the file loads in
// a test's input, input_files, criteria, expected_output and turns, and in
// the suite's input, as AgentV v4.42.4 replaces them; the rest of the text
// stays as written (AgentV v5 renders it with Nunjucks: checkAsV5 says
// where that differs). A string that is a single placeholder takes the
// variable's value as it is (a list of messages, an object), so that
// vars.input can hold a whole conversation. ${{ VAR }} is the
// environment's, read before; {{ env.VAR }} (AgentV v5) is the
// environment's too. Prompts are Nunjucks templates (nunjucks.go).

var (
	templateRef      = regexp.MustCompile(`\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\}\}`)
	wholeTemplateRef = regexp.MustCompile(`^\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\}\}$`)
)

// graderVars are the names an llm_grader prompt fills in when it grades.
// Load-time substitution in assertions leaves them alone, so that
// {{ output }} still means the agent's reply.
var graderVars = map[string]bool{
	"input": true, "output": true, "expected_output": true, "criteria": true,
	"metadata": true, "metadata_json": true, "rubrics": true, "rubrics_json": true,
	"file_changes": true, "tool_calls": true, "rubric": true,
}

// substitution says how to replace placeholders in one pass.
type substitution struct {
	vars map[string]any
	// missing, when set, is called for a placeholder with no variable; it
	// returns the text to put instead and whether to replace at all.
	missing func(n *yaml.Node, name string) (string, bool)
	// skip names variables to leave as they are.
	skip map[string]bool
	d    *decoder
	// orig maps each node apply filled in to the node as written, so
	// that a command can be split before its values are put in.
	orig map[*yaml.Node]*yaml.Node
	// promptResult says apply fills in a prompt's rendered result, whose
	// Nunjucks syntax (brought in by variables) AgentV v5 renders again;
	// testID names the test for that difference.
	promptResult bool
	testID       string
	// nodes are the variables as written (testVars), when the decoder
	// gives them: a template sees their mappings in the written order, and
	// what a whole {{ variable }} brings in keeps its place in the file.
	nodes map[string]*yaml.Node
	order []string
}

// testVars is a test's substitution, for its variables read from the
// vars mappings written (default_test's first; later ones win).
func (d *decoder) testVars(vars map[string]any, written []*yaml.Node) *substitution {
	s := &substitution{vars: vars, d: d, nodes: map[string]*yaml.Node{}}
	var add func(n *yaml.Node)
	add = func(n *yaml.Node) {
		n = resolve(n)
		if n == nil || n.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 { // merged keys first: the mapping's own win
			if k := n.Content[i]; k.Value == "<<" && k.Tag != "!!str" {
				if m := resolve(n.Content[i+1]); m != nil && m.Kind == yaml.SequenceNode {
					for _, it := range m.Content {
						add(it)
					}
				} else {
					add(m)
				}
			}
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i]; k.Value != "<<" || k.Tag == "!!str" {
				if _, seen := s.nodes[k.Value]; !seen {
					s.order = append(s.order, k.Value)
				}
				s.nodes[k.Value] = n.Content[i+1]
			}
		}
	}
	for _, w := range written {
		add(w)
	}
	return s
}

// original is n as written, before this substitution filled it in; n
// itself when it filled nothing in (or s is nil).
func (s *substitution) original(n *yaml.Node) *yaml.Node {
	if s != nil {
		if o, ok := s.orig[n]; ok {
			return o
		}
	}
	return n
}

// filled records that n was made from written.
func (s *substitution) filled(n, written *yaml.Node) *yaml.Node {
	if s.orig == nil {
		s.orig = map[*yaml.Node]*yaml.Node{}
	}
	s.orig[n] = written
	return n
}

// lookup finds a dotted name in vars; a leading "vars." or "env." is
// the namespace.
func (s *substitution) lookup(name string) (any, bool) { return s.lookupAt(name, nil) }

// lookupAt is lookup for a placeholder written at at, where an unset
// environment variable is warned about.
func (s *substitution) lookupAt(name string, at *yaml.Node) (any, bool) {
	if rest, ok := strings.CutPrefix(name, "env."); ok && s.d != nil {
		if strings.Contains(rest, ".") {
			return "", true // a variable's text has no fields: empty, as in AgentV v5
		}
		if at == nil {
			v, _ := s.d.env(rest)
			return v, true // unset: empty, as AgentV v5 renders it
		}
		// Read as the file's other environment references are, so an
		// unset variable is empty (as AgentV v5 renders it) with the same
		// once-per-file warning.
		return s.d.interpolate(at, "{{ env."+rest+" }}"), true
	}
	if s.skip[name] {
		return nil, false
	}
	return s.varAt(name)
}

// varAt is the variable a dotted path names (vars.a.b, or a.b), followed
// through nested mappings.
func (s *substitution) varAt(name string) (any, bool) {
	var cur any = s.vars
	for _, p := range strings.Split(strings.TrimPrefix(name, "vars."), ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// apply returns a copy of n with its placeholders replaced. Positions are
// kept, so problems in substituted text point at the placeholder's node.
func (s *substitution) apply(n *yaml.Node) *yaml.Node {
	n = resolve(n)
	if n == nil {
		return nil
	}
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag != "!!str" && n.Tag != "" || !templateSyntax(n.Value) {
			return n
		}
		if m := wholeTemplateRef.FindStringSubmatch(n.Value); m != nil {
			if v, ok := s.lookupAt(m[1], n); ok {
				return s.filled(valueNode(v, n), n)
			}
		}
		c := *n
		c.Value = templateRef.ReplaceAllStringFunc(n.Value, func(ref string) string {
			name := templateRef.FindStringSubmatch(ref)[1]
			if v, ok := s.lookupAt(name, n); ok {
				return varString(v)
			}
			if s.missing != nil {
				if text, ok := s.missing(n, name); ok {
					return text
				}
			}
			return ref
		})
		if s.skip == nil && len(s.vars) > 0 && s.d != nil {
			// AgentV v5 renders this text with Nunjucks (a test's own
			// fields when it has vars); both after the environment.
			s.checkAsV5(n, s.d.interpolate(n, n.Value), s.d.interpolate(n, c.Value))
		}
		return s.filled(&c, n)
	case yaml.MappingNode, yaml.SequenceNode:
		c := *n
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, k := range n.Content {
			if n.Kind == yaml.MappingNode && i%2 == 0 {
				c.Content[i] = k
				continue
			}
			c.Content[i] = s.apply(k)
		}
		return &c
	}
	return n
}

// varString is a variable's text inside a longer string: a string as is,
// anything else as JSON.
func varString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// valueNode builds a node holding v, placed at at.
func valueNode(v any, at *yaml.Node) *yaml.Node {
	var n yaml.Node
	if err := n.Encode(v); err != nil {
		c := *at
		c.Value = varString(v)
		return &c
	}
	place(&n, at.Line, at.Column)
	return resolve(&n)
}

func place(n *yaml.Node, line, col int) {
	n.Line, n.Column = line, col
	for _, c := range n.Content {
		place(c, line, col)
	}
}
