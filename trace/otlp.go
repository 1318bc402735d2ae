package trace

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/agenteval/agenteval"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
)

// openOTLP reads a file of OTLP JSON export requests (traces or logs), one
// per line or one document, or a JSON array of them; or a dump of spans
// (see spandump.go).
func openOTLP(in *input) (convReader, error) {
	return newGrouped(in, "otlp", scanOTLP)
}

var protoJSON = protojson.UnmarshalOptions{DiscardUnknown: true}

// scanOTLP walks the requests with a streaming decoder down to single
// spans and log records, so that a request of any size is never held
// whole. Each span is decoded into the official OTLP type and mapped.
func scanOTLP(r io.Reader, keysOnly bool, yield func(*record, error) bool) {
	br := bufio.NewReaderSize(r, 1<<20)
	if peekSpanDump(br) {
		scanSpanDump(br, keysOnly, yield)
		return
	}
	if firstLineIsValue(br) {
		scanOTLPLines(br, keysOnly, yield)
		return
	}
	lr := newLineReader(br)
	dec := json.NewDecoder(lr)
	w := &otlpWalker{dec: dec, lr: lr, yield: yield, keysOnly: keysOnly}
	for {
		start := w.offset()
		t, err := dec.Token()
		if err == io.EOF {
			return
		}
		if err != nil {
			w.fail(err)
			return
		}
		switch t {
		case json.Delim('{'):
			if !w.request() {
				return
			}
		case json.Delim('['):
			for dec.More() {
				if !w.expect('{') || !w.request() {
					return
				}
			}
			if !w.expect(']') {
				return
			}
		default:
			w.yield(nil, &agenteval.PosError{Line: w.lr.pos(start).Line, Col: w.lr.pos(start).Col,
				Msg: "expected an OTLP export request, a JSON object with resourceSpans or resourceLogs"})
			return
		}
	}
}

type otlpWalker struct {
	dec      *json.Decoder
	lr       *lineReader
	yield    func(*record, error) bool
	stopped  bool
	res      resInfo
	keysOnly bool
}

// resInfo is what a resource tells about the spans under it.
type resInfo struct {
	service string
}

// offset is where the next value starts: past white space and a comma
// the decoder has not consumed yet.
func (w *otlpWalker) offset() int64 {
	off := w.dec.InputOffset()
	buf := w.dec.Buffered()
	var b [1]byte
	for {
		if _, err := buf.Read(b[:]); err != nil {
			return off
		}
		switch b[0] {
		case ' ', '\t', '\r', '\n', ',', ':':
			off++
			continue
		}
		return off
	}
}

func (w *otlpWalker) fail(err error) {
	if w.stopped {
		return
	}
	w.stopped = true
	p := w.lr.pos(w.dec.InputOffset())
	msg := err.Error()
	var se *json.SyntaxError
	if errors.As(err, &se) {
		p = w.lr.pos(se.Offset)
		msg = "malformed JSON: " + msg
	} else if errors.Is(err, io.ErrUnexpectedEOF) {
		msg = "the file ends in the middle of a JSON value"
	}
	w.yield(nil, &agenteval.PosError{Line: p.Line, Col: p.Col, Msg: msg + "; the rest of the file was not read"})
}

func (w *otlpWalker) expect(d json.Delim) bool {
	off := w.offset()
	t, err := w.dec.Token()
	if err != nil {
		w.fail(err)
		return false
	}
	if t != d {
		p := w.lr.pos(off)
		w.stopped = true
		w.yield(nil, &agenteval.PosError{Line: p.Line, Col: p.Col, Msg: fmt.Sprintf("expected %q here, found %v; this is not OTLP JSON", string(d), t)})
		return false
	}
	return true
}

// key reads an object key, or reports the end of the object.
func (w *otlpWalker) key() (string, bool) {
	if !w.dec.More() {
		w.dec.Token() // the closing brace
		return "", false
	}
	t, err := w.dec.Token()
	if err != nil {
		w.fail(err)
		return "", false
	}
	k, _ := t.(string)
	return k, true
}

func (w *otlpWalker) skip() bool {
	var raw json.RawMessage
	if err := w.dec.Decode(&raw); err != nil {
		w.fail(err)
		return false
	}
	return true
}

// list calls each for every element of an array value.
func (w *otlpWalker) list(each func() bool) bool {
	off := w.offset()
	t, err := w.dec.Token()
	if err != nil {
		w.fail(err)
		return false
	}
	if t == nil {
		return true
	}
	if t != json.Delim('[') {
		p := w.lr.pos(off)
		w.stopped = true
		w.yield(nil, &agenteval.PosError{Line: p.Line, Col: p.Col, Msg: "expected a list here; this is not OTLP JSON"})
		return false
	}
	for w.dec.More() {
		if !each() {
			return false
		}
	}
	_, err = w.dec.Token()
	if err != nil {
		w.fail(err)
		return false
	}
	return true
}

// object walks an object value, calling field for each key; field must
// consume the value.
func (w *otlpWalker) object(field func(k string) bool) bool {
	if !w.expect('{') {
		return false
	}
	for {
		k, ok := w.key()
		if !ok {
			return !w.stopped
		}
		if !field(k) {
			return false
		}
	}
}

// request walks an export request after its opening brace.
func (w *otlpWalker) request() bool {
	for {
		k, ok := w.key()
		if !ok {
			return !w.stopped
		}
		var good bool
		switch k {
		case "resourceSpans", "resource_spans", "batches":
			good = w.list(func() bool { return w.resource(true) })
		case "resourceLogs", "resource_logs":
			good = w.list(func() bool { return w.resource(false) })
		case "trace":
			// Tempo wraps the request as {"trace": {...}}.
			good = w.expect('{') && w.request()
		default:
			good = w.skip()
		}
		if !good {
			return false
		}
	}
}

func (w *otlpWalker) resource(spans bool) bool {
	w.res = resInfo{}
	return w.object(func(k string) bool {
		switch k {
		case "resource":
			var raw json.RawMessage
			if err := w.dec.Decode(&raw); err != nil {
				w.fail(err)
				return false
			}
			var res resourcepb.Resource
			if err := protoJSON.Unmarshal(raw, &res); err == nil {
				w.res.service = toAttrs(res.Attributes).str("service.name")
			}
			return true
		case "scopeSpans", "scope_spans", "instrumentationLibrarySpans", "scopeLogs", "scope_logs", "instrumentationLibraryLogs":
			return w.list(func() bool { return w.scope(spans) })
		}
		return w.skip()
	})
}

func (w *otlpWalker) scope(spans bool) bool {
	return w.object(func(k string) bool {
		switch k {
		case "spans":
			if spans {
				return w.list(w.span)
			}
		case "logRecords", "log_records":
			if !spans {
				return w.list(w.logRecord)
			}
		}
		return w.skip()
	})
}

func (w *otlpWalker) span() bool { return w.element(true) }

func (w *otlpWalker) logRecord() bool { return w.element(false) }

// element reads one span or log record, whole, and maps it.
func (w *otlpWalker) element(span bool) bool {
	off := w.offset()
	var raw json.RawMessage
	if err := w.dec.Decode(&raw); err != nil {
		w.fail(err)
		return false
	}
	pos := w.lr.pos(off)
	if w.keysOnly {
		return w.yield(keysOf(raw, pos), nil)
	}
	if span {
		var sp tracepb.Span
		if err := protoJSON.Unmarshal(raw, &sp); err != nil {
			return w.yield(brokenRecord(pos, "span", err), nil)
		}
		return w.yield(mapSpan(&sp, w.res, pos), nil)
	}
	var lr logspb.LogRecord
	if err := protoJSON.Unmarshal(raw, &lr); err != nil {
		return w.yield(brokenRecord(pos, "log record", err), nil)
	}
	return w.yield(mapLog(&lr, w.res, pos), nil)
}

// spanKeys is what grouping needs of a span or log record: its trace id
// and conversation id. A record that will not decode in full is found
// broken in the second pass.
type spanKeys struct {
	TraceID  string `json:"traceId"`
	TraceID2 string `json:"trace_id"`
	Attrs    []struct {
		Key   string `json:"key"`
		Value struct {
			S *string `json:"stringValue"`
		} `json:"value"`
	} `json:"attributes"`
}

func keysOf(raw []byte, pos Pos) *record {
	var k spanKeys
	if err := json.Unmarshal(raw, &k); err != nil {
		return &record{pos: pos, broken: true}
	}
	return k.record(pos)
}

func (k *spanKeys) record(pos Pos) *record {
	r := &record{pos: pos}
	id := k.TraceID
	if id == "" {
		id = k.TraceID2
	}
	if isHex(id) {
		r.trace = strings.ToLower(id)
	} else if b, err := base64.StdEncoding.DecodeString(id); err == nil {
		r.trace = hexID(b)
	}
	for _, ck := range conversationKeys {
		for _, a := range k.Attrs {
			if a.Key == ck && a.Value.S != nil && *a.Value.S != "" {
				r.conv = *a.Value.S
				return r
			}
		}
	}
	return r
}

func isHex(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
			return false
		}
	}
	return true
}

// scanOTLPLines reads JSON lines of export requests, as the Collector's
// file exporter writes them: each line is decoded whole into the official
// request type, with no second parse. A span's column is where its id is.
func scanOTLPLines(br *bufio.Reader, keysOnly bool, yield func(*record, error) bool) {
	line := 0
	for {
		data, err := br.ReadBytes('\n')
		if len(data) == 0 && err != nil {
			if err != io.EOF {
				yield(nil, err)
			}
			return
		}
		line++
		body := bytes.TrimSpace(data)
		if len(body) > 0 && !otlpLine(body, line, keysOnly, yield) {
			return
		}
		if err != nil {
			return
		}
	}
}

func otlpLine(body []byte, line int, keysOnly bool, yield func(*record, error) bool) bool {
	lead := Pos{Line: line, Col: 1}
	// A span is found by its id where it is the span's own (after a
	// "spanId" key), not a parent's. Spans come in the order they are
	// written, so each search starts where the last one ended.
	cursor := 0
	spanPos := func(id string) Pos {
		if id == "" {
			return lead
		}
		at := spanIDAt(body, id, cursor)
		if at < 0 && cursor > 0 {
			at = spanIDAt(body, id, 0)
		}
		if at < 0 {
			return lead
		}
		cursor = at
		return Pos{Line: line, Col: at + 1}
	}
	hasLogs := bytes.Contains(body, []byte(`"resourceLogs"`)) || bytes.Contains(body, []byte(`"resource_logs"`))
	hasSpans := bytes.Contains(body, []byte(`"resourceSpans"`)) || bytes.Contains(body, []byte(`"resource_spans"`))
	if !hasSpans && !hasLogs || bytes.Contains(body, []byte(`"batches"`)) {
		// Not the plain form (Tempo's wrappers, or not OTLP at all): walk
		// it token by token, which also says what is wrong.
		lr := newLineReader(bytes.NewReader(body))
		w := &otlpWalker{dec: json.NewDecoder(lr), lr: lr, keysOnly: keysOnly, yield: func(r *record, err error) bool {
			if r != nil {
				r.pos = Pos{Line: line, Col: r.pos.Col}
			}
			if pe, ok := err.(*agenteval.PosError); ok {
				pe.Line = line
			}
			return yield(r, err)
		}}
		if !w.expect('{') {
			return false
		}
		return w.request()
	}
	if keysOnly {
		var req struct {
			RS []struct {
				SS []struct {
					Spans []spanKeys `json:"spans"`
				} `json:"scopeSpans"`
			} `json:"resourceSpans"`
			RL []struct {
				SL []struct {
					Logs []spanKeys `json:"logRecords"`
				} `json:"scopeLogs"`
			} `json:"resourceLogs"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			return yield(&record{pos: lead, broken: true}, nil)
		}
		for _, rs := range req.RS {
			for _, ss := range rs.SS {
				for i := range ss.Spans {
					if !yield(ss.Spans[i].record(lead), nil) {
						return false
					}
				}
			}
		}
		for _, rl := range req.RL {
			for _, sl := range rl.SL {
				for i := range sl.Logs {
					if !yield(sl.Logs[i].record(lead), nil) {
						return false
					}
				}
			}
		}
		return true
	}
	if hasSpans {
		// TracesData has the request's fields, without gRPC's packages.
		var req tracepb.TracesData
		if err := protoJSON.Unmarshal(body, &req); err != nil {
			return yield(brokenRecord(lead, "export request", err), nil)
		}
		for _, rs := range req.ResourceSpans {
			res := resInfo{service: toAttrs(rs.GetResource().GetAttributes()).str("service.name")}
			for _, ss := range rs.ScopeSpans {
				for _, sp := range ss.Spans {
					if !yield(mapSpan(sp, res, spanPos(jsonID(sp.SpanId))), nil) {
						return false
					}
				}
			}
		}
	}
	if hasLogs {
		var req logspb.LogsData
		if err := protoJSON.Unmarshal(body, &req); err != nil {
			return yield(brokenRecord(lead, "export request", err), nil)
		}
		for _, rl := range req.ResourceLogs {
			res := resInfo{service: toAttrs(rl.GetResource().GetAttributes()).str("service.name")}
			for _, sl := range rl.ScopeLogs {
				for _, lg := range sl.LogRecords {
					if !yield(mapLog(lg, res, lead), nil) {
						return false
					}
				}
			}
		}
	}
	return true
}

// spanIDAt finds where id stands as a span's own id in body, from offset
// from on; -1 when it does not.
func spanIDAt(body []byte, id string, from int) int {
	for {
		i := bytes.Index(body[from:], []byte(`"`+id+`"`))
		if i < 0 {
			return -1
		}
		at := from + i
		before := bytes.TrimRight(body[:at], " \t\r\n")
		if bytes.HasSuffix(before, []byte(":")) {
			before = bytes.TrimRight(before[:len(before)-1], " \t\r\n")
			if bytes.HasSuffix(before, []byte(`"spanId"`)) || bytes.HasSuffix(before, []byte(`"span_id"`)) {
				return at
			}
		}
		from = at + 1
	}
}

// jsonID is an id as the JSON text spelled it: protojson read the text as
// base64, hex ids included (see hexID).
func jsonID(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func brokenRecord(pos Pos, what string, err error) *record {
	return &record{pos: pos, broken: true, problems: []problem{errAt(pos, fmt.Sprintf("this %s could not be read as OTLP JSON: %v; it is left out", what, err))}}
}

// hexID renders a trace or span id as lowercase hex. OTLP JSON writes ids
// as hex, which protojson reads as base64 (every hex digit is a base64
// letter): 32 hex digits come out as 24 bytes, 16 as 12. Encoding those
// bytes back gives the hex text. Ids of the true sizes (16 and 8 bytes,
// from protobuf or base64 JSON) are hex-encoded.
func hexID(b []byte) string {
	switch len(b) {
	case 0:
		return ""
	case 24, 12:
		return strings.ToLower(base64.StdEncoding.EncodeToString(b))
	}
	return hex.EncodeToString(b)
}
