package otlpreceiver

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/agenteval/agenteval/trace"
)

// FuzzHandle posts arbitrary bodies as OTLP JSON and protobuf, traces and
// logs: the receiver answers 200 or 400, never panics, and whatever it
// accepted builds into a conversation without panicking.
func FuzzHandle(f *testing.F) {
	for _, p := range []string{"../trace/testdata/otel_genai.jsonl", "../trace/testdata/otel_events.jsonl"} {
		if b, err := os.ReadFile(p); err == nil {
			line, _, _ := bytes.Cut(b, []byte("\n"))
			f.Add(line, true)
		}
	}
	f.Add([]byte{0x0a, 0x02, 0x0a, 0x00}, false)
	f.Add([]byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"zz"}]}]}]}`), true)
	r := newReceiver(Options{})
	f.Fuzz(func(t *testing.T, body []byte, isJSON bool) {
		ctype := "application/x-protobuf"
		if isJSON {
			ctype = "application/json"
		}
		for _, traces := range []bool{true, false} {
			req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
			req.Header.Set("Content-Type", ctype)
			w := httptest.NewRecorder()
			r.handle(traces)(w, req)
			if w.Code != http.StatusOK && w.Code != http.StatusBadRequest {
				t.Fatalf("status %d", w.Code)
			}
		}
		r.mu.Lock()
		var all []trace.Span
		for id, b := range r.traces {
			for _, s := range b.spans {
				all = append(all, s.Span)
			}
			r.remove(id)
		}
		r.convs = map[string]map[string]bool{}
		r.mu.Unlock()
		if s, _ := trace.Build("c", all); s != nil {
			_ = s.UserInput.Pretty()
		}
	})
}
