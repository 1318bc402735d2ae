package redact

import (
	"sync"
	"testing"
)

func TestSecretName(t *testing.T) {
	for name, want := range map[string]bool{
		"OPENAI_API_KEY":                 true,
		"ANTHROPIC_API_KEY":              true,
		"GEMINI_KEY":                     true,
		"GITHUB_TOKEN":                   true,
		"DB_PASSWORD":                    true,
		"AWS_SECRET_ACCESS_KEY":          true,
		"Authorization":                  true,
		"X-Api-Key":                      true,
		"GOOGLE_APPLICATION_CREDENTIALS": true,
		"BASIC_AUTH":                     true,
		"AUTH_HEADER":                    true,
		"HOME":                           false,
		"GIT_AUTHOR_NAME":                false,
		"KEYBOARD_LAYOUT":                false,
		"OPENAI_BASE_URL":                false,
	} {
		if got := SecretName(name); got != want {
			t.Errorf("SecretName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestString(t *testing.T) {
	t.Setenv("SOME_SERVICE_TOKEN", "tok-abcdef123456")
	Reload()
	Add("Bearer sk-live-0123456789")
	Add("sk-live-0123456789-longer")
	for in, want := range map[string]string{
		"auth: Bearer sk-live-0123456789":     "auth: " + Mask,
		"key sk-live-0123456789 in a message": "key " + Mask + " in a message",
		"whole sk-live-0123456789-longer":     "whole " + Mask,
		"env tok-abcdef123456":                "env " + Mask,
		"ordinary text stays as it is":        "ordinary text stays as it is",
	} {
		if got := String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
	if !Any() {
		t.Error("Any() = false with secrets known")
	}
}

// TestShortCredentialsInURLs: a URL's password and credential-named query
// parameters are hidden whatever their length; other text is left alone.
func TestShortCredentialsInURLs(t *testing.T) {
	tests := []struct{ in, want string }{
		{"post http://bob:pw1@agent.local/v1: refused", "post http://bob:" + Mask + "@agent.local/v1: refused"},
		{"GET https://api.example.com/x?token=abc1234&page=2", "GET https://api.example.com/x?token=" + Mask + "&page=2"},
		{`"url": "https://h/p?api_key=k1&sig=z9"`, `"url": "https://h/p?api_key=` + Mask + `&sig=` + Mask + `"`},
		{"https://h/p?page=2&q=token", "https://h/p?page=2&q=token"},
		{"the pass is over; a=b", "the pass is over; a=b"},
		{"ftp://anonymous@host/file", "ftp://anonymous@host/file"},
	}
	for _, tt := range tests {
		if got := String(tt.in); got != tt.want {
			t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestReloadWhileRedacting: Reload may run while other goroutines redact
// (go test -race finds no race), and a secret of the environment stays
// hidden throughout.
func TestReloadWhileRedacting(t *testing.T) {
	t.Setenv("RACE_SERVICE_TOKEN", "tok-race-0123456789")
	Reload()
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				if got := String("x tok-race-0123456789"); got != "x "+Mask {
					t.Errorf("String = %q, want the token hidden", got)
					return
				}
				Any()
			}
		}()
	}
	for range 200 {
		Reload()
	}
	wg.Wait()
}

// TestShortSecrets: a known secret is hidden whatever its length (a
// 7-character key echoed bare), where it stands as a word; inside a longer
// word or number it is left, and so are words that are no known secret
// and the flag values that variables named like secrets hold.
func TestShortSecrets(t *testing.T) {
	t.Setenv("SHORT_SERVICE_TOKEN", "k7x9q2z")
	t.Setenv("NPM_CONFIG_ALWAYS_AUTH", "false")
	t.Setenv("SOME_PIN_TOKEN", "1")
	Reload()
	Add("Bearer ab12")
	Add("-dash")
	for in, want := range map[string]string{
		"k7x9q2z":                         Mask,
		"the token is k7x9q2z.":           "the token is " + Mask + ".",
		`{"token":"k7x9q2z"}`:             `{"token":"` + Mask + `"}`,
		"k7x9q2z/k7x9q2z":                 Mask + "/" + Mask,
		"xk7x9q2z and k7x9q2zy stay":      "xk7x9q2z and k7x9q2zy stay",
		"xk7x9q2z then k7x9q2z":           "xk7x9q2z then " + Mask,
		"auth ab12, not ab123":            "auth " + Mask + ", not ab123",
		"x-dash":                          "x" + Mask,
		"true or false, 1 or 2":           "true or false, 1 or 2",
		"a short word that is not secret": "a short word that is not secret",
	} {
		if got := String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
}
