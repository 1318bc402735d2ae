package nunjucks

import (
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Filters, tests and methods as Nunjucks 3.2 has them (and AgentV's load
// filter), each with JavaScript's result for the values an eval file
// holds. Where Nunjucks would throw (join on something not a list, trim
// on a number), the render fails with an error naming the filter.

type filterFunc func(r *renderer, at pos, v any, args []any, kw *Object) any

var filters map[string]filterFunc

// notFilters are filters Nunjucks has that agenteval leaves out, with why,
// and names people reach for from Jinja.
var notFilters = map[string]string{
	"random":  "it would make the prompt differ from run to run",
	"groupby": "it is not supported here",
	"urlize":  "it is not supported here",
	"tojson":  "Nunjucks has no tojson filter; use dump",
	"items":   "Nunjucks has no items filter; loop with {% for key, value in mapping %}",
}

func init() {
	filters = map[string]filterFunc{
		"abs":   func(r *renderer, at pos, v any, _ []any, _ *Object) any { return math.Abs(toNumber(v)) },
		"batch": filterBatch,
		"capitalize": func(r *renderer, at pos, v any, _ []any, _ *Object) any {
			return capitalize(r.text(at, "capitalize", normalize(v, "")))
		},
		"center":      filterCenter,
		"default":     filterDefault,
		"d":           filterDefault,
		"dictsort":    filterDictsort,
		"dump":        filterDump,
		"escape":      filterEscape,
		"e":           filterEscape,
		"forceescape": filterEscape,
		"first": func(r *renderer, at pos, v any, _ []any, _ *Object) any {
			r.needIndexable(at, "first", v)
			return memberLookup(v, 0.0)
		},
		"last": func(r *renderer, at pos, v any, _ []any, _ *Object) any {
			r.needIndexable(at, "last", v)
			return memberLookup(v, toNumber(memberLookup(v, "length"))-1)
		},
		"float":  filterFloat,
		"int":    filterInt,
		"indent": filterIndent,
		"join":   filterJoin,
		"length": filterLength,
		"list":   filterList,
		"load":   filterLoad,
		"lower": func(r *renderer, at pos, v any, _ []any, _ *Object) any {
			return lowerJS(r.text(at, "lower", normalize(v, "")))
		},
		"upper": func(r *renderer, at pos, v any, _ []any, _ *Object) any {
			return upperJS(r.text(at, "upper", normalize(v, "")))
		},
		"nl2br":  filterNl2br,
		"reject": func(r *renderer, at pos, v any, a []any, _ *Object) any { return r.selectOrReject(at, v, a, false) },
		"select": func(r *renderer, at pos, v any, a []any, _ *Object) any { return r.selectOrReject(at, v, a, true) },
		"rejectattr": func(r *renderer, at pos, v any, a []any, _ *Object) any {
			return r.selectAttr(at, "rejectattr", v, a, false)
		},
		"selectattr": func(r *renderer, at pos, v any, a []any, _ *Object) any {
			return r.selectAttr(at, "selectattr", v, a, true)
		},
		"replace": filterReplace,
		"reverse": filterReverse,
		"round":   filterRound,
		"safe":    func(r *renderer, at pos, v any, _ []any, _ *Object) any { return outputString(v) },
		"slice":   filterSlice,
		"sort":    filterSort,
		"string": func(r *renderer, at pos, v any, _ []any, _ *Object) any {
			r.needIndexable(at, "string", v)
			return toString(v)
		},
		"striptags": filterStriptags,
		"sum":       filterSum,
		"title":     filterTitle,
		"trim": func(r *renderer, at pos, v any, _ []any, _ *Object) any {
			return strings.TrimFunc(r.text(at, "trim", v), isJSSpace)
		},
		"truncate":  filterTruncate,
		"urlencode": filterURLEncode,
		"wordcount": filterWordcount,
	}
}

func (r *renderer) applyFilter(n *filterExpr, body any) any {
	f, ok := filters[n.name]
	if !ok {
		if why, known := notFilters[n.name]; known {
			r.fail(n.pos, "the %s filter is not available: %s", n.name, why)
		}
		r.fail(n.pos, "unknown filter %q (custom filters from nunjucks_filters are JavaScript, which agenteval does not run)", n.name)
	}
	var v any
	if n.args[0] == nil {
		v = body
	} else {
		v = r.eval(n.args[0])
	}
	args := make([]any, len(n.args)-1)
	for i, a := range n.args[1:] {
		args[i] = r.eval(a)
	}
	var kw *Object
	if n.kwargs != nil {
		kw = r.dict(n.kwargs)
	}
	out := f(r, n.pos, v, args, kw)
	if s, ok := out.(string); ok {
		r.checkLen(n.pos, len(s))
	}
	return out
}

// arg is the i-th argument, or undefined.
func arg(args []any, i int) any {
	if i < len(args) {
		return args[i]
	}
	return undefinedValue
}

// normalize is Nunjucks's: null, undefined and false become def.
func normalize(v, def any) any {
	if v == nil || v == undefinedValue || v == false {
		return def
	}
	return v
}

// text is v as a string where Nunjucks calls a string method on it: a
// number becomes text only where JavaScript would, and anything else
// fails, as the method call does there.
func (r *renderer) text(at pos, filter string, v any) string {
	switch x := v.(type) {
	case string:
		return x
	}
	r.fail(at, "the %s filter takes text, not %s", filter, describeValue(v))
	return ""
}

func (r *renderer) needIndexable(at pos, filter string, v any) {
	if v == nil || v == undefinedValue {
		r.fail(at, "the %s filter takes a list or text, not %s", filter, describeValue(v))
	}
}

func (r *renderer) list(at pos, filter string, v any) []any {
	if l, ok := v.([]any); ok {
		r.step(at, len(l))
		return l
	}
	r.fail(at, "the %s filter takes a list, not %s", filter, describeValue(v))
	return nil
}

func capitalize(s string) string {
	s = lowerJS(s)
	if s == "" {
		return s
	}
	c, n := utf8.DecodeRuneInString(s)
	return upperJS(string(c)) + s[n:]
}

func filterBatch(r *renderer, at pos, v any, args []any, _ *Object) any {
	l := r.list(at, "batch", v)
	n := toInt(toNumber(arg(args, 0)))
	if n <= 0 {
		r.fail(at, "batch needs a size of 1 or more")
	}
	fill := arg(args, 1)
	var out []any
	for i := 0; i < len(l); i += n {
		end := min(i+n, len(l))
		row := append([]any(nil), l[i:end]...)
		if end-i < n && truthy(fill) {
			for len(row) < n {
				r.step(at, 1)
				row = append(row, fill)
			}
		}
		out = append(out, row)
	}
	if out == nil {
		out = []any{}
	}
	return out
}

func filterCenter(r *renderer, at pos, v any, args []any, _ *Object) any {
	s := r.text(at, "center", normalize(v, ""))
	width := 80
	if w := arg(args, 0); truthy(w) {
		width = toInt(toNumber(w))
	}
	n := jsLength(s)
	if n >= width {
		return s
	}
	r.checkLen(at, len(s)+width-n)
	// Nunjucks repeats a space spaces/2 - spaces%2 times before and
	// spaces/2 times after, counting a half as a whole.
	spaces := width - n
	pre, post := spaces/2, spaces/2
	if spaces%2 == 1 {
		pre, post = (spaces+1)/2-1, (spaces+1)/2
	}
	return strings.Repeat(" ", max(pre, 0)) + s + strings.Repeat(" ", post)
}

func filterDefault(r *renderer, at pos, v any, args []any, _ *Object) any {
	def := arg(args, 0)
	if truthy(arg(args, 1)) {
		if truthy(v) {
			return v
		}
		return def
	}
	if v != undefinedValue {
		return v
	}
	return def
}

func filterDictsort(r *renderer, at pos, v any, args []any, _ *Object) any {
	o, ok := v.(*Object)
	if !ok {
		r.fail(at, "the dictsort filter takes a mapping, not %s", describeValue(v))
	}
	caseSensitive := truthy(arg(args, 0))
	si := 0
	switch by := arg(args, 1); by {
	case undefinedValue, "key":
	case "value":
		si = 1
	default:
		r.fail(at, "dictsort sorts by \"key\" or \"value\"")
	}
	keys := o.Keys()
	r.step(at, len(keys))
	pairs := make([]any, len(keys))
	for i, k := range keys {
		pairs[i] = []any{k, o.vals[k]}
	}
	sortJS(pairs, func(a, b any) int {
		x, y := a.([]any)[si], b.([]any)[si]
		if !caseSensitive {
			if s, ok := x.(string); ok {
				x = upperJS(s)
			}
			if s, ok := y.(string); ok {
				y = upperJS(s)
			}
		}
		if c, ok := compareJS(x, y); ok && c > 0 {
			return 1
		}
		if strictEqual(x, y) {
			return 0
		}
		return -1
	})
	return pairs
}

func filterDump(r *renderer, at pos, v any, args []any, _ *Object) any {
	indent := ""
	switch sp := arg(args, 0).(type) {
	case float64:
		indent = strings.Repeat(" ", min(10, max(0, toInt(math.Floor(sp)))))
	case string:
		if rs := []rune(sp); len(rs) > 10 {
			indent = string(rs[:10])
		} else {
			indent = sp
		}
	}
	if l, ok := v.([]any); ok {
		r.step(at, len(l))
	}
	s, ok := stringify(v, indent)
	if !ok {
		return undefinedValue
	}
	return s
}

var lineBreaks = strings.NewReplacer("\r\n", "<br />\n", "\n", "<br />\n")

var htmlEscaper = strings.NewReplacer("&", "&amp;", `"`, "&quot;", "'", "&#39;", "<", "&lt;", ">", "&gt;")

func filterEscape(r *renderer, at pos, v any, _ []any, _ *Object) any {
	return htmlEscaper.Replace(outputString(v))
}

func filterFloat(r *renderer, at pos, v any, args []any, _ *Object) any {
	f := parseFloatJS(toString(v))
	if math.IsNaN(f) {
		return arg(args, 0)
	}
	return f
}

func filterInt(r *renderer, at pos, v any, args []any, kw *Object) any {
	def, base := arg(args, 0), arg(args, 1)
	if kw != nil {
		if d, ok := kw.get("default"); ok {
			def = d
		}
		if b, ok := kw.get("base"); ok {
			base = b
		}
	}
	b := 10
	if base != undefinedValue {
		b = toInt(toNumber(base))
	}
	f := parseIntJS(toString(v), b)
	if math.IsNaN(f) {
		return def
	}
	return f
}

func filterIndent(r *renderer, at pos, v any, args []any, _ *Object) any {
	s := r.text(at, "indent", normalize(v, ""))
	if s == "" {
		return ""
	}
	width := 4
	if w := arg(args, 0); truthy(w) {
		width = toInt(toNumber(w))
	}
	lines := strings.Split(s, "\n")
	r.checkLen(at, len(s)+len(lines)*max(width, 0))
	sp := strings.Repeat(" ", max(width, 0))
	first := truthy(arg(args, 1))
	for i := range lines {
		if i > 0 || first {
			lines[i] = sp + lines[i]
		}
	}
	return strings.Join(lines, "\n")
}

func filterJoin(r *renderer, at pos, v any, args []any, _ *Object) any {
	l := r.list(at, "join", v)
	del := ""
	if d := arg(args, 0); truthy(d) {
		del = toString(d)
	}
	if attr := arg(args, 1); truthy(attr) {
		mapped := make([]any, len(l))
		for i, e := range l {
			mapped[i] = memberLookup(e, attr)
		}
		l = mapped
	}
	var b strings.Builder
	for i, e := range l {
		if i > 0 {
			b.WriteString(del)
		}
		if e != nil && e != undefinedValue {
			b.WriteString(toString(e))
		}
		r.checkLen(at, b.Len())
	}
	return b.String()
}

func filterLength(r *renderer, at pos, v any, _ []any, _ *Object) any {
	switch x := normalize(v, "").(type) {
	case string:
		return float64(jsLength(x))
	case []any:
		return float64(len(x))
	case *Object:
		return float64(len(x.keys))
	case Lookup:
		return 0.0
	}
	return undefinedValue
}

func filterList(r *renderer, at pos, v any, _ []any, _ *Object) any {
	switch x := v.(type) {
	case string:
		r.step(at, len(x))
		out := []any{}
		for _, c := range x {
			out = append(out, string(c))
		}
		return out
	case *Object:
		r.step(at, len(x.keys))
		out := []any{}
		for _, k := range x.Keys() {
			o := NewObject()
			o.set("key", k)
			o.set("value", x.vals[k])
			out = append(out, o)
		}
		return out
	case []any:
		return x
	}
	r.fail(at, "the list filter takes a list, text or a mapping, not %s", describeValue(v))
	return nil
}

func filterLoad(r *renderer, at pos, v any, _ []any, _ *Object) any {
	out, err := parseJSON(toString(v))
	if err != nil {
		r.fail(at, "the load filter's input is not JSON: %v", err)
	}
	return out
}

func filterNl2br(r *renderer, at pos, v any, _ []any, _ *Object) any {
	if v == nil || v == undefinedValue {
		return ""
	}
	s := r.text(at, "nl2br", v)
	return lineBreaks.Replace(s)
}

func (r *renderer) selectOrReject(at pos, v any, args []any, want bool) any {
	name := "truthy"
	if t := arg(args, 0); t != undefinedValue {
		name = toString(t)
	}
	fn, ok := tests[name]
	if !ok {
		r.fail(at, "unknown test %q", name)
	}
	var l []any
	switch x := v.(type) {
	case []any:
		l = x
	case string:
		l = filterList(r, at, x, nil, nil).([]any)
	}
	r.step(at, len(l))
	out := []any{}
	for _, e := range l {
		if fn(r, at, e, args[min(1, len(args)):]) == want {
			out = append(out, e)
		}
	}
	return out
}

func (r *renderer) selectAttr(at pos, filter string, v any, args []any, want bool) any {
	l := r.list(at, filter, v)
	attr := arg(args, 0)
	out := []any{}
	for _, e := range l {
		if truthy(memberLookup(e, attr)) == want {
			out = append(out, e)
		}
	}
	return out
}

func filterReplace(r *renderer, at pos, v any, args []any, _ *Object) any {
	old, repl := arg(args, 0), arg(args, 1)
	maxCount := -1.0
	if m := arg(args, 2); m != undefinedValue {
		maxCount = toNumber(m)
	}
	var olds string
	switch o := old.(type) {
	case float64:
		olds = numberString(o)
	case string:
		olds = o
	default:
		return v
	}
	var s string
	switch x := v.(type) {
	case float64:
		s = numberString(x)
	case string:
		s = x
	default:
		return v
	}
	news := toString(repl)
	if olds == "" {
		chars := strings.Split(s, "")
		r.checkLen(at, len(s)+(len(chars)+1)*len(news))
		return news + strings.Join(chars, news) + news
	}
	// Nunjucks replaces while count < maxCount, or always for -1.
	if maxCount != -1 && !(maxCount > 0) || !strings.Contains(s, olds) {
		return s
	}
	n := strings.Count(s, olds)
	if maxCount != -1 {
		n = min(n, toInt(math.Ceil(maxCount)))
	}
	r.checkLen(at, len(s)+n*len(news))
	return strings.Replace(s, olds, news, n)
}

func filterReverse(r *renderer, at pos, v any, _ []any, _ *Object) any {
	if s, ok := v.(string); ok {
		rs := []rune(s)
		for i, j := 0, len(rs)-1; i < j; i, j = i+1, j-1 {
			rs[i], rs[j] = rs[j], rs[i]
		}
		return string(rs)
	}
	l, _ := v.([]any)
	out := make([]any, len(l))
	for i, e := range l {
		out[len(l)-1-i] = e
	}
	return out
}

// roundJS is Math.round: halves go up, toward +Infinity.
func roundJS(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	f := math.Floor(x)
	if x-f >= 0.5 {
		f++
	}
	return f
}

func filterRound(r *renderer, at pos, v any, args []any, _ *Object) any {
	precision := 0.0
	if p := arg(args, 0); truthy(p) {
		precision = toNumber(p)
	}
	factor := math.Pow(10, precision)
	rounder := roundJS
	switch arg(args, 1) {
	case "ceil":
		rounder = math.Ceil
	case "floor":
		rounder = math.Floor
	}
	return rounder(toNumber(v)*factor) / factor
}

func filterSlice(r *renderer, at pos, v any, args []any, _ *Object) any {
	l := r.list(at, "slice", v)
	slices := toInt(toNumber(arg(args, 0)))
	if slices <= 0 {
		r.fail(at, "slice needs a count of 1 or more")
	}
	r.step(at, slices)
	fill := arg(args, 1)
	size, extra := len(l)/slices, len(l)%slices
	out := []any{}
	offset := 0
	for i := range slices {
		start := offset + i*size
		if i < extra {
			offset++
		}
		end := offset + (i+1)*size
		part := append([]any{}, l[min(start, len(l)):min(end, len(l))]...)
		if truthy(fill) && i >= extra {
			part = append(part, fill)
		}
		out = append(out, part)
	}
	return out
}

// sortJS sorts stably with a comparator, as Array.prototype.sort does.
func sortJS(l []any, cmp func(a, b any) int) {
	sort.SliceStable(l, func(i, j int) bool { return cmp(l[i], l[j]) < 0 })
}

func filterSort(r *renderer, at pos, v any, args []any, kw *Object) any {
	reversed, caseSens, attr := arg(args, 0), arg(args, 1), arg(args, 2)
	if kw != nil {
		if x, ok := kw.get("reverse"); ok {
			reversed = x
		}
		if x, ok := kw.get("case_sensitive"); ok {
			caseSens = x
		}
		if x, ok := kw.get("attribute"); ok {
			attr = x
		}
	}
	l := append([]any{}, r.list(at, "sort", v)...)
	get := func(e any) any {
		if !truthy(attr) {
			return e
		}
		for _, part := range strings.Split(toString(attr), ".") {
			o, ok := e.(*Object)
			if !ok {
				return undefinedValue
			}
			if e, ok = o.get(part); !ok {
				return undefinedValue
			}
		}
		return e
	}
	sortJS(l, func(a, b any) int {
		x, y := get(a), get(b)
		xs, xok := x.(string)
		ys, yok := y.(string)
		if !truthy(caseSens) && xok && yok {
			x, y = lowerJS(xs), lowerJS(ys)
		}
		c, ok := compareJS(x, y)
		switch {
		case ok && c < 0:
			if truthy(reversed) {
				return 1
			}
			return -1
		case ok && c > 0:
			if truthy(reversed) {
				return -1
			}
			return 1
		}
		return 0
	})
	return l
}

var (
	tagsRe      = regexp.MustCompile(`(?i)</?([a-z][a-z0-9]*)\b[^>]*>|<!--[\s\S]*?-->`)
	spacesRe    = regexp.MustCompile(`\s+`)
	lineEndsRe  = regexp.MustCompile(`(?m)^ +| +$`)
	manySpaceRe = regexp.MustCompile(` +`)
	manyLinesRe = regexp.MustCompile(`\n\n\n+`)
)

func filterStriptags(r *renderer, at pos, v any, args []any, _ *Object) any {
	s := r.text(at, "striptags", normalize(v, ""))
	s = strings.TrimFunc(tagsRe.ReplaceAllString(s, ""), isJSSpace)
	if truthy(arg(args, 0)) {
		s = lineEndsRe.ReplaceAllString(s, "")
		s = manySpaceRe.ReplaceAllString(s, " ")
		s = strings.ReplaceAll(s, "\r\n", "\n")
		return manyLinesRe.ReplaceAllString(s, "\n\n")
	}
	return spacesRe.ReplaceAllString(s, " ")
}

func filterSum(r *renderer, at pos, v any, args []any, _ *Object) any {
	l := r.list(at, "sum", v)
	var acc any = 0.0
	attr := arg(args, 0)
	for _, e := range l {
		if truthy(attr) {
			e = memberLookup(e, attr)
		}
		acc = r.add(at, acc, e)
	}
	start := arg(args, 1)
	if start == undefinedValue {
		start = 0.0
	}
	return r.add(at, start, acc)
}

// add is JavaScript's +.
func (r *renderer) add(at pos, a, b any) any {
	pa, pb := toPrimitive(a), toPrimitive(b)
	_, as := pa.(string)
	_, bs := pb.(string)
	if as || bs {
		x, y := toString(pa), toString(pb)
		r.checkLen(at, len(x)+len(y))
		return x + y
	}
	return toNumber(pa) + toNumber(pb)
}

func filterTitle(r *renderer, at pos, v any, _ []any, _ *Object) any {
	words := strings.Split(r.text(at, "title", normalize(v, "")), " ")
	for i, w := range words {
		words[i] = capitalize(w)
	}
	return strings.Join(words, " ")
}

func filterTruncate(r *renderer, at pos, v any, args []any, _ *Object) any {
	s := r.text(at, "truncate", normalize(v, ""))
	length := 255
	if l := arg(args, 0); truthy(l) {
		length = toInt(toNumber(l))
	}
	rs := []rune(s)
	if len(rs) <= length {
		return s
	}
	if truthy(arg(args, 1)) {
		rs = rs[:max(length, 0)]
	} else {
		idx := -1
		for i := min(length, len(rs)-1); i >= 0; i-- {
			if rs[i] == ' ' {
				idx = i
				break
			}
		}
		if idx == -1 {
			idx = length
		}
		rs = rs[:max(idx, 0)]
	}
	end := "..."
	if e := arg(args, 2); e != undefinedValue && e != nil {
		end = toString(e)
	}
	return string(rs) + end
}

func filterURLEncode(r *renderer, at pos, v any, _ []any, _ *Object) any {
	enc := func(x any) string { return encodeURIComponent(toString(x)) }
	switch x := v.(type) {
	case string:
		return enc(x)
	case []any:
		var parts []string
		for _, e := range x {
			parts = append(parts, enc(memberLookup(e, 0.0))+"="+enc(memberLookup(e, 1.0)))
		}
		return strings.Join(parts, "&")
	case *Object:
		var parts []string
		for _, k := range x.Keys() {
			parts = append(parts, enc(k)+"="+enc(x.vals[k]))
		}
		return strings.Join(parts, "&")
	}
	return ""
}

func encodeURIComponent(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || strings.IndexByte("-_.!~*'()", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteString("%" + strings.ToUpper(strconv.FormatUint(uint64(c)>>4, 16)) + strings.ToUpper(strconv.FormatUint(uint64(c)&0xf, 16)))
	}
	return b.String()
}

func filterWordcount(r *renderer, at pos, v any, _ []any, _ *Object) any {
	s := r.text(at, "wordcount", normalize(v, ""))
	n := 0
	in := false
	for _, c := range s {
		w := isWordRune(c)
		if w && !in {
			n++
		}
		in = w
	}
	if n == 0 {
		return nil
	}
	return float64(n)
}

// parseFloatJS is parseFloat: the longest number at the start of s.
func parseFloatJS(s string) float64 {
	s = strings.TrimLeftFunc(s, isJSSpace)
	for _, inf := range []string{"Infinity", "+Infinity", "-Infinity"} {
		if strings.HasPrefix(s, inf) {
			return stringToNumber(inf)
		}
	}
	end := decimalPrefix(s)
	if end == 0 {
		return math.NaN()
	}
	f, _ := strconv.ParseFloat(s[:end], 64)
	return f
}

// decimalPrefix is the length of the longest decimal number at the start
// of s: [+-] digits [. digits] [e [+-] digits].
func decimalPrefix(s string) int {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		j := i + 1
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
			digits++
		}
		if digits > 0 {
			i = j
		}
	}
	if digits == 0 {
		return 0
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		k := j
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		if k > j {
			i = k
		}
	}
	return i
}

// parseIntJS is parseInt(s, base).
func parseIntJS(s string, base int) float64 {
	s = strings.TrimLeftFunc(s, isJSSpace)
	sign := 1.0
	if s != "" && (s[0] == '+' || s[0] == '-') {
		if s[0] == '-' {
			sign = -1
		}
		s = s[1:]
	}
	if base == 0 {
		base = 10
		if len(s) > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
			base, s = 16, s[2:]
		}
	} else if base == 16 && len(s) > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		s = s[2:]
	}
	if base < 2 || base > 36 {
		return math.NaN()
	}
	n, digits := 0.0, 0
	for _, c := range strings.ToLower(s) {
		d := strings.IndexRune("0123456789abcdefghijklmnopqrstuvwxyz", c)
		if d < 0 || d >= base {
			break
		}
		n = n*float64(base) + float64(d)
		digits++
	}
	if digits == 0 {
		return math.NaN()
	}
	return sign * n
}

type testFunc func(r *renderer, at pos, v any, args []any) bool

var tests = map[string]testFunc{
	"callable":    func(_ *renderer, _ pos, v any, _ []any) bool { _, ok := v.(*callable); return ok },
	"defined":     func(_ *renderer, _ pos, v any, _ []any) bool { return v != undefinedValue },
	"undefined":   func(_ *renderer, _ pos, v any, _ []any) bool { return v == undefinedValue },
	"divisibleby": func(_ *renderer, _ pos, v any, a []any) bool { return jsMod(toNumber(v), toNumber(arg(a, 0))) == 0 },
	"escaped":     func(_ *renderer, _ pos, v any, _ []any) bool { return false },
	"equalto":     func(_ *renderer, _ pos, v any, a []any) bool { return strictEqual(v, arg(a, 0)) },
	"eq":          func(_ *renderer, _ pos, v any, a []any) bool { return strictEqual(v, arg(a, 0)) },
	"sameas":      func(_ *renderer, _ pos, v any, a []any) bool { return strictEqual(v, arg(a, 0)) },
	"ne":          func(_ *renderer, _ pos, v any, a []any) bool { return !strictEqual(v, arg(a, 0)) },
	"even":        func(_ *renderer, _ pos, v any, _ []any) bool { return jsMod(toNumber(v), 2) == 0 },
	"odd":         func(_ *renderer, _ pos, v any, _ []any) bool { return jsMod(toNumber(v), 2) == 1 },
	"falsy":       func(_ *renderer, _ pos, v any, _ []any) bool { return !truthy(v) },
	"truthy":      func(_ *renderer, _ pos, v any, _ []any) bool { return truthy(v) },
	"ge":          func(_ *renderer, _ pos, v any, a []any) bool { return compare(">=", v, arg(a, 0)) },
	"gt":          func(_ *renderer, _ pos, v any, a []any) bool { return compare(">", v, arg(a, 0)) },
	"greaterthan": func(_ *renderer, _ pos, v any, a []any) bool { return compare(">", v, arg(a, 0)) },
	"le":          func(_ *renderer, _ pos, v any, a []any) bool { return compare("<=", v, arg(a, 0)) },
	"lt":          func(_ *renderer, _ pos, v any, a []any) bool { return compare("<", v, arg(a, 0)) },
	"lessthan":    func(_ *renderer, _ pos, v any, a []any) bool { return compare("<", v, arg(a, 0)) },
	"lower": func(r *renderer, at pos, v any, _ []any) bool {
		s := r.text(at, "lower test", v)
		return lowerJS(s) == s
	},
	"upper": func(r *renderer, at pos, v any, _ []any) bool {
		s := r.text(at, "upper test", v)
		return upperJS(s) == s
	},
	"null":   func(_ *renderer, _ pos, v any, _ []any) bool { return v == nil },
	"number": func(_ *renderer, _ pos, v any, _ []any) bool { _, ok := v.(float64); return ok },
	"string": func(_ *renderer, _ pos, v any, _ []any) bool { _, ok := v.(string); return ok },
	"iterable": func(_ *renderer, _ pos, v any, _ []any) bool {
		switch v.(type) {
		case []any, string:
			return true
		}
		return false
	},
	"mapping": func(_ *renderer, _ pos, v any, _ []any) bool {
		switch v.(type) {
		case *Object, Lookup, *loopInfo:
			return true
		}
		return false
	},
}

func jsMod(x, y float64) float64 {
	if y == 0 || math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) {
		return math.NaN()
	}
	return math.Mod(x, y)
}

func (r *renderer) test(n *isExpr) any {
	fn, ok := tests[n.test]
	if !ok {
		r.fail(n.pos, "unknown test %q", n.test)
	}
	v := r.eval(n.x)
	args := make([]any, len(n.args))
	for i, a := range n.args {
		args[i] = r.eval(a)
	}
	return fn(r, n.pos, v, args)
}

// stringMethod is a JavaScript string method bound to s, or nil.
func stringMethod(s, name string) *callable {
	m := func(fn func(r *renderer, at pos, args []any) any) *callable {
		return &callable{name: name, fn: func(r *renderer, at pos, args []any, _ *Object) any { return fn(r, at, args) }}
	}
	switch name {
	case "toUpperCase":
		return m(func(*renderer, pos, []any) any { return upperJS(s) })
	case "toLowerCase":
		return m(func(*renderer, pos, []any) any { return lowerJS(s) })
	case "trim":
		return m(func(*renderer, pos, []any) any { return strings.TrimFunc(s, isJSSpace) })
	case "trimStart":
		return m(func(*renderer, pos, []any) any { return strings.TrimLeftFunc(s, isJSSpace) })
	case "trimEnd":
		return m(func(*renderer, pos, []any) any { return strings.TrimRightFunc(s, isJSSpace) })
	case "includes":
		return m(func(_ *renderer, _ pos, a []any) any { return strings.Contains(s, toString(arg(a, 0))) })
	case "startsWith":
		return m(func(_ *renderer, _ pos, a []any) any { return strings.HasPrefix(s, toString(arg(a, 0))) })
	case "endsWith":
		return m(func(_ *renderer, _ pos, a []any) any { return strings.HasSuffix(s, toString(arg(a, 0))) })
	case "split":
		return m(func(r *renderer, at pos, a []any) any {
			sep := arg(a, 0)
			if sep == undefinedValue {
				return []any{s}
			}
			parts := strings.Split(s, toString(sep))
			r.step(at, len(parts))
			out := make([]any, len(parts))
			for i, p := range parts {
				out[i] = p
			}
			return out
		})
	case "toString":
		return m(func(*renderer, pos, []any) any { return s })
	}
	return nil
}

// arrayMethod is a JavaScript array method bound to l, or nil; methods
// that change the array are left out, since variables are shared.
func arrayMethod(l []any, name string) *callable {
	m := func(fn func(r *renderer, at pos, args []any) any) *callable {
		return &callable{name: name, fn: func(r *renderer, at pos, args []any, _ *Object) any { return fn(r, at, args) }}
	}
	switch name {
	case "join":
		return m(func(r *renderer, at pos, a []any) any {
			sep := ","
			if d := arg(a, 0); d != undefinedValue {
				sep = toString(d)
			}
			return filterJoin(r, at, l, []any{sep}, nil)
		})
	case "includes":
		return m(func(r *renderer, at pos, a []any) any {
			r.step(at, len(l))
			x := arg(a, 0)
			for _, e := range l {
				if strictEqual(e, x) || isNaNValue(e) && isNaNValue(x) {
					return true
				}
			}
			return false
		})
	case "indexOf":
		return m(func(r *renderer, at pos, a []any) any {
			r.step(at, len(l))
			for i, e := range l {
				if strictEqual(e, arg(a, 0)) {
					return float64(i)
				}
			}
			return -1.0
		})
	case "toString":
		return m(func(*renderer, pos, []any) any { return toString(l) })
	}
	return nil
}

func isNaNValue(v any) bool {
	f, ok := v.(float64)
	return ok && math.IsNaN(f)
}

// toInt is a number as an int, NaN as 0 and the infinities clamped, for
// counts and widths.
func toInt(f float64) int {
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxInt32:
		return math.MaxInt32
	case f <= math.MinInt32:
		return math.MinInt32
	}
	return int(f)
}
