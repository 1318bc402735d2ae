package provider

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func TestParseRateHeaders(t *testing.T) {
	for _, tc := range []struct {
		name   string
		header map[string]string
		want   rateInfo
	}{
		{"none", nil, rateInfo{}},
		{"openai", map[string]string{
			"x-ratelimit-limit-requests": "600", "x-ratelimit-remaining-requests": "7", "x-ratelimit-reset-requests": "300ms",
			"x-ratelimit-limit-tokens": "30000", "x-ratelimit-remaining-tokens": "29000", "x-ratelimit-reset-tokens": "6m0s",
		}, rateInfo{
			req: limitInfo{perMinute: 600, remaining: 7, hasRemaining: true, reset: 300 * time.Millisecond, hasReset: true},
			tok: limitInfo{perMinute: 30000, remaining: 29000, hasRemaining: true, reset: 6 * time.Minute, hasReset: true},
		}},
		{"anthropic, reset an RFC 3339 time", map[string]string{
			"anthropic-ratelimit-requests-limit": "50", "anthropic-ratelimit-requests-remaining": "0", "anthropic-ratelimit-requests-reset": "2025-06-01T12:00:02Z",
			"anthropic-ratelimit-input-tokens-limit": "40000",
		}, rateInfo{
			req: limitInfo{perMinute: 50, hasRemaining: true, reset: 2 * time.Second, hasReset: true},
			tok: limitInfo{perMinute: 40000},
		}},
		{"azure: what remains, no limit", map[string]string{"x-ratelimit-remaining-requests": "3"},
			rateInfo{req: limitInfo{remaining: 3, hasRemaining: true}}},
		{"reset in seconds; junk ignored", map[string]string{
			"x-ratelimit-limit-requests": "lots", "x-ratelimit-remaining-requests": "-1", "x-ratelimit-reset-requests": "1.5",
		}, rateInfo{}},
		{"plain seconds", map[string]string{"x-ratelimit-limit-requests": "60", "x-ratelimit-reset-requests": "1.5"},
			rateInfo{req: limitInfo{perMinute: 60, reset: 1500 * time.Millisecond, hasReset: true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tc.header {
				h.Set(k, v)
			}
			if got := parseRateHeaders(h, t0); got != tc.want {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// fakeClock drives a governor: its time moves only when told.
type fakeClock struct {
	now time.Time
}

func testGovernor(ceiling int) (*governor, *fakeClock) {
	c := &fakeClock{now: t0}
	g := newGovernor("openai")
	g.ceiling = ceiling
	g.now = func() time.Time { return c.now }
	g.afterFunc = func(time.Duration, func()) func() bool { return func() bool { return true } }
	return g, c
}

// stated is an answer stating a limit of perMinute requests with remaining
// left, full again after reset.
func stated(status int, perMinute, remaining float64, reset time.Duration) outcome {
	return outcome{answered: true, status: status, rate: rateInfo{req: limitInfo{
		perMinute: perMinute, remaining: remaining, hasRemaining: true, reset: reset, hasReset: true,
	}}}
}

// server is a provider's bucket, as fakellm keeps it.
type server struct {
	size, level, perSecond float64
	at                     time.Time
}

// take answers a call at now: 200 with what remains, or 429.
func (s *server) take(now time.Time) outcome {
	s.level = min(s.size, s.level+now.Sub(s.at).Seconds()*s.perSecond)
	s.at = now
	status := 200
	if s.level >= 1 {
		s.level--
	} else {
		status = 429
	}
	reset := time.Duration((s.size - s.level) / s.perSecond * float64(time.Second))
	return stated(status, s.perSecond*60, float64(int(s.level)), reset)
}

// TestPacingFromHeaders: once an answer states 600 a minute with a bucket
// of 10, the governor spends what remains, less a reserve, then starts
// calls at the provider's rate, each answered at once or 200ms later,
// without a 429.
func TestPacingFromHeaders(t *testing.T) {
	for _, latency := range []time.Duration{0, 200 * time.Millisecond} {
		t.Run(latency.String(), func(t *testing.T) {
			g, c := testGovernor(100)
			srv := &server{size: 10, level: 10, perSecond: 10, at: t0}
			if ok, _ := g.canStart(c.now, 0); !ok {
				t.Fatal("an account that stated nothing held a call")
			}
			first := g.start(c.now, 0)
			g.end(first, c.now, srv.take(c.now))
			if g.req.stated != 600 || g.req.burstMax != 9 || g.req.reserve != 1 {
				t.Fatalf("stated %v, burst %v, reserve %v; want 600, and the bucket of 10 less a reserve of 1", g.req.stated, g.req.burstMax, g.req.reserve)
			}
			type call struct {
				t      *ticket
				answer outcome
				at     time.Time
			}
			var pending []call
			var starts, refused, burst int
			for step := time.Duration(0); step <= 10*time.Second; step += 10 * time.Millisecond {
				c.now = t0.Add(step)
				for len(pending) > 0 && !pending[0].at.After(c.now) {
					g.end(pending[0].t, c.now, pending[0].answer)
					pending = pending[1:]
				}
				for {
					if ok, _ := g.canStart(c.now, 0); !ok {
						break
					}
					tk := g.start(c.now, 0)
					o := srv.take(c.now)
					if o.status == 429 {
						refused++
					}
					starts++
					if step == 0 {
						burst++
					}
					pending = append(pending, call{tk, o, c.now.Add(latency)})
				}
			}
			if burst != 8 {
				t.Errorf("%d calls at once after the first, want the 9 left less a reserve of 1", burst)
			}
			// 10 s at 10 a second and a bucket of 10: 110 at most.
			t.Logf("%d started, %d refused", starts, refused)
			if refused != 0 || starts < 100 {
				t.Errorf("%d calls started in 10s, %d refused; want ≥ 100 and none", starts, refused)
			}
		})
	}
}

// TestNewestAnswerWins: an answer to an older call does not undo what a
// newer one said; the newer's count is taken less what started after it.
func TestNewestAnswerWins(t *testing.T) {
	g, c := testGovernor(100)
	a := g.start(c.now, 0)
	c.now = c.now.Add(10 * time.Millisecond)
	b := g.start(c.now, 0)
	g.end(b, c.now, stated(200, 6000, 50, time.Second))
	level := g.req.level
	g.end(a, c.now, stated(200, 6000, 99, time.Second))
	if g.req.level != level {
		t.Errorf("level %v after the older answer, want %v as the newer left it", g.req.level, level)
	}
	// b's 50 less the reserve of 15, a tenth of the provider's bucket:
	// the 50 left and the 100 a second refills.
	if level != 35 {
		t.Errorf("level %v, want 35", level)
	}
}

// TestRateLimitAIMD: a 429 that states a rate halves the burst, once per
// round, and successes grow it back by one per burst of them; with the
// burst at one, the share of the rate is cut instead. With no rate stated
// the in-flight limit is halved, grows by one per window of successes
// while it binds, and is lifted at the ceiling.
func TestRateLimitAIMD(t *testing.T) {
	t.Run("burst", func(t *testing.T) {
		g, c := testGovernor(100)
		g.end(g.start(c.now, 0), c.now, stated(200, 600, 9, 100*time.Millisecond))
		c.now = c.now.Add(time.Second)
		a, b := g.start(c.now, 0), g.start(c.now, 0)
		g.end(a, c.now, stated(429, 600, 0, time.Second))
		g.end(b, c.now, stated(429, 600, 0, time.Second))
		if g.req.burst != 4 {
			t.Fatalf("burst %v after two 429s of one round, want 9 halved once: 4", g.req.burst)
		}
		for range 4 {
			c.now = c.now.Add(time.Second)
			g.end(g.start(c.now, 0), c.now, stated(200, 600, 5, time.Second))
		}
		if g.req.burst != 5 {
			t.Errorf("burst %v after 4 successes, want 5", g.req.burst)
		}
		for _, burst := range []float64{2, 1, 1} {
			c.now = c.now.Add(time.Second)
			g.end(g.start(c.now, 0), c.now, stated(429, 600, 0, time.Second))
			if g.req.burst != burst {
				t.Fatalf("burst %v, want %v", g.req.burst, burst)
			}
		}
		if g.req.share != paceShare*0.9 {
			t.Errorf("share %v, want %v cut by a tenth", g.req.share, paceShare)
		}
	})
	t.Run("in flight", func(t *testing.T) {
		g, c := testGovernor(12)
		limited := outcome{answered: true, status: 429, rate: rateInfo{req: limitInfo{remaining: 0, hasRemaining: true}}}
		ok := outcome{answered: true, status: 200}
		var ts []*ticket
		for range 10 {
			ts = append(ts, g.start(c.now, 0))
		}
		c.now = c.now.Add(time.Millisecond)
		g.end(ts[0], c.now, limited) // 10 in flight: 5
		g.end(ts[1], c.now, limited) // the same round: no cut
		if g.limit != 5 {
			t.Fatalf("limit %d, want 5", g.limit)
		}
		if ok, _ := g.canStart(c.now, 0); ok {
			t.Fatal("8 in flight and a limit of 5, yet a call may start")
		}
		for _, tk := range ts[2:] {
			g.end(tk, c.now, ok)
		}
		// Five successes at the limit: 6.
		for range 5 {
			var in []*ticket
			for range g.limit {
				in = append(in, g.start(c.now, 0))
			}
			g.end(in[0], c.now, ok)
			for _, tk := range in[1:] {
				g.end(tk, c.now, outcome{})
			}
		}
		if g.limit != 6 {
			t.Errorf("limit %d, want 6 after a window of successes at the limit", g.limit)
		}
		g.limit, g.okRun = 11, 10
		tk := g.start(c.now, 0)
		for range 10 {
			g.start(c.now, 0)
		}
		g.end(tk, c.now, ok)
		if g.limit != 0 {
			t.Errorf("limit %d, want it lifted at the ceiling of 12", g.limit)
		}
	})
}

// TestRetryAfterHolds: a rate limit's Retry-After holds every call to the
// account, and one longer than a call may wait fails it at once.
func TestRetryAfterHolds(t *testing.T) {
	g, c := testGovernor(10)
	o := stated(429, 0, 0, 0)
	o.retryAfter = 2 * time.Second
	g.end(g.start(c.now, 0), c.now, o)
	if ok, at := g.canStart(c.now, 0); ok || !at.Equal(t0.Add(2*time.Second)) {
		t.Fatalf("canStart = %v, %v; want held until 2s", ok, at)
	}
	if _, _, err := g.acquire(context.Background(), time.Second, nil); err == nil || !strings.Contains(err.Error(), "asked to wait 2s") {
		t.Errorf("acquire with 1s to wait: %v", err)
	}
	c.now = c.now.Add(2 * time.Second)
	if ok, _ := g.canStart(c.now, 0); !ok {
		t.Error("still held after the Retry-After")
	}
}

// TestAcquireQueues: calls over the in-flight limit queue in order, and
// an ending call lets the next one through.
func TestAcquireQueues(t *testing.T) {
	g, _ := testGovernor(10)
	g.limit = 1
	first, _, err := g.acquire(context.Background(), time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan *ticket)
	go func() {
		tk, _, _ := g.acquire(context.Background(), time.Minute, nil)
		got <- tk
	}()
	select {
	case <-got:
		t.Fatal("a second call started over a limit of 1")
	case <-time.After(20 * time.Millisecond):
	}
	g.done(first, outcome{})
	select {
	case tk := <-got:
		if tk == nil {
			t.Fatal("no ticket")
		}
	case <-time.After(time.Second):
		t.Fatal("the queued call did not start when the first ended")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := g.acquire(ctx, time.Minute, nil); err == nil {
		t.Error("a cancelled call got through a full limit")
	}
	if len(g.queue) != 0 {
		t.Errorf("%d left in the queue", len(g.queue))
	}
}

func TestReport(t *testing.T) {
	g, c := testGovernor(10)
	if g.report() != "" {
		t.Fatal("a governor that limited nothing reports")
	}
	g.end(g.start(c.now, 0), c.now, stated(429, 600, 0, time.Second))
	g.stats.waited = 12345 * time.Millisecond
	want := "openai: 1 answer of 429 in 1 call, waited 12.3 s in all for its rate limit, in-flight settled at 0; paced by the 600 requests a minute it states"
	if got := g.report(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	governorsMu.Lock()
	governors["openai|http://a|x"], governors["openai|http://b|x"] = g, newGovernor("openai")
	governorsMu.Unlock()
	defer func() {
		governorsMu.Lock()
		delete(governors, "openai|http://a|x")
		delete(governors, "openai|http://b|x")
		governorsMu.Unlock()
	}()
	var b bytes.Buffer
	ReportRateLimits(&b)
	if !strings.Contains(b.String(), "openai (http://a): 1 answer of 429") || strings.Contains(b.String(), "http://b") {
		t.Errorf("report:\n%s", b.String())
	}
}

// TestTokensWhole: a call that costs more tokens than the provider's
// bucket holds waits for the bucket to be full, then leaves it in debt;
// a 429 on tokens cuts the share of the rate, never the burst.
func TestTokensWhole(t *testing.T) {
	g, c := testGovernor(100)
	tokens := func(status int, remaining float64) outcome {
		return outcome{answered: true, status: status, rate: rateInfo{tok: limitInfo{
			perMinute: 6000, remaining: remaining, hasRemaining: true, reset: 100 * time.Millisecond, hasReset: true,
		}}}
	}
	// 90 left, full in 100ms at 100 a second: a bucket of 100, 90 less
	// its reserve of 10.
	g.end(g.start(c.now, 0), c.now, tokens(200, 90))
	if g.tok.burstMax != 90 || g.tok.level != 80 {
		t.Fatalf("burst %v, level %v; want 90, and 80 (90 less the reserve)", g.tok.burstMax, g.tok.level)
	}
	if ok, at := g.canStart(c.now, 200); ok || at.Sub(c.now).Round(time.Millisecond) != 105*time.Millisecond {
		t.Fatalf("a call of 200 tokens: %v, at %v; want it held until the bucket is full, 10 tokens at 95 a second", ok, at.Sub(c.now))
	}
	c.now = c.now.Add(106 * time.Millisecond)
	big := g.start(c.now, 200)
	if ok, at := g.canStart(c.now, 10); ok || at.Sub(c.now) < time.Second {
		t.Errorf("after a call of 200 tokens: %v, at %v; want 120 tokens of debt to wait for", ok, at.Sub(c.now))
	}
	g.end(big, c.now, tokens(429, 0))
	if g.tok.burst != 90 || g.tok.share != paceShare*0.9 {
		t.Errorf("after a 429: burst %v, share %v; want 90 and %v", g.tok.burst, g.tok.share, paceShare*0.9)
	}
}
