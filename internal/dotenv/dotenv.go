// Package dotenv reads .env files: KEY=VALUE lines, with an optional
// export, single or double quotes, and # comments. Variables already in
// the environment win over the file, as in most tools that read one, and
// the ones that change which code programs load or where they connect
// are loaded only when the caller trusts the file (see Untrusted). It
// imports only the standard library.
package dotenv

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
)

var key = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Parse reads a .env file's variables in order. Problems are reported as
// path:line:col.
func Parse(path string) ([][2]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out [][2]string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimSpace(strings.TrimPrefix(line, "export "))
		k, v, ok := strings.Cut(line, "=")
		k = strings.TrimSpace(k)
		if !ok || !key.MatchString(k) {
			return nil, fmt.Errorf("%s:%d:1: expected KEY=VALUE, not %q", path, n, truncate(sc.Text()))
		}
		v = strings.TrimSpace(v)
		switch {
		case len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"':
			v = strings.NewReplacer(`\n`, "\n", `\"`, `"`, `\\`, `\`).Replace(v[1 : len(v)-1])
		case len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'':
			v = v[1 : len(v)-1]
		case strings.HasPrefix(v, `"`) || strings.HasPrefix(v, "'"):
			return nil, fmt.Errorf("%s:%d:%d: the quote that opens %s's value is never closed", path, n, strings.Index(sc.Text(), "=")+2, k)
		default:
			if i := strings.Index(v, " #"); i >= 0 {
				v = strings.TrimSpace(v[:i])
			}
		}
		out = append(out, [2]string{k, v})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return out, nil
}

// Load sets the variables of a .env file that the environment does not
// have already, and returns their names. Unless trust is set, it sets none
// that Untrusted names, and returns those it left out as skipped.
func Load(path string, trust bool) (set, skipped []string, err error) {
	vars, err := Parse(path)
	if err != nil {
		return nil, nil, err
	}
	for _, kv := range vars {
		if _, ok := os.LookupEnv(kv[0]); ok {
			continue
		}
		if !trust && Untrusted(kv[0]) {
			if !slices.Contains(skipped, kv[0]) {
				skipped = append(skipped, kv[0])
			}
			continue
		}
		if err := os.Setenv(kv[0], kv[1]); err != nil {
			return set, skipped, fmt.Errorf("%s: set %s: %w", path, kv[0], err)
		}
		if !slices.Contains(set, kv[0]) {
			set = append(set, kv[0])
		}
	}
	return set, skipped, nil
}

// Untrusted says whether a variable changes which code programs load or
// where their connections go, rather than giving them a value: a .env
// that comes with a cloned project could otherwise make every program
// agenteval starts load a library of its own (LD_PRELOAD), make git run a
// command (GIT_CONFIG_*), or send the user's API key, which the real
// environment holds, to a server of its own (OPENAI_BASE_URL, a proxy, a
// certificate authority). Only the user can vouch for those.
func Untrusted(key string) bool {
	k := strings.ToUpper(key)
	for _, p := range []string{"LD_", "DYLD_", "GIT_", "SSL_CERT_"} {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	// _PROXY covers HTTP_PROXY, HTTPS_PROXY, ALL_PROXY and NO_PROXY, in
	// either case; _ENDPOINT covers where OpenTelemetry exports go.
	for _, s := range []string{"_BASE_URL", "_API_BASE", "_ENDPOINT", "_PROXY"} {
		if strings.HasSuffix(k, s) {
			return true
		}
	}
	switch k {
	case "PATH", "GODEBUG", "OLLAMA_HOST",
		// The opt-in itself must come from the user.
		"AGENTEVAL_TRUST_ENV":
		return true
	}
	return false
}

func truncate(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
