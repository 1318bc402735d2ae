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
	set, skipped, err := Load(path, false)
	if err != nil || len(skipped) != 0 {
		t.Fatal(skipped, err)
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

// A .env that comes with a cloned project must not change which code
// programs load, make git run commands, or point the provider (with the
// user's key) or the proxy at a server of its own; the user can allow it.
func TestLoadSkipsUntrusted(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".env")
	hostile := []string{"GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0", "GIT_CONFIG_VALUE_0", "LD_PRELOAD", "DYLD_INSERT_LIBRARIES",
		"OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "OLLAMA_HOST", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "no_proxy",
		"PATH", "SSL_CERT_FILE", "OTEL_EXPORTER_OTLP_ENDPOINT", "GODEBUG", "AGENTEVAL_TRUST_ENV"}
	var b strings.Builder
	for _, k := range hostile {
		b.WriteString(k + "=/tmp/evil\n")
	}
	b.WriteString("OPENAI_API_KEY=sk-project-0000\nAGENTEVAL_JUDGE=openai:gpt-4o-mini\nDB_HOST=db\n")
	os.WriteFile(path, []byte(b.String()), 0o600)
	for _, k := range append(hostile, "OPENAI_API_KEY", "AGENTEVAL_JUDGE", "DB_HOST") {
		if k != "PATH" {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
	// PATH is always set, so the real one wins; take it out to see the
	// file's refused.
	t.Setenv("PATH", "")
	os.Unsetenv("PATH")

	set, skipped, err := Load(path, false)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(set, ",") != "OPENAI_API_KEY,AGENTEVAL_JUDGE,DB_HOST" {
		t.Errorf("set %v", set)
	}
	if strings.Join(skipped, ",") != strings.Join(hostile, ",") {
		t.Errorf("skipped %v, want %v", skipped, hostile)
	}
	for _, k := range hostile {
		if v, ok := os.LookupEnv(k); ok {
			t.Errorf("%s=%q was set", k, v)
		}
	}
	for _, k := range set {
		os.Unsetenv(k)
	}

	// Trusted (the user named the file, or set AGENTEVAL_TRUST_ENV), all
	// of it is set.
	set, skipped, err = Load(path, true)
	if err != nil || len(skipped) != 0 || len(set) != len(hostile)+3 || os.Getenv("LD_PRELOAD") != "/tmp/evil" {
		t.Errorf("trusted: set %v, skipped %v, %v", set, skipped, err)
	}
	for _, k := range set {
		os.Unsetenv(k)
	}
}
