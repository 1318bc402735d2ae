package main

import (
	"errors"
	"fmt"
	"github.com/agenteval/agenteval/cache"
	"github.com/agenteval/agenteval/project"
	"io"
	"os"
	"strings"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/judge"
	"github.com/agenteval/agenteval/provider"
	_ "github.com/agenteval/agenteval/provider/anthropic" // registers "anthropic"
	_ "github.com/agenteval/agenteval/provider/gemini"    // registers "gemini"
	_ "github.com/agenteval/agenteval/provider/openai"    // registers "openai" and "ollama"
	"github.com/spf13/pflag"
)

// judgeFlags are the settings of the LLM judge, shared by every command
// that grades with one.
type judgeFlags struct {
	spec    string
	noCache bool
	store   *cache.Store // the cache, once a model uses it
	// loadedPrices is --prices once read.
	loadedPrices *provider.PriceTable
	timeout      time.Duration
	callBudget   time.Duration
	maxRetries   int
	rpm          float64
	prices       string
	// noKeyHint is added to a missing key's error: how else the command
	// can run.
	noKeyHint string
	// dryURL, set by run --dry-run, is the fake model every model
	// opened stands for.
	dryURL string
	// concurrency, when set, raises the per-provider limit so that -j
	// conversations and their grading can all be in flight.
	concurrency int
}

func (f *judgeFlags) add(fl *pflag.FlagSet) {
	// One store for every model the command opens; copies of the flags
	// share it, so its counts cover the whole command.
	f.store = &cache.Store{Dir: cache.Dir(project.Here())}
	fl.StringVar(&f.spec, "judge", "", "judge model as provider:model, e.g. openai:gpt-4o-mini (default $AGENTEVAL_JUDGE)")
	fl.BoolVar(&f.noCache, "no-cache", false, "do not read or write the cache of judge and simulated-user replies ("+cache.DefaultDir+" in the project root)")
	fl.DurationVar(&f.timeout, "timeout", 60*time.Second, "time limit for each model call attempt")
	fl.DurationVar(&f.callBudget, "call-budget", 0, "time limit for a model call with all its retries and waits (default (--max-retries + 1) × --timeout + 30s)")
	fl.IntVar(&f.maxRetries, "max-retries", 4, "retries of a model call on 429, 5xx, timeouts and unreadable replies")
	fl.Float64Var(&f.rpm, "rpm", 0, "most model calls per minute to one provider (0: no limit)")
	fl.StringVar(&f.prices, "prices", "", "JSON price table overriding the built-in prices (dollars per million tokens)")
}

// build returns the judge, or nil when none is configured. Configuration
// problems (unknown provider, missing key) are usage errors.
func (f *judgeFlags) build() (*judge.Judge, error) {
	spec := f.spec
	if spec == "" {
		spec = os.Getenv("AGENTEVAL_JUDGE")
	}
	if spec == "" {
		return nil, nil
	}
	m, name, err := f.open(spec, "judge")
	if err != nil {
		return nil, err
	}
	return &judge.Judge{Model: m, Name: name}, nil
}

// open opens a model (a judge, a simulated user's) with the flags'
// timeout, retries, rate limit and prices. role names it in errors.
func (f *judgeFlags) open(spec, role string) (agenteval.Model, string, error) {
	if f.dryURL != "" {
		spec = dryModel
	}
	cfg, err := provider.ParseSpec(spec)
	if err != nil {
		return nil, "", usageErr("%s: %v", role, err)
	}
	f.dryRun(&cfg)
	cfg.Timeout = f.timeout
	cfg.CallBudget = f.callBudget
	cfg.MaxRetries = f.maxRetries
	if f.maxRetries == 0 {
		cfg.MaxRetries = -1
	}
	cfg.RequestsPerMinute = f.rpm
	cfg.Concurrency = f.concurrency
	if cfg.Prices, err = f.priceTable(); err != nil {
		return nil, "", err
	}
	m, err := provider.Open(cfg)
	if err != nil {
		hint := ""
		if errors.Is(err, provider.ErrNoKey) {
			hint = f.noKeyHint
		}
		return nil, "", usageErr("%s: %s%s", role, provider.Redact(err.Error()), hint)
	}
	if !f.noCache {
		// Judges and simulated users are replayed from the cache, so a
		// rerun against the same agent sees the same verdicts and the same
		// conversation. The endpoint is part of the model's identity.
		m = cache.Wrap(m, cfg.String()+" "+cfg.BaseURL, f.store)
	}
	return m, cfg.String(), nil
}

// priceTable is --prices, read once; nil means the built-in table.
func (f *judgeFlags) priceTable() (*provider.PriceTable, error) {
	if f.prices == "" {
		return nil, nil
	}
	if f.loadedPrices == nil {
		pt, err := provider.LoadPrices(f.prices)
		if err != nil {
			return nil, usageErr("--prices: %v", err)
		}
		f.loadedPrices = pt
	}
	return f.loadedPrices, nil
}

// reportCache warns about cache entries that were ignored because they
// failed their integrity check: edited by hand, or copied from elsewhere.
func (f *judgeFlags) reportCache(w io.Writer) {
	if f.store == nil {
		return
	}
	if n := f.store.Counts().Rejected; n > 0 {
		fmt.Fprintf(w, "agenteval: warning: %d cached %s failed the integrity check (edited, or from another project) and %s asked again; `agenteval cache clear` removes the cache\n",
			n, plural(int(n), "reply", "replies"), plural(int(n), "was", "were"))
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// counted is n with its noun: 1 error, 2 errors, 1 reply, 3 replies.
func counted(n int, one string) string {
	many := one + "s"
	if strings.HasSuffix(one, "y") && !strings.HasSuffix(one, "ay") {
		many = strings.TrimSuffix(one, "y") + "ies"
	}
	return fmt.Sprintf("%d %s", n, plural(n, one, many))
}
