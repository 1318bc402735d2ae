package provider_test

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/fakellm"
	"github.com/agenteval/agenteval/provider"
	_ "github.com/agenteval/agenteval/provider/openai"
)

func openFake(t *testing.T, opts fakellm.Options, mut func(*provider.Config)) (*fakellm.Server, agenteval.Model) {
	t.Helper()
	s, err := fakellm.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	cfg := provider.Config{Provider: "openai", Model: "gpt-4o-mini", BaseURL: s.URL, APIKey: "sk-rate-" + t.Name(), Timeout: 5 * time.Second}
	if mut != nil {
		mut(&cfg)
	}
	m, err := provider.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s, m
}

func ask() *agenteval.ModelRequest {
	return &agenteval.ModelRequest{Messages: agenteval.Conversation{{Role: agenteval.RoleUser, Content: "hi"}}}
}

// TestBurstSettles: a burst of calls far over the fake's limit (6,000
// requests a minute, 10 at once; or 120,000 tokens a minute, 200 at once)
// all succeed, and settle at the limit: the 429s are those of the first
// calls, sent before any answer stated the limit, and a few more, and the
// rate achieved is close to the limit's.
func TestBurstSettles(t *testing.T) {
	const calls, conc = 150, 64
	for _, tc := range []struct {
		name  string
		limit fakellm.RateLimit
		// ideal is how long the calls take at the limit.
		ideal  time.Duration
		report string
	}{
		{"requests", fakellm.RateLimit{RequestsPerMinute: 6000, Window: 100 * time.Millisecond}, 1400 * time.Millisecond,
			"; paced by the 6000 requests a minute it states"},
		// A request is about 15 tokens at the fake: 2,000 a second.
		{"tokens", fakellm.RateLimit{TokensPerMinute: 120000, Window: 100 * time.Millisecond}, 1000 * time.Millisecond,
			"; paced by the 120000 tokens a minute it states"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, m := openFake(t, fakellm.Options{Latency: 20 * time.Millisecond, RateLimit: &tc.limit},
				func(c *provider.Config) { c.Concurrency = conc })
			begin := time.Now()
			var wg sync.WaitGroup
			errs := make([]error, calls)
			usage := make([]agenteval.Usage, calls)
			for i := range calls {
				wg.Add(1)
				go func() {
					defer wg.Done()
					resp, err := m.Generate(context.Background(), ask())
					if err != nil {
						errs[i] = err
						return
					}
					usage[i] = resp.Usage
				}()
			}
			wg.Wait()
			took := time.Since(begin)
			for i, err := range errs {
				if err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
			}
			st := s.Stats()
			t.Logf("%d calls in %v (about %v at the limit), %d answers of 429", calls, took.Round(time.Millisecond), tc.ideal, st.Limited)
			if st.Limited > conc+calls/10 {
				t.Errorf("%d answers of 429; want at most the first %d calls' and a few more", st.Limited, conc)
			}
			// Generous for a loaded machine; a stall of seconds would fail it.
			if took > 2*tc.ideal {
				t.Errorf("took %v, more than twice the %v the limit allows", took, tc.ideal)
			}
			var retries int
			for _, u := range usage {
				retries += u.Retries
			}
			if int64(retries) != st.Limited {
				t.Errorf("usage counts %d retries, the fake %d answers of 429", retries, st.Limited)
			}
			var b bytes.Buffer
			provider.ReportRateLimits(&b)
			if !strings.Contains(b.String(), "in-flight settled at ") || !strings.Contains(b.String(), tc.report) {
				t.Errorf("report:\n%s", b.String())
			}
		})
	}
}

// TestRateLimitIsNotAFailure: 429s that state the limits are waited out
// however many there are, beyond MaxRetries; a wait longer than a call
// may wait fails it at once, saying so.
func TestRateLimitIsNotAFailure(t *testing.T) {
	// 120 a minute, two at once, then one every half second; and no
	// retries for other failures.
	s, m := openFake(t, fakellm.Options{Latency: 50 * time.Millisecond, RateLimit: &fakellm.RateLimit{RequestsPerMinute: 120}}, func(c *provider.Config) {
		c.MaxRetries, c.Concurrency = -1, 8
	})
	var wg sync.WaitGroup
	errs := make([]error, 5)
	begin := time.Now()
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = m.Generate(context.Background(), ask())
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("call %d: %v", i, err)
		}
	}
	if took := time.Since(begin); took < 1400*time.Millisecond {
		t.Errorf("5 calls in %v, faster than the limit allows", took)
	}
	// Any 429 proves it: with no retries, a 429 that counted would have
	// failed its call.
	if s.Stats().Limited == 0 {
		t.Error("no answer of 429; the burst should have met the limit")
	}

	// 1 a minute: the second call would wait a minute.
	defer provider.SetMaxRateWait(provider.SetMaxRateWait(200 * time.Millisecond))
	_, m = openFake(t, fakellm.Options{RateLimit: &fakellm.RateLimit{RequestsPerMinute: 1}}, nil)
	if _, err := m.Generate(context.Background(), ask()); err != nil {
		t.Fatal(err)
	}
	begin = time.Now()
	_, err := m.Generate(context.Background(), ask())
	if err == nil || !strings.Contains(err.Error(), "rate limited for too long: the limit the provider states would hold the call 2m6s, more than is left of the 200ms a call may wait") {
		t.Errorf("err = %v", err)
	}
	if took := time.Since(begin); took > time.Second {
		t.Errorf("gave up after %v", took)
	}

	// A provider that states a generous limit and refuses every call
	// anyway: the call backs off until it has waited all it may, and
	// says so, rather than spinning.
	s, m = openFake(t, fakellm.Options{RateLimit: &fakellm.RateLimit{RequestsPerMinute: 1 << 20}}, func(c *provider.Config) { c.RetryWait = time.Millisecond })
	s.Add(&fakellm.Rule{Reply: fakellm.Reply{Status: 429, ErrorMessage: "Rate limit reached"}})
	begin = time.Now()
	_, err = m.Generate(context.Background(), ask())
	if err == nil || !strings.Contains(err.Error(), "gave up: the call waited 200ms in all for the rate limit") {
		t.Errorf("err = %v", err)
	}
	if took, n := time.Since(begin), s.Calls(); took > time.Second || n > 40 {
		t.Errorf("gave up after %v and %d requests", took, n)
	}
}
