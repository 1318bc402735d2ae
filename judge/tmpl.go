package judge

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// This file is the prompts' template engine: the part of text/template's
// language that prompts/*.txt, prompts/rules.tmpl and the simulated user's
// prompt use, rendering exactly what text/template renders for it (a test
// compares the two on every prompt). It stands in for text/template, whose
// lookup of methods by name (reflect.Value.MethodByName) made the linker
// keep every exported method of every type in the binary.
//
// The language:
//
//	text                        copied; {{- and -}} trim the white space
//	                            (space, tab, CR, LF) before and after an action
//	{{x}}                       prints x: a string as is, nil as "<no value>",
//	                            anything else as fmt.Sprint does
//	operands x                  . .Field.Field $ $var $var.Field "string" `raw`
//	calls                       fn x...: the functions of funcs (quote.go),
//	                            index item key, printf format x...
//	{{if x}} {{else}} {{end}}   false: nil, false, 0, "" and empty slices and maps
//	{{with x}} {{else}} {{end}} like if, with x as . inside
//	{{range x}}                 over a slice, array, map with string keys (in
//	{{range $e := x}}           key order) or integer n (0 to n-1), with each
//	{{range $i, $e := x}}       element as . and, declared, as $e and its index
//	                            or key as $i; {{else}} runs when there is
//	                            nothing to range over
//	{{define "name"}}…{{end}}   at the top level only
//	{{template "name" x}}       runs a defined template with x as . and $
//
// Fields are read from maps with string keys (and pointers to them) only:
// not from structs, and no methods are called. A missing key is an error,
// as under text/template's missingkey=error. Everything else text/template
// knows (pipes, parentheses, comments, numbers, true, false, nil, variable
// declarations outside range, else if, block, break, continue) is a parse
// error that names the prompt and the line.

// spaceChars are the characters a trim marker trims, as in text/template.
const spaceChars = " \t\r\n"

func isSpaceByte(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

type nodeKind uint8

const (
	nText nodeKind = iota
	nPrint
	nIf
	nWith
	nRange
	nTemplate
)

// tnode is a piece of a parsed template.
type tnode struct {
	kind nodeKind
	text string // nText
	// cmd is what an action evaluates; nil for a template call without
	// argument.
	cmd            *tcmd
	list, elseList []*tnode
	nvars          int      // nRange: how many variables it declares
	name           string   // nTemplate: the template called
	body           []*tnode // nTemplate: its nodes, once linked
	// where (the prompt or file), line and src (the action as written)
	// place the node in errors.
	where string
	line  int
	src   string
}

func (n *tnode) errorf(format string, args ...any) error {
	return fmt.Errorf("%s, line %d: %s: "+format, append([]any{n.where, n.line, n.src}, args...)...)
}

// tcmd is a command: a single operand, or a function and its arguments.
type tcmd struct {
	fn   *tfunc
	args []targ
}

type argKind uint8

const (
	aString argKind = iota
	aDot            // ., or fields of it
	aVar            // a variable, or fields of it
)

// targ is an operand.
type targ struct {
	kind   argKind
	str    string
	slot   int // aVar: the variable's index in the frame
	fields []string
}

// tfunc is a function templates may call.
type tfunc struct {
	name string
	// arity is the number of arguments; -1 is one or more.
	arity int
	call  func(args []any) (any, error)
}

// templateFuncs are the functions of funcs(placeholder) and the builtins
// index and printf, for parsing. Their signatures are the few funcs uses.
var templateFuncs = sync.OnceValues(func() (map[string]*tfunc, error) {
	out := map[string]*tfunc{
		"index":  {name: "index", arity: 2, call: indexFunc},
		"printf": {name: "printf", arity: -1, call: printfFunc},
	}
	for name, f := range funcs(placeholder) {
		fn, err := adaptFunc(name, f)
		if err != nil {
			return nil, err
		}
		out[name] = fn
	}
	return out, nil
})

func adaptFunc(name string, f any) (*tfunc, error) {
	switch f := f.(type) {
	case func() string:
		return &tfunc{name, 0, func([]any) (any, error) { return f(), nil }}, nil
	case func(any) (string, error):
		return &tfunc{name, 1, func(a []any) (any, error) { return f(a[0]) }}, nil
	case func(string, any) (string, error):
		return &tfunc{name, 2, func(a []any) (any, error) {
			s, err := stringArg(a[0])
			if err != nil {
				return nil, err
			}
			return f(s, a[1])
		}}, nil
	case func(string, []KeyedCriterion) (string, error):
		return &tfunc{name, 2, func(a []any) (any, error) {
			s, err := stringArg(a[0])
			if err != nil {
				return nil, err
			}
			// An untyped nil is refused too, as text/template refuses a
			// nil from a map[string]any.
			items, ok := a[1].([]KeyedCriterion)
			if !ok {
				return nil, fmt.Errorf("wrong type for value; expected []judge.KeyedCriterion; got %T", a[1])
			}
			return f(s, items)
		}}, nil
	}
	return nil, fmt.Errorf("template function %s has a signature (%T) the template engine does not call", name, f)
}

func stringArg(v any) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case nil:
		return "", fmt.Errorf("invalid value; expected string")
	default:
		return "", fmt.Errorf("wrong type for value; expected string; got %T", v)
	}
}

func printfFunc(a []any) (any, error) {
	format, err := stringArg(a[0])
	if err != nil {
		return nil, err
	}
	return fmt.Sprintf(format, a[1:]...), nil
}

var stringType = reflect.TypeFor[string]()

// indexFunc is text/template's index with one key: a map with string keys
// by a string (a missing key gives the zero value), a slice or array by an
// int.
func indexFunc(a []any) (any, error) {
	item, key := a[0], a[1]
	switch m := item.(type) {
	case nil:
		return nil, fmt.Errorf("index of untyped nil")
	case map[string]any:
		k, err := stringArg(key)
		if err != nil {
			return nil, err
		}
		return m[k], nil
	case map[string]string:
		k, err := stringArg(key)
		if err != nil {
			return nil, err
		}
		return m[k], nil
	}
	v := reflect.ValueOf(item)
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil, fmt.Errorf("index of nil pointer")
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Map:
		if v.Type().Key() != stringType {
			return nil, fmt.Errorf("can't index a map with %s keys", v.Type().Key())
		}
		k, err := stringArg(key)
		if err != nil {
			return nil, err
		}
		x := v.MapIndex(reflect.ValueOf(k))
		if !x.IsValid() {
			return reflect.Zero(v.Type().Elem()).Interface(), nil
		}
		return x.Interface(), nil
	case reflect.Slice, reflect.Array:
		i, ok := key.(int)
		if !ok {
			return nil, fmt.Errorf("cannot index slice/array with type %T", key)
		}
		if i < 0 || i >= v.Len() {
			return nil, fmt.Errorf("index out of range: %d", i)
		}
		return v.Index(i).Interface(), nil
	}
	return nil, fmt.Errorf("can't index item of type %T", item)
}

// --- parsing

type tokKind uint8

const (
	tWord   tokKind = iota // an identifier, keyword, field chain or variable
	tString                // a string literal, unquoted
	tComma
	tAssign // :=
)

type token struct {
	kind tokKind
	s    string
}

// parser parses one template text; defs collects its {{define}}s.
type parser struct {
	where string
	funcs map[string]*tfunc
	defs  map[string][]*tnode
	// vars are the variables in scope, $ first.
	vars []string
	// cur is the list nodes go to; stack holds the blocks still open.
	cur   *[]*tnode
	stack []open
	// line and src place the action being parsed.
	line int
	src  string
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("%s, line %d: %s", p.where, p.line, fmt.Sprintf(format, args...))
}

// open is a block whose {{end}} is still to come.
type open struct {
	n      *tnode    // nil for a define
	def    string    // a define's name
	body   *[]*tnode // a define's nodes
	inElse bool
	vars   int       // variables the block declared
	parent *[]*tnode // the list the block's node is in
	line   int
	src    string
}

// parse parses text, whose first line is line firstLine, into the nodes of
// the main template; defines go to p.defs.
func (p *parser) parse(text string, firstLine int) ([]*tnode, error) {
	var root []*tnode
	p.cur, p.stack, p.vars = &root, nil, []string{"$"}
	addText := func(t string) {
		if t != "" {
			*p.cur = append(*p.cur, &tnode{kind: nText, text: t})
		}
	}
	line := firstLine
	pos := 0
	trimNext := false // the last action ended with a trim marker
	for {
		i := strings.Index(text[pos:], "{{")
		if i < 0 {
			t := text[pos:]
			if trimNext {
				t = strings.TrimLeft(t, spaceChars)
			}
			addText(t)
			break
		}
		start := pos + i
		t := text[pos:start]
		line += strings.Count(t, "\n")
		inner := start + 2
		left := len(text) >= inner+2 && text[inner] == '-' && isSpaceByte(text[inner+1])
		if trimNext {
			t = strings.TrimLeft(t, spaceChars)
		}
		if left {
			t = strings.TrimRight(t, spaceChars)
			inner += 2
		}
		addText(t)
		p.line = line
		end, right, err := p.closeOf(text, inner)
		if err != nil {
			return nil, err
		}
		content := text[inner:end]
		if right {
			content = text[inner : end-2]
		}
		p.src = text[start : end+2]
		line += strings.Count(p.src, "\n")
		pos = end + 2
		trimNext = right
		if err := p.action(content); err != nil {
			return nil, err
		}
	}
	if len(p.stack) > 0 {
		o := p.stack[len(p.stack)-1]
		p.line = o.line
		return nil, p.errorf("%s has no {{end}}", o.src)
	}
	return root, nil
}

// action parses the content of an action.
func (p *parser) action(content string) error {
	toks, err := p.tokens(content)
	if err != nil {
		return err
	}
	if len(toks) == 0 {
		return p.errorf("empty action %s", p.src)
	}
	word := ""
	if toks[0].kind == tWord {
		word = toks[0].s
	}
	node := func(kind nodeKind) *tnode {
		n := &tnode{kind: kind, where: p.where, line: p.line, src: p.src}
		*p.cur = append(*p.cur, n)
		return n
	}
	switch word {
	case "if", "with", "range":
		var names []string
		rest := toks[1:]
		if word == "range" {
			if names, rest, err = p.rangeDecl(rest); err != nil {
				return err
			}
		}
		if len(rest) == 0 {
			return p.errorf("missing value for %s", word)
		}
		cmd, err := p.command(rest)
		if err != nil {
			return err
		}
		kind := nIf
		switch word {
		case "with":
			kind = nWith
		case "range":
			kind = nRange
		}
		n := node(kind)
		n.cmd, n.nvars = cmd, len(names)
		p.vars = append(p.vars, names...)
		p.stack = append(p.stack, open{n: n, vars: len(names), parent: p.cur, line: p.line, src: p.src})
		p.cur = &n.list
	case "else":
		if len(toks) > 1 {
			return p.errorf("%s is not supported: write {{else}} and nest the %s inside it", p.src, toks[1].s)
		}
		if len(p.stack) == 0 || p.stack[len(p.stack)-1].n == nil {
			return p.errorf("unexpected {{else}}")
		}
		o := &p.stack[len(p.stack)-1]
		if o.inElse {
			return p.errorf("a second {{else}} for %s on line %d", o.src, o.line)
		}
		o.inElse = true
		// The variables of a range are for its body only.
		p.vars = p.vars[:len(p.vars)-o.vars]
		o.vars = 0
		p.cur = &o.n.elseList
	case "end":
		if len(toks) > 1 {
			return p.errorf("unexpected %q in {{end}}", toks[1].s)
		}
		if len(p.stack) == 0 {
			return p.errorf("unexpected {{end}}")
		}
		o := p.stack[len(p.stack)-1]
		p.stack = p.stack[:len(p.stack)-1]
		p.vars = p.vars[:len(p.vars)-o.vars]
		if o.n == nil {
			p.defs[o.def] = *o.body
			p.vars = []string{"$"}
		}
		p.cur = o.parent
	case "define":
		if len(p.stack) > 0 {
			o := p.stack[len(p.stack)-1]
			return p.errorf("{{define}} inside %s on line %d: defines stand at the top level", o.src, o.line)
		}
		if len(toks) != 2 || toks[1].kind != tString {
			return p.errorf("{{define}} takes a quoted name and nothing else")
		}
		name := toks[1].s
		if _, ok := p.defs[name]; ok {
			return p.errorf("template %q is defined twice", name)
		}
		p.defs[name] = nil
		body := new([]*tnode)
		p.stack = append(p.stack, open{def: name, body: body, parent: p.cur, line: p.line, src: p.src})
		p.cur = body
		p.vars = []string{"$"}
	case "template":
		if len(toks) < 2 || toks[1].kind != tString {
			return p.errorf("{{template}} takes a quoted name, then optionally a value")
		}
		var cmd *tcmd
		if len(toks) > 2 {
			if cmd, err = p.command(toks[2:]); err != nil {
				return err
			}
		}
		n := node(nTemplate)
		n.name, n.cmd = toks[1].s, cmd
	case "block", "break", "continue":
		return p.errorf("{{%s}} is not supported", word)
	default:
		if len(toks) > 1 && strings.HasPrefix(word, "$") && (toks[1].kind == tAssign || toks[1].kind == tComma) {
			return p.errorf("variables may only be declared by range")
		}
		cmd, err := p.command(toks)
		if err != nil {
			return err
		}
		node(nPrint).cmd = cmd
	}
	return nil
}

// closeOf finds the "}}" closing the action whose content starts at from,
// skipping string literals, and reports whether a trim marker precedes it.
func (p *parser) closeOf(text string, from int) (end int, right bool, err error) {
	for j := from; j < len(text); j++ {
		switch c := text[j]; c {
		case '"', '`':
			k, err := p.skipString(text, j)
			if err != nil {
				return 0, false, err
			}
			j = k
		case '}':
			if j+1 < len(text) && text[j+1] == '}' {
				right := j-2 >= from && text[j-1] == '-' && isSpaceByte(text[j-2])
				return j, right, nil
			}
		}
	}
	return 0, false, p.errorf("unclosed action")
}

// skipString returns the index of the quote closing the literal at i.
func (p *parser) skipString(text string, i int) (int, error) {
	q := text[i]
	for j := i + 1; j < len(text); j++ {
		switch text[j] {
		case q:
			return j, nil
		case '\\':
			if q == '"' {
				j++
			}
		case '\n':
			if q == '"' {
				return 0, p.errorf("unterminated quoted string")
			}
		}
	}
	return 0, p.errorf("unterminated quoted string")
}

// tokens splits an action's content into tokens.
func (p *parser) tokens(s string) ([]token, error) {
	var out []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case isSpaceByte(c):
			i++
		case c == '"' || c == '`':
			j, err := p.skipString(s, i)
			if err != nil {
				return nil, err
			}
			v, err := strconv.Unquote(s[i : j+1])
			if err != nil {
				return nil, p.errorf("bad string %s: %v", s[i:j+1], err)
			}
			out = append(out, token{tString, v})
			i = j + 1
			if err := p.separated(s, i, s[:i]); err != nil {
				return nil, err
			}
		case c == ',':
			out = append(out, token{tComma, ","})
			i++
		case c == ':' && i+1 < len(s) && s[i+1] == '=':
			out = append(out, token{tAssign, ":="})
			i += 2
		case c == '.' || c == '$' || c == '_' || c >= 0x80 || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i
			for j < len(s) {
				c := s[j]
				if !(c == '.' || c == '$' || c == '_' || c >= 0x80 || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
					break
				}
				j++
			}
			out = append(out, token{tWord, s[i:j]})
			if err := p.separated(s, j, s[i:j]); err != nil {
				return nil, err
			}
			i = j
		default:
			r, _ := utf8.DecodeRuneInString(s[i:])
			switch r {
			case '|':
				return nil, p.errorf("pipes are not supported")
			case '(', ')':
				return nil, p.errorf("parentheses are not supported")
			case '/':
				return nil, p.errorf("comments are not supported")
			case '=':
				return nil, p.errorf("assignments are not supported")
			case '-', '+':
				return nil, p.errorf("numbers are not supported")
			}
			return nil, p.errorf("unexpected %q", r)
		}
	}
	return out, nil
}

// separated refuses an operand or string at s[i] that directly follows
// the token that ends there, as text/template does: it reads
// {{quote"reply" .X}} and {{"a".X}} as errors, not as two arguments.
func (p *parser) separated(s string, i int, prev string) error {
	if i >= len(s) {
		return nil
	}
	switch c := s[i]; {
	case c == '"' || c == '`' || c == '.' || c == '$' || c == '_' || c >= 0x80 || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		r, _ := utf8.DecodeRuneInString(s[i:])
		return p.errorf("unexpected %q after %s: separate arguments with a space", r, prev)
	}
	return nil
}

// rangeDecl reads "$e :=" or "$i, $e :=" at the start of toks.
func (p *parser) rangeDecl(toks []token) (names []string, rest []token, err error) {
	isVar := func(i int) bool {
		return i < len(toks) && toks[i].kind == tWord && len(toks[i].s) > 1 && toks[i].s[0] == '$' && isIdent(toks[i].s[1:])
	}
	switch {
	case isVar(0) && len(toks) > 1 && toks[1].kind == tAssign:
		return []string{toks[0].s}, toks[2:], nil
	case isVar(0) && isVar(2) && len(toks) > 3 && toks[1].kind == tComma && toks[3].kind == tAssign:
		return []string{toks[0].s, toks[2].s}, toks[4:], nil
	}
	for _, t := range toks {
		if t.kind == tAssign || t.kind == tComma {
			return nil, nil, p.errorf("range declares $elem := or $index, $elem :=")
		}
	}
	return nil, toks, nil
}

var keywords = map[string]bool{
	"if": true, "else": true, "end": true, "with": true, "range": true, "define": true, "template": true,
	"block": true, "break": true, "continue": true, "nil": true, "true": true, "false": true,
}

// command parses a function call or a single operand.
func (p *parser) command(toks []token) (*tcmd, error) {
	t := toks[0]
	if t.kind == tWord && isIdent(t.s) && !keywords[t.s] {
		fn, ok := p.funcs[t.s]
		if !ok {
			return nil, p.errorf("function %q not defined", t.s)
		}
		c := &tcmd{fn: fn}
		for _, a := range toks[1:] {
			arg, err := p.operand(a)
			if err != nil {
				return nil, err
			}
			c.args = append(c.args, arg)
		}
		if fn.arity >= 0 && len(c.args) != fn.arity || fn.arity < 0 && len(c.args) == 0 {
			want := strconv.Itoa(fn.arity)
			if fn.arity < 0 {
				want = "at least 1"
			}
			return nil, p.errorf("wrong number of arguments for %s: want %s, got %d", fn.name, want, len(c.args))
		}
		return c, nil
	}
	arg, err := p.operand(t)
	if err != nil {
		return nil, err
	}
	if len(toks) > 1 {
		return nil, p.errorf("%s is not a function, so it takes no arguments", t.s)
	}
	return &tcmd{args: []targ{arg}}, nil
}

func (p *parser) operand(t token) (targ, error) {
	switch t.kind {
	case tString:
		return targ{kind: aString, str: t.s}, nil
	case tComma, tAssign:
		return targ{}, p.errorf("unexpected %q", t.s)
	}
	s := t.s
	switch {
	case s == ".":
		return targ{kind: aDot}, nil
	case s[0] == '.':
		fields, err := p.fields(s)
		return targ{kind: aDot, fields: fields}, err
	case s[0] == '$':
		name, chain, _ := strings.Cut(s, ".")
		if name != "$" && !isIdent(name[1:]) {
			return targ{}, p.errorf("bad variable %s", s)
		}
		slot := -1
		for i := len(p.vars) - 1; i >= 0; i-- {
			if p.vars[i] == name {
				slot = i
				break
			}
		}
		if slot < 0 {
			return targ{}, p.errorf("undefined variable %q", name)
		}
		a := targ{kind: aVar, slot: slot}
		if chain != "" || strings.HasSuffix(s, ".") {
			var err error
			if a.fields, err = p.fields("." + chain); err != nil {
				return targ{}, err
			}
		}
		return a, nil
	case s[0] >= '0' && s[0] <= '9':
		return targ{}, p.errorf("numbers are not supported")
	case s == "nil" || s == "true" || s == "false":
		return targ{}, p.errorf("%s is not supported", s)
	case keywords[s]:
		return targ{}, p.errorf("unexpected %s", s)
	case isIdent(s):
		return targ{}, p.errorf("function %s as an argument is not supported", s)
	}
	return targ{}, p.errorf("bad operand %s", s)
}

// fields splits ".A.B" into its field names.
func (p *parser) fields(s string) ([]string, error) {
	out := strings.Split(s[1:], ".")
	for _, f := range out {
		if !isIdent(f) {
			return nil, p.errorf("bad field %s", s)
		}
	}
	return out, nil
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || unicode.IsLetter(r) || i > 0 && unicode.IsDigit(r)) {
			return false
		}
	}
	return true
}

// link points every template call in list at the template it calls.
func link(list []*tnode, defs ...map[string][]*tnode) error {
	for _, n := range list {
		if n.kind == nTemplate {
			found := false
			for _, d := range defs {
				if body, ok := d[n.name]; ok {
					n.body, found = body, true
					break
				}
			}
			if !found {
				return n.errorf("no template named %q", n.name)
			}
		}
		if err := link(n.list, defs...); err != nil {
			return err
		}
		if err := link(n.elseList, defs...); err != nil {
			return err
		}
	}
	return nil
}

// rulesDefs are the templates of prompts/rules.tmpl, shared by every
// prompt.
var rulesDefs = sync.OnceValues(func() (map[string][]*tnode, error) {
	const file = "prompts/rules.tmpl"
	b, err := promptFS.ReadFile(file)
	if err != nil {
		return nil, err
	}
	fns, err := templateFuncs()
	if err != nil {
		return nil, err
	}
	p := &parser{where: file, funcs: fns, defs: map[string][]*tnode{}}
	root, err := p.parse(string(b), 1)
	if err != nil {
		return nil, err
	}
	for _, n := range root {
		if n.kind != nText || strings.TrimSpace(n.text) != "" {
			return nil, fmt.Errorf("%s: only {{define}}s may stand outside a define", file)
		}
	}
	for _, body := range p.defs {
		if err := link(body, p.defs); err != nil {
			return nil, err
		}
	}
	return p.defs, nil
})

// parseTemplate parses a prompt's text whose first line is line firstLine
// of its file; the templates of rules.tmpl are available to it.
func parseTemplate(name, text string, firstLine int) (*Template, error) {
	rules, err := rulesDefs()
	if err != nil {
		return nil, err
	}
	fns, err := templateFuncs()
	if err != nil {
		return nil, err
	}
	lead := len(text) - len(strings.TrimLeftFunc(text, unicode.IsSpace))
	firstLine += strings.Count(text[:lead], "\n")
	p := &parser{where: "prompt " + name, funcs: fns, defs: map[string][]*tnode{}}
	root, err := p.parse(strings.TrimSpace(text), firstLine)
	if err != nil {
		return nil, err
	}
	for d := range p.defs {
		if _, ok := rules[d]; ok {
			return nil, fmt.Errorf("prompt %s: template %q is already defined in prompts/rules.tmpl", name, d)
		}
	}
	if err := link(root, p.defs, rules); err != nil {
		return nil, err
	}
	for _, body := range p.defs {
		if err := link(body, p.defs, rules); err != nil {
			return nil, err
		}
	}
	return &Template{root: root}, nil
}

// --- execution

// maxDepth bounds nested template calls.
const maxDepth = 100

// state is one rendering.
type state struct {
	b *strings.Builder
	// vars is the frame of variables: $, then those of the ranges entered.
	vars  []any
	depth int
}

func (t *Template) run(b *strings.Builder, data any) error {
	s := state{b: b, vars: make([]any, 1, 4)}
	s.vars[0] = data
	return s.walk(data, t.root)
}

func (s *state) walk(dot any, list []*tnode) error {
	for _, n := range list {
		if err := s.node(dot, n); err != nil {
			return err
		}
	}
	return nil
}

func (s *state) node(dot any, n *tnode) error {
	switch n.kind {
	case nText:
		s.b.WriteString(n.text)
		return nil
	case nPrint:
		v, err := s.eval(dot, n)
		if err != nil {
			return err
		}
		return s.print(n, v)
	case nIf, nWith:
		v, err := s.eval(dot, n)
		if err != nil {
			return err
		}
		ok, err := truth(v)
		if err != nil {
			return n.errorf("%v", err)
		}
		switch {
		case !ok:
			return s.walk(dot, n.elseList)
		case n.kind == nWith:
			return s.walk(v, n.list)
		}
		return s.walk(dot, n.list)
	case nRange:
		return s.walkRange(dot, n)
	case nTemplate:
		var arg any
		if n.cmd != nil {
			v, err := s.eval(dot, n)
			if err != nil {
				return err
			}
			arg = v
		}
		if s.depth >= maxDepth {
			return n.errorf("templates call each other more than %d deep", maxDepth)
		}
		saved := s.vars
		s.vars = []any{arg}
		s.depth++
		err := s.walk(arg, n.body)
		s.depth--
		s.vars = saved
		if err != nil {
			return n.errorf("%w", err)
		}
		return nil
	}
	return n.errorf("unknown node")
}

// eval evaluates n's command.
func (s *state) eval(dot any, n *tnode) (any, error) {
	c := n.cmd
	if c.fn == nil {
		v, err := s.operand(dot, &c.args[0])
		if err != nil {
			return nil, n.errorf("%v", err)
		}
		return v, nil
	}
	var buf [3]any
	args := buf[:0]
	for i := range c.args {
		v, err := s.operand(dot, &c.args[i])
		if err != nil {
			return nil, n.errorf("%v", err)
		}
		args = append(args, v)
	}
	v, err := safeCall(c.fn, args)
	if err != nil {
		return nil, n.errorf("error calling %s: %w", c.fn.name, err)
	}
	return v, nil
}

// safeCall calls fn, turning a panic into its error, as text/template
// did: a function that meets odd data (a nil pointer whose String method
// it calls) fails the rendering, not the process.
func safeCall(fn *tfunc, args []any) (v any, err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok {
				err = e
			} else {
				err = fmt.Errorf("%v", r)
			}
		}
	}()
	return fn.call(args)
}

func (s *state) operand(dot any, a *targ) (any, error) {
	var v any
	switch a.kind {
	case aString:
		return a.str, nil
	case aDot:
		v = dot
	case aVar:
		v = s.vars[a.slot]
	}
	for _, f := range a.fields {
		var err error
		if v, err = field(v, f); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// field reads the entry name of the map v: text/template's field
// evaluation under missingkey=error, for maps.
func field(v any, name string) (any, error) {
	switch m := v.(type) {
	case nil:
		return nil, fmt.Errorf("nil data; no entry for key %q", name)
	case map[string]any:
		x, ok := m[name]
		if !ok {
			return nil, fmt.Errorf("map has no entry for key %q", name)
		}
		return x, nil
	case map[string]string:
		x, ok := m[name]
		if !ok {
			return nil, fmt.Errorf("map has no entry for key %q", name)
		}
		return x, nil
	}
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return nil, fmt.Errorf("nil pointer evaluating %T.%s", v, name)
		}
		rv = rv.Elem()
	}
	if rv.Kind() == reflect.Map && rv.Type().Key() == stringType {
		x := rv.MapIndex(reflect.ValueOf(name))
		if !x.IsValid() {
			return nil, fmt.Errorf("map has no entry for key %q", name)
		}
		return x.Interface(), nil
	}
	return nil, fmt.Errorf("can't evaluate field %s in type %T: prompt data is read from maps with string keys only", name, v)
}

// print writes v as text/template prints it.
func (s *state) print(n *tnode, v any) error {
	switch v := v.(type) {
	case string:
		s.b.WriteString(v)
		return nil
	case nil:
		s.b.WriteString("<no value>")
		return nil
	case int:
		s.b.WriteString(strconv.Itoa(v))
		return nil
	}
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface {
		if rv.IsNil() {
			break
		}
		rv = rv.Elem()
	}
	x := rv.Interface()
	if !printsItself(x) {
		if rv.CanAddr() && printsItself(rv.Addr().Interface()) {
			x = rv.Addr().Interface()
		} else if k := rv.Kind(); k == reflect.Chan || k == reflect.Func {
			return n.errorf("can't print %s of type %s", n.src, rv.Type())
		}
	}
	fmt.Fprint(s.b, x)
	return nil
}

func printsItself(x any) bool {
	switch x.(type) {
	case error, fmt.Stringer:
		return true
	}
	return false
}

// truth is text/template's truth of a value for if and with.
func truth(v any) (bool, error) {
	switch v := v.(type) {
	case nil:
		return false, nil
	case string:
		return v != "", nil
	case bool:
		return v, nil
	case int:
		return v != 0, nil
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return rv.Len() > 0, nil
	case reflect.Bool:
		return rv.Bool(), nil
	case reflect.Complex64, reflect.Complex128:
		return rv.Complex() != 0, nil
	case reflect.Chan, reflect.Func, reflect.Pointer, reflect.Interface:
		return !rv.IsNil(), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int() != 0, nil
	case reflect.Float32, reflect.Float64:
		return rv.Float() != 0, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return rv.Uint() != 0, nil
	case reflect.Struct:
		return true, nil
	}
	return false, fmt.Errorf("if/with can't use %v", v)
}

func (s *state) walkRange(dot any, n *tnode) error {
	v, err := s.eval(dot, n)
	if err != nil {
		return err
	}
	mark := len(s.vars)
	defer func() { s.vars = s.vars[:mark] }()
	each := func(i, elem any) error {
		s.vars = s.vars[:mark]
		switch n.nvars {
		case 1:
			s.vars = append(s.vars, elem)
		case 2:
			s.vars = append(s.vars, i, elem)
		}
		return s.walk(elem, n.list)
	}
	ran := false
	switch x := v.(type) {
	case []string:
		for i, e := range x {
			if err := each(i, e); err != nil {
				return err
			}
		}
		ran = len(x) > 0
	default:
		rv := reflect.ValueOf(v)
		for rv.Kind() == reflect.Pointer && !rv.IsNil() {
			rv = rv.Elem()
		}
		switch rv.Kind() {
		case reflect.Invalid:
		case reflect.Slice, reflect.Array:
			for i := range rv.Len() {
				if err := each(i, rv.Index(i).Interface()); err != nil {
					return err
				}
			}
			ran = rv.Len() > 0
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			// 0, 1, … n-1, of n's type.
			if n.nvars > 1 {
				return n.errorf("can't use %v to iterate over more than one variable", v)
			}
			for i := range rv.Seq() {
				if err := each(nil, i.Interface()); err != nil {
					return err
				}
				ran = true
			}
		case reflect.Map:
			if rv.Type().Key().Kind() != reflect.String {
				return n.errorf("range over a map with %s keys is not supported", rv.Type().Key())
			}
			keys := rv.MapKeys()
			sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
			for _, k := range keys {
				if err := each(k.Interface(), rv.MapIndex(k).Interface()); err != nil {
					return err
				}
			}
			ran = len(keys) > 0
		default:
			return n.errorf("range can't iterate over %v", v)
		}
	}
	if !ran {
		s.vars = s.vars[:mark]
		return s.walk(dot, n.elseList)
	}
	return nil
}
