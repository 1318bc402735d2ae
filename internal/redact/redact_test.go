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
	Add("short")
	Add("sk-live-0123456789-longer")
	for in, want := range map[string]string{
		"auth: Bearer sk-live-0123456789":     "auth: " + Mask,
		"key sk-live-0123456789 in a message": "key " + Mask + " in a message",
		"whole sk-live-0123456789-longer":     "whole " + Mask,
		"env tok-abcdef123456":                "env " + Mask,
		"short stays; so does ordinary text":  "short stays; so does ordinary text",
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
