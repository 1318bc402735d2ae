// Package nunjucks renders the Nunjucks templates of AgentV v5's eval
// files (prompts: templates) as Nunjucks 3.2 renders them, with AgentV's
// settings: no autoescaping, and an unset variable renders empty.
//
// It owns the template language only: {{ expressions }} with JavaScript's
// arithmetic, comparisons and truthiness, ~ to join text, filters (upper,
// lower, trim, join, length, default, dump, replace, first, last and the
// rest of Nunjucks's built-ins but random and groupby, plus AgentV's load)
// and tests (is defined, is divisibleby(3), ...); {% if/elif/else %},
// {% for %} with loop.index and friends, {% set %}, {% filter %},
// {% raw %} and comments, with Nunjucks's whitespace control. Values print
// as JavaScript prints them: true, 2.5, a list as "a,b".
//
// An eval file is data, not a program: a template cannot read files
// (include, import and extends are errors), call code it did not get, or
// see the environment beyond a Lookup it is given; and Limits bound its
// work and its output, so a template cannot hang or exhaust memory. What
// a template asks for that this package does not do is an error naming
// line and column, never a silent difference.
//
// It imports only the standard library.
package nunjucks

import (
	"fmt"
	"strings"
)

// Error is a problem in a template or in rendering it, at a 1-based line
// and column (in characters) of the template's text.
type Error struct {
	Line, Col int
	Msg       string
}

func (e *Error) Error() string { return fmt.Sprintf("%d:%d: %s", e.Line, e.Col, e.Msg) }

// Template is a parsed template, safe to render many times at once.
type Template struct {
	body []stmt
}

// Parse reads a template.
func Parse(src string) (t *Template, err error) {
	p := &parser{lex: &lexer{src: src}}
	defer func() {
		if e := recover(); e != nil {
			pe, ok := e.(parseError)
			if !ok {
				err = &Error{Line: p.lex.line + 1, Col: p.lex.col + 1, Msg: fmt.Sprintf("cannot read the template: %v", e)}
				return
			}
			err = pe.err
		}
	}()
	return &Template{body: p.parseNodes()}, nil
}

// Default limits.
const (
	DefaultMaxOutput = 1 << 20
	DefaultMaxSteps  = 1_000_000
)

// Options are how a render runs.
type Options struct {
	// MaxOutput bounds the output, and any text made on the way, in
	// bytes; 0 means DefaultMaxOutput.
	MaxOutput int
	// MaxSteps bounds the work: expressions evaluated, loop iterations,
	// list items handled; 0 means DefaultMaxSteps.
	MaxSteps int
	// Undefined, when set, is called for each {{ path }} that prints a
	// variable that is not set (it prints nothing), with the path as
	// written ("vars.user.name") and where it is.
	Undefined func(path string, line, col int)
}

// Render renders t with vars. Values are converted as JavaScript would
// hold them: numbers of any Go type, strings, bools, nil (null), []any,
// map[string]any (whose keys are sorted, having no order; use *Object for
// the order written), *Object and Lookup.
func (t *Template) Render(vars map[string]any, opts Options) (out string, err error) {
	if opts.MaxOutput <= 0 {
		opts.MaxOutput = DefaultMaxOutput
	}
	if opts.MaxSteps <= 0 {
		opts.MaxSteps = DefaultMaxSteps
	}
	ctx := NewObject()
	for k, v := range vars {
		ctx.set(k, fromGo(v))
	}
	return t.render(ctx, opts)
}

// RenderObject is Render with variables in an *Object.
func (t *Template) RenderObject(vars *Object, opts Options) (string, error) {
	if opts.MaxOutput <= 0 {
		opts.MaxOutput = DefaultMaxOutput
	}
	if opts.MaxSteps <= 0 {
		opts.MaxSteps = DefaultMaxSteps
	}
	if vars == nil {
		vars = NewObject()
	}
	return t.render(vars, opts)
}

func (t *Template) render(ctx *Object, opts Options) (out string, err error) {
	r := &renderer{opts: opts, ctx: ctx, frame: &frame{vars: map[string]any{}}}
	defer func() {
		if e := recover(); e != nil {
			re, ok := e.(renderError)
			if !ok {
				err = &Error{Msg: fmt.Sprintf("cannot render the template: %v", e)}
				return
			}
			err = re.err
		}
	}()
	var b strings.Builder
	r.renderBody(&b, t.body)
	return b.String(), nil
}
