package otlpreceiver

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// The receiver reads export requests as TracesData and LogsData and writes
// its responses by hand; an exporter speaks the collector's request and
// response types. This checks, with those official types, that each side
// reads what the other writes, in both encodings.
func TestCollectorTypesOnTheWire(t *testing.T) {
	r := listen(t, Options{})
	str := func(s string) *commonpb.AnyValue {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: s}}
	}
	attrs := []*commonpb.KeyValue{{Key: "gen_ai.conversation.id", Value: str("wire#1")}, {Key: "gen_ai.operation.name", Value: str("chat")}}
	traceID := bytes.Repeat([]byte{7}, 16)
	traces := &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{{
		TraceId: traceID, SpanId: bytes.Repeat([]byte{1}, 8), Name: "chat", Attributes: attrs, StartTimeUnixNano: 1, EndTimeUnixNano: 2,
	}}}}}}}
	logs := &collogspb.ExportLogsServiceRequest{ResourceLogs: []*logspb.ResourceLogs{{ScopeLogs: []*logspb.ScopeLogs{{LogRecords: []*logspb.LogRecord{{
		TraceId: traceID, SpanId: bytes.Repeat([]byte{1}, 8), EventName: "gen_ai.user.message", Attributes: attrs, Body: str("hi"),
	}}}}}}}
	for _, tc := range []struct {
		path string
		req  proto.Message
		resp proto.Message
	}{
		{"/v1/traces", traces, &coltracepb.ExportTraceServiceResponse{}},
		{"/v1/logs", logs, &collogspb.ExportLogsServiceResponse{}},
	} {
		for _, isJSON := range []bool{false, true} {
			ctype, body := "application/x-protobuf", must(proto.Marshal(tc.req))
			if isJSON {
				ctype, body = "application/json", must(protojson.Marshal(tc.req))
			}
			resp, err := http.Post(r.Endpoint()+tc.path, ctype, bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			out, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != ctype {
				t.Fatalf("%s json=%v: %d %s %q", tc.path, isJSON, resp.StatusCode, resp.Header.Get("Content-Type"), out)
			}
			if isJSON {
				err = protojson.Unmarshal(out, tc.resp)
			} else {
				err = proto.Unmarshal(out, tc.resp)
			}
			if err != nil {
				t.Errorf("%s json=%v: response %q: %v", tc.path, isJSON, out, err)
			}
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	b := r.traces["07070707070707070707070707070707"]
	if b == nil || len(b.spans) != 4 {
		t.Fatalf("buffered for the trace: %+v (want 2 spans and 2 events)", b)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
