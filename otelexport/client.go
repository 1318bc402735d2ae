package otelexport

// The OTLP/HTTP client. The SDK's otlptracehttp would do this job, but it
// links all of gRPC (its configuration is shared with the gRPC exporter,
// and its request type is the collector's generated gRPC service), which
// the binary has no other use for. This client speaks only what --otel
// needs: binary protobuf over HTTP, configured the way the OTLP exporter
// specification says (https://opentelemetry.io/docs/specs/otel/protocol/exporter/).

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/agenteval/agenteval/internal/redact"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

const (
	defaultEndpoint = "http://localhost:4318/v1/traces"
	defaultTimeout  = 10 * time.Second
	tracesPath      = "v1/traces"

	// okBodyLimit bounds what is read of a successful response (it holds
	// at most a partial-success message); errBodyLimit what is read of a
	// refusal, for its message.
	okBodyLimit  = 1 << 20
	errBodyLimit = 4 << 10
)

// Backoff between attempts: retryBase doubles up to retryMax, with
// jitter, unless the endpoint says when to come back (Retry-After).
// Variables so that tests need not wait.
var (
	retryBase = 500 * time.Millisecond
	retryMax  = 5 * time.Second
)

// clientConfig is where and how the client sends.
type clientConfig struct {
	url       *url.URL
	header    http.Header
	timeout   time.Duration
	gzip      bool
	tls       *tls.Config
	userAgent string
}

// envVar is one configuration variable: the trace-specific one if it is
// set, else the general one. An empty variable counts as unset.
type envVar struct{ name, value string }

func lookup(setting string) envVar {
	for _, name := range []string{"OTEL_EXPORTER_OTLP_TRACES_" + setting, "OTEL_EXPORTER_OTLP_" + setting} {
		if v := strings.TrimSpace(os.Getenv(name)); v != "" {
			return envVar{name, v}
		}
	}
	return envVar{}
}

// configure resolves the client's configuration from the options and the
// OTEL_EXPORTER_OTLP_* variables. Options win over variables, and a
// trace-specific variable over the general one. A setting the client
// cannot honour is an error naming the variable, never ignored.
func configure(opt Options) (*clientConfig, error) {
	// Header values are credentials more often than not: hide them in
	// every message before anything can fail.
	for _, k := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"} {
		addHeaderSecrets(os.Getenv(k))
	}
	for _, v := range opt.Headers {
		redact.Add(v)
	}

	cfg := &clientConfig{header: http.Header{}, timeout: defaultTimeout, userAgent: "agenteval"}
	if opt.Version != "" {
		cfg.userAgent += "/" + opt.Version
	}

	if p := lookup("PROTOCOL"); p.name != "" {
		switch strings.ToLower(p.value) {
		case "http/protobuf":
		case "grpc":
			return nil, fmt.Errorf("%s=grpc: agenteval exports only OTLP/HTTP with protobuf (http/protobuf); point the endpoint at the collector's OTLP/HTTP port (4318 by default) and set %s=http/protobuf or unset it", p.name, p.name)
		case "http/json":
			return nil, fmt.Errorf("%s=http/json: agenteval exports only OTLP/HTTP with protobuf (http/protobuf), which every OTLP/HTTP receiver accepts; set %s=http/protobuf or unset it", p.name, p.name)
		default:
			return nil, fmt.Errorf("%s=%q is not an OTLP protocol; agenteval exports http/protobuf: set it to that or unset it", p.name, redact.String(p.value))
		}
	}

	var err error
	switch {
	case opt.Endpoint != "":
		cfg.url, err = parseEndpoint(opt.Endpoint, true)
		if err != nil {
			return nil, fmt.Errorf("endpoint %w", err)
		}
	default:
		if e := lookup("ENDPOINT"); e.name != "" {
			// The trace-specific endpoint is the whole URL; the general
			// one is a base that traces go below.
			cfg.url, err = parseEndpoint(e.value, e.name == "OTEL_EXPORTER_OTLP_ENDPOINT")
			if err != nil {
				return nil, fmt.Errorf("%s=%w", e.name, err)
			}
		} else {
			cfg.url, _ = url.Parse(defaultEndpoint)
		}
	}

	if h := lookup("HEADERS"); h.name != "" {
		if err := parseHeaders(h.value, cfg.header); err != nil {
			return nil, fmt.Errorf("%s: %w", h.name, err)
		}
	}
	for k, v := range opt.Headers {
		if !validHeaderName(k) {
			return nil, fmt.Errorf("header %q is not a valid header name", k)
		}
		cfg.header.Set(k, v)
	}

	if opt.Timeout > 0 {
		cfg.timeout = opt.Timeout
	} else if t := lookup("TIMEOUT"); t.name != "" {
		n, err := strconv.ParseInt(t.value, 10, 64)
		if err != nil || n <= 0 || n > math.MaxInt64/int64(time.Millisecond) {
			return nil, fmt.Errorf("%s=%q: want a positive whole number of milliseconds", t.name, t.value)
		}
		cfg.timeout = time.Duration(n) * time.Millisecond
	}

	if c := lookup("COMPRESSION"); c.name != "" {
		switch strings.ToLower(c.value) {
		case "gzip":
			cfg.gzip = true
		case "none":
		default:
			return nil, fmt.Errorf("%s=%q: want gzip or none", c.name, c.value)
		}
	}

	cfg.tls, err = tlsConfig(cfg.url)
	if err != nil {
		return nil, err
	}
	return cfg, nil
}

// addHeaderSecrets adds the values of a headers variable to the secrets
// redact hides, both as written and URL-decoded.
func addHeaderSecrets(s string) {
	for _, kv := range strings.Split(s, ",") {
		_, v, ok := strings.Cut(kv, "=")
		if v = strings.TrimSpace(v); !ok || v == "" {
			continue
		}
		redact.Add(v)
		if d, err := url.PathUnescape(v); err == nil {
			redact.Add(d)
		}
	}
}

// parseEndpoint checks an endpoint URL; a base one gets v1/traces added
// to its path. The error starts with the value, for the caller to name
// where it came from.
func parseEndpoint(s string, base bool) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		shown := redact.String(s)
		if err == nil {
			shown = redact.String(u.Redacted())
		}
		return nil, fmt.Errorf("%q: want an http:// or https:// URL, such as http://localhost:4318", shown)
	}
	if base {
		if !strings.HasSuffix(u.Path, "/") {
			u.Path += "/"
		}
		u.Path += tracesPath
		// An escaped path ("/a%2Fb") keeps its escapes.
		if u.RawPath != "" {
			if !strings.HasSuffix(u.RawPath, "/") {
				u.RawPath += "/"
			}
			u.RawPath += tracesPath
		}
	} else if u.Path == "" {
		u.Path = "/"
	}
	return u, nil
}

// parseHeaders reads a headers variable: key=value pairs separated by
// commas, each key and value URL-encoded, as W3C baggage writes them.
// Messages name keys, never values.
func parseHeaders(s string, h http.Header) error {
	for i, kv := range strings.Split(s, ",") {
		if strings.TrimSpace(kv) == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("entry %d has no '=': write key=value pairs separated by commas", i+1)
		}
		key, err := url.PathUnescape(strings.TrimSpace(k))
		if err != nil || !validHeaderName(key) {
			// "Name: value=" and "Name value=" put the value before the
			// first "=": show no more than the name.
			shown := strings.TrimSpace(k)
			if c := strings.IndexAny(shown, ": \t"); c >= 0 {
				shown = shown[:c] + "..."
			}
			return fmt.Errorf("entry %d: %q is not a valid header name", i+1, redact.String(shown))
		}
		val, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("the value of %s is not validly URL-encoded (write %%XX for special characters)", key)
		}
		if strings.ContainsAny(val, "\r\n\x00") {
			return fmt.Errorf("the value of %s holds a line break or NUL", key)
		}
		h.Set(key, val)
	}
	return nil
}

// validHeaderName reports whether s is an HTTP token (RFC 9110).
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case strings.ContainsRune("!#$%&'*+-.^_`|~", r):
		default:
			return false
		}
	}
	return true
}

// tlsConfig builds the TLS settings the certificate variables ask for, or
// nil for the defaults. They are an error on a plain http:// endpoint,
// which could not honour them.
func tlsConfig(u *url.URL) (*tls.Config, error) {
	ca, cert, key := lookup("CERTIFICATE"), lookup("CLIENT_CERTIFICATE"), lookup("CLIENT_KEY")
	if ca.name == "" && cert.name == "" && key.name == "" {
		return nil, nil
	}
	if u.Scheme != "https" {
		set := ca.name
		if set == "" {
			set = cert.name
		}
		if set == "" {
			set = key.name
		}
		return nil, fmt.Errorf("%s is set, but the endpoint %s is not https: use an https:// endpoint or unset it", set, redact.String(u.Redacted()))
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca.name != "" {
		pem, err := os.ReadFile(ca.value)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ca.name, err)
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s=%s: no PEM certificate in it", ca.name, ca.value)
		}
	}
	switch {
	case cert.name != "" && key.name != "":
		pair, err := tls.LoadX509KeyPair(cert.value, key.value)
		if err != nil {
			return nil, fmt.Errorf("%s and %s: %w", cert.name, key.name, err)
		}
		c.Certificates = []tls.Certificate{pair}
	case cert.name != "":
		return nil, fmt.Errorf("%s is set without OTEL_EXPORTER_OTLP_CLIENT_KEY (or its TRACES_ form): a client certificate needs its key", cert.name)
	case key.name != "":
		return nil, fmt.Errorf("%s is set without OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE (or its TRACES_ form): a client key needs its certificate", key.name)
	}
	return c, nil
}

// client sends spans to one OTLP/HTTP endpoint. It implements
// otlptrace.Client.
type client struct {
	cfg  *clientConfig
	http *http.Client
}

func newClient(cfg *clientConfig) *client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if cfg.tls != nil {
		tr.TLSClientConfig = cfg.tls
	}
	return &client{cfg: cfg, http: &http.Client{Transport: tr}}
}

// Start has nothing to do: connections open with the first export.
func (c *client) Start(context.Context) error { return nil }

// Stop closes the idle connections.
func (c *client) Stop(context.Context) error {
	c.http.CloseIdleConnections()
	return nil
}

// UploadTraces sends one export request, retrying what the specification
// calls retryable (429, 502, 503, 504 and dropped connections) until the
// export timeout.
func (c *client) UploadTraces(ctx context.Context, spans []*tracepb.ResourceSpans) error {
	body, err := encodeRequest(spans)
	if err != nil {
		return err
	}
	if c.cfg.gzip {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(body)
		if err := zw.Close(); err != nil {
			return fmt.Errorf("gzip: %w", err)
		}
		body = buf.Bytes()
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.timeout)
	defer cancel()
	wait := retryBase
	var last error
	for attempt := 1; ; attempt++ {
		retry, after, err := c.post(ctx, body)
		if err != nil && last != nil && ctx.Err() != nil {
			// The timeout struck during a retry: the failure that made
			// it retry says more than the timeout does.
			return fmt.Errorf("%w (gave up after %s: %w)", last, attempts(attempt-1), ctx.Err())
		}
		if err == nil || !retry {
			return err
		}
		last = err
		if after <= 0 {
			after = wait/2 + rand.N(wait)
			wait = min(2*wait, retryMax)
		}
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < after {
			return fmt.Errorf("%w (gave up after %s: the next would start past the export timeout)", err, attempts(attempt))
		}
		t := time.NewTimer(after)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (gave up after %s: %w)", err, attempts(attempt), ctx.Err())
		case <-t.C:
		}
	}
}

func attempts(n int) string {
	if n == 1 {
		return "1 attempt"
	}
	return strconv.Itoa(n) + " attempts"
}

// encodeRequest writes an ExportTraceServiceRequest, whose only field is
// repeated ResourceSpans resource_spans = 1.
func encodeRequest(spans []*tracepb.ResourceSpans) ([]byte, error) {
	var out []byte
	for _, rs := range spans {
		b, err := proto.Marshal(rs)
		if err != nil {
			return nil, fmt.Errorf("encode spans: %w", err)
		}
		out = protowire.AppendTag(out, 1, protowire.BytesType)
		out = protowire.AppendBytes(out, b)
	}
	return out, nil
}

// post makes one attempt. It reports whether a failure may be retried
// and how long the endpoint asked to wait first (0 if it did not say).
func (c *client) post(ctx context.Context, body []byte) (retry bool, after time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.url.String(), bytes.NewReader(body))
	if err != nil {
		return false, 0, fmt.Errorf("export request: %w", err)
	}
	req.Header.Set("User-Agent", c.cfg.userAgent)
	for k, v := range c.cfg.header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	if c.cfg.gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	where := "POST " + redact.String(c.cfg.url.Redacted())
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return false, 0, fmt.Errorf("%s: %w", where, ctx.Err())
		}
		return transient(err), 0, errors.New(redact.String(err.Error()))
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, okBodyLimit))
		io.Copy(io.Discard, io.LimitReader(resp.Body, okBodyLimit))
		if n, msg := partialSuccess(resp.Header.Get("Content-Type"), data); n > 0 {
			if msg == "" {
				msg = "no reason given"
			}
			return false, 0, fmt.Errorf("%s: the endpoint rejected %d spans: %s", where, n, redact.String(msg))
		}
		return false, 0, nil
	}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, errBodyLimit))
	io.Copy(io.Discard, io.LimitReader(resp.Body, okBodyLimit))
	err = fmt.Errorf("%s: %s%s", where, resp.Status, statusMessage(resp.Header.Get("Content-Type"), data))
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true, retryAfter(resp.Header.Get("Retry-After")), err
	}
	return false, 0, err
}

// transient reports whether a failed request may succeed if sent again:
// a dropped or timed-out connection may, but not a certificate that is
// not trusted, nor a dial that failed outright (nothing listens there,
// or no such host), which would only delay the warning to the timeout.
func transient(err error) bool {
	var unknownCA x509.UnknownAuthorityError
	var invalid x509.CertificateInvalidError
	var host x509.HostnameError
	var verify *tls.CertificateVerificationError
	if errors.As(err, &unknownCA) || errors.As(err, &invalid) || errors.As(err, &host) || errors.As(err, &verify) {
		return false
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" && !op.Timeout() {
		var dns *net.DNSError
		return errors.As(err, &dns) && dns.IsTemporary
	}
	return true
}

// retryAfter reads a Retry-After header: seconds, or an HTTP date. More
// seconds than a time.Duration holds is the longest wait, not a wrapped
// one.
func retryAfter(s string) time.Duration {
	if s == "" {
		return 0
	}
	if n, err := strconv.ParseUint(s, 10, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		if err != nil || n > math.MaxInt64/uint64(time.Second) {
			return math.MaxInt64
		}
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(s); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

func mediaType(contentType string) string {
	mt, _, _ := mime.ParseMediaType(contentType)
	return mt
}

// partialSuccess reads an ExportTraceServiceResponse: how many spans the
// endpoint rejected and why. Its partial_success (field 1) holds
// rejected_spans (1, int64) and error_message (2, string).
func partialSuccess(contentType string, data []byte) (rejected int64, msg string) {
	if len(data) == 0 {
		return 0, ""
	}
	if mediaType(contentType) == "application/json" {
		var r struct {
			PartialSuccess struct {
				RejectedSpans json.RawMessage `json:"rejectedSpans"`
				ErrorMessage  string          `json:"errorMessage"`
			} `json:"partialSuccess"`
		}
		if json.Unmarshal(data, &r) != nil {
			return 0, ""
		}
		// An int64 comes as a string in protobuf's JSON, or as a number.
		n, _ := strconv.ParseInt(strings.Trim(string(r.PartialSuccess.RejectedSpans), `"`), 10, 64)
		return n, r.PartialSuccess.ErrorMessage
	}
	ps, ok := bytesField(data, 1)
	if !ok {
		return 0, ""
	}
	for b := ps; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			break
		}
		b = b[n:]
		switch {
		case num == 1 && typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return 0, ""
			}
			rejected, b = int64(v), b[n:]
		case num == 2 && typ == protowire.BytesType:
			v, n := protowire.ConsumeString(b)
			if n < 0 {
				return 0, ""
			}
			msg, b = v, b[n:]
		default:
			n := protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return 0, ""
			}
			b = b[n:]
		}
	}
	return rejected, msg
}

// bytesField returns the last length-delimited field num of a message.
func bytesField(b []byte, want protowire.Number) ([]byte, bool) {
	var out []byte
	found := false
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, false
		}
		b = b[n:]
		if num == want && typ == protowire.BytesType {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return nil, false
			}
			out, found, b = v, true, b[n:]
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return nil, false
		}
		b = b[n:]
	}
	return out, found
}

// statusMessage is the reason a refusal gives, as ": reason", or "". An
// OTLP endpoint sends a google.rpc.Status (message is field 2); others
// send text.
func statusMessage(contentType string, data []byte) string {
	var msg string
	switch mediaType(contentType) {
	case "application/x-protobuf", "application/protobuf":
		if b, ok := bytesField(data, 2); ok {
			msg = string(b)
		}
	case "application/json":
		var s struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(data, &s) == nil {
			msg = s.Message
		}
	default:
		msg = string(data)
	}
	msg = strings.Join(strings.Fields(strings.ToValidUTF8(msg, "?")), " ")
	if r := []rune(msg); len(r) > 300 {
		msg = string(r[:300]) + "..."
	}
	if msg == "" {
		return ""
	}
	return ": " + redact.String(msg)
}
