// Package provider turns a "provider:model" spec into an agenteval.Model and
// makes every model reliable in the same way: a per-provider concurrency
// limit and rate limit, a timeout per call, retries with backoff on 429, 5xx,
// timeouts and garbage bodies that honour Retry-After, secret redaction in
// every error, and token cost from a price table. It paces each account by
// the rate limits its answers state (adaptive.go).
//
// The adapters (provider/openai, provider/anthropic, provider/gemini)
// register themselves here, as database/sql drivers do; import them for
// their side effect. This package imports the root package, internal/redact
// (secrets out of errors), internal/jsonpos (positions in the price table's
// errors), the standard library, backoff and x/time/rate; it never imports
// an adapter.
package provider

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/agenteval/agenteval"
)

// Config configures one model. ParseSpec fills it from a spec string and
// the environment; the zero values of the limits mean "the default".
type Config struct {
	// Provider is the adapter name: openai, anthropic, gemini or ollama.
	Provider string
	// Model is the provider's model name, such as gpt-4o-mini.
	Model string
	// BaseURL overrides the provider's endpoint (OpenAI-compatible servers,
	// proxies, tests).
	BaseURL string
	// APIKey is read from the environment by ParseSpec; it is never printed.
	APIKey string
	// APIKeyEnv names the variable the key came from, for error messages.
	APIKeyEnv string

	// Timeout bounds each attempt; default 60s.
	Timeout time.Duration
	// MaxRetries is how many times a transient failure is retried; default 4.
	// Set a negative number for none.
	MaxRetries int
	// Concurrency caps calls in flight to this provider; default 16.
	Concurrency int
	// RequestsPerMinute caps the call rate; 0 means no cap.
	RequestsPerMinute float64
	// RetryWait is the first backoff interval; default 500ms. Retry-After
	// from the server takes precedence.
	RetryWait time.Duration
	// CallBudget bounds one call in all: every attempt, backoff and
	// Retry-After wait. It starts when the first attempt begins, after
	// the wait for Concurrency and RequestsPerMinute, which only the
	// caller's context bounds. Default (MaxRetries+1) × Timeout + 30s; a
	// server asking for a longer wait than is left, or a rate limit that
	// would start a retry past it, gets the call failed, saying so. Waits
	// for a provider's rate limit (a 429 that states its limits, or the
	// pace its headers set) move the deadline on; a call waits at most 10
	// minutes in all for them.
	CallBudget time.Duration
	// Prices overrides the built-in price table.
	Prices *PriceTable
	// API is the wire API: "chat" (Chat Completions; the default when "")
	// or "responses" (OpenAI's Responses API). An adapter that cannot
	// speak the one asked for refuses to open.
	API string
	// Store is the Responses API's store flag: nil or true threads calls
	// by previous_response_id, false sends the whole input every call.
	Store *bool
}

// String renders the config as its spec, without secrets.
func (c Config) String() string { return c.Provider + ":" + c.Model }

// ChatOnly is the check of an adapter that speaks only its provider's own
// API: it refuses api: responses (OpenAI's Responses API) and store, its
// setting, so that a target asking for them fails at open, saying why,
// instead of running on another API than the one asked for.
func ChatOnly(cfg Config) error {
	switch {
	case cfg.API != "" && cfg.API != "chat":
		return fmt.Errorf("api: %s is OpenAI's Responses API, which %s models do not speak; remove api: from the target (or the judge), or use an openai: model (OpenAI, or a server that serves /v1/responses)", cfg.API, cfg.Provider)
	case cfg.Store != nil:
		return fmt.Errorf("store is a setting of OpenAI's Responses API, which %s models do not speak; remove store: from the target", cfg.Provider)
	}
	return nil
}

// Factory builds an adapter's raw model: one attempt per call, no retries.
// Open wraps it with the shared limits.
type Factory func(cfg Config, client *http.Client) (agenteval.Model, error)

type adapter struct {
	factory Factory
	// keyEnvs are the environment variables the key may come from, in order.
	keyEnvs []string
	// baseEnv is the environment variable for the base URL, if any.
	baseEnv string
	// defaultBase is used when neither config nor environment give one.
	defaultBase string
	// keyOptional: local servers (Ollama, llama.cpp) need no key.
	keyOptional bool
	// alias makes this name an alias of another adapter with other defaults.
	alias string
}

var (
	mu       sync.RWMutex
	adapters = map[string]adapter{}
)

// Register makes an adapter available under a provider name.
func Register(name string, f Factory, keyEnvs []string, baseEnv string) {
	mu.Lock()
	defer mu.Unlock()
	adapters[name] = adapter{factory: f, keyEnvs: keyEnvs, baseEnv: baseEnv}
}

// RegisterAlias makes name an alias of target with its own default base URL
// and no key required, as ollama is of openai.
func RegisterAlias(name, target, defaultBase, baseEnv string) {
	mu.Lock()
	defer mu.Unlock()
	adapters[name] = adapter{alias: target, defaultBase: defaultBase, baseEnv: baseEnv, keyOptional: true}
}

// Names lists the registered provider names.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]string, 0, len(adapters))
	for n := range adapters {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func lookup(name string) (adapter, adapter, bool) {
	mu.RLock()
	defer mu.RUnlock()
	a, ok := adapters[name]
	if !ok {
		return adapter{}, adapter{}, false
	}
	base := a
	if a.alias != "" {
		base, ok = adapters[a.alias]
	}
	return a, base, ok
}

// ParseSpec reads "provider:model" and fills the base URL and API key from
// the environment: OPENAI_API_KEY and OPENAI_BASE_URL for openai,
// ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL for anthropic, GEMINI_API_KEY (or
// GOOGLE_API_KEY) and GOOGLE_GEMINI_BASE_URL for gemini, OLLAMA_HOST for
// ollama. A key is required only when the provider's own endpoint is used.
func ParseSpec(spec string) (Config, error) {
	p, model, ok := strings.Cut(strings.TrimSpace(spec), ":")
	if !ok || p == "" || model == "" {
		return Config{}, fmt.Errorf("model spec %q is not provider:model; for example openai:gpt-4o-mini, anthropic:claude-3-5-haiku-latest, gemini:gemini-2.0-flash or ollama:llama3.2", spec)
	}
	p = strings.ToLower(p)
	a, base, ok := lookup(p)
	if !ok {
		return Config{}, unknownProvider(p, spec)
	}
	cfg := Config{Provider: p, Model: model}
	if a.baseEnv != "" {
		if v := os.Getenv(a.baseEnv); v != "" {
			cfg.BaseURL = v
			if p == "ollama" && !strings.Contains(v, "/v1") {
				cfg.BaseURL = strings.TrimRight(ensureScheme(v), "/") + "/v1"
			}
		}
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = a.defaultBase
	}
	for _, env := range base.keyEnvs {
		if v := os.Getenv(env); v != "" {
			cfg.APIKey, cfg.APIKeyEnv = v, env
			break
		}
	}
	if cfg.APIKeyEnv == "" && len(base.keyEnvs) > 0 {
		cfg.APIKeyEnv = base.keyEnvs[0]
	}
	return cfg, nil
}

// adapterPackages are the adapters this module ships, by provider name: a
// program links only those it imports.
var adapterPackages = map[string]string{
	"openai":    "github.com/agenteval/agenteval/provider/openai",
	"ollama":    "github.com/agenteval/agenteval/provider/openai",
	"anthropic": "github.com/agenteval/agenteval/provider/anthropic",
	"gemini":    "github.com/agenteval/agenteval/provider/gemini",
}

func unknownProvider(p, spec string) error {
	if pkg, ok := adapterPackages[p]; ok {
		return fmt.Errorf("provider %q in %q is not linked into this program; add import _ %q", p, spec, pkg)
	}
	known := Names()
	if len(known) == 0 {
		return fmt.Errorf("unknown provider %q in %q, and no provider is linked into this program; import one, such as _ %q", p, spec, adapterPackages["openai"])
	}
	return fmt.Errorf("unknown provider %q in %q; known providers: %s", p, spec, strings.Join(known, ", "))
}

func ensureScheme(host string) string {
	if strings.HasPrefix(host, "http://") || strings.HasPrefix(host, "https://") {
		return host
	}
	return "http://" + host
}

// ErrNoKey is wrapped by Open's error for a provider that needs an API key
// the environment does not hold.
var ErrNoKey = errors.New("needs an API key")

// Open builds the model a config names, wrapped with retries, limits,
// redaction and pricing. It fails when the provider needs a key that the
// environment does not hold.
func Open(cfg Config) (agenteval.Model, error) {
	a, base, ok := lookup(cfg.Provider)
	if !ok {
		return nil, unknownProvider(cfg.Provider, cfg.String())
	}
	if cfg.APIKey == "" && !a.keyOptional && !base.keyOptional && cfg.BaseURL == "" {
		if a.alias == "" && cfg.Provider != "openai" {
			return nil, fmt.Errorf("%s %w: set %s in the environment", cfg.Provider, ErrNoKey, strings.Join(base.keyEnvs, " or "))
		}
		return nil, fmt.Errorf("%s %w: set %s in the environment (or point %s at an OpenAI-compatible server that needs none)", cfg.Provider, ErrNoKey, cfg.APIKeyEnv, baseEnvOf(a, base))
	}
	if a.keyOptional && cfg.APIKey == "" {
		cfg.APIKey = cfg.Provider // local servers ignore it, but SDKs want one
	}
	cfg = withDefaults(cfg)
	client := newHTTPClient(cfg.Concurrency)
	raw, err := base.factory(cfg, client)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg, err)
	}
	return newReliable(cfg, raw), nil
}

func baseEnvOf(a, base adapter) string {
	if a.baseEnv != "" {
		return a.baseEnv
	}
	if base.baseEnv != "" {
		return base.baseEnv
	}
	return "the base URL"
}

// OpenSpec is ParseSpec followed by Open.
func OpenSpec(spec string) (agenteval.Model, error) {
	cfg, err := ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	return Open(cfg)
}

func withDefaults(cfg Config) Config {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 60 * time.Second
	}

	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = 4
	}
	if cfg.MaxRetries < 0 {
		cfg.MaxRetries = 0
	}
	if cfg.CallBudget <= 0 {
		cfg.CallBudget = time.Duration(cfg.MaxRetries+1)*cfg.Timeout + 30*time.Second
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 16
	}
	if cfg.RetryWait <= 0 {
		cfg.RetryWait = 500 * time.Millisecond
	}
	if cfg.Prices == nil {
		cfg.Prices = DefaultPrices()
	}
	return cfg
}
