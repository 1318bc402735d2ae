// Package shellwords splits a command line into words the way a POSIX
// shell does for a simple command: blanks separate words, single quotes
// keep everything literally, double quotes keep blanks, and a backslash
// escapes the next character. It runs nothing; a line that needs more of
// the shell (pipes, redirects, variables, globs, command substitution) is
// reported with ErrNeedsShell, and the caller refuses it: a command line
// is never handed to sh -c.
//
// SplitRefs splits a line that holds placeholders (${VAR}, {PROMPT}) before
// they are filled in, so that a value can never end a word, start another,
// or be read as the shell's syntax.
//
// It imports only the standard library.
package shellwords

import (
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"
)

// ErrNeedsShell says a command line uses the shell's own syntax.
var ErrNeedsShell = errors.New("the command uses the shell's syntax")

// NeedsShellError is the error of a line that uses the shell's syntax; it
// names what it used, so that the author sees which character is meant.
type NeedsShellError struct {
	// What is the syntax found: "|", "$", "VAR=value", ...
	What string
}

func (e *NeedsShellError) Error() string {
	return ErrNeedsShell.Error() + " (" + e.What + ")"
}

// Is makes errors.Is(err, ErrNeedsShell) hold.
func (e *NeedsShellError) Is(target error) bool { return target == ErrNeedsShell }

// Part is a piece of a word: text as written (quotes and escapes removed),
// or a placeholder the caller fills in.
type Part struct {
	Text string
	// Ref says Text is a placeholder, as written (${VAR}, {PROMPT}).
	Ref bool
}

// Word is one argument: its parts in order.
type Word []Part

// Literal is the word's text when it holds no placeholder; ok is false
// when it holds one.
func (w Word) Literal() (string, bool) {
	var b strings.Builder
	for _, p := range w {
		if p.Ref {
			return "", false
		}
		b.WriteString(p.Text)
	}
	return b.String(), true
}

// Refs reports whether the word holds a placeholder.
func (w Word) Refs() bool {
	_, lit := w.Literal()
	return !lit
}

// Fill is the word with each placeholder replaced by value's answer. A
// value is used as it is: nothing in it is read again.
func (w Word) Fill(value func(ref string) string) string {
	var b strings.Builder
	for _, p := range w {
		if p.Ref {
			b.WriteString(value(p.Text))
		} else {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// Split splits line into words.
func Split(line string) ([]string, error) {
	words, err := SplitRefs(line, nil)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(words))
	for i, w := range words {
		out[i], _ = w.Literal()
	}
	return out, nil
}

// SplitRefs splits line into words as Split does, and keeps each match of
// ref (nil: none) apart as a placeholder. A placeholder is opaque to the
// splitting, in quotes or out: the words are fixed before any value is
// known, so whatever a value holds (blanks, quotes, ;, $(...)) stays
// inside the one argument its placeholder is in.
func SplitRefs(line string, ref *regexp.Regexp) ([]Word, error) {
	// holes maps the byte offset where a placeholder starts to where it
	// ends.
	holes := map[int]int{}
	if ref != nil {
		for _, m := range ref.FindAllStringIndex(line, -1) {
			if m[1] > m[0] {
				holes[m[0]] = m[1]
			}
		}
	}
	s := &splitter{}
	for i := 0; i < len(line); {
		if end, ok := holes[i]; ok {
			s.ref(line[i:end])
			i = end
			continue
		}
		r, size := utf8.DecodeRuneInString(line[i:])
		switch {
		case r == ' ' || r == '\t' || r == '\n':
			s.end()
		case r == '\\':
			next := i + size
			if next >= len(line) {
				return nil, errors.New("the command ends with a backslash")
			}
			if _, ok := holes[next]; ok {
				return nil, errors.New("a backslash comes before " + line[next:holes[next]] + ", which is filled in whatever comes before it; leave the backslash out")
			}
			r2, size2 := utf8.DecodeRuneInString(line[next:])
			s.lit(r2)
			s.quoted = true
			size += size2
		case r == '\'':
			s.quoted = true
			j := i + size
			for j < len(line) && line[j] != '\'' {
				if end, ok := holes[j]; ok {
					s.ref(line[j:end])
					j = end
					continue
				}
				r2, n := utf8.DecodeRuneInString(line[j:])
				s.lit(r2)
				j += n
			}
			if j >= len(line) {
				return nil, errors.New("a single quote is not closed")
			}
			s.inWord = true
			size = j + 1 - i
		case r == '"':
			s.quoted = true
			j := i + size
			for j < len(line) && line[j] != '"' {
				if end, ok := holes[j]; ok {
					s.ref(line[j:end])
					j = end
					continue
				}
				r2, n := utf8.DecodeRuneInString(line[j:])
				switch r2 {
				case '\\':
					if j+1 < len(line) && strings.IndexByte("\"\\$`\n", line[j+1]) >= 0 {
						j++
						r2, n = utf8.DecodeRuneInString(line[j:])
					}
				case '$', '`':
					return nil, &NeedsShellError{What: string(r2)}
				}
				s.lit(r2)
				j += n
			}
			if j >= len(line) {
				return nil, errors.New("a double quote is not closed")
			}
			s.inWord = true
			size = j + 1 - i
		case strings.ContainsRune("|&;<>()$`*?[{}~#", r):
			if r == '#' && s.inWord || r == '~' && s.inWord || (r == '{' || r == '}') && s.inWord {
				s.lit(r)
				break
			}
			return nil, &NeedsShellError{What: string(r)}
		case r == '=' && len(s.words) == 0 && !s.quoted && len(s.cur) == 0 && name.MatchString(s.text.String()):
			// VAR=value cmd: an assignment only a shell makes.
			return nil, &NeedsShellError{What: "VAR=value before the program"}
		default:
			s.lit(r)
		}
		i += size
	}
	s.end()
	return s.words, nil
}

// name is what a shell assigns to in NAME=value.
var name = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// splitter gathers words as SplitRefs reads them.
type splitter struct {
	words  []Word
	cur    Word
	text   strings.Builder
	inWord bool
	// quoted says the word so far holds a quote, an escape or a
	// placeholder: NAME= in it is not an assignment.
	quoted bool
}

func (s *splitter) lit(r rune) {
	s.text.WriteRune(r)
	s.inWord = true
}

func (s *splitter) flush() {
	if s.text.Len() > 0 {
		s.cur = append(s.cur, Part{Text: s.text.String()})
		s.text.Reset()
	}
}

func (s *splitter) ref(text string) {
	s.quoted = true
	s.flush()
	s.cur = append(s.cur, Part{Text: text, Ref: true})
	s.inWord = true
}

func (s *splitter) end() {
	if !s.inWord {
		return
	}
	s.flush()
	if len(s.cur) == 0 {
		s.cur = Word{{}} // "" is a word of its own
	}
	s.words = append(s.words, s.cur)
	s.cur, s.inWord, s.quoted = nil, false, false
}

// Quote writes s so that Split reads it back as the one word s: as it is
// when it holds nothing a shell would read, else in single quotes.
func Quote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:,+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shells are the programs whose -c argument is shell code.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true, "ash": true, "yash": true, "fish": true}

// ShellScript finds the shell code in argv: the index of the argument
// that follows -c (alone or in a cluster such as -ec) when the program is
// a shell, or -1. A value pasted into that argument would be run as code,
// so callers pass values to it as arguments or environment instead. A
// word that is not known text (it holds a placeholder) is given as "".
func ShellScript(argv []string) int {
	if len(argv) == 0 {
		return -1
	}
	prog := filepath.Base(argv[0])
	args := argv[1:]
	if prog == "busybox" && len(args) > 0 && shells[args[0]] {
		prog, args = args[0], args[1:]
	}
	if !shells[prog] {
		return -1
	}
	at := len(argv) - len(args)
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "-o" || a == "+o" || a == "-O" || a == "+O" {
			i++ // the option's name
			continue
		}
		switch {
		case a == "--" || len(a) < 2 || (a[0] != '-' && a[0] != '+'):
			return -1 // the options end before any -c
		case strings.HasPrefix(a, "--"):
			continue // --norc, --login
		}
		if a[0] == '-' && strings.ContainsRune(a[1:], 'c') {
			if at+i+1 < len(argv) {
				return at + i + 1
			}
			return -1
		}
	}
	return -1
}
