package session

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/cache"
	"github.com/agenteval/agenteval/internal/words"
	"github.com/agenteval/agenteval/judge"
	"github.com/agenteval/agenteval/project"
	"github.com/agenteval/agenteval/provider"
)

// FakeModel is the provider:model that stands for every model when
// Models.FakeURL is set.
const FakeModel = "openai:fake"

// Models says how the models a session opens (the judge, simulated users,
// model targets) are called. The zero value calls them with the
// provider's defaults, caches judge and simulator replies in the project's
// cache, and takes the judge from the suite, then AGENTEVAL_JUDGE.
type Models struct {
	// Judge is the judge as provider:model; "" means the suite's judge:,
	// then $AGENTEVAL_JUDGE.
	Judge string
	// JudgeAPI is the wire API the judge speaks: "chat" (Chat Completions)
	// or "responses" (OpenAI's Responses API); "" means the suite's
	// judge: api when the suite's judge is used, else
	// $AGENTEVAL_JUDGE_API, else chat. A simulated user played by the
	// judge's model speaks it too.
	JudgeAPI string
	// Simulator plays simulated users; "" means the project file's, then
	// the judge.
	Simulator string
	// Timeout limits each call attempt, CallBudget a call with all its
	// retries and waits; 0 means the provider's default.
	Timeout, CallBudget time.Duration
	// MaxRetries is the retries of a call; 0 means the provider's default,
	// a negative value none.
	MaxRetries int
	// RequestsPerMinute limits the calls to one provider; 0 means none.
	RequestsPerMinute float64
	// Prices is a JSON price table's path, overriding the built-in prices.
	Prices string
	// NoCache neither reads nor writes the cache of judge and simulated-user
	// replies.
	NoCache bool
	// Cache holds those replies; nil means the cache folder of the project
	// at Root ("" means the working directory's project).
	Cache *cache.Store
	Root  string
	// FakeURL, when set, is a fake OpenAI-compatible server that every
	// model opened stands for, whatever provider it names (a dry run).
	FakeURL string
	// NoKeyHint ends the error of a missing API key: how else to run.
	NoKeyHint string
	// Concurrency raises the per-provider limit of calls in flight, so -j
	// conversations and their grading can all be in flight.
	Concurrency int

	// prices is Prices once read; copies of Models made after that share it.
	prices *provider.PriceTable
}

// store is the reply cache, created on first use under Root (or the
// working directory's project); copies of Models made after that share
// it, so its counts cover them all.
func (m *Models) store() *cache.Store {
	if m.Cache == nil {
		root := m.Root
		if root == "" {
			root = project.Here()
		}
		m.Cache = &cache.Store{Dir: cache.Dir(root)}
	}
	return m.Cache
}

// JudgeSpec is the judge the settings or the environment name, if any.
func (m *Models) JudgeSpec() string {
	if m.Judge != "" {
		return m.Judge
	}
	return os.Getenv("AGENTEVAL_JUDGE")
}

// BuildJudge opens the judge Judge (or $AGENTEVAL_JUDGE) names, or returns
// nil when none is configured. Problems are *ConfigError.
func (m *Models) BuildJudge() (*judge.Judge, error) {
	spec := m.JudgeSpec()
	if spec == "" {
		return nil, nil
	}
	api, err := m.judgeAPI()
	if err != nil {
		return nil, err
	}
	model, name, err := m.open(spec, "judge", api)
	if err != nil {
		return nil, err
	}
	return &judge.Judge{Model: model, Name: name}, nil
}

// judgeAPI is JudgeAPI, else $AGENTEVAL_JUDGE_API, checked.
func (m *Models) judgeAPI() (string, error) {
	api, from := m.JudgeAPI, "--judge-api"
	if api == "" {
		api, from = os.Getenv("AGENTEVAL_JUDGE_API"), "AGENTEVAL_JUDGE_API"
	}
	switch api {
	case "", "chat", "responses":
		return api, nil
	}
	return "", configErr("judge: %s %q is not an API; use chat (Chat Completions, the default) or responses (OpenAI's Responses API)", from, api)
}

// Open opens a model (a judge, a simulated user's) with the settings'
// timeout, retries, rate limit and prices, behind the reply cache. role
// names it in errors, which are *ConfigError. It speaks Chat Completions;
// BuildJudge opens the judge with the API JudgeAPI names.
func (m *Models) Open(spec, role string) (agenteval.Model, string, error) {
	return m.open(spec, role, "")
}

// open is Open with the wire API ("" or "chat", or "responses").
func (m *Models) open(spec, role, api string) (agenteval.Model, string, error) {
	if m.FakeURL != "" {
		spec = FakeModel
	}
	cfg, err := provider.ParseSpec(spec)
	if err != nil {
		return nil, "", configErr("%s: %v", role, err)
	}
	if api == "responses" {
		// A judge's and a simulated user's calls stand alone (each sends
		// its whole prompt), so nothing is stored to continue.
		no := false
		cfg.API, cfg.Store = api, &no
	}
	if err := m.Configure(&cfg); err != nil {
		return nil, "", err
	}
	model, err := provider.Open(cfg)
	if err != nil {
		hint := ""
		if errors.Is(err, provider.ErrNoKey) {
			hint = m.NoKeyHint
		}
		return nil, "", configErr("%s: %s%s", role, provider.Redact(err.Error()), hint)
	}
	if !m.NoCache {
		// Judges and simulated users are replayed from the cache, so a
		// rerun against the same agent sees the same verdicts and the same
		// conversation. The endpoint is part of the model's identity.
		id := cfg.String() + " " + cfg.BaseURL
		if cfg.API == "responses" {
			id += " responses"
		}
		model = cache.Wrap(model, id, m.store())
	}
	return model, cfg.String(), nil
}

// Configure applies the settings to a model's provider configuration:
// the fake server, time limits, retries, rate limit, concurrency, prices.
// Model targets are configured by it too, so they are priced and limited
// like the judge.
func (m *Models) Configure(cfg *provider.Config) error {
	if m.FakeURL != "" && cfg.Provider == "openai" && cfg.Model == "fake" {
		// Only the fake model itself is pointed at the fake server: with a
		// fake judge, the targets the user named run as usual.
		cfg.BaseURL, cfg.APIKey = m.FakeURL, "dry-run"
	}
	cfg.Timeout, cfg.CallBudget, cfg.MaxRetries = m.Timeout, m.CallBudget, m.MaxRetries
	cfg.RequestsPerMinute, cfg.Concurrency = m.RequestsPerMinute, m.Concurrency
	pt, err := m.PriceTable()
	cfg.Prices = pt
	return err
}

// PriceTable is Prices, read once; nil means the built-in table.
func (m *Models) PriceTable() (*provider.PriceTable, error) {
	if m.Prices == "" {
		return nil, nil
	}
	if m.prices == nil {
		pt, err := provider.LoadPrices(m.Prices)
		if err != nil {
			return nil, configErr("--prices: %v", err)
		}
		m.prices = pt
	}
	return m.prices, nil
}

// ReportCache warns about cached replies that were ignored because they
// failed their integrity check: edited by hand, or copied from elsewhere.
func (m *Models) ReportCache(w io.Writer) {
	if m.Cache == nil || w == nil {
		return
	}
	if m.Cache.ProjectKey() {
		fmt.Fprintf(w, "agenteval: warning: %s holds a signing key of its own, which agenteval ignores: only replies signed with your key (kept outside the project) are trusted; `agenteval cache clear` removes it\n", m.Cache.Dir)
	}
	if n := int(m.Cache.Counts().Rejected); n > 0 {
		fmt.Fprintf(w, "agenteval: warning: %s failed the integrity check (edited, or from another project) and %s asked again; `agenteval cache clear` removes the cache\n",
			words.Counted(n, "cached reply"), words.Plural(n, "was", "were"))
	}
}
