package fakellm

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// The rate-limit mode (Options.RateLimit): the server limits requests and
// tokens per minute the way OpenAI does, so that a client's pacing can be
// measured against it. Each limit is a token bucket refilled continuously
// at the per-minute rate; it holds Window's share of the minute's limit, as
// OpenAI enforces a per-minute limit over shorter periods. A request the
// buckets cannot pay for is answered 429, with Retry-After (whole seconds)
// and retry-after-ms saying when it would have been taken; a refused
// request costs nothing. Every answer, taken or refused, carries the
// limits' state in OpenAI's headers (x-ratelimit-limit-requests,
// x-ratelimit-remaining-requests, x-ratelimit-reset-requests as a duration
// such as "1s" or "6m0s", and the -tokens trio) and in Anthropic's
// (anthropic-ratelimit-requests-limit, -remaining, -reset as an RFC 3339
// time, and the tokens trio), so that a client can pace itself before its
// first 429.
//
// A request's token cost is its prompt's estimate (a quarter of its
// body's bytes), taken when it is admitted; what the answer adds is not
// counted. A request that costs more than a bucket holds is taken when the
// bucket is full, leaving it in debt; one that costs more than the whole
// per-minute limit is refused for good ("Request too large"), as OpenAI
// refuses it.

// RateLimit configures the rate-limit mode.
type RateLimit struct {
	// RequestsPerMinute and TokensPerMinute are the limits; 0 means none.
	RequestsPerMinute, TokensPerMinute int
	// Window is how much of a minute's limit may be spent at once: each
	// bucket holds the limit's share of Window (at least one request).
	// Default 1s; a minute gives the whole minute's limit as a burst.
	Window time.Duration
}

// Stats counts a server's requests: in flight are Started − Answered.
type Stats struct {
	// Started counts the requests received, Answered those whose answer
	// ended (written, refused, or the client gone).
	Started, Answered int64
	// Limited counts the answers of 429 the rate-limit mode gave.
	Limited int64
}

// InFlight is how many requests were being served.
func (st Stats) InFlight() int64 { return st.Started - st.Answered }

// Stats is a snapshot of the server's counts.
func (s *Server) Stats() Stats {
	// Answered first: a request that ends between the two loads then
	// counts as in flight rather than as answered before it started.
	a := s.answered.Load()
	return Stats{Started: s.started.Load(), Answered: a, Limited: s.limited.Load()}
}

// rateLimiter is the rate-limit mode's state: one bucket per limit.
type rateLimiter struct {
	mu       sync.Mutex
	req, tok bucket
	now      func() time.Time
}

// bucket is a token bucket refilled continuously at rate per second, up
// to size; perMinute is the limit as stated.
type bucket struct {
	perMinute   float64
	size, level float64
	rate        float64
	at          time.Time
}

func newBucket(perMinute int, window time.Duration, now time.Time) bucket {
	if perMinute <= 0 {
		return bucket{}
	}
	pm := float64(perMinute)
	size := math.Max(1, pm*window.Seconds()/60)
	return bucket{perMinute: pm, size: size, level: size, rate: pm / 60, at: now}
}

func (b *bucket) on() bool { return b.perMinute > 0 }

func (b *bucket) refill(now time.Time) {
	if d := now.Sub(b.at).Seconds(); d > 0 {
		b.level = math.Min(b.size, b.level+d*b.rate)
	}
	b.at = now
}

// need is what the bucket must hold to take cost: all of it, or the whole
// bucket for a cost larger than the bucket.
func (b *bucket) need(cost float64) float64 { return math.Min(cost, b.size) }

// waitFor is how long until the bucket holds need.
func (b *bucket) waitFor(need float64) time.Duration {
	if b.level >= need {
		return 0
	}
	return time.Duration((need - b.level) / b.rate * float64(time.Second))
}

// resetIn is how long until the bucket is full again.
func (b *bucket) resetIn() time.Duration {
	return time.Duration(math.Max(0, b.size-b.level) / b.rate * float64(time.Second))
}

func newRateLimiter(rl RateLimit, now func() time.Time) *rateLimiter {
	if rl.Window <= 0 {
		rl.Window = time.Second
	}
	t := now()
	return &rateLimiter{req: newBucket(rl.RequestsPerMinute, rl.Window, t), tok: newBucket(rl.TokensPerMinute, rl.Window, t), now: now}
}

// admit takes a request costing tokens, or says why not: how long until
// it would be taken (0 with a message for a request never taken). Either
// way it writes the limits' headers to h.
func (l *rateLimiter) admit(h http.Header, tokens int) (wait time.Duration, refusal string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	cost := float64(tokens)
	if l.req.on() {
		l.req.refill(now)
		wait = l.req.waitFor(1)
	}
	if l.tok.on() {
		l.tok.refill(now)
		if cost > l.tok.perMinute {
			refusal = fmt.Sprintf("Request too large for fake-model on tokens per min (TPM): Limit %.0f, Requested %d. The input or output tokens must be reduced in order to run successfully.", l.tok.perMinute, tokens)
		} else {
			wait = max(wait, l.tok.waitFor(l.tok.need(cost)))
		}
	}
	taken := wait == 0 && refusal == ""
	if taken {
		if l.req.on() {
			l.req.level--
		}
		if l.tok.on() {
			l.tok.level -= cost
		}
	}
	l.headers(h, now)
	switch {
	case refusal != "":
	case !taken && l.req.on() && l.req.waitFor(1) > 0:
		refusal = fmt.Sprintf("Rate limit reached for fake-model on requests per min (RPM): Limit %.0f, Used %.0f, Requested 1. Please try again in %s.", l.req.perMinute, l.req.perMinute, wait.Round(time.Millisecond))
	case !taken:
		refusal = fmt.Sprintf("Rate limit reached for fake-model on tokens per min (TPM): Limit %.0f, Requested %d. Please try again in %s.", l.tok.perMinute, tokens, wait.Round(time.Millisecond))
	}
	if refusal != "" && wait > 0 {
		// Retry-After is whole seconds, rounded up, as HTTP has it;
		// retry-after-ms is exact, as OpenAI sends it.
		h.Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
		h.Set("Retry-After-Ms", strconv.FormatInt(int64(math.Ceil(float64(wait)/float64(time.Millisecond))), 10))
	}
	return wait, refusal
}

// headers writes the buckets' state as OpenAI and Anthropic do: the
// limit per minute, what remains, and when the bucket is full again.
func (l *rateLimiter) headers(h http.Header, now time.Time) {
	for _, x := range []struct {
		b    *bucket
		kind string
	}{{&l.req, "requests"}, {&l.tok, "tokens"}} {
		if !x.b.on() {
			continue
		}
		limit := strconv.FormatFloat(x.b.perMinute, 'f', 0, 64)
		remaining := strconv.FormatFloat(math.Max(0, math.Floor(x.b.level)), 'f', 0, 64)
		reset := x.b.resetIn()
		h.Set("X-Ratelimit-Limit-"+x.kind, limit)
		h.Set("X-Ratelimit-Remaining-"+x.kind, remaining)
		h.Set("X-Ratelimit-Reset-"+x.kind, reset.Round(time.Millisecond).String())
		h.Set("Anthropic-Ratelimit-"+x.kind+"-Limit", limit)
		h.Set("Anthropic-Ratelimit-"+x.kind+"-Remaining", remaining)
		// RFC 3339 in whole seconds, as Anthropic sends it: rounded up,
		// so that the bucket is full by then.
		h.Set("Anthropic-Ratelimit-"+x.kind+"-Reset", now.Add(reset).Add(time.Second-1).Truncate(time.Second).UTC().Format(time.RFC3339))
	}
}

// limit answers a request the rate-limit mode refuses, and counts it; it
// reports whether the request may be served.
func (s *Server) limit(w http.ResponseWriter, req *Request, fail func(status int, code, msg string)) bool {
	if s.rl == nil {
		return true
	}
	wait, refusal := s.rl.admit(w.Header(), tokensFor(len(req.Raw)))
	if refusal == "" {
		return true
	}
	s.limited.Add(1)
	_ = wait // in the headers
	fail(http.StatusTooManyRequests, "rate_limit_exceeded", refusal)
	return false
}

// counters are the Stats' atomics, embedded in Server.
type counters struct {
	started, answered, limited atomic.Int64
}
