package trace

import (
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
// per line or one document, or a JSON array of them.
func openOTLP(in *input) (convReader, error) {
	return newGrouped(in, "otlp", scanOTLP)
}

var protoJSON = protojson.UnmarshalOptions{DiscardUnknown: true}

// scanOTLP walks the requests with a streaming decoder down to single
// spans and log records, so that a request of any size is never held
// whole. Each span is decoded into the official OTLP type and mapped.
func scanOTLP(r io.Reader, yield func(*record, error) bool) {
	lr := newLineReader(r)
	dec := json.NewDecoder(lr)
	w := &otlpWalker{dec: dec, lr: lr, yield: yield}
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
	dec     *json.Decoder
	lr      *lineReader
	yield   func(*record, error) bool
	stopped bool
	res     resInfo
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

func (w *otlpWalker) span() bool {
	off := w.offset()
	var raw json.RawMessage
	if err := w.dec.Decode(&raw); err != nil {
		w.fail(err)
		return false
	}
	pos := w.lr.pos(off)
	var sp tracepb.Span
	if err := protoJSON.Unmarshal(raw, &sp); err != nil {
		return w.yield(brokenRecord(pos, "span", err), nil)
	}
	return w.yield(mapSpan(&sp, w.res, pos), nil)
}

func (w *otlpWalker) logRecord() bool {
	off := w.offset()
	var raw json.RawMessage
	if err := w.dec.Decode(&raw); err != nil {
		w.fail(err)
		return false
	}
	pos := w.lr.pos(off)
	var lr logspb.LogRecord
	if err := protoJSON.Unmarshal(raw, &lr); err != nil {
		return w.yield(brokenRecord(pos, "log record", err), nil)
	}
	return w.yield(mapLog(&lr, w.res, pos), nil)
}

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
