package openai

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenteval/agenteval/internal/fakellm"
	"github.com/agenteval/agenteval/provider"
)

// TestQueueingKeepsTheBudget: the call budget starts when a call begins,
// not while it queues behind others for the concurrency limit or the rate
// limit, so calls queued longer than their budget still succeed.
func TestQueueingKeepsTheBudget(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  fakellm.Options
		calls int
		cfg   func(*provider.Config)
	}{
		// One call at a time, 200ms each: the third waits 400ms.
		{"concurrency", fakellm.Options{Latency: 200 * time.Millisecond}, 3, func(c *provider.Config) {
			c.Concurrency, c.CallBudget = 1, 300*time.Millisecond
		}},
		// Ten calls a second: the fourth waits 300ms.
		{"rate limit", fakellm.Options{}, 4, func(c *provider.Config) {
			c.RequestsPerMinute, c.CallBudget = 600, 150*time.Millisecond
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := start(t, tc.opts)
			m := open(t, s, tc.cfg)
			var wg sync.WaitGroup
			errs := make([]error, tc.calls)
			for i := range tc.calls {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, errs[i] = m.Generate(context.Background(), ask("x"))
				}()
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Errorf("call %d: %v", i+1, err)
				}
			}
			if s.Calls() != tc.calls {
				t.Errorf("%d requests, want %d (one per call)", s.Calls(), tc.calls)
			}
		})
	}
}

// TestBudgetWording: an attempt's own timeout, the budget running out
// over several attempts, and a retry the rate limit would start past the
// budget are each told apart, and the last two end the call at once.
func TestBudgetWording(t *testing.T) {
	for _, tc := range []struct {
		name    string
		rules   []*fakellm.Rule
		cfg     func(*provider.Config)
		ctx     time.Duration // the caller's deadline, if any
		want    string        // a regular expression
		notWant string
		within  time.Duration
	}{
		{
			name:  "one attempt times out",
			rules: []*fakellm.Rule{{Reply: fakellm.Reply{Delay: time.Second}}},
			cfg: func(c *provider.Config) {
				c.Timeout, c.MaxRetries, c.CallBudget = 200*time.Millisecond, -1, 10*time.Second
			},
			want:    `^openai:gpt-4o-mini: no answer within 200ms \(the per-call timeout\)$`,
			notWant: "budget",
			within:  time.Second,
		},
		{
			name:  "budget runs out over attempts",
			rules: []*fakellm.Rule{{Reply: fakellm.Reply{Delay: time.Second}}},
			cfg: func(c *provider.Config) {
				c.Timeout, c.CallBudget = 300*time.Millisecond, 700*time.Millisecond
			},
			want:   `^openai:gpt-4o-mini: the call budget of 700ms ran out after [23] attempts over \d+ms \(--call-budget\): the last attempt had no answer when it ran out; the attempt before: no answer within 300ms \(the per-call timeout\)$`,
			within: 1500 * time.Millisecond,
		},
		{
			// Six calls a minute: the retry could start only in 10s.
			name: "rate limit would hold the retry past the budget",
			rules: []*fakellm.Rule{
				{Times: 1, Reply: fakellm.Reply{Status: 500, ErrorMessage: "boom"}},
			},
			cfg: func(c *provider.Config) {
				c.RequestsPerMinute, c.CallBudget = 6, time.Second
			},
			want:   `^openai:gpt-4o-mini: gave up after 1 attempt over \d+ms: the call budget of 1s \(--call-budget\) would run out before the next attempt could start \(the rate limit of 6 requests a minute, and at most 16 calls at once\); the attempt before: server error \(HTTP 500\)`,
			within: 500 * time.Millisecond,
		},
		{
			// The caller's deadline bounds the wait for the rate limit
			// before the first attempt.
			name: "rate limit would hold the first attempt past the caller's deadline",
			cfg: func(c *provider.Config) {
				c.RequestsPerMinute = 6
			},
			ctx:    300 * time.Millisecond,
			want:   `^openai:gpt-4o-mini: the rate limit of 6 requests a minute would hold the call past its deadline$`,
			within: 500 * time.Millisecond,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := start(t, fakellm.Options{})
			for _, r := range tc.rules {
				s.Add(r)
			}
			m := open(t, s, tc.cfg)
			ctx := context.Background()
			if tc.ctx > 0 {
				// Use up the one call the rate limit allows at once.
				if _, err := m.Generate(ctx, ask("x")); err != nil {
					t.Fatal(err)
				}
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.ctx)
				defer cancel()
			}
			begin := time.Now()
			_, err := m.Generate(ctx, ask("x"))
			took := time.Since(begin)
			if err == nil || !regexp.MustCompile(tc.want).MatchString(err.Error()) {
				t.Fatalf("err = %v\nwant %s", err, tc.want)
			}
			if tc.notWant != "" && strings.Contains(err.Error(), tc.notWant) {
				t.Errorf("err = %v, mentions %q", err, tc.notWant)
			}
			if took > tc.within {
				t.Errorf("took %v, want at most %v", took, tc.within)
			}
		})
	}
}
