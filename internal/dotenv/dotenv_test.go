package dotenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseAndLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".env")
	os.WriteFile(path, []byte("# keys\nOPENAI_API_KEY=sk-from-file-0000\nexport MODEL = 'openai:gpt-4o-mini'\nQUOTED=\"a \\\"b\\\"\\nc\"\nPLAIN=x # a comment\n\nALREADY=file\n"), 0o600)
	t.Setenv("ALREADY", "env")
	t.Setenv("OPENAI_API_KEY", "")
	os.Unsetenv("OPENAI_API_KEY")
	vars, err := Parse(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(vars) != 5 || vars[1] != [2]string{"MODEL", "openai:gpt-4o-mini"} || vars[2][1] != "a \"b\"\nc" || vars[3][1] != "x" {
		t.Errorf("vars = %q", vars)
	}
	set, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, k := range set {
			os.Unsetenv(k)
		}
	})
	if os.Getenv("ALREADY") != "env" || os.Getenv("OPENAI_API_KEY") != "sk-from-file-0000" || strings.Contains(strings.Join(set, ","), "ALREADY") {
		t.Errorf("set %v; ALREADY=%q", set, os.Getenv("ALREADY"))
	}
	os.WriteFile(path, []byte("GOOD=1\nnot a line\n"), 0o600)
	if _, err := Parse(path); err == nil || !strings.Contains(err.Error(), ".env:2:1: expected KEY=VALUE") {
		t.Errorf("err = %v", err)
	}
	os.WriteFile(path, []byte("A=\"open\n"), 0o600)
	if _, err := Parse(path); err == nil || !strings.Contains(err.Error(), ".env:1:3: the quote that opens A's value is never closed") {
		t.Errorf("err = %v", err)
	}
}
