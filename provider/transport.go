package provider

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// callInfo records what the HTTP layer saw during one attempt, so that the
// retry logic can classify any adapter's error the same way, whatever its
// SDK's error type: the status code, how long the server asked us to
// wait, and what its headers say of its rate limits, on every answer (the
// adapters return no headers; the governor paces by them).
type callInfo struct {
	mu         sync.Mutex
	status     int
	retryAfter time.Duration
	rate       rateInfo
}

func (c *callInfo) get() (int, time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status, c.retryAfter
}

// limits is the last answer's rate-limit headers.
func (c *callInfo) limits() rateInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rate
}

type callInfoKey struct{}

func withCallInfo(ctx context.Context) (context.Context, *callInfo) {
	ci := &callInfo{}
	return context.WithValue(ctx, callInfoKey{}, ci), ci
}

// recordingTransport notes each response's status, Retry-After and
// rate-limit headers in the request's callInfo.
type recordingTransport struct {
	base http.RoundTripper
}

func (t recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = inMemoryBody(req)
	resp, err := t.base.RoundTrip(req)
	if ci, ok := req.Context().Value(callInfoKey{}).(*callInfo); ok && resp != nil {
		now := time.Now()
		rate := parseRateHeaders(resp.Header, now)
		ci.mu.Lock()
		ci.status = resp.StatusCode
		ci.retryAfter = retryAfter(resp.Header, now)
		ci.rate = rate
		ci.mu.Unlock()
	}
	return resp, err
}

// inMemoryBody gives the transport a request whose body it can tell is in
// memory. The SDKs wrap the body in readers of their own (openai-go's
// closeOnceReadCloser), which net/http cannot see through, so it flushed
// the headers in a write of their own before copying the body in another,
// through a buffer it allocated: two writes per request instead of one,
// and as many reads at the server. A body that GetBody can give again (an
// SDK's encoded JSON) is taken afresh from it; the wrapped one is closed
// unread, as the transport would have closed it.
func inMemoryBody(req *http.Request) *http.Request {
	if req.Body == nil || req.Body == http.NoBody || req.GetBody == nil || req.ContentLength <= 0 {
		return req
	}
	body, err := req.GetBody()
	if err != nil {
		return req
	}
	req.Body.Close()
	r := *req // a RoundTripper may not change the caller's request
	r.Body = body
	return &r
}

// retryAfter reads retry-after-ms (OpenAI), then Retry-After as seconds
// (possibly fractional) or as an HTTP date.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// newHTTPClient is the client every adapter uses. It has no overall
// timeout: each attempt's context carries one. It keeps as many idle
// connections as the model may have calls in flight (its Concurrency, at
// least 128): with fewer, a connection that a finished call returns is
// closed while other calls are still coming, and the next call dials again
// (Go's default is 2 per host).
func newHTTPClient(concurrency int) *http.Client {
	idle := max(concurrency, 128)
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          2 * idle,
		MaxIdleConnsPerHost:   idle,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		// A judge's request (its prompt, the transcript and the schema)
		// is 4 to 10 KB: with the default 4 KB buffer it took two writes
		// and a copy buffer per request.
		WriteBufferSize: 16 << 10,
	}
	return &http.Client{Transport: recordingTransport{base: tr}}
}
