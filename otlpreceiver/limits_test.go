package otlpreceiver

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// bomb is a gzip body of about 61 KB that inflates to 60 MB of zeros.
var bomb = sync.OnceValue(func() []byte {
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	zeros := make([]byte, 1<<20)
	for range 60 {
		zw.Write(zeros)
	}
	zw.Close()
	return b.Bytes()
})

// send posts body to the receiver's /v1/traces as OTLP JSON, gzipped as
// it is when gz, with the extra headers given (a "Host" one sets the Host
// header), and returns the answer.
func send(t *testing.T, r *Receiver, body []byte, gz bool, headers ...string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, r.Endpoint()+"/v1/traces", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if gz {
		req.Header.Set("Content-Encoding", "gzip")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i] == "Host" {
			req.Host = headers[i+1]
		} else {
			req.Header.Set(headers[i], headers[i+1])
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// spanJSON is an export request of one span of trace id, carrying pad
// bytes of attribute.
func spanJSON(id string, pad int) []byte {
	return []byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"` + id + `","spanId":"1111111111111111","name":"s",` +
		`"startTimeUnixNano":"` + itoa(time.Now().UnixNano()) + `","attributes":[{"key":"pad","value":{"stringValue":"` + strings.Repeat("x", pad) + `"}}]}]}]}]}`)
}

func traceID(i int) string { return fmt.Sprintf("%032x", i+1) }

func listen(t *testing.T, opt Options) *Receiver {
	t.Helper()
	r, err := ListenWith("127.0.0.1:0", opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestGzipBombIsRefused: a 61 KB body that inflates to 60 MB is refused
// with 413 once 16 MiB have come out of it, not read whole.
func TestGzipBombIsRefused(t *testing.T) {
	r := listen(t, Options{})
	if resp := send(t, r, bomb(), true); resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("bomb: %d, want 413", resp.StatusCode)
	}
	// A body within the bound is still taken, gzipped or not.
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(spanJSON(traceID(0), 1<<20))
	zw.Close()
	if resp := send(t, r, b.Bytes(), true); resp.StatusCode != http.StatusOK {
		t.Errorf("1 MiB gzipped: %d", resp.StatusCode)
	}
	if st := r.Stats(); st.TooLarge != 1 || st.Received != 1 || st.Rejected != 0 {
		t.Errorf("stats = %+v", st)
	}
}

// TestBombsStayUnderMemoryBound: 64 gzip bombs at once (3.9 GB once
// inflated) leave the process under 200 MB: bodies are read 8 at a time,
// each is stopped at 16 MiB, and the chunks they were read into are
// reused. The figures are the peak resident set (VmHWM, reset before the
// bombs) and the heap the Go runtime ever took from the OS (HeapSys,
// which does not shrink), so no peak is missed between samples.
func TestBombsStayUnderMemoryBound(t *testing.T) {
	if testing.Short() {
		t.Skip("inflates 64 bombs")
	}
	r := listen(t, Options{})
	body := bomb()
	debug.FreeOSMemory()
	rssReset := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil

	const n = 64
	codes := make(chan int, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodPost, r.Endpoint()+"/v1/traces", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/x-protobuf")
			req.Header.Set("Content-Encoding", "gzip")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				codes <- 0
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			codes <- resp.StatusCode
		})
	}
	wg.Wait()
	close(codes)
	count := map[int]int{}
	for c := range codes {
		count[c]++
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	const mb = 1 << 20
	rss := int64(-1)
	if rssReset {
		rss = peakRSS()
	}
	t.Logf("%d bombs of %d bytes: answers %v; peak RSS %d MB, Go heap taken from the OS %d MB",
		n, len(body), count, rss/mb, m.HeapSys/mb)
	if count[http.StatusRequestEntityTooLarge]+count[http.StatusServiceUnavailable] != n {
		t.Errorf("answers %v, want 413 (or 503: come back later) for all", count)
	}
	if m.HeapSys > 200*mb {
		t.Errorf("heap %d MB, want under 200 MB", m.HeapSys/mb)
	}
	if rss > 200*mb && !raceDetector {
		t.Errorf("peak RSS %d MB, want under 200 MB", rss/mb)
	}
	if st := r.Stats(); st.TooLarge != count[http.StatusRequestEntityTooLarge] || st.Busy != count[http.StatusServiceUnavailable] {
		t.Errorf("stats = %+v, answers %v", st, count)
	}
}

// peakRSS is the process's peak resident set in bytes, from
// /proc/self/status, or -1.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return -1
			}
			return kb << 10
		}
	}
	return -1
}

// hold opens a connection to r and sends the headers of a POST promising
// a 100-byte body, and 10 bytes of it.
func hold(t *testing.T, r *Receiver) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(r.Endpoint(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"resource")
	return c
}

// eventually polls cond for up to 2s, and says whether it held.
func eventually(cond func() bool) bool {
	for deadline := time.Now().Add(2 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}

// TestConcurrentBodiesAreBounded: while MaxReading bodies are being read,
// another request waits QueueWait, then gets 503 with Retry-After; once
// one is done, requests are served again.
func TestConcurrentBodiesAreBounded(t *testing.T) {
	r := listen(t, Options{MaxReading: 2, QueueWait: 200 * time.Millisecond})
	a := hold(t, r)
	hold(t, r)
	if !eventually(func() bool { return len(r.reading) == 2 }) {
		t.Error("the two bodies being read hold no reading slot")
	}
	resp := send(t, r, spanJSON(traceID(0), 10), false)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("third body: %d, Retry-After %q; want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	a.Close()
	if !eventually(func() bool { return len(r.reading) == 1 }) {
		t.Error("a body that ended still holds its slot")
	}
	if resp := send(t, r, spanJSON(traceID(1), 10), false); resp.StatusCode != http.StatusOK {
		t.Errorf("after one ended: %d", resp.StatusCode)
	}
	if st := r.Stats(); st.Busy != 1 {
		t.Errorf("stats = %+v", st)
	}
}

// TestSlowBodyIsDropped: a body that does not arrive within ReadTimeout
// is answered 408 and its connection closed, and its slot freed; headers
// that do not arrive lose their connection too.
func TestSlowBodyIsDropped(t *testing.T) {
	r := listen(t, Options{ReadTimeout: 300 * time.Millisecond})
	c := hold(t, r)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer to a slow body: %v", err)
	}
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Errorf("slow body: %d, want 408", resp.StatusCode)
	}
	if !eventually(func() bool { return len(r.reading) == 0 }) {
		t.Error("the slow body still holds its slot")
	}
	if st := r.Stats(); st.Slow != 1 {
		t.Errorf("stats = %+v", st)
	}

	h, err := net.Dial("tcp", strings.TrimPrefix(r.Endpoint(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	fmt.Fprintf(h, "POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\n")
	h.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadAll(h); err != nil {
		t.Errorf("slow headers kept their connection: %v", err)
	}
}

// TestHostHeader: only loopback names and the address listened on are
// accepted as Host, so that a page whose name was rebound to 127.0.0.1
// cannot post spans.
func TestHostHeader(t *testing.T) {
	r := listen(t, Options{})
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(r.Endpoint(), "http://"))
	for host, want := range map[string]int{
		"127.0.0.1:" + port:         http.StatusOK,
		"localhost:" + port:         http.StatusOK,
		"LOCALHOST.":                http.StatusOK,
		"[::1]:" + port:             http.StatusOK,
		"rebound.example:" + port:   http.StatusForbidden,
		"localhost.example:" + port: http.StatusForbidden,
		"10.0.0.5:" + port:          http.StatusForbidden,
	} {
		if resp := send(t, r, spanJSON(traceID(0), 10), false, "Host", host); resp.StatusCode != want {
			t.Errorf("Host %s: %d, want %d", host, resp.StatusCode, want)
		}
	}
	if st := r.Stats(); st.Refused != 3 {
		t.Errorf("stats = %+v", st)
	}
}

// addrListener is a listener that says it listens on addr.
type addrListener struct {
	net.Listener
	addr net.Addr
}

func (l addrListener) Addr() net.Addr { return l.addr }

// TestHostHeaderOnEveryInterface: listening on every interface, the
// receiver takes the machine's addresses and container names for it too,
// but still no other name; it is reached locally on the loopback address.
func TestHostHeaderOnEveryInterface(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:4318", ":4318", "[::]:4318"} {
		r := newReceiver(Options{})
		r.ln = addrListener{addr: &net.TCPAddr{IP: net.IPv4zero, Port: 4318}}
		if addr == "[::]:4318" {
			r.ln = addrListener{addr: &net.TCPAddr{IP: net.IPv6unspecified, Port: 4318}}
		}
		r.allowHosts(addr)
		if r.Exposed() != everyInterface || r.Endpoint() != "http://127.0.0.1:4318" {
			t.Errorf("%s: exposed %q, endpoint %s", addr, r.Exposed(), r.Endpoint())
		}
		for host, want := range map[string]bool{"172.17.0.1:4318": true, "host.docker.internal:4318": true, "localhost": true, "rebound.example:4318": false} {
			if r.hostOK(host) != want {
				t.Errorf("%s: Host %s accepted = %v", addr, host, !want)
			}
		}
	}
	r := newReceiver(Options{Hosts: []string{"agents.internal"}})
	r.ln = addrListener{addr: &net.TCPAddr{IP: net.IPv4(10, 0, 0, 5), Port: 4318}}
	r.allowHosts("10.0.0.5:4318")
	if r.Exposed() != "10.0.0.5" {
		t.Errorf("exposed %q", r.Exposed())
	}
	for host, want := range map[string]bool{"10.0.0.5:4318": true, "agents.internal:4318": true, "10.0.0.6:4318": false, "rebound.example": false} {
		if r.hostOK(host) != want {
			t.Errorf("10.0.0.5: Host %s accepted = %v", host, !want)
		}
	}
	if l := listen(t, Options{}); l.Exposed() != "" {
		t.Errorf("127.0.0.1 is exposed as %q", l.Exposed())
	}
}

// TestToken: with a token, requests without it, or with another, get 401
// before their body is read.
func TestToken(t *testing.T) {
	r := listen(t, Options{Token: "s3cret-token"})
	body := spanJSON(traceID(0), 10)
	for _, auth := range []string{"", "Bearer wrong", "Bearer s3cret-token-and-more", "Basic s3cret-token", "s3cret-token"} {
		resp := send(t, r, body, false, "Authorization", auth)
		if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("Authorization %q: %d, want 401", auth, resp.StatusCode)
		}
	}
	if resp := send(t, r, body, false, "Authorization", "Bearer s3cret-token"); resp.StatusCode != http.StatusOK {
		t.Errorf("with the token: %d", resp.StatusCode)
	}
	if st := r.Stats(); st.Refused != 5 || st.Received != 1 {
		t.Errorf("stats = %+v", st)
	}
}

// TestBufferedIsBounded: spans that no turn takes are kept up to
// MaxBuffered; past it the oldest traces are dropped, and counted.
func TestBufferedIsBounded(t *testing.T) {
	r := listen(t, Options{MaxBuffered: 64 << 10})
	for i := range 50 {
		if resp := send(t, r, spanJSON(traceID(i), 4<<10), false); resp.StatusCode != http.StatusOK {
			t.Fatalf("request %d: %d", i, resp.StatusCode)
		}
		r.mu.Lock()
		over := r.buffered > r.opt.MaxBuffered
		r.mu.Unlock()
		if over {
			t.Fatalf("after request %d: %d bytes buffered, over %d", i, r.buffered, r.opt.MaxBuffered)
		}
	}
	st := r.Stats()
	if st.Received != 50 || st.Dropped < 30 || st.Dropped+st.Unmatched != 50 {
		t.Errorf("stats = %+v", st)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.traces[traceID(49)] == nil || r.traces[traceID(0)] != nil {
		t.Error("the newest trace was dropped, or the oldest kept")
	}
}
