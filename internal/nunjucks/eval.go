package nunjucks

import (
	"fmt"
	"math"
	"strings"
)

type frame struct {
	vars   map[string]any
	parent *frame
}

func (f *frame) lookup(name string) (any, bool) {
	for ; f != nil; f = f.parent {
		if v, ok := f.vars[name]; ok && v != undefinedValue {
			return v, true
		}
	}
	return nil, false
}

// set sets name where it is already set, else in f: a {% set %} inside a
// loop changes the variable outside it, as in Nunjucks.
func (f *frame) set(name string, v any) {
	for g := f; g != nil; g = g.parent {
		if old, ok := g.vars[name]; ok && old != undefinedValue {
			g.vars[name] = v
			return
		}
	}
	f.vars[name] = v
}

type renderer struct {
	opts  Options
	ctx   *Object
	steps int
	frame *frame
}

// renderError carries an *Error out of the evaluation's recursion.
type renderError struct{ err *Error }

func (r *renderer) fail(at pos, format string, a ...any) {
	panic(renderError{&Error{Line: at.line, Col: at.col, Msg: fmt.Sprintf(format, a...)}})
}

// step counts one unit of work, and stops a template that does too much.
func (r *renderer) step(at pos, n int) {
	r.steps += n
	if r.steps > r.opts.MaxSteps {
		r.fail(at, "the template does more than %d steps of work (a loop too long?)", r.opts.MaxSteps)
	}
}

// checkLen stops a string that grows past the output limit.
func (r *renderer) checkLen(at pos, n int) {
	if n > r.opts.MaxOutput {
		r.fail(at, "the template makes text longer than %d bytes", r.opts.MaxOutput)
	}
}

func (r *renderer) str(at pos, s string) string {
	r.checkLen(at, len(s))
	return s
}

func (r *renderer) renderBody(b *strings.Builder, body []stmt) {
	for _, s := range body {
		r.exec(b, s)
	}
}

func (r *renderer) write(b *strings.Builder, at pos, s string) {
	r.checkLen(at, b.Len()+len(s))
	b.WriteString(s)
}

func (r *renderer) exec(b *strings.Builder, s stmt) {
	switch n := s.(type) {
	case textStmt:
		r.write(b, n.pos, n.text)
	case outputStmt:
		r.step(n.pos, 1)
		v := r.eval(n.e)
		if v == undefinedValue && r.opts.Undefined != nil {
			if path := pathOf(n.e); path != "" {
				r.opts.Undefined(path, n.line, n.col)
			}
		}
		r.write(b, n.pos, outputString(v))
	case *ifStmt:
		if truthy(r.eval(n.cond)) {
			r.renderBody(b, n.body)
		} else {
			r.renderBody(b, n.else_)
		}
	case *forStmt:
		r.execFor(b, n)
	case *setStmt:
		var v any
		if n.value != nil {
			v = r.eval(n.value)
		} else {
			var cb strings.Builder
			r.renderBody(&cb, n.capture)
			v = cb.String()
		}
		for _, name := range n.names {
			r.frame.set(name, v)
		}
	case *filterStmt:
		var cb strings.Builder
		r.renderBody(&cb, n.body)
		r.write(b, n.pos, outputString(r.applyFilter(n.call, cb.String())))
	}
}

// pathOf is the dotted name an expression reads ("vars.user.name"), or ""
// when it is not a plain path.
func pathOf(e expr) string {
	switch x := e.(type) {
	case *symbol:
		return x.name
	case *lookupExpr:
		k, ok := x.key.(*literal)
		if !ok {
			return ""
		}
		ks, ok := k.v.(string)
		if !ok {
			return ""
		}
		if base := pathOf(x.target); base != "" {
			return base + "." + ks
		}
	}
	return ""
}

func (r *renderer) execFor(b *strings.Builder, n *forStmt) {
	iter := r.eval(n.iter)
	r.frame = &frame{vars: map[string]any{}, parent: r.frame}
	defer func() { r.frame = r.frame.parent }()
	ran := 0
	body := func(i, length int, names []string, vals []any) {
		r.step(n.pos, 1)
		for j, name := range names {
			r.frame.vars[name] = vals[j]
		}
		r.frame.vars["loop"] = &loopInfo{i, length}
		r.renderBody(b, n.body)
		ran++
	}
	if truthy(iter) {
		switch x := iter.(type) {
		case []any:
			for i, e := range x {
				if len(n.names) == 1 {
					body(i, len(x), n.names, []any{e})
					continue
				}
				vals := make([]any, len(n.names))
				for j := range vals {
					vals[j] = memberLookup(e, float64(j))
				}
				body(i, len(x), n.names, vals)
			}
		case string:
			if len(n.names) == 1 {
				chars := []rune(x)
				for i, c := range chars {
					body(i, len(chars), n.names, []any{string(c)})
				}
			}
		case *Object:
			if len(n.names) > 1 {
				keys := x.Keys()
				for i, k := range keys {
					vals := []any{k, x.vals[k]}
					for len(vals) < len(n.names) {
						vals = append(vals, undefinedValue)
					}
					body(i, len(keys), n.names, vals[:len(n.names)])
				}
			}
		}
	}
	if ran == 0 {
		r.renderBody(b, n.else_)
	}
}

func (r *renderer) lookupName(name string) any {
	if v, ok := r.frame.lookup(name); ok {
		return v
	}
	if v, ok := r.ctx.get(name); ok {
		return v
	}
	if g, ok := globals[name]; ok {
		return g
	}
	return undefinedValue
}

func (r *renderer) eval(e expr) any {
	switch n := e.(type) {
	case *literal:
		return n.v
	case *symbol:
		r.step(n.pos, 1)
		return r.lookupName(n.name)
	case *lookupExpr:
		r.step(n.pos, 1)
		return memberLookup(r.eval(n.target), r.eval(n.key))
	case *callExpr:
		return r.call(n)
	case *filterExpr:
		r.step(n.pos, 1)
		return r.applyFilter(n, nil)
	case *binaryExpr:
		r.step(n.pos, 1)
		return r.binary(n)
	case *unaryExpr:
		x := r.eval(n.x)
		switch n.op {
		case "not":
			return !truthy(x)
		case "-":
			return -toNumber(x)
		}
		return toNumber(x)
	case *compareExpr:
		v := r.eval(n.first)
		for i, op := range n.ops {
			v = compare(op, v, r.eval(n.rest[i]))
		}
		return v
	case *inlineIf:
		if truthy(r.eval(n.cond)) {
			return r.eval(n.body)
		}
		if n.else_ == nil {
			return ""
		}
		return r.eval(n.else_)
	case *isExpr:
		r.step(n.pos, 1)
		return r.test(n)
	case *inExpr:
		return r.in(n)
	case *arrayExpr:
		out := make([]any, len(n.items))
		for i, it := range n.items {
			out[i] = r.eval(it)
		}
		return out
	case *groupExpr:
		var v any = undefinedValue
		for _, it := range n.items {
			v = r.eval(it)
		}
		return v
	case *dictExpr:
		return r.dict(n)
	}
	return undefinedValue
}

func (r *renderer) dict(n *dictExpr) *Object {
	o := NewObject()
	if n == nil {
		return o
	}
	for i, k := range n.keys {
		o.set(k, r.eval(n.vals[i]))
	}
	return o
}

func compare(op string, a, b any) bool {
	switch op {
	case "==":
		return looseEqual(a, b)
	case "!=":
		return !looseEqual(a, b)
	case "===":
		return strictEqual(a, b)
	case "!==":
		return !strictEqual(a, b)
	}
	// a <= b is "not b < a" in JavaScript, and false with NaN.
	c, ok := compareJS(a, b)
	if !ok {
		return false
	}
	switch op {
	case "<":
		return c < 0
	case ">":
		return c > 0
	case "<=":
		return c <= 0
	}
	return c >= 0
}

func (r *renderer) binary(n *binaryExpr) any {
	switch n.op {
	case "or":
		if l := r.eval(n.l); truthy(l) {
			return l
		}
		return r.eval(n.r)
	case "and":
		if l := r.eval(n.l); !truthy(l) {
			return l
		}
		return r.eval(n.r)
	}
	l, rv := r.eval(n.l), r.eval(n.r)
	switch n.op {
	case "~":
		ls, rs := toString(l), toString(rv)
		r.checkLen(n.pos, len(ls)+len(rs))
		return ls + rs
	case "+":
		pl, pr := toPrimitive(l), toPrimitive(rv)
		_, ls := pl.(string)
		_, rs := pr.(string)
		if ls || rs {
			a, b := toString(pl), toString(pr)
			r.checkLen(n.pos, len(a)+len(b))
			return a + b
		}
		return toNumber(pl) + toNumber(pr)
	}
	x, y := toNumber(l), toNumber(rv)
	switch n.op {
	case "-":
		return x - y
	case "*":
		return x * y
	case "/":
		return x / y
	case "//":
		return math.Floor(x / y)
	case "%":
		if y == 0 || math.IsInf(x, 0) || math.IsNaN(x) || math.IsNaN(y) {
			return math.NaN()
		}
		return math.Mod(x, y)
	}
	// **: Math.pow, where 1 to an infinite or NaN power is NaN.
	if math.Abs(x) == 1 && (math.IsInf(y, 0) || math.IsNaN(y)) {
		return math.NaN()
	}
	return math.Pow(x, y)
}

func (r *renderer) in(n *inExpr) any {
	key, in := r.eval(n.key), r.eval(n.in)
	switch x := in.(type) {
	case []any:
		for _, e := range x {
			if strictEqual(e, key) {
				return true
			}
		}
		return false
	case string:
		return strings.Contains(x, toString(key))
	case *Object:
		_, ok := x.get(toString(key))
		return ok
	case Lookup:
		_, ok := x(toString(key))
		return ok
	}
	r.fail(n.pos, "\"in\" looks in a list, a text or a mapping, not in %s", describeValue(in))
	return nil
}

// describeValue names a value's kind for an error.
func describeValue(v any) string {
	switch v.(type) {
	case undefinedType:
		return "an unset value"
	case nil:
		return "none"
	case []any:
		return "a list"
	case *Object, Lookup, *loopInfo:
		return "a mapping"
	case string:
		return "text"
	}
	return "a " + typeOf(v)
}

// memberLookup is obj[key]: an item, a field, a string's character, a
// length, or a method bound to obj.
func memberLookup(obj, key any) any {
	k := toString(key)
	switch x := obj.(type) {
	case undefinedType, nil:
		return undefinedValue
	case string:
		if k == "length" {
			return float64(jsLength(x))
		}
		if isArrayIndex(k) {
			i := toInt(toNumber(k))
			rs := []rune(x)
			if i < len(rs) {
				return string(rs[i])
			}
			return undefinedValue
		}
		if m := stringMethod(x, k); m != nil {
			return m
		}
	case []any:
		if k == "length" {
			return float64(len(x))
		}
		if isArrayIndex(k) {
			i := toInt(toNumber(k))
			if i < len(x) {
				return x[i]
			}
			return undefinedValue
		}
		if m := arrayMethod(x, k); m != nil {
			return m
		}
	case *Object:
		if v, ok := x.get(k); ok {
			return v
		}
	case *loopInfo:
		if v, ok := x.object().get(k); ok {
			return v
		}
	case Lookup:
		if v, ok := x(k); ok {
			return fromGo(v)
		}
	}
	return undefinedValue
}

func (r *renderer) call(n *callExpr) any {
	r.step(n.pos, 1)
	fn := r.eval(n.callee)
	c, ok := fn.(*callable)
	if !ok {
		name := pathOf(n.callee)
		if name == "" {
			name = "this expression"
		}
		if !truthy(fn) {
			if _, known := unsupportedGlobals[name]; known {
				r.fail(n.pos, "%s() is not supported in an eval file's templates", name)
			}
			r.fail(n.pos, "cannot call %s: it is not set", name)
		}
		r.fail(n.pos, "cannot call %s: it is not a function", name)
	}
	args := make([]any, len(n.args))
	for i, a := range n.args {
		args[i] = r.eval(a)
	}
	var kw *Object
	if n.kwargs != nil {
		kw = r.dict(n.kwargs)
	}
	return c.fn(r, n.pos, args, kw)
}

var unsupportedGlobals = map[string]bool{"cycler": true, "joiner": true}

var globals = map[string]any{
	"range": &callable{name: "range", fn: func(r *renderer, at pos, args []any, _ *Object) any {
		if len(args) == 0 {
			r.fail(at, "range needs a stop: range(5), range(1, 5) or range(0, 10, 2)")
		}
		start, stop, step := 0.0, toNumber(args[0]), 1.0
		if len(args) > 1 && args[1] != undefinedValue {
			start, stop = toNumber(args[0]), toNumber(args[1])
			if len(args) > 2 && truthy(args[2]) {
				step = toNumber(args[2])
			}
		}
		var out []any
		for i := start; step > 0 && i < stop || step < 0 && i > stop; i += step {
			r.step(at, 1)
			out = append(out, i)
		}
		if out == nil {
			out = []any{}
		}
		return out
	}},
}

// loopInfo is a for loop's loop variable: made for every iteration, so
// kept small until a template reads it.
type loopInfo struct{ i, n int }

func (l *loopInfo) object() *Object {
	o := NewObject()
	o.set("index", float64(l.i+1))
	o.set("index0", float64(l.i))
	o.set("revindex", float64(l.n-l.i))
	o.set("revindex0", float64(l.n-l.i-1))
	o.set("first", l.i == 0)
	o.set("last", l.i == l.n-1)
	o.set("length", float64(l.n))
	return o
}
