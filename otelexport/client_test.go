package otelexport

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/google/go-cmp/cmp"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

var settings = []string{"ENDPOINT", "HEADERS", "TIMEOUT", "COMPRESSION", "CERTIFICATE", "CLIENT_CERTIFICATE", "CLIENT_KEY", "PROTOCOL"}

// clearEnv unsets every exporter variable for the test, so that the
// machine's own cannot change what it sees (empty counts as unset).
func clearEnv(t *testing.T) {
	t.Helper()
	for _, s := range settings {
		t.Setenv("OTEL_EXPORTER_OTLP_"+s, "")
		t.Setenv("OTEL_EXPORTER_OTLP_TRACES_"+s, "")
	}
}

// fastRetries shortens the backoff for one test.
func fastRetries(t *testing.T) {
	base, maxWait := retryBase, retryMax
	retryBase, retryMax = 10*time.Millisecond, 40*time.Millisecond
	t.Cleanup(func() { retryBase, retryMax = base, maxWait })
}

func TestConfigureEnv(t *testing.T) {
	dir := t.TempDir()
	bogusPEM := filepath.Join(dir, "bogus.pem")
	os.WriteFile(bogusPEM, []byte("not a certificate"), 0o600)
	type want struct {
		url     string
		headers map[string]string
		timeout time.Duration
		gzip    bool
	}
	for _, tc := range []struct {
		name string
		env  map[string]string
		opt  Options
		want want
		err  string // a part of the error; "" for none
	}{
		{name: "defaults", want: want{url: "http://localhost:4318/v1/traces", timeout: 10 * time.Second}},
		{name: "base endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://collector:4318"},
			want: want{url: "https://collector:4318/v1/traces", timeout: 10 * time.Second}},
		{name: "base endpoint with a path", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://cloud.langfuse.com/api/public/otel/"},
			want: want{url: "https://cloud.langfuse.com/api/public/otel/v1/traces", timeout: 10 * time.Second}},
		{name: "traces endpoint as is", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://ignored:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:9999/custom/traces"},
			want: want{url: "http://collector:9999/custom/traces", timeout: 10 * time.Second}},
		{name: "option endpoint wins", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://ignored:1/x"}, opt: Options{Endpoint: "http://127.0.0.1:4318/"},
			want: want{url: "http://127.0.0.1:4318/v1/traces", timeout: 10 * time.Second}},
		{name: "headers decoded", env: map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "Authorization=Basic%20cGs6c2s=, x-team = evals%2Cllm ,"},
			want: want{url: defaultEndpoint, timeout: 10 * time.Second, headers: map[string]string{"Authorization": "Basic cGs6c2s=", "X-Team": "evals,llm"}}},
		{name: "traces headers replace general ones", env: map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "a=1", "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "b=2"},
			want: want{url: defaultEndpoint, timeout: 10 * time.Second, headers: map[string]string{"B": "2"}}},
		{name: "option headers over variables", env: map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "a=1,b=2"}, opt: Options{Headers: map[string]string{"b": "3"}},
			want: want{url: defaultEndpoint, timeout: 10 * time.Second, headers: map[string]string{"A": "1", "B": "3"}}},
		{name: "timeout", env: map[string]string{"OTEL_EXPORTER_OTLP_TIMEOUT": "2500", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "1500"},
			want: want{url: defaultEndpoint, timeout: 1500 * time.Millisecond}},
		{name: "option timeout wins", env: map[string]string{"OTEL_EXPORTER_OTLP_TIMEOUT": "2500"}, opt: Options{Timeout: time.Second},
			want: want{url: defaultEndpoint, timeout: time.Second}},
		{name: "gzip", env: map[string]string{"OTEL_EXPORTER_OTLP_COMPRESSION": "gzip"}, want: want{url: defaultEndpoint, timeout: 10 * time.Second, gzip: true}},
		{name: "traces compression none", env: map[string]string{"OTEL_EXPORTER_OTLP_COMPRESSION": "gzip", "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": "none"},
			want: want{url: defaultEndpoint, timeout: 10 * time.Second}},
		{name: "protocol http/protobuf", env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}, want: want{url: defaultEndpoint, timeout: 10 * time.Second}},

		{name: "protocol grpc", env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, err: "OTEL_EXPORTER_OTLP_PROTOCOL=grpc: agenteval exports only OTLP/HTTP with protobuf"},
		{name: "traces protocol json", env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json"}, err: "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/json: agenteval exports only"},
		{name: "protocol unknown", env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "thrift"}, err: `OTEL_EXPORTER_OTLP_PROTOCOL="thrift" is not an OTLP protocol`},
		{name: "endpoint without scheme", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"}, err: `OTEL_EXPORTER_OTLP_ENDPOINT="collector:4318": want an http:// or https:// URL`},
		{name: "traces endpoint unparsable", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://a b/%zz"}, err: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="},
		{name: "option endpoint bad", opt: Options{Endpoint: "ftp://x"}, err: `endpoint "ftp://x": want an http://`},
		{name: "timeout not a number", env: map[string]string{"OTEL_EXPORTER_OTLP_TIMEOUT": "10s"}, err: `OTEL_EXPORTER_OTLP_TIMEOUT="10s": want a positive whole number of milliseconds`},
		{name: "timeout zero", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "0"}, err: "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"},
		{name: "compression unknown", env: map[string]string{"OTEL_EXPORTER_OTLP_COMPRESSION": "zstd"}, err: `OTEL_EXPORTER_OTLP_COMPRESSION="zstd": want gzip or none`},
		{name: "header without =", env: map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "a=1,justakey"}, err: "OTEL_EXPORTER_OTLP_HEADERS: entry 2 has no '='"},
		{name: "header bad name", env: map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "bad key=1"}, err: `OTEL_EXPORTER_OTLP_HEADERS: entry 1: "bad..." is not a valid header name`},
		{name: "header value after a space", env: map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "Authorization Basic c2VjcmV0="}, err: `OTEL_EXPORTER_OTLP_HEADERS: entry 1: "Authorization..." is not a valid header name`},
		{name: "header bad escape", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_HEADERS": "api-key=sk-abc%zz"}, err: "OTEL_EXPORTER_OTLP_TRACES_HEADERS: the value of api-key is not validly URL-encoded"},
		{name: "certificate on http", env: map[string]string{"OTEL_EXPORTER_OTLP_CERTIFICATE": "/nonexistent.pem"}, err: "OTEL_EXPORTER_OTLP_CERTIFICATE is set, but the endpoint http://localhost:4318/v1/traces is not https"},
		{name: "certificate missing", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://c:4318", "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE": filepath.Join(dir, "none.pem")}, err: "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE: open "},
		{name: "certificate not PEM", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://c:4318", "OTEL_EXPORTER_OTLP_CERTIFICATE": bogusPEM}, err: "no PEM certificate in it"},
		{name: "client certificate without key", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://c:4318", "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": bogusPEM}, err: "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE is set without OTEL_EXPORTER_OTLP_CLIENT_KEY"},
		{name: "client key without certificate", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://c:4318", "OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY": bogusPEM}, err: "OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY is set without"},
		{name: "client pair unreadable", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://c:4318", "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": bogusPEM, "OTEL_EXPORTER_OTLP_CLIENT_KEY": bogusPEM}, err: "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and OTEL_EXPORTER_OTLP_CLIENT_KEY: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clearEnv(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			cfg, err := configure(tc.opt)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error = %v, want it to contain %q", err, tc.err)
				}
				if strings.Contains(err.Error(), "sk-abc") {
					t.Errorf("the error shows a header value: %v", err)
				}
				// New says the same, as an export error.
				if _, nerr := New(context.Background(), tc.opt); nerr == nil || !strings.HasPrefix(nerr.Error(), "otel export: ") || !strings.Contains(nerr.Error(), tc.err) {
					t.Errorf("New = %v", nerr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := want{url: cfg.url.String(), timeout: cfg.timeout, gzip: cfg.gzip}
			if len(cfg.header) > 0 {
				got.headers = map[string]string{}
				for k := range cfg.header {
					got.headers[k] = cfg.header.Get(k)
				}
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
		})
	}
}

// The request body is an ExportTraceServiceRequest, which reads as the
// TracesData it mirrors.
func TestEncodeRequest(t *testing.T) {
	in := []*tracepb.ResourceSpans{testSpans("a"), testSpans("b")}
	data, err := encodeRequest(in)
	if err != nil {
		t.Fatal(err)
	}
	var got tracepb.TracesData
	if err := proto.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(&got, &tracepb.TracesData{ResourceSpans: in}) {
		t.Errorf("decoded %v", &got)
	}
	if data[0] != 0x0a {
		t.Errorf("first tag %#x, want 0x0a", data[0])
	}
}

func testSpans(name string) *tracepb.ResourceSpans {
	return &tracepb.ResourceSpans{ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{{
		TraceId: bytes.Repeat([]byte{1}, 16), SpanId: bytes.Repeat([]byte{2}, 8), Name: name,
		Attributes: []*commonpb.KeyValue{{Key: "k", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: "v"}}}},
	}}}}}
}

// recorder answers each request with the next response of a script and
// keeps what it was sent.
type recorder struct {
	answers []func(w http.ResponseWriter)
	mu      sync.Mutex
	got     []sent
}

// sent is one request the recorder was sent.
type sent struct {
	header http.Header
	path   string
	body   []byte
	at     time.Time
}

func newRecorder(answers ...func(w http.ResponseWriter)) *recorder {
	return &recorder{answers: answers}
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rec.mu.Lock()
	rec.got = append(rec.got, sent{header: r.Header.Clone(), path: r.URL.Path, body: body, at: time.Now()})
	i := min(len(rec.got), len(rec.answers)) - 1
	rec.mu.Unlock()
	rec.answers[i](w)
}

// sent returns the requests so far.
func (rec *recorder) sent() []sent {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return slices.Clone(rec.got)
}

func status(code int, header ...string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.WriteHeader(code)
	}
}

func body(code int, contentType string, data []byte) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(code)
		w.Write(data)
	}
}

// rpcStatus is a google.rpc.Status with a message (field 2).
func rpcStatus(msg string) []byte {
	b := protowire.AppendTag(nil, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, 3)
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	return protowire.AppendString(b, msg)
}

// partial is an ExportTraceServiceResponse with a partial success.
func partial(rejected int64, msg string) []byte {
	var ps []byte
	ps = protowire.AppendTag(ps, 1, protowire.VarintType)
	ps = protowire.AppendVarint(ps, uint64(rejected))
	ps = protowire.AppendTag(ps, 2, protowire.BytesType)
	ps = protowire.AppendString(ps, msg)
	return protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), ps)
}

// upload sends one batch with a client configured from opt and the
// environment the test set.
func upload(t *testing.T, opt Options) error {
	t.Helper()
	cfg, err := configure(opt)
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(cfg)
	defer c.Stop(context.Background())
	return c.UploadTraces(context.Background(), []*tracepb.ResourceSpans{testSpans("s")})
}

func TestUploadResponses(t *testing.T) {
	for _, tc := range []struct {
		name     string
		answers  []func(w http.ResponseWriter)
		timeout  time.Duration
		attempts int
		err      string // a part of the error; "" for none
	}{
		{name: "ok", answers: []func(http.ResponseWriter){status(200)}, attempts: 1},
		{name: "ok with an empty partial success", answers: []func(http.ResponseWriter){body(200, "application/x-protobuf", partial(0, ""))}, attempts: 1},
		{name: "503 then ok", answers: []func(http.ResponseWriter){status(503), status(200)}, attempts: 2},
		{name: "429, 502, 504 then ok", answers: []func(http.ResponseWriter){status(429), status(502), status(504), status(200)}, attempts: 4},
		{name: "400 is not retried", answers: []func(http.ResponseWriter){body(400, "application/x-protobuf", rpcStatus("span 3 has no trace id")), status(200)},
			attempts: 1, err: "400 Bad Request: span 3 has no trace id"},
		{name: "401 is not retried", answers: []func(http.ResponseWriter){body(401, "text/plain", []byte("bad credentials\n")), status(200)},
			attempts: 1, err: "401 Unauthorized: bad credentials"},
		{name: "404 with a JSON status", answers: []func(http.ResponseWriter){body(404, "application/json", []byte(`{"code":5,"message":"no such path"}`))},
			attempts: 1, err: "404 Not Found: no such path"},
		{name: "500 is not retried", answers: []func(http.ResponseWriter){status(500), status(200)}, attempts: 1, err: "500 Internal Server Error"},
		{name: "partial success", answers: []func(http.ResponseWriter){body(200, "application/x-protobuf", partial(3, "3 spans too old"))},
			attempts: 1, err: "the endpoint rejected 3 spans: 3 spans too old"},
		{name: "partial success in JSON", answers: []func(http.ResponseWriter){body(200, "application/json", []byte(`{"partialSuccess":{"rejectedSpans":"2","errorMessage":"quota"}}`))},
			attempts: 1, err: "the endpoint rejected 2 spans: quota"},
		{name: "503 until the timeout", answers: []func(http.ResponseWriter){status(503)}, timeout: 300 * time.Millisecond,
			err: "503 Service Unavailable (gave up after"},
		{name: "Retry-After past the timeout", answers: []func(http.ResponseWriter){status(503, "Retry-After", "60"), status(200)}, timeout: 2 * time.Second,
			attempts: 1, err: "gave up after 1 attempt: the next would start past the export timeout"},
		{name: "long refusal cut short", answers: []func(http.ResponseWriter){body(400, "text/plain", bytes.Repeat([]byte("x"), 1<<20))},
			attempts: 1, err: strings.Repeat("x", 300) + "..."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clearEnv(t)
			fastRetries(t)
			rec := newRecorder(tc.answers...)
			srv := httptest.NewServer(rec)
			defer srv.Close()
			err := upload(t, Options{Endpoint: srv.URL, Timeout: tc.timeout})
			if tc.err == "" && err != nil {
				t.Fatalf("upload: %v", err)
			}
			if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("upload = %v, want an error containing %q", err, tc.err)
			}
			n := len(rec.sent())
			if tc.attempts > 0 && n != tc.attempts {
				t.Errorf("%d attempts, want %d", n, tc.attempts)
			}
			if tc.attempts == 0 && n < 3 {
				t.Errorf("only %d attempts before the timeout", n)
			}
			if err != nil && len(err.Error()) > 1000 {
				t.Errorf("error of %d bytes", len(err.Error()))
			}
		})
	}
}

// A 503 with Retry-After is retried after the time it names, within the
// export timeout; every attempt sends the same request.
func TestRetryAfter(t *testing.T) {
	clearEnv(t)
	rec := newRecorder(status(503, "Retry-After", "1"), status(200))
	srv := httptest.NewServer(rec)
	defer srv.Close()
	if err := upload(t, Options{Endpoint: srv.URL, Timeout: 5 * time.Second}); err != nil {
		t.Fatal(err)
	}
	got := rec.sent()
	if len(got) != 2 {
		t.Fatalf("%d attempts, want 2", len(got))
	}
	if gap := got[1].at.Sub(got[0].at); gap < 900*time.Millisecond {
		t.Errorf("retried after %v, before the 1s Retry-After", gap)
	}
	if !bytes.Equal(got[0].body, got[1].body) || len(got[0].body) == 0 {
		t.Error("the retry sent a different body")
	}
}

// A dropped connection is retried; a refused one is not: nothing listens
// there, and waiting for the timeout would only delay the warning (as the
// SDK's exporter did not wait either).
func TestConnectionErrors(t *testing.T) {
	clearEnv(t)
	fastRetries(t)
	var n atomic.Int32
	drop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer drop.Close()
	if err := upload(t, Options{Endpoint: drop.URL}); err != nil || n.Load() != 2 {
		t.Errorf("after a dropped connection: %v, %d attempts, want a second that succeeds", err, n.Load())
	}

	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	start := time.Now()
	err := upload(t, Options{Endpoint: url, Timeout: 5 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "refused") || strings.Contains(err.Error(), "gave up") {
		t.Fatalf("upload = %v, want connection refused at once", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v: a refused connection was retried", d)
	}
}

// Requests carry the headers, the type, and gzip when asked for.
func TestUploadRequest(t *testing.T) {
	clearEnv(t)
	rec := newRecorder(status(200))
	srv := httptest.NewServer(rec)
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", srv.URL+"/custom/path")
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=k%3Dv,x-team=evals")
	t.Setenv("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip")
	if err := upload(t, Options{Version: "v1.2.3", Headers: map[string]string{"X-Team": "agents"}}); err != nil {
		t.Fatal(err)
	}
	r := rec.sent()[0]
	got := map[string]string{
		"path": r.path, "Content-Type": r.header.Get("Content-Type"), "Content-Encoding": r.header.Get("Content-Encoding"),
		"X-Api-Key": r.header.Get("X-Api-Key"), "X-Team": r.header.Get("X-Team"), "User-Agent": r.header.Get("User-Agent"),
	}
	want := map[string]string{
		"path": "/custom/path", "Content-Type": "application/x-protobuf", "Content-Encoding": "gzip",
		"X-Api-Key": "k=v", "X-Team": "agents", "User-Agent": "agenteval/v1.2.3",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}
	zr, err := gzip.NewReader(bytes.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(zr)
	var td tracepb.TracesData
	if err := proto.Unmarshal(data, &td); err != nil || td.ResourceSpans[0].ScopeSpans[0].Spans[0].Name != "s" {
		t.Errorf("body %v, %v", &td, err)
	}
}

// Header values, from the variables or the options, appear in no error,
// even when the endpoint echoes them back.
func TestHeaderValuesRedacted(t *testing.T) {
	clearEnv(t)
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, "bad auth %q and key %q", r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"))
	})
	srv := httptest.NewServer(echo)
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "Authorization=Basic%20cGstbGYtMTIzOnNrLWxmLTQ1Ng==")
	e, err := New(context.Background(), Options{Endpoint: srv.URL, Headers: map[string]string{"X-Api-Key": "opt-key-9f8e7d"}})
	if err != nil {
		t.Fatal(err)
	}
	e.Write(&agenteval.Result{TestID: "t", Verdict: agenteval.VerdictPass})
	err = e.Close(nil)
	if err == nil || !strings.Contains(err.Error(), "401 Unauthorized") {
		t.Fatalf("Close = %v, want the 401", err)
	}
	for _, secret := range []string{"cGstbGYtMTIzOnNrLWxmLTQ1Ng==", "cGstbGYtMTIzOnNrLWxmLTQ1Ng%3D%3D", "opt-key-9f8e7d"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("the error shows %q: %v", secret, err)
		}
	}
}

// writePEM writes one PEM block to a file in dir.
func writePEM(t *testing.T, dir, name, typ string, der []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// An https endpoint is trusted through OTEL_EXPORTER_OTLP_CERTIFICATE,
// and the client presents the certificate the CLIENT_ variables name.
func TestTLS(t *testing.T) {
	var clientCerts atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		clientCerts.Store(int32(len(r.TLS.PeerCertificates)))
		w.WriteHeader(http.StatusOK)
	}))
	srv.TLS = &tls.Config{ClientAuth: tls.RequestClientCert}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshake the untrusting client breaks off
	srv.StartTLS()
	defer srv.Close()
	dir := t.TempDir()
	ca := writePEM(t, dir, "ca.pem", "CERTIFICATE", srv.Certificate().Raw)
	key, err := x509.MarshalPKCS8PrivateKey(srv.TLS.Certificates[0].PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	clientKey := writePEM(t, dir, "client.key", "PRIVATE KEY", key)

	t.Run("unknown authority is not retried", func(t *testing.T) {
		clearEnv(t)
		start := time.Now()
		err := upload(t, Options{Endpoint: srv.URL, Timeout: 5 * time.Second})
		if err == nil || !strings.Contains(err.Error(), "certificate") {
			t.Fatalf("upload = %v, want a certificate error", err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("took %v: a certificate error was retried", d)
		}
	})
	t.Run("CA file", func(t *testing.T) {
		clearEnv(t)
		t.Setenv("OTEL_EXPORTER_OTLP_CERTIFICATE", ca)
		if err := upload(t, Options{Endpoint: srv.URL}); err != nil {
			t.Fatal(err)
		}
		if clientCerts.Load() != 0 {
			t.Error("a client certificate was sent unasked")
		}
	})
	t.Run("client certificate", func(t *testing.T) {
		clearEnv(t)
		t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", srv.URL+"/v1/traces")
		t.Setenv("OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", ca)
		t.Setenv("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", ca)
		t.Setenv("OTEL_EXPORTER_OTLP_CLIENT_KEY", clientKey)
		if err := upload(t, Options{}); err != nil {
			t.Fatal(err)
		}
		if clientCerts.Load() != 1 {
			t.Errorf("%d client certificates sent, want 1", clientCerts.Load())
		}
	})
}

// The point of this client: the package, and so the binary, links no
// gRPC. go list is cheap once the build cache is warm.
func TestNoGRPC(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command(gobin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.Contains(p, "grpc") || p == "golang.org/x/net/trace" || strings.Contains(p, "otlp/collector") {
			t.Errorf("otelexport links %s", p)
		}
	}
}
