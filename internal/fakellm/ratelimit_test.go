package fakellm

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestRateLimiterBuckets: the buckets hold a window's share of the
// minute's limit and refill continuously; above them a request is
// refused with when it would be taken, and every answer states the
// limits as OpenAI and Anthropic do.
func TestRateLimiterBuckets(t *testing.T) {
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	type step struct {
		at     time.Duration
		tokens int
		// want: taken, or else the wait and the refusal's start.
		wait    time.Duration
		refusal string
		header  map[string]string
	}
	for _, tc := range []struct {
		name  string
		limit RateLimit
		steps []step
	}{
		{"requests: 600 a minute, 10 at once", RateLimit{RequestsPerMinute: 600}, []step{
			{at: 0, header: map[string]string{
				"X-Ratelimit-Limit-Requests": "600", "X-Ratelimit-Remaining-Requests": "9", "X-Ratelimit-Reset-Requests": "100ms",
				"Anthropic-Ratelimit-Requests-Limit": "600", "Anthropic-Ratelimit-Requests-Remaining": "9",
				"Anthropic-Ratelimit-Requests-Reset": "2025-06-01T12:00:01Z",
			}},
			{}, {}, {}, {}, {}, {}, {}, {}, {},
			{wait: 100 * time.Millisecond, refusal: "Rate limit reached for fake-model on requests per min (RPM)", header: map[string]string{
				"X-Ratelimit-Remaining-Requests": "0", "X-Ratelimit-Reset-Requests": "1s", "Retry-After": "1", "Retry-After-Ms": "100",
			}},
			{at: 50 * time.Millisecond, wait: 50 * time.Millisecond, refusal: "Rate limit reached"},
			{at: 100 * time.Millisecond, header: map[string]string{"X-Ratelimit-Remaining-Requests": "0"}},
			{at: 10 * time.Second, header: map[string]string{"X-Ratelimit-Remaining-Requests": "9"}},
		}},
		{"a minute's window", RateLimit{RequestsPerMinute: 60, Window: time.Minute}, []step{
			{header: map[string]string{"X-Ratelimit-Remaining-Requests": "59", "X-Ratelimit-Reset-Requests": "1s"}},
		}},
		{"tokens: 6000 a minute, 100 at once", RateLimit{TokensPerMinute: 6000}, []step{
			{tokens: 60, header: map[string]string{"X-Ratelimit-Limit-Tokens": "6000", "X-Ratelimit-Remaining-Tokens": "40", "X-Ratelimit-Reset-Tokens": "600ms"}},
			{tokens: 60, wait: 200 * time.Millisecond, refusal: "Rate limit reached for fake-model on tokens per min (TPM)"},
			// More than the bucket: taken when it is full, into debt.
			{at: time.Second, tokens: 250, header: map[string]string{"X-Ratelimit-Remaining-Tokens": "0", "X-Ratelimit-Reset-Tokens": "2.5s"}},
			{at: 2 * time.Second, tokens: 1, wait: 510 * time.Millisecond, refusal: "Rate limit reached"},
			{at: 4 * time.Second, tokens: 7000, refusal: "Request too large for fake-model on tokens per min (TPM): Limit 6000, Requested 7000."},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := t0
			l := newRateLimiter(tc.limit, func() time.Time { return now })
			for i, st := range tc.steps {
				now = t0.Add(st.at)
				h := http.Header{}
				wait, refusal := l.admit(h, st.tokens)
				if wait != st.wait || !strings.HasPrefix(refusal, st.refusal) || (st.refusal == "") != (refusal == "") {
					t.Fatalf("step %d: wait %v, refusal %q; want %v, %q", i, wait, refusal, st.wait, st.refusal)
				}
				for k, v := range st.header {
					if got := h.Get(k); got != v {
						t.Errorf("step %d: %s = %q, want %q", i, k, got, v)
					}
				}
			}
		})
	}
}

// TestRateLimitOverHTTP: above the limit both APIs answer 429 with
// Retry-After and the headers; below it, 200 with the headers; and Stats
// counts them.
func TestRateLimitOverHTTP(t *testing.T) {
	s, err := Start(Options{RateLimit: &RateLimit{RequestsPerMinute: 60}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	post := func(path, body string) *http.Response {
		resp, err := http.Post(strings.TrimSuffix(s.URL, "/v1")+path, "application/json", bytes.NewBufferString(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	chat := `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	resp := post("/v1/chat/completions", chat)
	if resp.StatusCode != 200 || resp.Header.Get("X-Ratelimit-Limit-Requests") != "60" || resp.Header.Get("X-Ratelimit-Remaining-Requests") != "0" {
		t.Fatalf("first: %d %v", resp.StatusCode, resp.Header)
	}
	for _, path := range []string{"/v1/chat/completions", "/v1/responses"} {
		body := chat
		if path == "/v1/responses" {
			body = `{"model":"m","input":"hi"}`
		}
		resp := post(path, body)
		if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "1" || resp.Header.Get("Anthropic-Ratelimit-Requests-Remaining") != "0" {
			t.Errorf("%s over the limit: %d %v", path, resp.StatusCode, resp.Header)
		}
	}
	if st := s.Stats(); st.Started != 3 || st.Answered != 3 || st.Limited != 2 || st.InFlight() != 0 {
		t.Errorf("stats %+v", st)
	}
}
