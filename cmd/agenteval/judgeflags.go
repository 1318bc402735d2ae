package main

import (
	"time"

	"github.com/agenteval/agenteval/cache"
	"github.com/agenteval/agenteval/internal/words"
	"github.com/agenteval/agenteval/judge"
	"github.com/agenteval/agenteval/session"
	"github.com/spf13/pflag"
)

// judgeFlags are the settings of the LLM judge and the other models a
// command opens, shared by every command that grades with one.
type judgeFlags struct {
	models session.Models
	// maxRetries is --max-retries, where 0 means none (the library's 0 is
	// the provider's default).
	maxRetries int
}

func (f *judgeFlags) add(fl *pflag.FlagSet) {
	m := &f.models
	fl.StringVar(&m.Judge, "judge", "", "judge model as provider:model, e.g. openai:gpt-4o-mini (default $AGENTEVAL_JUDGE)")
	fl.StringVar(&m.JudgeAPI, "judge-api", "", "wire API of the judge: chat (Chat Completions) or responses (OpenAI's Responses API) (default: the file's judge: api when it names the judge, else $AGENTEVAL_JUDGE_API, else chat)")
	fl.BoolVar(&m.NoCache, "no-cache", false, "do not read or write the cache of judge and simulated-user replies ("+cache.DefaultDir+" in the project root)")
	fl.DurationVar(&m.Timeout, "timeout", 60*time.Second, "time limit for each model call attempt")
	fl.DurationVar(&m.CallBudget, "call-budget", 0, "time limit for a model call with all its retries and waits (default (--max-retries + 1) × --timeout + 30s)")
	fl.IntVar(&f.maxRetries, "max-retries", 4, "retries of a model call on 429, 5xx, timeouts and unreadable replies")
	fl.Float64Var(&m.RequestsPerMinute, "rpm", 0, "most model calls per minute to one provider (0: no limit; providers that state their limits are paced by them without it)")
	fl.StringVar(&m.Prices, "prices", "", "JSON price table overriding the built-in prices (dollars per million tokens)")
}

// settings are the models' settings as the flags give them.
func (f *judgeFlags) settings() *session.Models {
	f.models.MaxRetries = f.maxRetries
	if f.maxRetries == 0 {
		f.models.MaxRetries = -1
	}
	return &f.models
}

// build returns the judge, or nil when none is configured.
func (f *judgeFlags) build() (*judge.Judge, error) {
	j, err := f.settings().BuildJudge()
	return j, cliErr(err)
}

func plural(n int, one, many string) string { return words.Plural(n, one, many) }

// counted is n with its noun: 1 error, 2 errors, 1 reply, 3 replies.
func counted(n int, one string) string { return words.Counted(n, one) }
