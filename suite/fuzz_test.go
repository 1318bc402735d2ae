package suite

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agenteval/agenteval"
)

// fuzzParse checks what Parse promises for any input: no panic, no hang,
// and every problem a positioned error in the file.
func fuzzParse(f *testing.F, name string, seeds []string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		type parsed struct {
			s   *Suite
			err error
		}
		done := make(chan parsed, 1)
		go func() {
			s, err := Parse(name, data, Options{JudgeAvailable: true, Env: func(string) (string, bool) { return "v", true }})
			done <- parsed{s, err}
		}()
		var p parsed
		select {
		case p = <-done:
		case <-time.After(3 * time.Second):
			t.Fatalf("Parse hangs on %q", data)
		}
		s, err := p.s, p.err
		if err == nil {
			if s == nil {
				t.Fatal("no suite and no error")
			}
			return
		}
		for _, e := range unjoin(err) {
			var pe *agenteval.PosError
			// An error in a file the suite pulled in (tests: /*, say)
			// is at its place in that file.
			if !errors.As(e, &pe) || pe.File != name && !isFile(pe.File) {
				t.Errorf("an error without its place in %s: %v", name, e)
			}
		}
	})
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

func exampleSeeds(f *testing.F, glob string) []string {
	files, _ := filepath.Glob(glob)
	var out []string
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			out = append(out, string(b))
		}
	}
	if len(out) == 0 {
		f.Fatalf("no seeds in %s", glob)
	}
	return out
}

func FuzzParseYAML(f *testing.F) {
	seeds := append(exampleSeeds(f, "../examples/*/*.yaml"),
		"tests:\n  - id: a\n    input: hi\n",
		"x-a: &a [1, 2]\ntests:\n  - id: a\n    input: hi\n    metadata: {m: *a}\n",
		"tests:\n  - <<: {id: a}\n    input: [{role: user, content: hi}]\n    mode: conversation\n    turns: [hi, {input: there, assertions: [ok, {type: contains, value: x}]}]\n",
	)
	fuzzParse(f, "fuzz.yaml", seeds)
}

func FuzzParseInspect(f *testing.F) {
	seeds := append(exampleSeeds(f, "../examples/inspect/*.json"),
		`{"id": 1, "user_instruction": "Find a lamp.", "sub_goals": [{"details": "searches", "turn": "all"}]}`,
		`[{"conversation": [{"turn_id": "1", "message": "hi"}], "expected_tool_calls": [{"tool": "a", "turn": "1"}]}]`,
		`[{"id": "a", "input": [{"role": "user", "content": "x", "terminating_condition": "y"}], "metadata": {"subgoals": [{"details": "d", "turn": 0}], "expected_tools": ["[{'tool_code': 'f(a=1)'}]", {"tool_code": "g()", "turn": "all"}]}, "target": ["t"]}]`,
	)
	fuzzParse(f, "fuzz.json", seeds)
}

// isFile says whether path names a file that is there.
func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}
