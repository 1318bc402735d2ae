package nunjucks

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// The parser follows Nunjucks's grammar and precedence: inline if, or,
// and, not, in, is, comparisons, ~, +, -, *, /, //, %, **, unary minus and
// plus, then filters, which bind tighter than any operator, then primaries
// with their postfix calls, [index] and .name lookups.

type pos struct{ line, col int }

type (
	stmt interface{}
	expr interface{}
)

type (
	textStmt struct {
		pos
		text string
	}
	outputStmt struct {
		pos
		e expr
	}
	ifStmt struct {
		cond        expr
		body, else_ []stmt
	}
	forStmt struct {
		pos
		names       []string
		iter        expr
		body, else_ []stmt
	}
	setStmt struct {
		names   []string
		value   expr   // nil for a block set
		capture []stmt // the body of {% set x %}...{% endset %}
	}
	filterStmt struct {
		pos
		call *filterExpr // its first argument is the captured body
		body []stmt
	}
)

type (
	literal struct{ v any }
	symbol  struct {
		pos
		name string
	}
	lookupExpr struct {
		pos
		target, key expr
	}
	callExpr struct {
		pos
		callee expr
		args   []expr
		kwargs *dictExpr
	}
	filterExpr struct {
		pos
		name   string
		args   []expr // the filtered value first
		kwargs *dictExpr
	}
	binaryExpr struct {
		pos
		op   string
		l, r expr
	}
	unaryExpr struct {
		pos
		op string // "-", "+", "not"
		x  expr
	}
	compareExpr struct {
		first expr
		ops   []string
		rest  []expr
	}
	inlineIf struct {
		cond, body, else_ expr // else_ may be nil
	}
	isExpr struct {
		pos
		x    expr
		test string
		args []expr
	}
	inExpr struct {
		pos
		key, in expr
	}
	arrayExpr struct{ items []expr }
	groupExpr struct{ items []expr }
	dictExpr  struct {
		keys []string
		vals []expr
	}
)

// maxDepth bounds how deeply expressions and blocks nest, so that a
// template of ten thousand "(" cannot exhaust the stack.
const maxDepth = 200

type parser struct {
	lex           *lexer
	peeked        *token
	dropLeadingWS bool
	breakOn       []string
	depth         int
}

// parseError carries an *Error out of the parser's recursion.
type parseError struct{ err *Error }

func (p *parser) failAt(line, col int, format string, a ...any) {
	panic(parseError{&Error{Line: line, Col: col, Msg: fmt.Sprintf(format, a...)}})
}

func (p *parser) fail(t *token, format string, a ...any) {
	if t == nil {
		p.failAt(p.lex.line+1, p.lex.col+1, format, a...)
	}
	p.failAt(t.line, t.col, format, a...)
}

func (p *parser) enter(t *token) {
	p.depth++
	if p.depth > maxDepth {
		p.fail(t, "the template nests more than %d levels deep", maxDepth)
	}
}

func (p *parser) leave() { p.depth-- }

func (p *parser) lexNext() *token {
	t, err := p.lex.next()
	if err != nil {
		panic(parseError{err.(*Error)})
	}
	return t
}

func (p *parser) nextToken(withWS bool) *token {
	if p.peeked != nil {
		if !withWS && p.peeked.typ == tokWhitespace {
			p.peeked = nil
		} else {
			t := p.peeked
			p.peeked = nil
			return t
		}
	}
	t := p.lexNext()
	for !withWS && t != nil && t.typ == tokWhitespace {
		t = p.lexNext()
	}
	return t
}

func (p *parser) next() *token { return p.nextToken(false) }

func (p *parser) peek() *token {
	if p.peeked == nil {
		p.peeked = p.next()
	}
	return p.peeked
}

func (p *parser) push(t *token) { p.peeked = t }

func (p *parser) skip(typ tokType) bool {
	t := p.next()
	if t == nil || t.typ != typ {
		p.push(t)
		return false
	}
	return true
}

func (p *parser) skipValue(typ tokType, v string) bool {
	t := p.next()
	if t == nil || t.typ != typ || t.val != v {
		p.push(t)
		return false
	}
	return true
}

func (p *parser) skipSymbol(v string) bool { return p.skipValue(tokSymbol, v) }

func (p *parser) expect(typ tokType, what string) *token {
	t := p.next()
	if t == nil {
		p.fail(nil, "expected %s, but the template ends", what)
	}
	if t.typ != typ {
		p.fail(t, "expected %s, got %s", what, describe(t))
	}
	return t
}

func describe(t *token) string {
	if t == nil {
		return "the end of the template"
	}
	switch t.typ {
	case tokString:
		return strconv.Quote(t.val)
	case tokData:
		return "text"
	}
	return fmt.Sprintf("%q", t.val)
}

// advanceAfterBlockEnd reads a tag's closing %} (after its name, when
// name is empty).
func (p *parser) advanceAfterBlockEnd(name string) {
	if name == "" {
		t := p.peek()
		if t == nil {
			p.fail(nil, "the template ends inside a tag")
		}
		if t.typ != tokSymbol {
			p.fail(t, "expected a tag name, got %s", describe(t))
		}
		name = p.next().val
	}
	t := p.next()
	if t == nil || t.typ != tokBlockEnd {
		p.fail(t, "expected %%} to close the %s tag, got %s", name, describe(t))
	}
	if strings.HasPrefix(t.val, "-") {
		p.dropLeadingWS = true
	}
}

func (p *parser) advanceAfterVariableEnd() {
	t := p.next()
	if t == nil || t.typ != tokVarEnd {
		p.fail(t, "expected }} to close the expression, got %s", describe(t))
	}
	p.dropLeadingWS = strings.HasPrefix(t.val, "-")
}

// parseNodes reads statements up to the end, or up to a tag in p.breakOn
// (left for the caller).
func (p *parser) parseNodes() []stmt {
	var out []stmt
	for {
		t := p.next()
		if t == nil {
			return out
		}
		switch t.typ {
		case tokData:
			data := t.val
			nt := p.peek()
			if p.dropLeadingWS {
				data = strings.TrimLeftFunc(data, isJSSpace)
				p.dropLeadingWS = false
			}
			if nt != nil && (nt.typ == tokBlockStart && strings.HasSuffix(nt.val, "-") ||
				nt.typ == tokVarStart && strings.HasSuffix(nt.val, "-") ||
				nt.typ == tokComment && strings.HasPrefix(nt.val, "{#-")) {
				data = strings.TrimRightFunc(data, isJSSpace)
			}
			out = append(out, textStmt{pos{t.line, t.col}, data})
		case tokBlockStart:
			p.dropLeadingWS = false
			n, stop := p.parseStatement()
			if stop {
				return out
			}
			if n != nil {
				out = append(out, n)
			}
		case tokVarStart:
			e := p.parseExpression()
			p.dropLeadingWS = false
			p.advanceAfterVariableEnd()
			out = append(out, outputStmt{pos{t.line, t.col}, e})
		case tokComment:
			p.dropLeadingWS = strings.HasSuffix(t.val, "-#}")
		default:
			p.fail(t, "unexpected %s", describe(t))
		}
	}
}

func (p *parser) parseUntil(names ...string) []stmt {
	prev := p.breakOn
	p.breakOn = names
	out := p.parseNodes()
	p.breakOn = prev
	return out
}

// unsupportedTags are Nunjucks tags agenteval does not run: they load
// other templates or define code, and an eval file is data.
var unsupportedTags = map[string]string{
	"include": "it would read another file", "import": "it would read another file", "from": "it would read another file",
	"extends": "it would read another file", "block": "it goes with extends", "macro": "macros are not supported",
	"call": "macros are not supported", "switch": "use if/elif", "asyncEach": "use for", "asyncAll": "use for", "ifAsync": "use if",
}

// parseStatement reads one {% tag %}; stop says it is one of p.breakOn,
// which the caller reads.
func (p *parser) parseStatement() (stmt, bool) {
	t := p.peek()
	if t == nil {
		p.fail(nil, "the template ends inside a tag")
	}
	if t.typ != tokSymbol {
		p.fail(t, "expected a tag name, got %s", describe(t))
	}
	for _, b := range p.breakOn {
		if b == t.val {
			return nil, true
		}
	}
	p.enter(t)
	defer p.leave()
	switch t.val {
	case "raw", "verbatim":
		return p.parseRaw(t.val), false
	case "if":
		return p.parseIf(), false
	case "for":
		return p.parseFor(), false
	case "set":
		return p.parseSet(), false
	case "filter":
		return p.parseFilterStatement(), false
	}
	if why, ok := unsupportedTags[t.val]; ok {
		p.fail(t, "the {%% %s %%} tag is not supported in an eval file's templates: %s", t.val, why)
	}
	p.fail(t, "unknown tag %q (or one without its opening tag)", t.val)
	return nil, false
}

func (p *parser) parseIf() stmt {
	tag := p.next() // if, elif or elseif
	n := &ifStmt{cond: p.parseExpression()}
	p.advanceAfterBlockEnd(tag.val)
	n.body = p.parseUntil("elif", "elseif", "else", "endif")
	t := p.peek()
	if t == nil {
		p.fail(tag, "this {%% %s %%} has no {%% endif %%}", tag.val)
	}
	switch t.val {
	case "elif", "elseif":
		n.else_ = []stmt{p.parseIf()}
	case "else":
		p.advanceAfterBlockEnd("")
		n.else_ = p.parseUntil("endif")
		if p.peek() == nil {
			p.fail(tag, "this {%% %s %%} has no {%% endif %%}", tag.val)
		}
		p.advanceAfterBlockEnd("")
	case "endif":
		p.advanceAfterBlockEnd("")
	}
	return n
}

func (p *parser) parseFor() stmt {
	tag := p.next()
	n := &forStmt{pos: pos{tag.line, tag.col}}
	name := p.parsePrimary(false)
	s, ok := name.(*symbol)
	if !ok {
		p.fail(tag, "a for loop needs a variable name after for")
	}
	n.names = []string{s.name}
	for p.skip(tokComma) {
		s, ok := p.parsePrimary(false).(*symbol)
		if !ok {
			p.fail(tag, "a for loop needs variable names after for")
		}
		n.names = append(n.names, s.name)
	}
	if !p.skipSymbol("in") {
		p.fail(tag, `a for loop needs "in": {%% for x in list %%}`)
	}
	n.iter = p.parseExpression()
	p.advanceAfterBlockEnd("for")
	n.body = p.parseUntil("endfor", "else")
	if p.peek() == nil {
		p.fail(tag, "this {%% for %%} has no {%% endfor %%}")
	}
	if p.skipSymbol("else") {
		p.advanceAfterBlockEnd("else")
		n.else_ = p.parseUntil("endfor")
		if p.peek() == nil {
			p.fail(tag, "this {%% for %%} has no {%% endfor %%}")
		}
	}
	p.advanceAfterBlockEnd("")
	return n
}

func (p *parser) parseSet() stmt {
	tag := p.next()
	n := &setStmt{}
	for {
		s, ok := p.parsePrimary(false).(*symbol)
		if !ok {
			p.fail(tag, "set needs a variable name: {%% set x = ... %%}")
		}
		n.names = append(n.names, s.name)
		if !p.skip(tokComma) {
			break
		}
	}
	if p.skipValue(tokOperator, "=") {
		n.value = p.parseExpression()
		p.advanceAfterBlockEnd("set")
		return n
	}
	if !p.skip(tokBlockEnd) {
		p.fail(tag, "set needs = and a value, or %%} and a block ending in {%% endset %%}")
	}
	n.capture = p.parseUntil("endset")
	if p.peek() == nil {
		p.fail(tag, "this {%% set %%} block has no {%% endset %%}")
	}
	p.advanceAfterBlockEnd("")
	return n
}

func (p *parser) parseFilterStatement() stmt {
	tag := p.next()
	name := p.parseFilterName()
	f := &filterExpr{pos: pos{name.line, name.col}, name: name.val}
	args, kw := p.parseFilterArgs()
	p.advanceAfterBlockEnd("filter")
	body := p.parseUntil("endfilter")
	if p.peek() == nil {
		p.fail(tag, "this {%% filter %%} has no {%% endfilter %%}")
	}
	p.advanceAfterBlockEnd("")
	f.args = append([]expr{nil}, args...) // the body goes first
	f.kwargs = kw
	return &filterStmt{pos: f.pos, call: f, body: body}
}

// parseRaw reads a {% raw %} block's text up to its {% endraw %}, with
// raw blocks inside it kept as text.
func (p *parser) parseRaw(tag string) stmt {
	open := p.next()
	p.advanceAfterBlockEnd(tag)
	re := regexp.MustCompile(`\{%\s*(` + tag + `|end` + tag + `)\s*%\}`)
	rest := p.lex.src[p.lex.i:]
	level := 1
	for _, m := range re.FindAllStringSubmatchIndex(rest, -1) {
		if rest[m[2]:m[3]] == tag {
			level++
			continue
		}
		level--
		if level == 0 {
			p.lex.forwardN(rest[:m[1]])
			return textStmt{pos{open.line, open.col}, rest[:m[0]]}
		}
	}
	p.fail(open, "this {%% %s %%} has no {%% end%s %%}", tag, tag)
	return nil
}

func (p *parser) parseExpression() expr {
	t := p.peek()
	p.enter(t)
	defer p.leave()
	n := p.parseOr()
	if p.skipSymbol("if") {
		c := &inlineIf{body: n, cond: p.parseOr()}
		if p.skipSymbol("else") {
			c.else_ = p.parseOr()
		}
		return c
	}
	return n
}

func (p *parser) parseOr() expr {
	n := p.parseAnd()
	for {
		t := p.peek()
		if !p.skipSymbol("or") {
			return n
		}
		n = &binaryExpr{pos{t.line, t.col}, "or", n, p.parseAnd()}
	}
}

func (p *parser) parseAnd() expr {
	n := p.parseNot()
	for {
		t := p.peek()
		if !p.skipSymbol("and") {
			return n
		}
		n = &binaryExpr{pos{t.line, t.col}, "and", n, p.parseNot()}
	}
}

func (p *parser) parseNot() expr {
	t := p.peek()
	if p.skipSymbol("not") {
		p.enter(t)
		defer p.leave()
		return &unaryExpr{pos{t.line, t.col}, "not", p.parseNot()}
	}
	return p.parseIn()
}

func (p *parser) parseIn() expr {
	n := p.parseIs()
	for {
		t := p.next()
		if t == nil {
			return n
		}
		invert := t.typ == tokSymbol && t.val == "not"
		if !invert {
			p.push(t)
		}
		if p.skipSymbol("in") {
			n = &inExpr{pos{t.line, t.col}, n, p.parseIs()}
			if invert {
				n = &unaryExpr{pos{t.line, t.col}, "not", n}
			}
			continue
		}
		if invert {
			p.push(t)
		}
		return n
	}
}

func (p *parser) parseIs() expr {
	n := p.parseCompare()
	t := p.peek()
	if !p.skipSymbol("is") {
		return n
	}
	not := p.skipSymbol("not")
	right := p.parseCompare()
	is := &isExpr{pos: pos{t.line, t.col}, x: n}
	switch r := right.(type) {
	case *symbol:
		is.test = r.name
	case *callExpr:
		s, ok := r.callee.(*symbol)
		if !ok {
			p.fail(t, "is needs a test name, such as defined or divisibleby(3)")
		}
		is.test, is.args = s.name, r.args
	case *literal:
		is.test = toString(r.v) // x is none, x is null
	default:
		p.fail(t, "is needs a test name, such as defined or divisibleby(3)")
	}
	if not {
		return &unaryExpr{pos{t.line, t.col}, "not", is}
	}
	return is
}

var compareOps = map[string]bool{"==": true, "===": true, "!=": true, "!==": true, "<": true, ">": true, "<=": true, ">=": true}

func (p *parser) parseCompare() expr {
	first := p.parseConcat()
	c := &compareExpr{first: first}
	for {
		t := p.next()
		if t == nil {
			break
		}
		if t.typ == tokOperator && compareOps[t.val] {
			c.ops = append(c.ops, t.val)
			c.rest = append(c.rest, p.parseConcat())
			continue
		}
		p.push(t)
		break
	}
	if len(c.ops) == 0 {
		return first
	}
	return c
}

func (p *parser) parseConcat() expr {
	n := p.parseBinary(0)
	for {
		t := p.peek()
		if !p.skipValue(tokTilde, "~") {
			return n
		}
		n = &binaryExpr{pos{t.line, t.col}, "~", n, p.parseBinary(0)}
	}
}

// binaryLevels are the arithmetic operators from loosest to tightest,
// each level left-associative, as Nunjucks nests parseAdd to parsePow.
var binaryLevels = []string{"+", "-", "*", "/", "//", "%", "**"}

func (p *parser) parseBinary(level int) expr {
	if level == len(binaryLevels) {
		return p.parseUnary(false)
	}
	n := p.parseBinary(level + 1)
	for {
		t := p.peek()
		if !p.skipValue(tokOperator, binaryLevels[level]) {
			return n
		}
		n = &binaryExpr{pos{t.line, t.col}, binaryLevels[level], n, p.parseBinary(level + 1)}
	}
}

func (p *parser) parseUnary(noFilters bool) expr {
	t := p.peek()
	var n expr
	switch {
	case p.skipValue(tokOperator, "-"):
		p.enter(t)
		n = &unaryExpr{pos{t.line, t.col}, "-", p.parseUnary(true)}
		p.leave()
	case p.skipValue(tokOperator, "+"):
		p.enter(t)
		n = &unaryExpr{pos{t.line, t.col}, "+", p.parseUnary(true)}
		p.leave()
	default:
		n = p.parsePrimary(false)
	}
	if !noFilters {
		n = p.parseFilter(n)
	}
	return n
}

func (p *parser) parsePrimary(noPostfix bool) expr {
	t := p.next()
	if t == nil {
		p.fail(nil, "expected an expression, but the template ends")
	}
	var n expr
	switch t.typ {
	case tokString:
		n = &literal{t.val}
	case tokInt:
		v, _ := strconv.ParseFloat(t.val, 64)
		n = &literal{v}
	case tokFloat:
		v, err := strconv.ParseFloat(strings.TrimSuffix(t.val, "."), 64)
		if err != nil {
			p.fail(t, "%q is not a number", t.val)
		}
		n = &literal{v}
	case tokBoolean:
		n = &literal{t.val == "true"}
	case tokNone:
		n = &literal{nil}
	case tokSymbol:
		n = &symbol{pos{t.line, t.col}, t.val}
	default:
		p.push(t)
		n = p.parseAggregate()
		if n == nil {
			p.fail(t, "unexpected %s", describe(t))
		}
	}
	if !noPostfix {
		n = p.parsePostfix(n)
	}
	return n
}

func (p *parser) parsePostfix(n expr) expr {
	for {
		t := p.peek()
		if t == nil {
			return n
		}
		switch {
		case t.typ == tokLParen:
			args, kw := p.parseSignature()
			n = &callExpr{pos{t.line, t.col}, n, args, kw}
		case t.typ == tokLBracket:
			agg := p.parseAggregate().(*arrayExpr)
			if len(agg.items) != 1 {
				p.fail(t, "an index takes one value: x[0], x['key']")
			}
			n = &lookupExpr{pos{t.line, t.col}, n, agg.items[0]}
		case t.typ == tokOperator && t.val == ".":
			p.next()
			v := p.next()
			if v == nil || v.typ != tokSymbol {
				p.fail(v, "expected a name after \".\", got %s", describe(v))
			}
			n = &lookupExpr{pos{t.line, t.col}, n, &literal{v.val}}
		default:
			return n
		}
	}
}

func (p *parser) parseFilterName() *token {
	t := p.expect(tokSymbol, "a filter name")
	name := *t
	for p.skipValue(tokOperator, ".") {
		name.val += "." + p.expect(tokSymbol, "a filter name").val
	}
	return &name
}

func (p *parser) parseFilterArgs() ([]expr, *dictExpr) {
	if t := p.peek(); t != nil && t.typ == tokLParen {
		return p.parseSignature()
	}
	return nil, nil
}

func (p *parser) parseFilter(n expr) expr {
	for p.skip(tokPipe) {
		name := p.parseFilterName()
		args, kw := p.parseFilterArgs()
		n = &filterExpr{pos{name.line, name.col}, name.val, append([]expr{n}, args...), kw}
	}
	return n
}

// parseAggregate reads (...), [...] or {...}; nil when none starts here.
func (p *parser) parseAggregate() expr {
	t := p.next()
	if t == nil {
		return nil
	}
	var closer tokType
	switch t.typ {
	case tokLParen:
		closer = tokRParen
	case tokLBracket:
		closer = tokRBracket
	case tokLCurly:
		closer = tokRCurly
	default:
		p.push(t)
		return nil
	}
	p.enter(t)
	defer p.leave()
	var items []expr
	d := &dictExpr{}
	for {
		nt := p.peek()
		if nt == nil {
			p.fail(t, "this %s is not closed", t.val)
		}
		if nt.typ == tokRParen || nt.typ == tokRBracket || nt.typ == tokRCurly {
			if nt.typ != closer {
				p.fail(nt, "expected %s, got %s", closer, describe(nt))
			}
			p.next()
			break
		}
		if len(items) > 0 || len(d.keys) > 0 {
			if !p.skip(tokComma) {
				p.fail(t, "expected a comma between the items of this %s", t.val)
			}
		}
		if closer == tokRCurly {
			kt := p.peek()
			key := p.parsePrimary(false)
			var name string
			switch k := key.(type) {
			case *symbol:
				name = k.name
			case *literal:
				s, ok := k.v.(string)
				if !ok {
					p.fail(kt, "a dict's keys are names or strings")
				}
				name = s
			default:
				p.fail(kt, "a dict's keys are names or strings")
			}
			if !p.skip(tokColon) {
				p.fail(t, "expected a colon after the dict key %q", name)
			}
			d.keys = append(d.keys, name)
			d.vals = append(d.vals, p.parseExpression())
			continue
		}
		items = append(items, p.parseExpression())
	}
	switch closer {
	case tokRParen:
		return &groupExpr{items}
	case tokRBracket:
		return &arrayExpr{items}
	}
	return d
}

// parseSignature reads a call's (args, name=value).
func (p *parser) parseSignature() ([]expr, *dictExpr) {
	open := p.next() // (
	p.enter(open)
	defer p.leave()
	var args []expr
	var kw *dictExpr
	for first := true; ; first = false {
		t := p.peek()
		if t == nil {
			p.fail(open, "this ( is not closed")
		}
		if t.typ == tokRParen {
			p.next()
			return args, kw
		}
		if !first && !p.skip(tokComma) {
			p.fail(t, "expected a comma between arguments, got %s", describe(t))
		}
		a := p.parseExpression()
		if p.skipValue(tokOperator, "=") {
			s, ok := a.(*symbol)
			if !ok {
				p.fail(t, "a keyword argument needs a name: name=value")
			}
			if kw == nil {
				kw = &dictExpr{}
			}
			kw.keys = append(kw.keys, s.name)
			kw.vals = append(kw.vals, p.parseExpression())
			continue
		}
		args = append(args, a)
	}
}
