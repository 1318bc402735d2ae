package provider

import (
	"github.com/agenteval/agenteval"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agenteval/agenteval/internal/redact"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		h    map[string]string
		want time.Duration
	}{
		{map[string]string{"Retry-After": "2"}, 2 * time.Second},
		{map[string]string{"Retry-After": "0.25"}, 250 * time.Millisecond},
		{map[string]string{"Retry-After-Ms": "150", "Retry-After": "9"}, 150 * time.Millisecond},
		{map[string]string{"Retry-After": now.Add(3 * time.Second).Format(http.TimeFormat)}, 3 * time.Second},
		{map[string]string{"Retry-After": "soon"}, 0},
		{nil, 0},
	}
	for _, tt := range tests {
		h := http.Header{}
		for k, v := range tt.h {
			h.Set(k, v)
		}
		if got := retryAfter(h, now); got != tt.want {
			t.Errorf("retryAfter(%v) = %v, want %v", tt.h, got, tt.want)
		}
	}
}

func TestPrices(t *testing.T) {
	p := DefaultPrices()
	tests := []struct {
		provider, model string
		known           bool
		in              float64
	}{
		{"openai", "gpt-4o-mini", true, 0.15},
		{"openai", "gpt-4o-mini-2024-07-18", true, 0.15},
		{"openai", "gpt-4o", true, 2.50},
		{"openai", "openai/gpt-4o", true, 2.50},
		{"anthropic", "claude-3-5-haiku-latest", true, 0.80},
		{"gemini", "gemini-2.5-flash-lite", true, 0.10},
		{"ollama", "llama3.2", true, 0},
		{"openai", "my-local-llama", false, 0},
		{"openai", "gpt-4o1", false, 0},
	}
	for _, tt := range tests {
		got, ok := p.Lookup(tt.provider, tt.model)
		if ok != tt.known || got.Input != tt.in {
			t.Errorf("Lookup(%s, %s) = %v %v, want %v %v", tt.provider, tt.model, got, ok, tt.in, tt.known)
		}
	}
	if c := p.Cost("openai", "unknown-model", 10, 10); c != nil {
		t.Errorf("unknown model cost = %v, want nil (unknown, not 0)", *c)
	}
	path := filepath.Join(t.TempDir(), "prices.json")
	os.WriteFile(path, []byte(`{"my-local-llama": {"input": 1, "output": 2}, "openai:gpt-4o": {"input": 9, "output": 9}}`), 0o644)
	lp, err := LoadPrices(path)
	if err != nil {
		t.Fatal(err)
	}
	if c := lp.Cost("openai", "my-local-llama", 1e6, 1e6); c == nil || *c != 3 {
		t.Errorf("override cost = %v", c)
	}
	if got, _ := lp.Lookup("openai", "gpt-4o"); got.Input != 9 {
		t.Errorf("provider-specific override = %v", got)
	}
	os.WriteFile(path, []byte(`{"x": 1}`), 0o644)
	if _, err := LoadPrices(path); err == nil || !strings.Contains(err.Error(), "dollars per million tokens") {
		t.Errorf("bad table err = %v", err)
	}
	// A misspelt field would price the model at $0: it is an error, at its
	// place.
	os.WriteFile(path, []byte("{\n  \"gpt-4o\": {\"in\": 2.5, \"out\": 10},\n  \"gpt-5\": {\"input\": 1}\n}"), 0o644)
	_, err = LoadPrices(path)
	for _, want := range []string{`prices.json:2:13: "gpt-4o" is not a price: json: unknown field "in"`, `prices.json:3:12: "gpt-5" needs both input and output`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want %q", err, want)
		}
	}
}

func TestRedact(t *testing.T) {
	t.Setenv("MY_SERVICE_API_KEY", "abcdef123456")
	redact.Reload()
	redact.Add("sk-live-0123456789")
	redact.Add("short")
	got := Redact("key sk-live-0123456789 and abcdef123456, short too, but other words stay")
	if got != "key [REDACTED] and [REDACTED], [REDACTED] too, but other words stay" {
		t.Errorf("Redact = %q", got)
	}
}

func TestParseSpec(t *testing.T) {
	if _, err := ParseSpec("gpt-4o"); err == nil || !strings.Contains(err.Error(), "is not provider:model") {
		t.Errorf("err = %v", err)
	}
	if _, err := ParseSpec("nope:model"); err == nil || !strings.Contains(err.Error(), `unknown provider "nope"`) {
		t.Errorf("err = %v", err)
	}
}

// TestMissingKeyHints: each provider's missing key is named, and only the
// OpenAI adapter mentions OpenAI-compatible servers.
func TestMissingKeyHints(t *testing.T) {
	Register("hintprov", func(Config, *http.Client) (agenteval.Model, error) { return nil, nil }, []string{"HINT_API_KEY", "HINT_OTHER_KEY"}, "HINT_BASE_URL")
	_, err := Open(Config{Provider: "hintprov", Model: "m", APIKeyEnv: "HINT_API_KEY"})
	if err == nil || err.Error() != "hintprov needs an API key: set HINT_API_KEY or HINT_OTHER_KEY in the environment" {
		t.Errorf("err = %v", err)
	}
}
