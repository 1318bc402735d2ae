package nunjucks

import (
	"strings"
	"unicode/utf8"
)

// The tokenizer follows Nunjucks's own: text between tags is data; inside
// {{ }} and {% %} it reads strings, whitespace, delimiters and words, and
// the closing }} or %} is looked for before any other delimiter, so that
// "}}" ends a tag even inside a dict literal, as there.

type tokType int

const (
	tokString tokType = iota
	tokWhitespace
	tokData
	tokBlockStart
	tokBlockEnd
	tokVarStart
	tokVarEnd
	tokComment
	tokLParen
	tokRParen
	tokLBracket
	tokRBracket
	tokLCurly
	tokRCurly
	tokOperator
	tokComma
	tokColon
	tokTilde
	tokPipe
	tokInt
	tokFloat
	tokBoolean
	tokNone
	tokSymbol
	tokRegex
)

var tokNames = [...]string{"string", "whitespace", "text", "{%", "%}", "{{", "}}", "comment", "(", ")", "[", "]", "{", "}", "operator", ",", ":", "~", "|", "number", "number", "boolean", "none", "name", "regular expression"}

func (t tokType) String() string { return tokNames[t] }

type token struct {
	typ       tokType
	val       string
	line, col int // 1-based; col counts characters
}

const (
	whitespaceChars = " \n\t\r\u00a0"
	delimChars      = "()[]{}%*-+~/#,:|.<>=!"
	intChars        = "0123456789"
)

// lexer reads tokens from src on demand: what a tag's end means depends
// on whether the parser is inside a tag.
type lexer struct {
	src       string
	i         int // byte offset
	line, col int // 0-based, as Nunjucks counts; tokens carry them +1
	inCode    bool
}

func (l *lexer) finished() bool { return l.i >= len(l.src) }

func (l *lexer) cur() string {
	if l.finished() {
		return ""
	}
	_, n := utf8.DecodeRuneInString(l.src[l.i:])
	return l.src[l.i : l.i+n]
}

func (l *lexer) forward() {
	if l.finished() {
		return
	}
	c := l.cur()
	l.i += len(c)
	if c == "\n" {
		l.line++
		l.col = 0
	} else {
		l.col++
	}
}

func (l *lexer) forwardN(s string) {
	for range utf8.RuneCountInString(s) {
		l.forward()
	}
}

func (l *lexer) matches(s string) bool { return strings.HasPrefix(l.src[l.i:], s) }

func (l *lexer) extractString(s string) bool {
	if l.matches(s) {
		l.forwardN(s)
		return true
	}
	return false
}

// extractUntil takes characters up to one of chars (or the end).
func (l *lexer) extractUntil(chars string) string {
	start := l.i
	for !l.finished() && !strings.Contains(chars, l.cur()) {
		l.forward()
	}
	return l.src[start:l.i]
}

// extractIn takes characters while they are in chars.
func (l *lexer) extractIn(chars string) string {
	start := l.i
	for !l.finished() && strings.Contains(chars, l.cur()) {
		l.forward()
	}
	return l.src[start:l.i]
}

func (l *lexer) tok(t tokType, v string, line, col int) *token {
	return &token{typ: t, val: v, line: line + 1, col: col + 1}
}

// next returns the next token, nil at the end of the source.
func (l *lexer) next() (*token, error) {
	line, col := l.line, l.col
	if l.finished() {
		return nil, nil
	}
	if l.inCode {
		c := l.cur()
		switch {
		case c == `"` || c == `'`:
			return l.tok(tokString, l.parseString(c), line, col), nil
		case strings.Contains(whitespaceChars, c):
			return l.tok(tokWhitespace, l.extractIn(whitespaceChars), line, col), nil
		case l.extractString("%}"):
			l.inCode = false
			return l.tok(tokBlockEnd, "%}", line, col), nil
		case l.extractString("-%}"):
			l.inCode = false
			return l.tok(tokBlockEnd, "-%}", line, col), nil
		case l.extractString("}}"):
			l.inCode = false
			return l.tok(tokVarEnd, "}}", line, col), nil
		case l.extractString("-}}"):
			l.inCode = false
			return l.tok(tokVarEnd, "-}}", line, col), nil
		case c == "r" && strings.HasPrefix(l.src[l.i+1:], "/"):
			return nil, &Error{Line: line + 1, Col: col + 1, Msg: "regular expressions (r/.../) are not supported here"}
		case strings.Contains(delimChars, c):
			l.forward()
			op := c
			for _, two := range []string{"==", "!=", "<=", ">=", "//", "**"} {
				if c+l.cur() == two {
					l.forward()
					op = two
					if (two == "==" || two == "!=") && l.cur() == "=" {
						l.forward()
						op += "="
					}
					break
				}
			}
			t := map[string]tokType{"(": tokLParen, ")": tokRParen, "[": tokLBracket, "]": tokRBracket, "{": tokLCurly, "}": tokRCurly, ",": tokComma, ":": tokColon, "~": tokTilde, "|": tokPipe}[op]
			if t == 0 {
				t = tokOperator
			}
			return l.tok(t, op, line, col), nil
		}
		word := l.extractUntil(whitespaceChars + delimChars)
		switch {
		case isDigits(word):
			if l.cur() == "." {
				l.forward()
				return l.tok(tokFloat, word+"."+l.extractIn(intChars), line, col), nil
			}
			return l.tok(tokInt, word, line, col), nil
		case word == "true" || word == "false":
			return l.tok(tokBoolean, word, line, col), nil
		case word == "none" || word == "null":
			return l.tok(tokNone, word, line, col), nil
		}
		return l.tok(tokSymbol, word, line, col), nil
	}
	if l.extractString("{%-") {
		l.inCode = true
		return l.tok(tokBlockStart, "{%-", line, col), nil
	}
	if l.extractString("{%") {
		l.inCode = true
		return l.tok(tokBlockStart, "{%", line, col), nil
	}
	if l.extractString("{{-") {
		l.inCode = true
		return l.tok(tokVarStart, "{{-", line, col), nil
	}
	if l.extractString("{{") {
		l.inCode = true
		return l.tok(tokVarStart, "{{", line, col), nil
	}
	var b strings.Builder
	inComment := false
	if l.matches("{#") {
		inComment = true
		l.extractString("{#")
		b.WriteString("{#")
	}
	for !l.finished() {
		b.WriteString(l.extractUntil("{#"))
		if l.finished() {
			break
		}
		if !inComment && (l.matches("{%") || l.matches("{{") || l.matches("{#")) {
			break
		}
		if l.matches("#}") {
			if !inComment {
				return nil, &Error{Line: l.line + 1, Col: l.col + 1, Msg: `"#}" ends a comment that was not opened; write {{ "#}" }} for the text`}
			}
			l.extractString("#}")
			b.WriteString("#}")
			return l.tok(tokComment, b.String(), line, col), nil
		}
		b.WriteString(l.cur())
		l.forward()
	}
	if inComment {
		return nil, &Error{Line: line + 1, Col: col + 1, Msg: "this comment has no end (#})"}
	}
	return l.tok(tokData, b.String(), line, col), nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// parseString reads a quoted string: \n, \t and \r are escapes, any
// other escaped character stands for itself.
func (l *lexer) parseString(quote string) string {
	l.forward()
	var b strings.Builder
	for !l.finished() && l.cur() != quote {
		c := l.cur()
		if c == `\` {
			l.forward()
			switch l.cur() {
			case "n":
				b.WriteByte('\n')
			case "t":
				b.WriteByte('\t')
			case "r":
				b.WriteByte('\r')
			default:
				b.WriteString(l.cur())
			}
			l.forward()
			continue
		}
		b.WriteString(c)
		l.forward()
	}
	l.forward()
	return b.String()
}
