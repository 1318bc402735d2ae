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
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/agenteval/agenteval/trace"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// The receiver is reachable by anything that can open a connection to it,
// so what one sender can make it hold is bounded: each of these is the
// default of the Options field of the same meaning.
const (
	// DefaultMaxBody bounds one request, counted after gzip inflation: a
	// 61 KB gzip of zeros inflates to 60 MB. The OpenTelemetry Collector
	// takes 20 MiB by default; exporters batch far less.
	DefaultMaxBody = 16 << 20
	// DefaultMaxReading bounds the bodies read and decoded at once, so
	// that the bodies in memory are at most this many times MaxBody.
	DefaultMaxReading = 8
	// DefaultQueueWait is how long a request waits for one of those slots
	// before it is told to come back (503 with Retry-After, which OTLP
	// exporters honour).
	DefaultQueueWait = 2 * time.Second
	// DefaultMaxBuffered bounds the spans waiting for a turn to take them;
	// past it the oldest traces are dropped.
	DefaultMaxBuffered = 256 << 20
	// DefaultReadTimeout bounds the time to send a whole request: an
	// exporter gives up after 10s by default, so a body still coming
	// after that is sent by nobody who waits for the answer.
	DefaultReadTimeout = 15 * time.Second
)

// Options are what a receiver accepts; the zero value takes the defaults.
type Options struct {
	// Token, when set, must come with every request as
	// "Authorization: Bearer <Token>"; others get 401.
	Token string
	// Hosts are Host header names accepted besides loopback names and
	// addresses and the address listened on; others get 403, so that a
	// web page cannot reach the receiver through a name it rebinds to
	// 127.0.0.1.
	Hosts []string
	// MaxBody bounds one request body after inflation (413 past it).
	MaxBody int64
	// MaxReading bounds the request bodies read at once.
	MaxReading int
	// QueueWait is how long a request waits for a reading slot before it
	// gets 503.
	QueueWait time.Duration
	// MaxBuffered bounds, in bytes, the spans that wait for a turn.
	MaxBuffered int64
	// ReadTimeout bounds reading one request, headers and body (408 past
	// it); headers alone get a third of it.
	ReadTimeout time.Duration
}

func (o Options) withDefaults() Options {
	if o.MaxBody <= 0 {
		o.MaxBody = DefaultMaxBody
	}
	if o.MaxReading <= 0 {
		o.MaxReading = DefaultMaxReading
	}
	if o.QueueWait <= 0 {
		o.QueueWait = DefaultQueueWait
	}
	if o.MaxBuffered <= 0 {
		o.MaxBuffered = DefaultMaxBuffered
	}
	if o.ReadTimeout <= 0 {
		o.ReadTimeout = DefaultReadTimeout
	}
	return o
}

// Receiver is an OTLP/HTTP endpoint on a local address. Spans wait in it,
// by trace, until a turn takes them; Close reports how many none took.
type Receiver struct {
	ln  net.Listener
	srv *http.Server
	opt Options
	// reading holds a token per body being read.
	reading chan struct{}
	// hosts are the Host header names accepted, lower case; anyIP accepts
	// every IP address, for a receiver listening on all interfaces.
	hosts map[string]bool
	anyIP bool
	token [sha256.Size]byte

	mu       sync.Mutex
	traces   map[string]*traceBucket // by trace id
	convs    map[string]map[string]bool
	arrived  chan struct{} // closed and replaced on every arrival
	seq      uint64        // orders arrivals, for dropping the oldest
	buffered int64         // bytes the traces are charged for
	// graded holds, for each turn's own trace once the turn has taken
	// it, when the turn's reply came: a span of it arriving after that is
	// late, and says how long the exporter held it.
	graded map[string]time.Time
	// lag is the longest an exporter held a span, from its end to its
	// arrival: how long a turn may have to wait for the rest of its
	// spans. lateLag is the longest after a reply that a late span came.
	lag, lateLag time.Duration
	// logs is set once an event has arrived: the agent sends its content
	// as events, which a turn then waits for.
	logs bool
	// refusedAt is when a request was last refused for its Host or token.
	refusedAt time.Time
	received  int
	taken     int
	late      int
	dropped   int
	rejected  int
	refused   int
	tooLarge  int
	busy      int
	slow      int
	partial   int
	empty     int
}

type traceBucket struct {
	spans []held
	last  time.Time // when the last span arrived
	seq   uint64    // the arrival that last grew it
	bytes int64     // what its spans are charged for
}

// held is a span waiting for its turn, and when it arrived.
type held struct {
	trace.Span
	at time.Time
}

// Listen starts a receiver on addr, such as 127.0.0.1:4318 (port 0 picks
// a free one), with the default bounds.
func Listen(addr string) (*Receiver, error) { return ListenWith(addr, Options{}) }

// ListenWith starts a receiver on addr with opt.
func ListenWith(addr string, opt Options) (*Receiver, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("otlp receiver: %w", err)
	}
	r := newReceiver(opt)
	r.ln = ln
	r.allowHosts(addr)
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/traces", r.handle(true))
	mux.HandleFunc("/v1/logs", r.handle(false))
	r.srv = &http.Server{
		Handler:           r.guard(mux),
		ReadHeaderTimeout: r.opt.ReadTimeout / 3,
		ReadTimeout:       r.opt.ReadTimeout,
		// The answer is a few bytes; a client that does not take it
		// must not keep the connection.
		WriteTimeout:   r.opt.ReadTimeout + 5*time.Second,
		IdleTimeout:    30 * time.Second,
		MaxHeaderBytes: 64 << 10,
	}
	go r.srv.Serve(ln)
	return r, nil
}

func newReceiver(opt Options) *Receiver {
	r := &Receiver{
		opt:     opt.withDefaults(),
		traces:  map[string]*traceBucket{},
		convs:   map[string]map[string]bool{},
		graded:  map[string]time.Time{},
		arrived: make(chan struct{}),
		hosts:   map[string]bool{},
	}
	r.reading = make(chan struct{}, r.opt.MaxReading)
	r.token = sha256.Sum256([]byte(r.opt.Token))
	return r
}

// allowHosts accepts the Host names a sender of ours may use: loopback
// ones always; the address listened on; and, listening on every
// interface, any IP address and this machine's names, since an agent in a
// container reaches it through one of those. A DNS rebinding attack
// always comes with a name of the attacker's, which none of these is.
func (r *Receiver) allowHosts(addr string) {
	for _, h := range append([]string{"localhost"}, r.opt.Hosts...) {
		r.hosts[normHost(h)] = true
	}
	if h, _, err := net.SplitHostPort(addr); err == nil && h != "" {
		r.hosts[normHost(h)] = true
	}
	if r.Exposed() == everyInterface {
		r.anyIP = true
		if name, err := os.Hostname(); err == nil {
			r.hosts[normHost(name)] = true
		}
		r.hosts["host.docker.internal"] = true
		r.hosts["host.containers.internal"] = true
	}
}

// normHost is a Host header's name, without port, brackets, case or
// trailing dot; an IP address in its canonical form.
func normHost(h string) string {
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	h = strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
	if ip, err := netip.ParseAddr(h); err == nil {
		return ip.Unmap().String()
	}
	return h
}

func (r *Receiver) hostOK(h string) bool {
	h = normHost(h)
	if h == "" {
		return false
	}
	if r.hosts[h] || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(h)
	return err == nil && (ip.IsLoopback() || r.anyIP)
}

func (r *Receiver) tokenOK(auth string) bool {
	scheme, tok, ok := strings.Cut(auth, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	// Hashes compare in constant time whatever the lengths.
	got := sha256.Sum256([]byte(strings.TrimSpace(tok)))
	return subtle.ConstantTimeCompare(got[:], r.token[:]) == 1
}

// guard refuses requests for an unexpected Host, and without the token
// when there is one, before anything of their body is read.
func (r *Receiver) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if !r.hostOK(req.Host) {
			r.refuse()
			http.Error(w, "unexpected Host header "+req.Host+": export to the address agenteval listens on", http.StatusForbidden)
			return
		}
		if r.opt.Token != "" && !r.tokenOK(req.Header.Get("Authorization")) {
			r.refuse()
			w.Header().Set("WWW-Authenticate", `Bearer realm="agenteval"`)
			http.Error(w, "this receiver takes exports with Authorization: Bearer and its token", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, req)
	})
}

const everyInterface = "every network interface"

// Exposed says where from the receiver can be reached beyond this
// machine: "" when it listens on a loopback address only, "every network
// interface", or the address it listens on.
func (r *Receiver) Exposed() string {
	ap, err := netip.ParseAddrPort(r.ln.Addr().String())
	if err != nil {
		return r.ln.Addr().String()
	}
	ip := ap.Addr().Unmap()
	switch {
	case ip.IsLoopback():
		return ""
	case ip.IsUnspecified():
		return everyInterface
	}
	return ip.String()
}

// Endpoint is the base URL agents export to, as
// OTEL_EXPORTER_OTLP_ENDPOINT takes it. A receiver on every interface is
// reached locally through the loopback address.
func (r *Receiver) Endpoint() string {
	if ap, err := netip.ParseAddrPort(r.ln.Addr().String()); err == nil && ap.Addr().IsUnspecified() {
		return fmt.Sprintf("http://127.0.0.1:%d", ap.Port())
	}
	return "http://" + r.ln.Addr().String()
}

// Limits are the bounds in effect.
func (r *Receiver) Limits() Options { return r.opt }

// Stats says how many spans and events arrived, how many turns took, how
// many came after their turn had been graded, how many were dropped to
// keep the receiver within MaxBuffered, and how many requests were
// refused and why.
type Stats struct {
	Received, Taken, Late, Unmatched, Dropped int
	// Rejected requests were not OTLP; Refused came for another Host or
	// without the token; TooLarge exceeded MaxBody; Busy found every
	// reading slot taken for QueueWait; Slow did not arrive within
	// ReadTimeout.
	Rejected, Refused, TooLarge, Busy, Slow int
	// Partial turns were graded on spans known to be incomplete (a
	// parent or a model call's content had not arrived when the wait
	// ran out); Empty turns got no span at all.
	Partial, Empty int
	// Lag is the longest an exporter held a span between its end and its
	// sending: about its batch delay. LateBy is the longest after its
	// turn's reply that a late span arrived.
	Lag, LateBy time.Duration
}

// Stats counts what the receiver has seen so far.
func (r *Receiver) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return Stats{Received: r.received, Taken: r.taken, Late: r.late, Dropped: r.dropped,
		Unmatched: r.received - r.taken - r.late - r.dropped,
		Rejected:  r.rejected, Refused: r.refused, TooLarge: r.tooLarge, Busy: r.busy, Slow: r.slow,
		Partial: r.partial, Empty: r.empty, Lag: r.lag, LateBy: r.lateLag}
}

// Close stops the receiver, waiting briefly for requests in flight.
func (r *Receiver) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return r.srv.Shutdown(ctx)
}

// errTooLarge is a body past MaxBody, once inflated.
var errTooLarge = errors.New("request body too large")

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
			r.count(&r.rejected)
			http.Error(w, "Content-Type must be application/x-protobuf or application/json", http.StatusUnsupportedMediaType)
			return
		}
		if req.ContentLength > r.opt.MaxBody {
			r.count(&r.tooLarge)
			http.Error(w, fmt.Sprintf("request body over %d bytes", r.opt.MaxBody), http.StatusRequestEntityTooLarge)
			return
		}
		// Only so many bodies are read at once; the rest wait a little,
		// then are told when to come back.
		wait := time.NewTimer(r.opt.QueueWait)
		select {
		case r.reading <- struct{}{}:
			wait.Stop()
		case <-wait.C:
			r.count(&r.busy)
			w.Header().Set("Retry-After", "1")
			http.Error(w, "busy reading other exports; retry", http.StatusServiceUnavailable)
			return
		case <-req.Context().Done():
			wait.Stop()
			return
		}
		defer func() { <-r.reading }()

		var body io.Reader = http.MaxBytesReader(w, req.Body, r.opt.MaxBody)
		if req.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(body)
			if err != nil {
				r.refuseBody(w, err, "bad gzip body")
				return
			}
			defer zr.Close()
			body = zr
		}
		data, release, err := readBody(body, r.opt.MaxBody)
		if err != nil {
			r.refuseBody(w, err, "read body")
			return
		}
		// The export requests are read as TracesData and LogsData, the
		// same messages on the wire and in JSON: the collector packages
		// that define the requests bring all of gRPC into the binary.
		var spans []trace.Span
		if traces {
			var m tracepb.TracesData
			err = unmarshal(data, isJSON, &m)
			spans = trace.SpansFromTraces(&m)
		} else {
			var m logspb.LogsData
			err = unmarshal(data, isJSON, &m)
			spans = trace.SpansFromLogs(&m)
		}
		size := int64(len(data))
		release()
		if err != nil {
			r.count(&r.rejected)
			http.Error(w, "not an OTLP export request: "+err.Error(), http.StatusBadRequest)
			return
		}
		r.add(spans, size)
		// Every span is accepted, so the response is the empty
		// Export*ServiceResponse (no partial_success): no bytes in
		// protobuf, an empty object in JSON.
		if isJSON {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte("{}"))
		} else {
			w.Header().Set("Content-Type", "application/x-protobuf")
			w.WriteHeader(http.StatusOK)
		}
	}
}

// refuseBody answers a body that could not be read: too large (413), too
// slow (408), or not what it claimed (400). The connection is closed
// after the first two, since the rest of the body is not wanted.
func (r *Receiver) refuseBody(w http.ResponseWriter, err error, what string) {
	var mbe *http.MaxBytesError
	var ne net.Error
	switch {
	case errors.Is(err, errTooLarge) || errors.As(err, &mbe):
		r.count(&r.tooLarge)
		w.Header().Set("Connection", "close")
		http.Error(w, fmt.Sprintf("request body over %d bytes, once inflated", r.opt.MaxBody), http.StatusRequestEntityTooLarge)
	case errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
		r.count(&r.slow)
		w.Header().Set("Connection", "close")
		http.Error(w, "request body too slow", http.StatusRequestTimeout)
	default:
		r.count(&r.rejected)
		http.Error(w, what+": "+err.Error(), http.StatusBadRequest)
	}
}

// chunkSize is the unit bodies are read in. Chunks are reused, so that
// bodies refused at MaxBody leave no garbage behind for the next ones.
const chunkSize = 256 << 10

var chunks = sync.Pool{New: func() any { b := make([]byte, chunkSize); return &b }}

// readBody reads r to its end, failing with errTooLarge as soon as more
// than max bytes came out of it, so an inflating reader is stopped there
// rather than read whole. release gives the memory back once data is no
// longer used.
func readBody(r io.Reader, max int64) (data []byte, release func(), err error) {
	var held []*[]byte
	release = func() {
		for _, c := range held {
			chunks.Put(c)
		}
		held = nil
	}
	var n int64
	for {
		c := chunks.Get().(*[]byte)
		held = append(held, c)
		k, err := io.ReadFull(r, *c)
		n += int64(k)
		if n > max {
			release()
			return nil, func() {}, errTooLarge
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			release()
			return nil, func() {}, err
		}
	}
	if len(held) == 1 {
		return (*held[0])[:n], release, nil
	}
	data = make([]byte, 0, n)
	for _, c := range held {
		data = append(data, (*c)[:min(int64(len(*c)), n-int64(len(data)))]...)
	}
	release()
	return data, func() {}, nil
}

var protoJSON = protojson.UnmarshalOptions{DiscardUnknown: true}

func unmarshal(data []byte, isJSON bool, m proto.Message) error {
	if isJSON {
		return protoJSON.Unmarshal(data, m)
	}
	return proto.Unmarshal(data, m)
}

// refuse counts a request refused for its Host or token, and wakes the
// turns waiting: spans refused will not come.
func (r *Receiver) refuse() {
	r.mu.Lock()
	r.refused++
	r.refusedAt = time.Now()
	close(r.arrived)
	r.arrived = make(chan struct{})
	r.mu.Unlock()
}

// count adds one to a counter of r's.
func (r *Receiver) count(n *int) {
	r.mu.Lock()
	*n++
	r.mu.Unlock()
}

// spanOverhead is what a span is charged beyond its share of the request
// it came in: the structures it is kept in.
const spanOverhead = 512

// add keeps spans until a turn takes them. They are charged for the size
// of the request they came in, shared out, and past MaxBuffered the
// traces that grew longest ago are dropped.
func (r *Receiver) add(spans []trace.Span, size int64) {
	if len(spans) == 0 {
		return
	}
	now := time.Now()
	per := size/int64(len(spans)) + spanOverhead
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	r.received += len(spans)
	for _, s := range spans {
		r.learn(s, now)
		if replied, ok := r.graded[s.TraceID()]; ok {
			// Its turn was graded without it.
			r.late++
			r.lateLag = max(r.lateLag, now.Sub(replied))
			continue
		}
		b := r.traces[s.TraceID()]
		if b == nil {
			b = &traceBucket{}
			r.traces[s.TraceID()] = b
		}
		b.spans = append(b.spans, held{s, now})
		b.last = now
		b.seq = r.seq
		b.bytes += per
		r.buffered += per
		if c := s.ConversationID(); c != "" {
			if r.convs[c] == nil {
				r.convs[c] = map[string]bool{}
			}
			r.convs[c][s.TraceID()] = true
		}
	}
	if len(r.traces) > maxTraces {
		r.prune(now.Add(-staleAfter))
	}
	if len(r.graded) > maxTraces {
		for t, at := range r.graded {
			if now.Sub(at) > staleAfter {
				delete(r.graded, t)
			}
		}
	}
	if r.buffered > r.opt.MaxBuffered {
		r.dropOldest()
	}
	close(r.arrived)
	r.arrived = make(chan struct{})
}

// maxLag bounds what is learned of an exporter's delay: a span that ended
// longer ago than this before it arrived says more about the clocks of
// two machines, or a retry, than about a schedule.
const maxLag = time.Minute

// learn notes how long the exporter held s, and whether the agent sends
// events. r.mu is held.
func (r *Receiver) learn(s trace.Span, now time.Time) {
	if s.Event() {
		r.logs = true
		return
	}
	if end := s.End(); !end.IsZero() {
		if lag := now.Sub(end); lag > 0 && lag <= maxLag {
			r.lag = max(r.lag, lag)
		}
	}
}

// dropOldest drops the traces that grew longest ago until what is kept
// fits MaxBuffered. r.mu is held.
func (r *Receiver) dropOldest() {
	ids := make([]string, 0, len(r.traces))
	for t := range r.traces {
		ids = append(ids, t)
	}
	sort.Slice(ids, func(i, j int) bool { return r.traces[ids[i]].seq < r.traces[ids[j]].seq })
	for _, t := range ids {
		if r.buffered <= r.opt.MaxBuffered {
			break
		}
		r.dropped += len(r.traces[t].spans)
		r.remove(t)
	}
	r.forgetTraces()
}

// remove forgets a trace. r.mu is held.
func (r *Receiver) remove(t string) {
	if b := r.traces[t]; b != nil {
		r.buffered -= b.bytes
		delete(r.traces, t)
	}
}

// take removes and returns the spans of a turn: all those of the trace
// the turn was sent with, and those of every trace holding a span of the
// conversation that started at or after since. Spans of those traces
// that started earlier belong to earlier turns that did not wait for
// them; they are dropped. Spans of the turn's own trace that arrive
// later are counted late, as coming after replied.
func (r *Receiver) take(conv, traceID string, since, replied time.Time) []trace.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []trace.Span
	for t, own := range r.turnTraces(conv, traceID) {
		b := r.traces[t]
		if b == nil {
			continue
		}
		for _, s := range b.spans {
			if own || !s.Start().Before(since) {
				out = append(out, s.Span)
				r.taken++
			} else {
				r.late++
			}
		}
		r.remove(t)
	}
	if traceID != "" {
		r.graded[traceID] = replied
	}
	delete(r.convs, conv)
	return out
}

// turnState is what has arrived of a turn's spans.
type turnState struct {
	n    int       // spans and events
	last time.Time // when the last of them arrived
	// complete: one span is the top of the turn (parented on the
	// traceparent it was sent with, or on nothing), it is an agent or has
	// spans under it, and every other span's parent has arrived. A parent
	// ends after its children, and an exporter sends spans in the order
	// they end, so once it is in, the turn's spans are.
	complete bool
	// missing counts spans whose parent has not arrived; awaiting counts
	// model calls whose content, sent as events, has not.
	missing, awaiting int
	arrived           <-chan struct{}
	// lag is the longest an exporter has held a span so far.
	lag time.Duration
	// refused is when an export was last refused for its Host or token.
	refused time.Time
}

// state reports what has arrived of a turn. rootSpan is the span id of
// the traceparent the turn was sent with.
func (r *Receiver) state(conv, traceID, rootSpan string, since time.Time) turnState {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := turnState{arrived: r.arrived, lag: r.lag, refused: r.refusedAt}
	var spans []trace.Span
	for t, own := range r.turnTraces(conv, traceID) {
		b := r.traces[t]
		if b == nil {
			continue
		}
		for _, s := range b.spans {
			if !own && s.Start().Before(since) {
				continue
			}
			spans = append(spans, s.Span)
			if s.at.After(st.last) {
				st.last = s.at
			}
		}
	}
	st.n = len(spans)
	ids := map[string]bool{}
	content := map[string]bool{}
	for _, s := range spans {
		if s.Event() {
			content[s.SpanID()] = true
		} else {
			ids[s.SpanID()] = true
		}
	}
	children := map[string]int{}
	var tops []trace.Span
	for _, s := range spans {
		if s.Event() {
			continue
		}
		p := s.ParentSpanID()
		switch {
		case p == "" || p == rootSpan:
			tops = append(tops, s)
		case ids[p]:
			children[p]++
		default:
			st.missing++
		}
		if r.logs && s.AwaitsContent() && !content[s.SpanID()] {
			st.awaiting++
		}
	}
	st.complete = st.missing == 0 && st.awaiting == 0 && len(tops) == 1 &&
		(tops[0].Agent() || children[tops[0].SpanID()] > 0)
	return st
}

// turnTraces are the traces a turn's spans may be in: the one it was sent
// with (true), and every one holding a span of the conversation. r.mu is
// held.
func (r *Receiver) turnTraces(conv, traceID string) map[string]bool {
	ids := map[string]bool{}
	for t := range r.convs[conv] {
		ids[t] = false
	}
	if traceID != "" {
		ids[traceID] = true
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
			r.remove(t)
		}
	}
	r.forgetTraces()
}

// forgetTraces drops from the conversations the traces no longer kept.
// r.mu is held.
func (r *Receiver) forgetTraces() {
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
