package suite

import (
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/agenteval/agenteval/internal/nunjucks"
	"go.yaml.in/yaml/v4"
)

// AgentV v5 renders its prompts: templates with Nunjucks; so does
// agenteval (package nunjucks), with the test's variables as both
// {{ name }} and {{ vars.name }}. Everything else a test holds stays
// text: AgentV v5 renders a test's own fields with Nunjucks too (input,
// criteria, expected_output, turns), and the prompt's result a second
// time, which turns a template-injection probe's "{{ 7 * 7 }}" into "49".
// agenteval fills in only {{ name }} variables there, and says where the
// two differ.

// Bounds of one template's render: a prompt is a few kilobytes of text,
// and an eval file is data that must not hang or exhaust a run.
const (
	templateMaxSteps  = 200_000
	templateMaxOutput = 1 << 20
)

// templateSyntax says whether s holds anything Nunjucks would read.
func templateSyntax(s string) bool {
	return strings.Contains(s, "{{") || strings.Contains(s, "{%") || strings.Contains(s, "{#")
}

// wholeSimpleRef is AgentV v5's test for a string that is one variable
// and nothing else, which takes the variable's value as it is (a list of
// messages, an object) instead of its text.
var wholeSimpleRef = regexp.MustCompile(`^\s*\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s*\}\}\s*$`)

// templateContext is what a template sees: the test's variables at the
// top and under vars, and the environment under env (AgentV v5 fills
// {{ env.NAME }} in before it renders; a Lookup shows a template no more
// than the names it asks for).
func (s *substitution) templateContext() *nunjucks.Object {
	names := s.order
	if len(names) != len(s.vars) {
		names = sortedKeys(s.vars) // a Go map has no order; sorted is stable
	}
	vars := nunjucks.NewObject()
	for _, k := range names {
		vars.Set(k, s.templateValue(k))
	}
	ctx := nunjucks.NewObject()
	if s.d != nil {
		d := s.d
		ctx.Set("env", nunjucks.Lookup(func(name string) (any, bool) {
			v, ok := d.env(name)
			return v, ok
		}))
	}
	for _, k := range names {
		ctx.Set(k, s.templateValue(k))
	}
	ctx.Set("vars", vars)
	return ctx
}

// templateValue is a variable as a template sees it: from its node when
// the decoder gave it, so that its mappings keep their written order (as
// a JavaScript object keeps the order YAML gave it), else its value.
func (s *substitution) templateValue(name string) any {
	if n, ok := s.nodes[name]; ok && s.d != nil {
		return s.d.orderedValue(n)
	}
	return s.vars[name]
}

// orderedValue is d.value with mappings as *nunjucks.Object, in written
// order.
func (d *decoder) orderedValue(n *yaml.Node) any {
	n = resolve(n)
	if n == nil {
		return nil
	}
	switch n.Kind {
	case yaml.MappingNode:
		sub := d.testVars(nil, []*yaml.Node{n})
		o := nunjucks.NewObject()
		for _, k := range sub.order {
			o.Set(k, d.orderedValue(sub.nodes[k]))
		}
		return o
	case yaml.SequenceNode:
		out := make([]any, len(n.Content))
		for i, it := range n.Content {
			out[i] = d.orderedValue(it)
		}
		return out
	}
	return d.value(n)
}

// writtenVar is the node of a variable a whole {{ name }} names, with its
// text read from the environment as its value was, so that what it
// brings into a prompt keeps its place in the file; nil when the decoder
// did not give the variables' nodes.
func (s *substitution) writtenVar(path string) *yaml.Node {
	n, ok := s.nodes[strings.TrimPrefix(path, "vars.")]
	if !ok || s.d == nil {
		return nil
	}
	var cp func(n *yaml.Node) *yaml.Node
	cp = func(n *yaml.Node) *yaml.Node {
		n = resolve(n)
		if n == nil {
			return nil
		}
		c := *n
		switch n.Kind {
		case yaml.ScalarNode:
			if n.Tag == "!!str" || n.Tag == "" {
				c.Value = s.d.interpolate(n, n.Value)
			}
		case yaml.MappingNode, yaml.SequenceNode:
			c.Content = make([]*yaml.Node, len(n.Content))
			for i, k := range n.Content {
				c.Content[i] = cp(k)
			}
		}
		return &c
	}
	return cp(n)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// wholeValue is the value a whole-string {{ path }} takes in AgentV v5:
// the variable's, or false when it is not set (and the string renders).
func (s *substitution) wholeValue(path string) (any, bool) {
	if path == "vars" {
		return s.vars, s.vars != nil
	}
	if strings.HasPrefix(path, "env.") {
		return nil, false // filled in with the environment before
	}
	if s.skip[path] {
		return nil, false
	}
	return s.varAt(path)
}

// renderTemplate renders one string of a prompt template, written at n.
// Problems are reported at their place in the file; undefined is called
// for each variable the template prints that the test does not set.
func (d *decoder) renderTemplate(n *yaml.Node, text string, ctx *nunjucks.Object, undefined func(at *yaml.Node, path string)) (string, bool) {
	tpl, err := nunjucks.Parse(text)
	if err == nil {
		var out string
		out, err = tpl.RenderObject(ctx, nunjucks.Options{
			MaxSteps:  templateMaxSteps,
			MaxOutput: templateMaxOutput,
			Undefined: func(path string, line, col int) { undefined(d.templateAt(n, line, col), path) },
		})
		if err == nil {
			return out, true
		}
	}
	if e, ok := err.(*nunjucks.Error); ok {
		d.fail(d.templateAt(n, e.Line, e.Col), "prompt template: %s", e.Msg)
	} else {
		d.fail(n, "prompt template: %v", err)
	}
	return "", false
}

// templateAt is the place in the file of a template's line and column,
// for a template that is the text of n. A text file's template starts at
// 1:1; a YAML string's starts where its text does, which for a block
// (| or >) is on the next line, indented as its first line is.
func (d *decoder) templateAt(n *yaml.Node, line, col int) *yaml.Node {
	at := &yaml.Node{Kind: yaml.ScalarNode, Line: n.Line, Column: n.Column}
	if line <= 0 {
		return at
	}
	switch {
	case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		at.Line = n.Line + line
		at.Column = d.indentOf(at.Line, n.Column) + col
	case line == 1 && n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0:
		at.Column = n.Column + col
	case line == 1:
		at.Column = n.Column + col - 1
	default:
		at.Line = n.Line + line - 1
		at.Column = col
	}
	return at
}

// indentOf is the indentation of a line of the file, read again on this
// error path; def when the file cannot be read (a test's in-memory file).
func (d *decoder) indentOf(line, def int) int {
	b, err := os.ReadFile(d.file)
	if err != nil {
		return def
	}
	lines := strings.Split(string(b), "\n")
	if line-1 >= len(lines) {
		return def
	}
	l := lines[line-1]
	return len(l) - len(strings.TrimLeft(l, " "))
}

// checkAsV5 records where AgentV v5, rendering text (written at n) with
// Nunjucks, gets something else than ours, agenteval's text for it: in a
// test's own fields, and in what a prompt's variables bring into its
// result, which AgentV v5 renders a second time.
func (s *substitution) checkAsV5(n *yaml.Node, text, ours string) {
	if s.d == nil || !templateSyntax(text) {
		return
	}
	tpl, err := nunjucks.Parse(text)
	var v5 string
	if err == nil {
		v5, err = tpl.RenderObject(s.templateContext(), nunjucks.Options{MaxSteps: templateMaxSteps, MaxOutput: templateMaxOutput})
	}
	if err == nil && v5 == ours {
		return
	}
	got := "makes this " + clip(v5, 80)
	if err != nil {
		got = fmt.Sprintf("stops at this text (%v)", err)
	}
	if s.promptResult {
		s.d.differ(n, "nunjucks-prompt-result", "test %q: AgentV v5 renders a prompt's result a second time, so the Nunjucks syntax a variable brings in is evaluated, which %s; agenteval puts a variable's text in as written (filling in only {{ name }} variables in it), so that text meant literally, such as a template-injection probe, stays literal", s.testID, got)
		return
	}
	s.d.differ(n, "nunjucks-test-text", "AgentV v5 renders a test's own text as a Nunjucks template when the test has vars, which %s; agenteval keeps it as written, filling in only {{ name }} variables, so that text meant literally, such as a template-injection probe, stays literal. For computed text, use a prompts: template", got)
}

// clip quotes s, cut to about n bytes.
func clip(s string, n int) string {
	if len(s) <= n {
		return fmt.Sprintf("%q", s)
	}
	cut := n
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q...", s[:cut])
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
