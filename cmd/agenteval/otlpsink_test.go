package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpSink is an OTLP/HTTP endpoint for scripts: it keeps the spans it is
// sent, decoded with the official OTLP types.
type otlpSink struct {
	mu    sync.Mutex
	spans []*tracepb.Span
}

var (
	sinksMu sync.Mutex
	sinks   = map[*testscript.TestScript]*otlpSink{}
)

func (s *otlpSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	data, _ := io.ReadAll(r.Body)
	var req coltracepb.ExportTraceServiceRequest
	if r.URL.Path != "/v1/traces" || proto.Unmarshal(data, &req) != nil {
		http.Error(w, "not an OTLP protobuf trace export", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			s.spans = append(s.spans, ss.Spans...)
		}
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
}

// otlpSinkCmd: "otlpsink start" sets $OTLP_SINK to a fresh sink's URL;
// "otlpsink dump" prints one line per span received, sorted: its name, its
// attributes, and each event with its attributes.
func otlpSinkCmd(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: otlpsink start|dump")
	}
	switch args[0] {
	case "start":
		s := &otlpSink{}
		srv := httptest.NewServer(s)
		ts.Defer(srv.Close)
		sinksMu.Lock()
		sinks[ts] = s
		sinksMu.Unlock()
		ts.Setenv("OTLP_SINK", srv.URL)
	case "dump":
		sinksMu.Lock()
		s := sinks[ts]
		sinksMu.Unlock()
		if s == nil {
			ts.Fatalf("otlpsink dump before otlpsink start")
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		var lines []string
		for _, sp := range s.spans {
			line := "span " + sp.Name + " " + kvs(sp.Attributes)
			for _, ev := range sp.Events {
				line += " | event " + ev.Name + " " + kvs(ev.Attributes)
			}
			lines = append(lines, line)
		}
		sort.Strings(lines)
		fmt.Fprintln(ts.Stdout(), strings.Join(lines, "\n"))
	default:
		ts.Fatalf("unknown otlpsink command %q", args[0])
	}
}

func kvs(attrs []*commonpb.KeyValue) string {
	var parts []string
	for _, kv := range attrs {
		v := kv.Value
		var s string
		switch x := v.Value.(type) {
		case *commonpb.AnyValue_StringValue:
			s = fmt.Sprintf("%q", x.StringValue)
		case *commonpb.AnyValue_DoubleValue:
			s = fmt.Sprint(x.DoubleValue)
		case *commonpb.AnyValue_IntValue:
			s = fmt.Sprint(x.IntValue)
		case *commonpb.AnyValue_BoolValue:
			s = fmt.Sprint(x.BoolValue)
		}
		parts = append(parts, kv.Key+"="+s)
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}
