package otelexport

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenteval/agenteval"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Review tests of the OTLP/HTTP client: collectors that hang, odd
// Retry-After values, gzip both ways, endpoint URLs with paths and
// queries, the precedence of options and variables, and secrets.

// hanging is a collector that takes requests and never answers them
// until the test ends (or the client gives up on the request). It counts
// the requests still open.
type hanging struct {
	*httptest.Server
	open, seen atomic.Int32
}

func newHanging(t *testing.T) *hanging {
	t.Helper()
	release := make(chan struct{})
	h := &hanging{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.seen.Add(1)
		h.open.Add(1)
		defer h.open.Add(-1)
		io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(func() {
		close(release)
		h.Close()
	})
	return h
}

// settled waits until the collector holds no request open, as it does
// once the client closed the connections it gave up on.
func (h *hanging) settled(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for h.open.Load() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d requests still open: the client left their connections behind", h.open.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// An export to a collector that never answers ends at the export
// timeout, and leaves no request open behind it.
func TestReviewUploadToHangingCollectorEnds(t *testing.T) {
	clearEnv(t)
	h := newHanging(t)
	start := time.Now()
	err := upload(t, Options{Endpoint: h.URL, Timeout: 300 * time.Millisecond})
	took := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "deadline exceeded") {
		t.Errorf("upload = %v, want the timeout", err)
	}
	if took < 250*time.Millisecond || took > 2*time.Second {
		t.Errorf("took %v with a 300ms timeout", took)
	}
	h.settled(t)
}

// Close returns within its bounds when the collector hangs, reports the
// failure, and leaves no request open.
func TestReviewCloseWithHangingCollector(t *testing.T) {
	clearEnv(t)
	h := newHanging(t)
	e, err := New(context.Background(), Options{Endpoint: h.URL, Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		e.Write(&agenteval.Result{TestID: "t", Verdict: agenteval.VerdictPass})
	}
	start := time.Now()
	err = e.Close(nil)
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Close took %v with a 300ms export timeout", d)
	}
	if err == nil || !strings.Contains(err.Error(), "otel export") {
		t.Errorf("Close = %v, want an export error", err)
	}
	if h.seen.Load() == 0 {
		t.Error("nothing reached the collector")
	}
	h.settled(t)
}

// With an export timeout longer than Close waits (60s here), Close still
// returns after its own 15 seconds.
func TestReviewCloseBoundedDespiteLongTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("waits 15s")
	}
	clearEnv(t)
	h := newHanging(t)
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "60000")
	e, err := New(context.Background(), Options{Endpoint: h.URL})
	if err != nil {
		t.Fatal(err)
	}
	e.Write(&agenteval.Result{TestID: "t", Verdict: agenteval.VerdictPass})
	start := time.Now()
	err = e.Close(nil)
	if d := time.Since(start); d > 17*time.Second {
		t.Errorf("Close took %v", d)
	}
	if err == nil {
		t.Error("Close reported no error")
	}
}

// A listener that accepts connections and never reads or writes: not
// even a status line comes back.
func TestReviewSilentListener(t *testing.T) {
	clearEnv(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	defer func() {
		ln.Close()
		<-done
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	}()
	start := time.Now()
	err = upload(t, Options{Endpoint: "http://" + ln.Addr().String(), Timeout: 300 * time.Millisecond})
	if err == nil {
		t.Fatal("upload succeeded")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v with a 300ms timeout", d)
	}
}

// A collector that sends its status and then stalls the body: the
// export still ends at the timeout.
func TestReviewStalledBody(t *testing.T) {
	for _, code := range []int{http.StatusOK, http.StatusServiceUnavailable} {
		clearEnv(t)
		fastRetries(t)
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Length", "1000")
			w.WriteHeader(code)
			w.Write([]byte("partial"))
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-release:
			}
		}))
		start := time.Now()
		err := upload(t, Options{Endpoint: srv.URL, Timeout: 300 * time.Millisecond})
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%d: took %v with a 300ms timeout", code, d)
		}
		if code != http.StatusOK && err == nil {
			t.Errorf("%d: no error", code)
		}
		close(release)
		srv.Close()
	}
}

// The retry loop never spins: a collector that always answers 503 with
// Retry-After: 0 gets attempts spaced by the backoff, and the loop ends
// within the timeout.
func TestReviewRetryLoopBounded(t *testing.T) {
	clearEnv(t)
	fastRetries(t) // 10ms doubling to 40ms
	rec := newRecorder(status(503, "Retry-After", "0"))
	srv := httptest.NewServer(rec)
	defer srv.Close()
	start := time.Now()
	err := upload(t, Options{Endpoint: srv.URL, Timeout: 500 * time.Millisecond})
	took := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "503") {
		t.Fatalf("upload = %v", err)
	}
	if took > 600*time.Millisecond {
		t.Errorf("took %v with a 500ms timeout", took)
	}
	// Waits are at least retryBase/2 = 5ms: at most 100 attempts fit.
	if n := len(rec.sent()); n < 3 || n > 100 {
		t.Errorf("%d attempts in %v", n, took)
	}
}

// Retry-After as an HTTP date, in the near future, in the past, far
// ahead, and as a number of seconds too large for a time.Duration.
func TestReviewRetryAfterForms(t *testing.T) {
	for _, tc := range []struct {
		name     string
		after    func() string
		attempts int
		minGap   time.Duration
		err      string
	}{
		{name: "date 2s ahead", after: func() string { return time.Now().Add(2 * time.Second).UTC().Format(http.TimeFormat) }, attempts: 2, minGap: 900 * time.Millisecond},
		{name: "date in the past", after: func() string { return time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat) }, attempts: 2},
		{name: "date far ahead", after: func() string { return time.Now().Add(time.Hour).UTC().Format(http.TimeFormat) }, attempts: 1,
			err: "gave up after 1 attempt: the next would start past the export timeout"},
		{name: "RFC 850 date ahead", after: func() string { return time.Now().Add(time.Hour).UTC().Format(time.RFC850) }, attempts: 1,
			err: "the next would start past the export timeout"},
		{name: "seconds past a Duration", after: func() string { return "18446744074" }, attempts: 1,
			err: "the next would start past the export timeout"},
		{name: "seconds far past a Duration", after: func() string { return "99999999999999999" }, attempts: 1,
			err: "the next would start past the export timeout"},
		{name: "garbage", after: func() string { return "soon" }, attempts: 2},
		{name: "negative", after: func() string { return "-5" }, attempts: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clearEnv(t)
			fastRetries(t)
			rec := newRecorder(func(w http.ResponseWriter) { status(503, "Retry-After", tc.after())(w) }, status(200))
			srv := httptest.NewServer(rec)
			defer srv.Close()
			err := upload(t, Options{Endpoint: srv.URL, Timeout: 4 * time.Second})
			if tc.err == "" && err != nil {
				t.Fatalf("upload: %v", err)
			}
			if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("upload = %v, want %q", err, tc.err)
			}
			got := rec.sent()
			if len(got) != tc.attempts {
				t.Fatalf("%d attempts, want %d", len(got), tc.attempts)
			}
			if tc.minGap > 0 {
				if gap := got[1].at.Sub(got[0].at); gap < tc.minGap {
					t.Errorf("retried after %v", gap)
				}
			}
		})
	}
}

func TestReviewRetryAfterParse(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"": 0, "0": 0, "7": 7 * time.Second, "-1": 0, "1.5": 0, "x": 0,
		"9223372036": 9223372036 * time.Second,
	} {
		if got := retryAfter(in); got != want {
			t.Errorf("retryAfter(%q) = %v, want %v", in, got, want)
		}
	}
	for _, in := range []string{"9223372037", "18446744074", "99999999999999999999"} {
		if got := retryAfter(in); got < 24*time.Hour {
			t.Errorf("retryAfter(%q) = %v, want a very long wait", in, got)
		}
	}
}

// gzip both ways: the request body is compressed, retries send the same
// bytes, and a gzipped response with a partial success is still read.
func TestReviewGzip(t *testing.T) {
	clearEnv(t)
	fastRetries(t)
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "GZIP")
	zipped := func(w http.ResponseWriter) {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(partial(2, "too old"))
		zw.Close()
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Header().Set("Content-Encoding", "gzip")
		w.WriteHeader(200)
		w.Write(buf.Bytes())
	}
	rec := newRecorder(status(502), zipped)
	srv := httptest.NewServer(rec)
	defer srv.Close()
	err := upload(t, Options{Endpoint: srv.URL})
	if err == nil || !strings.Contains(err.Error(), "rejected 2 spans: too old") {
		t.Errorf("upload = %v, want the partial success", err)
	}
	got := rec.sent()
	if len(got) != 2 || !bytes.Equal(got[0].body, got[1].body) {
		t.Fatalf("%d attempts, or a retry with another body", len(got))
	}
	for _, s := range got {
		if s.header.Get("Content-Encoding") != "gzip" {
			t.Errorf("Content-Encoding %q", s.header.Get("Content-Encoding"))
		}
		zr, err := gzip.NewReader(bytes.NewReader(s.body))
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(zr)
		var td tracepb.TracesData
		if err != nil || proto.Unmarshal(data, &td) != nil || len(td.ResourceSpans) != 1 {
			t.Errorf("body does not decompress to the request: %v", err)
		}
	}
}

// Endpoint URLs keep their paths and queries: a base gets v1/traces
// below its path, escapes included; a traces endpoint is used as is.
func TestReviewEndpointURLs(t *testing.T) {
	for _, tc := range []struct {
		name, env, value string
		opt              string
		want             string
	}{
		{name: "base with query", env: "OTEL_EXPORTER_OTLP_ENDPOINT", value: "http://h:4318/otel?tenant=a&x=%2F", want: "http://h:4318/otel/v1/traces?tenant=a&x=%2F"},
		{name: "base with escaped slash", env: "OTEL_EXPORTER_OTLP_ENDPOINT", value: "http://h:4318/a%2Fb", want: "http://h:4318/a%2Fb/v1/traces"},
		{name: "base with escaped slash and slash", env: "OTEL_EXPORTER_OTLP_ENDPOINT", value: "http://h:4318/a%2Fb/", want: "http://h:4318/a%2Fb/v1/traces"},
		{name: "base with a space", env: "OTEL_EXPORTER_OTLP_ENDPOINT", value: "http://h:4318/my%20otel", want: "http://h:4318/my%20otel/v1/traces"},
		{name: "base with a fragment", env: "OTEL_EXPORTER_OTLP_ENDPOINT", value: "http://h:4318/p#frag", want: "http://h:4318/p/v1/traces#frag"},
		{name: "traces endpoint with query", env: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", value: "https://h/api/traces?key=1", want: "https://h/api/traces?key=1"},
		{name: "traces endpoint without path", env: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", value: "https://h:4318", want: "https://h:4318/"},
		{name: "traces endpoint with escaped slash", env: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", value: "https://h/a%2Fb", want: "https://h/a%2Fb"},
		{name: "option with escaped slash", opt: "http://h/a%2Fb/", want: "http://h/a%2Fb/v1/traces"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clearEnv(t)
			if tc.env != "" {
				t.Setenv(tc.env, tc.value)
			}
			cfg, err := configure(Options{Endpoint: tc.opt})
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.url.String(); got != tc.want {
				t.Errorf("url %s, want %s", got, tc.want)
			}
		})
	}

	// And the request goes there.
	clearEnv(t)
	var got atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.URL.RequestURI())
		w.WriteHeader(200)
	}))
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL+"/a%2Fb?t=1")
	if err := upload(t, Options{}); err != nil {
		t.Fatal(err)
	}
	if got.Load() != "/a%2Fb/v1/traces?t=1" {
		t.Errorf("request to %v", got.Load())
	}
}

// The trace-specific variable wins over the general one, an empty or
// blank one counts as unset, and options win over both.
func TestReviewPrecedence(t *testing.T) {
	type got struct {
		url     string
		timeout time.Duration
		gzip    bool
		headers string
	}
	for _, tc := range []struct {
		name string
		env  map[string]string
		opt  Options
		want got
	}{
		{name: "blank traces endpoint falls back", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "  ", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://g:1"},
			want: got{url: "http://g:1/v1/traces", timeout: defaultTimeout}},
		{name: "option endpoint over the general one", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://g:1"}, opt: Options{Endpoint: "http://o:2"},
			want: got{url: "http://o:2/v1/traces", timeout: defaultTimeout}},
		{name: "option timeout over the traces one", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "100", "OTEL_EXPORTER_OTLP_TIMEOUT": "200"}, opt: Options{Timeout: 3 * time.Second},
			want: got{url: defaultEndpoint, timeout: 3 * time.Second}},
		{name: "traces timeout over a bad general one", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "100", "OTEL_EXPORTER_OTLP_TIMEOUT": "soon"},
			want: got{url: defaultEndpoint, timeout: 100 * time.Millisecond}},
		{name: "traces protocol over a general grpc", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
			want: got{url: defaultEndpoint, timeout: defaultTimeout}},
		{name: "traces compression over a bad general one", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": "gzip", "OTEL_EXPORTER_OTLP_COMPRESSION": "zstd"},
			want: got{url: defaultEndpoint, timeout: defaultTimeout, gzip: true}},
		{name: "traces headers over bad general ones", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_HEADERS": "a=1", "OTEL_EXPORTER_OTLP_HEADERS": "broken"},
			want: got{url: defaultEndpoint, timeout: defaultTimeout, headers: "A=1"}},
		{name: "option headers over traces ones", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_HEADERS": "a=1,b=2"}, opt: Options{Headers: map[string]string{"B": "3"}},
			want: got{url: defaultEndpoint, timeout: defaultTimeout, headers: "A=1,B=3"}},
		{name: "traces certificate over a missing general one", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://g:1", "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE": " "},
			want: got{url: "http://g:1/v1/traces", timeout: defaultTimeout}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clearEnv(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			cfg, err := configure(tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			var hs []string
			for _, k := range []string{"A", "B"} {
				if v := cfg.header.Get(k); v != "" {
					hs = append(hs, k+"="+v)
				}
			}
			g := got{url: cfg.url.String(), timeout: cfg.timeout, gzip: cfg.gzip, headers: strings.Join(hs, ",")}
			if g != tc.want {
				t.Errorf("got %+v, want %+v", g, tc.want)
			}
		})
	}
}

// A timeout too large for a time.Duration is refused, not wrapped into
// a negative one that fails every export at once.
func TestReviewTimeoutOverflow(t *testing.T) {
	clearEnv(t)
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "9223372036855")
	cfg, err := configure(Options{})
	if err == nil && cfg.timeout <= 0 {
		t.Fatalf("timeout %v", cfg.timeout)
	}
	if err != nil && !strings.Contains(err.Error(), "OTEL_EXPORTER_OTLP_TIMEOUT") {
		t.Errorf("error %v names no variable", err)
	}
}

// Header values never show in errors: URL-encoded in the variable and
// echoed decoded or encoded, nor when the variable is written
// "Name: value" by mistake.
func TestReviewHeaderSecrets(t *testing.T) {
	clearEnv(t)
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, "denied "+r.Header.Get("X-Api-Key")+" "+r.Header.Get("Authorization")+" raw sk%2Dlive%2B42%3D")
	}))
	defer echo.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "x-api-key=sk%2Dlive%2B42%3D,Authorization=Bearer%20tok-9f8e7d6c")
	err := upload(t, Options{Endpoint: echo.URL})
	if err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("upload = %v", err)
	}
	for _, secret := range []string{"sk-live+42=", "sk%2Dlive%2B42%3D", "tok-9f8e7d6c"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("the error shows %q: %v", secret, err)
		}
	}

	for _, value := range []string{
		"Authorization: Basic dXNlcjpwYXNzd29yZA==",
		"x-api-key:sk-live-7a6b5c=",
	} {
		clearEnv(t)
		t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", value)
		_, err := configure(Options{})
		if err == nil {
			t.Fatalf("%q was read", value)
		}
		for _, secret := range []string{"dXNlcjpwYXNzd29yZA", "sk-live-7a6b5c"} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("the error shows %q: %v", secret, err)
			}
		}
		if !strings.Contains(err.Error(), "OTEL_EXPORTER_OTLP_HEADERS: entry 1") {
			t.Errorf("error %v", err)
		}
	}
}

// Successive exports reuse one connection, retries included, and Stop
// closes it.
func TestReviewConnectionReuse(t *testing.T) {
	clearEnv(t)
	fastRetries(t)
	var newConns, closed atomic.Int32
	rec := newRecorder(status(503), body(200, "application/x-protobuf", partial(0, "")))
	srv := httptest.NewUnstartedServer(rec)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			newConns.Add(1)
		case http.StateClosed:
			closed.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	cfg, err := configure(Options{Endpoint: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(cfg)
	for range 5 {
		if err := c.UploadTraces(context.Background(), []*tracepb.ResourceSpans{testSpans("s")}); err != nil {
			t.Fatal(err)
		}
	}
	if n := newConns.Load(); n != 1 {
		t.Errorf("%d connections for 6 requests, want 1", n)
	}
	c.Stop(context.Background())
	deadline := time.Now().Add(2 * time.Second)
	for closed.Load() < newConns.Load() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if closed.Load() != newConns.Load() {
		t.Errorf("Stop left %d connections open", newConns.Load()-closed.Load())
	}
}

// Concurrent exports through one client (the SDK may call it from more
// than one goroutine) share nothing unguarded (go test -race).
func TestReviewConcurrentUploads(t *testing.T) {
	clearEnv(t)
	fastRetries(t)
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if n.Add(1)%3 == 0 {
			w.WriteHeader(503)
			return
		}
		w.WriteHeader(200)
	}))
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip")
	cfg, err := configure(Options{Endpoint: srv.URL, Headers: map[string]string{"X-Team": "evals"}})
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(cfg)
	defer c.Stop(context.Background())
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			for range 5 {
				if err := c.UploadTraces(context.Background(), []*tracepb.ResourceSpans{testSpans("s")}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
