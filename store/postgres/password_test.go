package postgres

import (
	"bytes"
	"strings"
	"testing"

	"github.com/agenteval/agenteval/internal/redact"
)

// A password with an unencoded @ or / is read differently by pgx (the
// first @ ends it, the rest is the host) and by net/url: whatever the
// shape, no part of the password is in the error, nor in the store's
// name, raw or redacted.
func TestMalformedURLHidesPassword(t *testing.T) {
	for _, tc := range []struct{ url, password string }{
		{"postgres://evals:p@zq-W0rd-t4il@127.0.0.1:1/db", "p@zq-W0rd-t4il"},
		{"postgres://evals:p@zq@W0rd-t4il@host.invalid/db", "p@zq@W0rd-t4il"},
		{"postgres://evals:12/zq-W0rd-t4il@127.0.0.1:1/db", "12/zq-W0rd-t4il"},
		{"postgres://evals:p@zq/W0rd@t4il@host.invalid/db?sslmode=disable", "p@zq/W0rd@t4il"},
		{"postgresql://evals:%zz@zq-W0rd-t4il@host.invalid/db", "%zz@zq-W0rd-t4il"},
		{"postgres://evals:pa?zq-W0rd@t4il@127.0.0.1:1/db", "pa?zq-W0rd@t4il"},
	} {
		_, err := Open(tc.url, Options{ReadOnly: true})
		if err == nil {
			t.Errorf("%s opened", tc.url)
			continue
		}
		for _, msg := range []string{err.Error(), redact.String(err.Error()), Name(tc.url)} {
			if part := passwordPart(msg, tc.password); part != "" {
				t.Errorf("%s: %q shows %q of the password", tc.url, msg, part)
			}
		}
		if !strings.Contains(err.Error(), "open store ") || !strings.Contains(err.Error(), "PGPASSWORD") {
			t.Errorf("%s: the error does not say what failed and how to fix it: %v", tc.url, err)
		}
	}
	if n := Name("postgres://evals:p@zq@host/db?sslmode=disable"); n != "postgres://…@host/db" {
		t.Errorf("Name of a URL with an @ in its password = %s", n)
	}
}

// passwordPart is the longest piece of the password, of 3 characters or
// more, that msg holds; "" when none.
func passwordPart(msg, password string) string {
	for n := len(password); n >= 3; n-- {
		for i := 0; i+n <= len(password); i++ {
			if p := password[i : i+n]; strings.Contains(msg, p) {
				return p
			}
		}
	}
	return ""
}

// A password in a URL on the command line (--store) is visible to every
// user of the machine: Open warns, once, without showing it. The same URL
// from elsewhere (AGENTEVAL_STORE) gets no warning, nor does a URL
// without a password.
func TestCommandLinePasswordWarns(t *testing.T) {
	var buf bytes.Buffer
	oldStderr, oldArgs := stderr, args
	defer func() { stderr, args = oldStderr, oldArgs }()
	stderr = &buf
	withPassword := "postgres://evals:s3cret-Argv@127.0.0.1:1/db?connect_timeout=2"
	for _, tc := range []struct {
		name, url string
		argv      []string
		warns     bool
	}{
		{"--store URL", withPassword, []string{"agenteval", "runs", "--store", withPassword}, true},
		{"--store=URL", withPassword + "&x=1", []string{"agenteval", "runs", "--store=" + withPassword + "&x=1"}, true},
		{"password in the query", "postgres://evals@127.0.0.1:1/db?password=s3cret-Argv", []string{"agenteval", "--store", "postgres://evals@127.0.0.1:1/db?password=s3cret-Argv"}, true},
		{"malformed", "postgres://evals:s3cret@Argv@127.0.0.1:1/db", []string{"agenteval", "--store", "postgres://evals:s3cret@Argv@127.0.0.1:1/db"}, true},
		{"AGENTEVAL_STORE", withPassword + "&y=1", []string{"agenteval", "runs"}, false},
		{"no password", "postgres://evals@127.0.0.1:1/db", []string{"agenteval", "--store", "postgres://evals@127.0.0.1:1/db"}, false},
	} {
		buf.Reset()
		args = func() []string { return tc.argv }
		Open(tc.url, Options{ReadOnly: true})
		out := buf.String()
		if warned := strings.Contains(out, "is on the command line"); warned != tc.warns {
			t.Errorf("%s: warning %v, want %v: %q", tc.name, warned, tc.warns, out)
		}
		if tc.warns && !strings.Contains(out, "PGPASSWORD or ~/.pgpass") || strings.Contains(out, "s3cret") || strings.Contains(out, "Argv") {
			t.Errorf("%s: %q", tc.name, out)
		}
		buf.Reset()
		Open(tc.url, Options{ReadOnly: true})
		if buf.Len() > 0 {
			t.Errorf("%s: warned twice: %q", tc.name, buf.String())
		}
	}
}
