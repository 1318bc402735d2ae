// Package redact owns the process's list of secrets and hides them in text:
// the values of environment variables whose names mark them as secrets,
// the API keys models are opened with, and the credentials of HTTP and
// command targets. Every error message, log line and result passes through
// it before it leaves the process. It imports only the standard library.
package redact

import (
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Mask replaces a secret.
const Mask = "[REDACTED]"

// mu guards the secrets and whether the environment's are among them.
// A plain flag, not a sync.Once: Reload clears it while other goroutines
// may be redacting.
var (
	mu        sync.RWMutex
	secrets   []string
	envLoaded bool
)

// secretMarks in an environment variable's or header's name say it holds
// a secret wherever they appear in it.
var secretMarks = []string{"API_KEY", "APIKEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "BEARER"}

// secretWords say so as whole words (AUTH, not GIT_AUTHOR_NAME).
var secretWords = []string{"AUTH", "AUTHORIZATION"}

// SecretName reports whether an environment variable's or header's name
// says it holds a secret.
func SecretName(name string) bool {
	n := strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
	for _, s := range secretMarks {
		if strings.Contains(n, s) {
			return true
		}
	}
	words := strings.Split(n, "_")
	for _, w := range words {
		for _, s := range secretWords {
			if w == s {
				return true
			}
		}
	}
	// OPENAI_KEY, AWS_ACCESS_KEY, GH_PAT.
	last := words[len(words)-1]
	return last == "KEY" || (last == "PAT" && len(words) > 1)
}

// loadEnv adds the secrets of the environment, once until Reload.
func loadEnv() {
	mu.RLock()
	loaded := envLoaded
	mu.RUnlock()
	if loaded {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	if envLoaded {
		return
	}
	envLoaded = true
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if SecretName(k) {
			addLocked(v)
		}
	}
}

// Reload re-reads the environment; tests that set variables call it. It
// is safe while other goroutines redact.
func Reload() {
	mu.Lock()
	envLoaded = false
	mu.Unlock()
}

// Add makes String hide s, and also its part after an auth scheme
// ("Bearer sk-..." hides "sk-..." wherever it shows). A secret is hidden
// whatever its length: a 7-character key the agent echoes is as much a
// leak as a long one. Only values that cannot be a credential are
// ignored: empty ones, single characters, and the flag words (true, no,
// off, ...) that variables named like secrets often hold, such as
// NPM_CONFIG_ALWAYS_AUTH=false.
func Add(s string) {
	mu.Lock()
	defer mu.Unlock()
	addLocked(s)
}

// addLocked is Add with mu held.
func addLocked(s string) {
	s = strings.TrimSpace(s)
	if scheme, rest, ok := strings.Cut(s, " "); ok && isScheme(scheme) {
		add(strings.TrimSpace(rest))
	}
	add(s)
}

func isScheme(s string) bool {
	switch strings.ToLower(s) {
	case "bearer", "basic", "token", "apikey", "api-key":
		return true
	}
	return false
}

// add adds one secret; mu is held.
func add(s string) {
	if notSecret(s) {
		return
	}
	for _, have := range secrets {
		if have == s {
			return
		}
	}
	secrets = append(secrets, s)
	// Longest first, so a secret that contains another is hidden whole.
	sort.Slice(secrets, func(i, j int) bool { return len(secrets[i]) > len(secrets[j]) })
}

// notSecret reports whether a value named like a secret cannot be one.
func notSecret(s string) bool {
	if utf8.RuneCountInString(s) < 2 {
		return true
	}
	switch strings.ToLower(s) {
	case "true", "false", "yes", "no", "on", "off", "none", "null", "nil":
		return true
	}
	return false
}

// wordsBelow is the length under which a secret is hidden only where it
// stands as a word of its own, not inside a longer run of letters and
// digits: a value that short also turns up by chance inside other words
// and numbers, and masking those would mangle text that shows nothing of
// the secret. From this length on a secret is hidden wherever it shows.
const wordsBelow = 8

// Any reports whether there is any secret to hide, so that callers can
// skip walking large values when there is none.
func Any() bool {
	loadEnv()
	mu.RLock()
	defer mu.RUnlock()
	return len(secrets) > 0
}

// String replaces every known secret in s with Mask, and, whatever their
// length, the password of any URL in s and the values of query parameters
// named like credentials (?api_key=..., &token=..., &sig=...).
func String(s string) string {
	loadEnv()
	mu.RLock()
	for _, sec := range secrets {
		switch {
		case !strings.Contains(s, sec):
		case len(sec) >= wordsBelow:
			s = strings.ReplaceAll(s, sec, Mask)
		default:
			s = replaceWord(s, sec)
		}
	}
	mu.RUnlock()
	if strings.Contains(s, "://") {
		s = urlPassword.ReplaceAllString(s, "${1}"+Mask+"${3}")
	}
	if strings.Contains(s, "=") {
		s = queryParam.ReplaceAllStringFunc(s, func(m string) string {
			sub := queryParam.FindStringSubmatch(m)
			if !CredentialParam(sub[2]) || sub[3] == Mask {
				return m
			}
			return sub[1] + Mask
		})
	}
	return s
}

// replaceWord replaces sec with Mask where it is not part of a longer run
// of letters and digits. An edge of sec that is not a letter or digit
// needs no boundary: nothing it is glued to can make it another word.
func replaceWord(s, sec string) string {
	first, _ := utf8.DecodeRuneInString(sec)
	last, _ := utf8.DecodeLastRuneInString(sec)
	var b strings.Builder
	from := 0
	for {
		i := strings.Index(s[from:], sec)
		if i < 0 {
			break
		}
		i += from
		end := i + len(sec)
		before, _ := utf8.DecodeLastRuneInString(s[:i])
		after, _ := utf8.DecodeRuneInString(s[end:])
		if (i > 0 && isWordRune(first) && isWordRune(before)) || (end < len(s) && isWordRune(last) && isWordRune(after)) {
			// Glued to a word: move on by one rune, as the secret may
			// start again inside this occurrence.
			_, n := utf8.DecodeRuneInString(s[i:])
			b.WriteString(s[from : i+n])
			from = i + n
			continue
		}
		b.WriteString(s[from:i])
		b.WriteString(Mask)
		from = end
	}
	if from == 0 {
		return s
	}
	b.WriteString(s[from:])
	return b.String()
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

var (
	// urlPassword finds scheme://user:password@ in text.
	urlPassword = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:)([^@\s/]+)(@)`)
	// queryParam finds ?name=value and &name=value in text.
	queryParam = regexp.MustCompile(`([?&;]([A-Za-z0-9_.\-]+)=)([^&;\s"'#<>]+)`)
)

// CredentialParam reports whether a URL query parameter's name says it
// carries a credential: the secret names (api_key, token, password, ...)
// and the short ones URLs use (key, sig, signature, pass, pwd).
func CredentialParam(name string) bool {
	switch strings.ToLower(name) {
	case "key", "sig", "signature", "pass", "pwd", "auth", "code":
		return true
	}
	return SecretName(name)
}
