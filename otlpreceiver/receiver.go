// Package otlpreceiver receives OpenTelemetry traces and logs over
// OTLP/HTTP while agenteval runs a suite (agenteval run --otlp-listen),
// and hands each turn the spans the agent under test emitted for it, so
// that graders see the tool calls and model calls the agent really made
// even when its reply carries only text.
//
// It serves POST /v1/traces and /v1/logs in both OTLP encodings (binary
// protobuf and JSON, optionally gzip-compressed), decoded with the
// official OTLP types. Spans are matched to a conversation by
// gen_ai.conversation.id (the conversation_id agenteval sends the agent)
// or by the trace of the traceparent it sends for each turn.
//
// It may import the root package, trace, the OTLP protobuf types and the
// standard library.
package otlpreceiver

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/agenteval/agenteval/trace"
	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// maxBody bounds one export request, decompressed.
const maxBody = 64 << 20

// Receiver is an OTLP/HTTP endpoint on a local address. Spans wait in it,
// by trace, until a turn takes them; Close reports how many none took.
type Receiver struct {
	ln  net.Listener
	srv *http.Server

	mu       sync.Mutex
	traces   map[string]*traceBucket // by trace id
	convs    map[string]map[string]bool
	arrived  chan struct{} // closed and replaced on every arrival
	received int
	taken    int
	late     int
	rejected int
}

type traceBucket struct {
	spans []trace.Span
	last  time.Time // when the last span arrived
}

// Listen starts a receiver on addr, such as 127.0.0.1:4318 (port 0 picks
// a free one).
func Listen(addr string) (*Receiver, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("otlp receiver: %w", err)
	}
	r := &Receiver{ln: ln, traces: map[string]*traceBucket{}, convs: map[string]map[string]bool{}, arrived: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/traces", r.handle(true))
	mux.HandleFunc("/v1/logs", r.handle(false))
	r.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go r.srv.Serve(ln)
	return r, nil
}

// Endpoint is the base URL agents export to, as
// OTEL_EXPORTER_OTLP_ENDPOINT takes it.
func (r *Receiver) Endpoint() string { return "http://" + r.ln.Addr().String() }

// Stats says how many spans and events arrived, how many turns took, how
// many came after their turn had been graded, and how many requests were
// refused.
type Stats struct {
	Received, Taken, Late, Unmatched, Rejected int
}

// Stats counts what the receiver has seen so far.
func (r *Receiver) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return Stats{Received: r.received, Taken: r.taken, Late: r.late, Unmatched: r.received - r.taken - r.late, Rejected: r.rejected}
}

// Close stops the receiver, waiting briefly for requests in flight.
func (r *Receiver) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return r.srv.Shutdown(ctx)
}

func (r *Receiver) handle(traces bool) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			http.Error(w, "OTLP export requests are POSTed", http.StatusMethodNotAllowed)
			return
		}
		ct, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type"))
		isJSON := ct == "application/json"
		if !isJSON && ct != "application/x-protobuf" {
			r.reject()
			http.Error(w, "Content-Type must be application/x-protobuf or application/json", http.StatusUnsupportedMediaType)
			return
		}
		var body io.Reader = http.MaxBytesReader(w, req.Body, maxBody)
		if req.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(body)
			if err != nil {
				r.reject()
				http.Error(w, "bad gzip body: "+err.Error(), http.StatusBadRequest)
				return
			}
			defer zr.Close()
			body = io.LimitReader(zr, maxBody)
		}
		data, err := io.ReadAll(body)
		if err != nil {
			r.reject()
			http.Error(w, "read body: "+err.Error(), http.StatusBadRequest)
			return
		}
		var spans []trace.Span
		var resp proto.Message
		if traces {
			var m coltracepb.ExportTraceServiceRequest
			err = unmarshal(data, isJSON, &m)
			spans, resp = trace.SpansFromTraces(&m), &coltracepb.ExportTraceServiceResponse{}
		} else {
			var m collogspb.ExportLogsServiceRequest
			err = unmarshal(data, isJSON, &m)
			spans, resp = trace.SpansFromLogs(&m), &collogspb.ExportLogsServiceResponse{}
		}
		if err != nil {
			r.reject()
			http.Error(w, "not an OTLP export request: "+err.Error(), http.StatusBadRequest)
			return
		}
		r.add(spans)
		var out []byte
		if isJSON {
			out, _ = protojson.Marshal(resp)
			w.Header().Set("Content-Type", "application/json")
		} else {
			out, _ = proto.Marshal(resp)
			w.Header().Set("Content-Type", "application/x-protobuf")
		}
		w.Write(out)
	}
}

var protoJSON = protojson.UnmarshalOptions{DiscardUnknown: true}

func unmarshal(data []byte, isJSON bool, m proto.Message) error {
	if isJSON {
		return protoJSON.Unmarshal(data, m)
	}
	return proto.Unmarshal(data, m)
}

func (r *Receiver) reject() {
	r.mu.Lock()
	r.rejected++
	r.mu.Unlock()
}

func (r *Receiver) add(spans []trace.Span) {
	if len(spans) == 0 {
		return
	}
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range spans {
		b := r.traces[s.TraceID()]
		if b == nil {
			b = &traceBucket{}
			r.traces[s.TraceID()] = b
		}
		b.spans = append(b.spans, s)
		b.last = now
		if c := s.ConversationID(); c != "" {
			if r.convs[c] == nil {
				r.convs[c] = map[string]bool{}
			}
			r.convs[c][s.TraceID()] = true
		}
	}
	r.received += len(spans)
	if len(r.traces) > maxTraces {
		r.prune(now.Add(-staleAfter))
	}
	close(r.arrived)
	r.arrived = make(chan struct{})
}

// take removes and returns the spans of a turn: those of the trace the
// turn was sent with, and of every trace holding a span of the
// conversation, that started at or after since. Spans of those traces
// that started earlier belong to earlier turns that did not wait for
// them; they are dropped.
func (r *Receiver) take(conv, traceID string, since time.Time) []trace.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []trace.Span
	for t := range r.turnTraces(conv, traceID) {
		b := r.traces[t]
		if b == nil {
			continue
		}
		for _, s := range b.spans {
			if !s.Start().Before(since) {
				out = append(out, s)
				r.taken++
			} else {
				r.late++
			}
		}
		delete(r.traces, t)
	}
	delete(r.convs, conv)
	return out
}

// pending reports how many spans of the turn have arrived, when the last
// did, and whether the turn's top span has: the span parented on the
// traceparent the turn was sent with, or an agent invocation of the
// conversation. A parent ends after its children, so once it is in, the
// turn's spans are.
func (r *Receiver) pending(conv, traceID, rootSpan string, since time.Time) (n int, last time.Time, root bool, arrived <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for t := range r.turnTraces(conv, traceID) {
		b := r.traces[t]
		if b == nil {
			continue
		}
		for _, s := range b.spans {
			if s.Start().Before(since) {
				continue
			}
			n++
			if (rootSpan != "" && s.ParentSpanID() == rootSpan) || (s.Agent() && s.ConversationID() == conv) {
				root = true
			}
		}
		if b.last.After(last) {
			last = b.last
		}
	}
	return n, last, root, r.arrived
}

// turnTraces are the traces a turn's spans may be in: the one it was sent
// with, and every one holding a span of the conversation. r.mu is held.
func (r *Receiver) turnTraces(conv, traceID string) map[string]bool {
	ids := map[string]bool{}
	if traceID != "" {
		ids[traceID] = true
	}
	for t := range r.convs[conv] {
		ids[t] = true
	}
	return ids
}

// Traces no turn takes (an agent's own HTTP spans, say) would pile up over
// a long run: past maxTraces, those idle for staleAfter are dropped. They
// count as matching no turn.
const (
	maxTraces  = 10000
	staleAfter = 2 * time.Minute
)

// prune drops the traces that last grew before cutoff. r.mu is held.
func (r *Receiver) prune(cutoff time.Time) {
	for t, b := range r.traces {
		if b.last.Before(cutoff) {
			delete(r.traces, t)
		}
	}
	for c, ts := range r.convs {
		for t := range ts {
			if r.traces[t] == nil {
				delete(ts, t)
			}
		}
		if len(ts) == 0 {
			delete(r.convs, c)
		}
	}
}
