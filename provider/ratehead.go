package provider

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// rateInfo is what an answer's headers say about the provider's rate
// limits: on requests, and on tokens.
type rateInfo struct {
	req, tok limitInfo
}

// limitInfo is one limit's state as an answer states it.
type limitInfo struct {
	// perMinute is the limit; 0 when the answer does not say.
	perMinute float64
	// remaining is what is left of it after this request, when
	// hasRemaining.
	remaining    float64
	hasRemaining bool
	// reset is how long until the limit is whole again, when hasReset.
	reset    time.Duration
	hasReset bool
}

func (l limitInfo) known() bool { return l.perMinute > 0 || l.hasRemaining }

// known reports whether the answer said anything about the limits: a 429
// that does is a rate limit, to wait out; one that does not is an error
// like a 503, to retry a few times.
func (ri rateInfo) known() bool { return ri.req.known() || ri.tok.known() }

// The headers, in their canonical form, so that reading them allocates
// nothing. OpenAI (and Azure, Groq, Together, OpenRouter): a limit, what
// remains and when it resets as a duration ("1s", "6m0s"). Anthropic: the
// same as an RFC 3339 time, with tokens also split into input and output.
var (
	openAIRequests = [3]string{"X-Ratelimit-Limit-Requests", "X-Ratelimit-Remaining-Requests", "X-Ratelimit-Reset-Requests"}
	openAITokens   = [3]string{"X-Ratelimit-Limit-Tokens", "X-Ratelimit-Remaining-Tokens", "X-Ratelimit-Reset-Tokens"}
	claudeRequests = [3]string{"Anthropic-Ratelimit-Requests-Limit", "Anthropic-Ratelimit-Requests-Remaining", "Anthropic-Ratelimit-Requests-Reset"}
	claudeTokens   = [3]string{"Anthropic-Ratelimit-Tokens-Limit", "Anthropic-Ratelimit-Tokens-Remaining", "Anthropic-Ratelimit-Tokens-Reset"}
	claudeInput    = [3]string{"Anthropic-Ratelimit-Input-Tokens-Limit", "Anthropic-Ratelimit-Input-Tokens-Remaining", "Anthropic-Ratelimit-Input-Tokens-Reset"}
)

// parseRateHeaders reads an answer's rate-limit headers, OpenAI's or
// Anthropic's; now turns an absolute reset time into a duration.
func parseRateHeaders(h http.Header, now time.Time) rateInfo {
	var ri rateInfo
	if ri.req = parseLimit(h, openAIRequests, now); !ri.req.known() {
		ri.req = parseLimit(h, claudeRequests, now)
	}
	if ri.tok = parseLimit(h, openAITokens, now); !ri.tok.known() {
		if ri.tok = parseLimit(h, claudeTokens, now); !ri.tok.known() {
			ri.tok = parseLimit(h, claudeInput, now)
		}
	}
	return ri
}

func parseLimit(h http.Header, names [3]string, now time.Time) limitInfo {
	var l limitInfo
	if v, ok := header(h, names[0]); ok {
		if n, err := strconv.ParseFloat(v, 64); err == nil && n > 0 {
			l.perMinute = n
		}
	}
	if v, ok := header(h, names[1]); ok {
		if n, err := strconv.ParseFloat(v, 64); err == nil && n >= 0 {
			l.remaining, l.hasRemaining = n, true
		}
	}
	if v, ok := header(h, names[2]); ok {
		l.reset, l.hasReset = parseReset(v, now)
	}
	return l
}

func header(h http.Header, name string) (string, bool) {
	v := h[name]
	if len(v) == 0 {
		return "", false
	}
	return strings.TrimSpace(v[0]), true
}

// parseReset reads a reset: a duration as OpenAI writes it ("20ms", "1s",
// "6m0s", "1h2m3.5s"), plain seconds, or an RFC 3339 time as Anthropic
// writes it.
func parseReset(v string, now time.Time) (time.Duration, bool) {
	if d, err := time.ParseDuration(v); err == nil {
		return max(d, 0), true
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}
