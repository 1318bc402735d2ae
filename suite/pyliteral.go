package suite

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// pyLiteral reads a Python literal as ast.literal_eval does, for the forms
// agent_inspect's tool strings use: lists, tuples, dicts and sets of
// strings (quoted with ' or ", triple-quoted, with r/u/b prefixes, escapes,
// and adjacent strings joined), numbers, True, False and None. Anything
// else is an error, as it is a SyntaxError or ValueError to Python. Dict
// keys must be strings here (the only keys the schema has).
func pyLiteral(s string) (any, error) {
	p := &pyParser{s: s}
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i < len(p.s) {
		return nil, p.errorf("unexpected text")
	}
	return v, nil
}

type pyParser struct {
	s string
	i int
}

var errPy = errors.New("not a Python literal")

func (p *pyParser) errorf(what string) error {
	return fmt.Errorf("%w: %s at offset %d", errPy, what, p.i)
}

// space skips whitespace; a backslash before a newline continues the line.
func (p *pyParser) space() {
	for p.i < len(p.s) {
		switch c := p.s[p.i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			p.i++
		case c == '\\' && p.i+1 < len(p.s) && p.s[p.i+1] == '\n':
			p.i += 2
		default:
			return
		}
	}
}

func (p *pyParser) value() (any, error) {
	p.space()
	if p.i >= len(p.s) {
		return nil, p.errorf("unexpected end")
	}
	switch c := p.s[p.i]; {
	case c == '[':
		p.i++
		return p.seq(']')
	case c == '(':
		p.i++
		return p.seq(')')
	case c == '{':
		p.i++
		return p.dict()
	case c == '\'' || c == '"' || (isPrefix(p.s[p.i:]) != ""):
		return p.strings()
	case c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9'):
		return p.number()
	}
	for _, kw := range []struct {
		word string
		v    any
	}{{"True", true}, {"False", false}, {"None", nil}} {
		if strings.HasPrefix(p.s[p.i:], kw.word) && !identChar(p.s, p.i+len(kw.word)) {
			p.i += len(kw.word)
			return kw.v, nil
		}
	}
	return nil, p.errorf("a name is not a literal")
}

func identChar(s string, i int) bool {
	if i >= len(s) {
		return false
	}
	c := s[i]
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// seq reads the items of a list or tuple up to end; a set comes through
// dict.
func (p *pyParser) seq(end byte) (any, error) {
	out := []any{}
	for {
		p.space()
		if p.i < len(p.s) && p.s[p.i] == end {
			p.i++
			return out, nil
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		p.space()
		if p.i >= len(p.s) {
			return nil, p.errorf("unclosed bracket")
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case end:
		default:
			return nil, p.errorf("expected ',' or a closing bracket")
		}
	}
}

func (p *pyParser) dict() (any, error) {
	out := map[string]any{}
	set := false
	for n := 0; ; n++ {
		p.space()
		if p.i < len(p.s) && p.s[p.i] == '}' {
			p.i++
			if set {
				return []any{}, nil // a set: its members do not matter here
			}
			return out, nil
		}
		k, err := p.value()
		if err != nil {
			return nil, err
		}
		p.space()
		if p.i >= len(p.s) {
			return nil, p.errorf("unclosed brace")
		}
		if n == 0 && (p.s[p.i] == ',' || p.s[p.i] == '}') {
			set = true
		}
		if set {
			if p.s[p.i] == ',' {
				p.i++
			} else if p.s[p.i] != '}' {
				return nil, p.errorf("expected ',' or '}'")
			}
			continue
		}
		if p.s[p.i] != ':' {
			return nil, p.errorf("expected ':'")
		}
		p.i++
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		key, ok := k.(string)
		if !ok {
			return nil, p.errorf("a dict key that is not a string")
		}
		out[key] = v
		p.space()
		if p.i >= len(p.s) {
			return nil, p.errorf("unclosed brace")
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case '}':
		default:
			return nil, p.errorf("expected ',' or '}'")
		}
	}
}

// isPrefix returns a string prefix (r, u, b, rb, br, in any case) that
// starts s and is followed by a quote, or "".
func isPrefix(s string) string {
	for n := 2; n >= 1; n-- {
		if len(s) <= n || (s[n] != '\'' && s[n] != '"') {
			continue
		}
		switch strings.ToLower(s[:n]) {
		case "r", "u", "b", "rb", "br":
			return s[:n]
		}
	}
	return ""
}

// strings reads one string literal, or several adjacent ones joined.
func (p *pyParser) strings() (any, error) {
	var b strings.Builder
	for first := true; ; first = false {
		p.space()
		if !first && (p.i >= len(p.s) || (p.s[p.i] != '\'' && p.s[p.i] != '"' && isPrefix(p.s[p.i:]) == "")) {
			return b.String(), nil
		}
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		b.WriteString(s)
	}
}

func (p *pyParser) str() (string, error) {
	prefix := strings.ToLower(isPrefix(p.s[p.i:]))
	p.i += len(prefix)
	raw := strings.Contains(prefix, "r")
	q := p.s[p.i : p.i+1]
	if strings.HasPrefix(p.s[p.i:], q+q+q) {
		q = q + q + q
	}
	p.i += len(q)
	var b strings.Builder
	for {
		if p.i >= len(p.s) {
			return "", p.errorf("unterminated string")
		}
		if strings.HasPrefix(p.s[p.i:], q) {
			p.i += len(q)
			return b.String(), nil
		}
		c := p.s[p.i]
		if c == '\n' && len(q) == 1 {
			return "", p.errorf("unterminated string")
		}
		if c != '\\' {
			r, size := utf8.DecodeRuneInString(p.s[p.i:])
			b.WriteRune(r)
			p.i += size
			continue
		}
		if p.i+1 >= len(p.s) {
			return "", p.errorf("unterminated string")
		}
		e := p.s[p.i+1]
		if raw {
			// A raw string keeps the backslash; it still escapes a quote.
			b.WriteByte('\\')
			b.WriteByte(e)
			p.i += 2
			continue
		}
		p.i += 2
		switch e {
		case '\n':
		case '\\', '\'', '"':
			b.WriteByte(e)
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'v':
			b.WriteByte('\v')
		case 'x', 'u', 'U':
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			if p.i+n > len(p.s) {
				return "", p.errorf("truncated escape")
			}
			v, err := strconv.ParseUint(p.s[p.i:p.i+n], 16, 32)
			if err != nil || v > utf8.MaxRune {
				return "", p.errorf("bad escape")
			}
			b.WriteRune(rune(v))
			p.i += n
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := p.i - 1
			for j < len(p.s) && j < p.i+2 && p.s[j] >= '0' && p.s[j] <= '7' {
				j++
			}
			v, _ := strconv.ParseUint(p.s[p.i-1:j], 8, 32)
			b.WriteRune(rune(v))
			p.i = j
		case 'N':
			return "", p.errorf("named escapes are not read")
		default:
			// Python keeps an unknown escape as written.
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
}

// number reads an int or float, with an optional sign; its value is kept as
// text, which is all the tool strings need.
func (p *pyParser) number() (any, error) {
	start := p.i
	if c := p.s[p.i]; c == '-' || c == '+' {
		p.i++
		p.space()
	}
	j := p.i
	for j < len(p.s) && (p.s[j] >= '0' && p.s[j] <= '9' || p.s[j] == '.' || p.s[j] == '_' || p.s[j] == 'e' || p.s[j] == 'E' ||
		((p.s[j] == '-' || p.s[j] == '+') && j > p.i && (p.s[j-1] == 'e' || p.s[j-1] == 'E')) ||
		p.s[j] == 'x' || p.s[j] == 'X' || p.s[j] == 'o' || p.s[j] == 'O' || (p.s[j] >= 'a' && p.s[j] <= 'f') || (p.s[j] >= 'A' && p.s[j] <= 'F')) {
		j++
	}
	text := strings.ReplaceAll(p.s[p.i:j], "_", "")
	if text == "" {
		return nil, p.errorf("a sign without a number")
	}
	if _, err := strconv.ParseFloat(text, 64); err != nil {
		if _, err := strconv.ParseInt(text, 0, 64); err != nil {
			return nil, p.errorf("bad number")
		}
	}
	p.i = j
	return strings.TrimSpace(p.s[start:j]), nil
}
