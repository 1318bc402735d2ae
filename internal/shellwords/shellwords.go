// Package shellwords splits a command line into words the way a POSIX
// shell does for a simple command: blanks separate words, single quotes
// keep everything literally, double quotes keep blanks, and a backslash
// escapes the next character. It runs nothing; a line that needs more of
// the shell (pipes, redirects, variables, globs, command substitution) is
// reported with ErrNeedsShell, so that the caller can run it through
// sh -c instead.
//
// It imports only the standard library.
package shellwords

import (
	"errors"
	"strings"
)

// ErrNeedsShell says a command line uses the shell's own syntax.
var ErrNeedsShell = errors.New("the command uses the shell's syntax")

// Split splits line into words.
func Split(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	rs := []rune(line)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case r == '\\':
			if i+1 >= len(rs) {
				return nil, errors.New("the command ends with a backslash")
			}
			i++
			cur.WriteRune(rs[i])
			inWord = true
		case r == '\'':
			j := i + 1
			for j < len(rs) && rs[j] != '\'' {
				j++
			}
			if j >= len(rs) {
				return nil, errors.New("a single quote is not closed")
			}
			cur.WriteString(string(rs[i+1 : j]))
			i, inWord = j, true
		case r == '"':
			j := i + 1
			for ; j < len(rs) && rs[j] != '"'; j++ {
				switch rs[j] {
				case '\\':
					if j+1 < len(rs) && strings.ContainsRune("\"\\$`\n", rs[j+1]) {
						j++
					}
				case '$', '`':
					return nil, ErrNeedsShell
				}
				cur.WriteRune(rs[j])
			}
			if j >= len(rs) {
				return nil, errors.New("a double quote is not closed")
			}
			i, inWord = j, true
		case strings.ContainsRune("|&;<>()$`*?[{}~#", r):
			if r == '#' && inWord || r == '~' && inWord || (r == '{' || r == '}') && inWord {
				cur.WriteRune(r)
				continue
			}
			return nil, ErrNeedsShell
		case r == '=' && !inWord:
			cur.WriteRune(r)
			inWord = true
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	if len(words) > 0 && strings.Contains(words[0], "=") && !strings.HasPrefix(words[0], "=") {
		// VAR=value cmd: an assignment only a shell makes.
		return nil, ErrNeedsShell
	}
	return words, nil
}
