package shellwords

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		line  string
		want  []string
		shell bool
	}{
		{"node grader.js", []string{"node", "grader.js"}, false},
		{"  uv run  check.py --flag  ", []string{"uv", "run", "check.py", "--flag"}, false},
		{`python3 "my grader.py" 'a b' c\ d`, []string{"python3", "my grader.py", "a b", "c d"}, false},
		{`echo "say \"hi\""`, []string{"echo", `say "hi"`}, false},
		{"bash -c x", []string{"bash", "-c", "x"}, false},
		{"cat out.txt | wc -l", nil, true},
		{"test -f $HOME/x", nil, true},
		{"ls *.py", nil, true},
		{"a && b", nil, true},
		{"FOO=1 cmd", nil, true},
		{`echo "$X"`, nil, true},
		{"python3 script.py --json=1", []string{"python3", "script.py", "--json=1"}, false},
	}
	for _, tt := range tests {
		got, err := Split(tt.line)
		if tt.shell {
			if !errors.Is(err, ErrNeedsShell) {
				t.Errorf("Split(%q) = %q, %v; want ErrNeedsShell", tt.line, got, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Split(%q): %v", tt.line, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Split(%q) (-want +got):\n%s", tt.line, diff)
		}
	}
	for _, bad := range []string{`echo 'x`, `echo "x`, `echo x\`} {
		if _, err := Split(bad); err == nil || errors.Is(err, ErrNeedsShell) {
			t.Errorf("Split(%q): want a quoting error, got %v", bad, err)
		}
	}
}

// TestSplitRefs: placeholders are found before the line is split, so a
// value can only ever be part of the one word its placeholder is in,
// whatever it holds; and the author's own shell syntax is still refused.
func TestSplitRefs(t *testing.T) {
	ref := regexp.MustCompile(`\$\{[A-Z]+\}|\{PROMPT\}`)
	payloads := []string{"; touch m", "| touch m", "$(touch m)", "`touch m`", "a b", `'"`, "${X}"}
	tests := []struct {
		line string
		want [][]string // each word, with V where the value goes
	}{
		{"grade.py ${P}", [][]string{{"grade.py"}, {"V"}}},
		{"grade.py --x=${P}", [][]string{{"grade.py"}, {"--x=V"}}},
		{`grade.py "${P}" '${P}' ${P}${P}`, [][]string{{"grade.py"}, {"V"}, {"V"}, {"VV"}}},
		{"agent {PROMPT}", [][]string{{"agent"}, {"V"}}},
		{"${P} x", [][]string{{"V"}, {"x"}}},
	}
	for _, tt := range tests {
		words, err := SplitRefs(tt.line, ref)
		if err != nil {
			t.Errorf("SplitRefs(%q): %v", tt.line, err)
			continue
		}
		for _, v := range payloads {
			var got [][]string
			for _, w := range words {
				got = append(got, []string{strings.ReplaceAll(w.Fill(func(string) string { return v }), v, "V")})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("SplitRefs(%q) with %q (-want +got):\n%s", tt.line, v, diff)
			}
		}
	}
	for _, line := range []string{"grade.py ${P} | wc", "grade.py > ${P}", "a && ${P}", "echo $(${P})", "echo `${P}`", "grade.py; ${P}", `echo "$HOME ${P}"`} {
		if _, err := SplitRefs(line, ref); !errors.Is(err, ErrNeedsShell) {
			t.Errorf("SplitRefs(%q) = %v; want ErrNeedsShell", line, err)
		}
	}
	var ne *NeedsShellError
	if _, err := SplitRefs("a | b", ref); !errors.As(err, &ne) || ne.What != "|" {
		t.Errorf("the error names the syntax: %v", err)
	}
	if _, err := SplitRefs(`a \${P}`, ref); err == nil {
		t.Error("a backslash before a placeholder was accepted")
	}
	if w, _ := SplitRefs(`a ''`, ref); len(w) != 2 {
		t.Errorf("an empty quoted word is a word: %v", w)
	}
}

func TestShellScript(t *testing.T) {
	for _, tt := range []struct {
		argv []string
		want int
	}{
		{[]string{"sh", "-c", "x"}, 2},
		{[]string{"/bin/bash", "-euc", "x", "sh", "a"}, 2},
		{[]string{"bash", "--norc", "-o", "pipefail", "-c", "x"}, 5},
		{[]string{"busybox", "sh", "-c", "x"}, 3},
		{[]string{"sh", "grade.sh", "-c"}, -1},
		{[]string{"python3", "-c", "x"}, -1},
		{[]string{"sh", "-c"}, -1},
		{nil, -1},
	} {
		if got := ShellScript(tt.argv); got != tt.want {
			t.Errorf("ShellScript(%q) = %d, want %d", tt.argv, got, tt.want)
		}
	}
}

// TestQuote: a quoted word splits back into itself, whatever it holds.
func TestQuote(t *testing.T) {
	for _, s := range []string{"grade.py", "my grader.py", "a=b", "; touch m", "$(id)", "`id`", "it's", "", "~", "#x", `\`} {
		got, err := Split(Quote(s))
		if err != nil || len(got) != 1 || got[0] != s {
			t.Errorf("Split(Quote(%q)) = %q, %v", s, got, err)
		}
	}
	if Quote("grade.py") != "grade.py" {
		t.Errorf("a plain word is quoted: %s", Quote("grade.py"))
	}
}
