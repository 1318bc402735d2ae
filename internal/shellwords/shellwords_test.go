package shellwords

import (
	"errors"
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
