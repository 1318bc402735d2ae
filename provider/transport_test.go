package provider

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

type wrappedBody struct {
	io.Reader
	closed bool
}

func (w *wrappedBody) Close() error { w.closed = true; return nil }

// An SDK's wrapped body is swapped for a fresh copy from GetBody, so that
// net/http sees it is in memory; the caller's request is left as it was,
// and its body is closed, as the transport would have closed it.
func TestInMemoryBody(t *testing.T) {
	payload := []byte(`{"model":"m"}`)
	orig := &wrappedBody{Reader: bytes.NewReader(payload)}
	req, _ := http.NewRequest("POST", "http://127.0.0.1/v1/chat/completions", nil)
	req.Body, req.ContentLength = orig, int64(len(payload))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(payload)), nil }
	got := inMemoryBody(req)
	if got == req || req.Body != orig {
		t.Fatal("the caller's request was changed")
	}
	if !orig.closed {
		t.Error("the wrapped body was not closed")
	}
	b, _ := io.ReadAll(got.Body)
	if string(b) != string(payload) || got.ContentLength != req.ContentLength || got.GetBody == nil {
		t.Errorf("body %q, length %d", b, got.ContentLength)
	}
	// Nothing to swap: no GetBody, or no body.
	plain, _ := http.NewRequest("POST", "http://127.0.0.1/", &wrappedBody{Reader: strings.NewReader("x")})
	plain.GetBody = nil
	if inMemoryBody(plain) != plain {
		t.Error("a body without GetBody was swapped")
	}
	get, _ := http.NewRequest("GET", "http://127.0.0.1/", nil)
	if inMemoryBody(get) != get {
		t.Error("a request without a body was copied")
	}
}

// countingConn counts a client's writes.
type countingConn struct {
	net.Conn
	writes *atomic.Int32
}

func (c countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// A request through the providers' client goes out in one write, headers
// and an SDK-wrapped body together.
func TestOneWritePerRequest(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		r, err := http.ReadRequest(bufio.NewReader(c))
		if err != nil {
			return
		}
		io.Copy(io.Discard, r.Body)
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
	}()
	var writes atomic.Int32
	client := newHTTPClient(0)
	tr := client.Transport.(recordingTransport).base.(*http.Transport)
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		return countingConn{Conn: c, writes: &writes}, err
	}
	payload := bytes.Repeat([]byte("x"), 6000)
	req, _ := http.NewRequest("POST", "http://"+ln.Addr().String()+"/v1/chat/completions", nil)
	req.Body, req.ContentLength = &wrappedBody{Reader: bytes.NewReader(payload)}, int64(len(payload))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(payload)), nil }
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if n := writes.Load(); n != 1 {
		t.Errorf("the request took %d writes, want 1", n)
	}
}

// Calls in flight up to the model's concurrency keep their connections
// between waves: none is closed for want of idle room and dialled again.
func TestIdleConnectionsFollowConcurrency(t *testing.T) {
	const n = 200 // above the old fixed 128 per host
	var conns atomic.Int32
	var arrived sync.WaitGroup
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived.Done()
		arrived.Wait() // every call of the wave holds its connection at once
		io.WriteString(w, "{}")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	client := newHTTPClient(n)
	for wave := range 2 {
		arrived.Add(n)
		var done sync.WaitGroup
		for range n {
			done.Go(func() {
				resp, err := client.Get(srv.URL)
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			})
		}
		done.Wait()
		if got := conns.Load(); got != n {
			t.Fatalf("after wave %d: %d connections opened, want %d", wave+1, got, n)
		}
	}
}
