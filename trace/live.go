package trace

import (
	"time"

	"github.com/agenteval/agenteval"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// Span is one span or event received live (agenteval run --otlp-listen),
// reduced to what a conversation needs. Its fields say which conversation
// and trace it belongs to; Build turns a turn's spans into messages.
type Span struct {
	r *record
}

// ConversationID is the span's gen_ai.conversation.id (or session.id).
func (s Span) ConversationID() string { return s.r.conv }

// TraceID is the span's trace id, in hex.
func (s Span) TraceID() string { return s.r.trace }

// SpanID is the span's id, in hex; for an event, the span it belongs to.
func (s Span) SpanID() string { return s.r.span }

// ParentSpanID is the id of the span's parent, in hex.
func (s Span) ParentSpanID() string { return s.r.parent }

// Start is when the span started, or when the event happened.
func (s Span) Start() time.Time { return time.Unix(0, s.r.start) }

// GenAI reports whether the span carries anything of a conversation: a
// model call, a tool execution, an agent, or a message event.
func (s Span) GenAI() bool { return s.r.kind != kindOther && s.r.kind != kindIgnored }

// Agent reports whether the span is an agent invocation.
func (s Span) Agent() bool { return s.r.kind == kindAgent }

// End is when the span ended; zero when it does not say.
func (s Span) End() time.Time {
	if s.r.end == 0 {
		return time.Time{}
	}
	return time.Unix(0, s.r.end)
}

// Event reports whether this is an event (a log record) rather than a
// span; SpanID is then the span it belongs to.
func (s Span) Event() bool { return s.r.fromLogs }

// AwaitsContent reports whether the span is a model call that carries no
// messages of its own: an instrumentation that sends content as events
// (gen_ai.client.inference.operation.details, or the older per-message
// ones) sends them apart, often on another schedule.
func (s Span) AwaitsContent() bool {
	return !s.r.fromLogs && s.r.kind == kindLLM && len(s.r.input) == 0 && len(s.r.output) == 0
}

// SpansFromTraces reduces an OTLP trace export request, read as TracesData:
// the two messages are the same on the wire and in JSON (field 1,
// resourceSpans), and TracesData's package does not bring in gRPC.
func SpansFromTraces(req *tracepb.TracesData) []Span {
	var out []Span
	for _, rs := range req.GetResourceSpans() {
		res := resInfo{service: toAttrs(rs.GetResource().GetAttributes()).str("service.name")}
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				out = append(out, Span{mapSpan(sp, res, Pos{})})
			}
		}
	}
	return out
}

// SpansFromLogs reduces an OTLP logs export request, read as LogsData
// (the same message, as for SpansFromTraces); GenAI events become spans of
// the span they belong to.
func SpansFromLogs(req *logspb.LogsData) []Span {
	var out []Span
	for _, rl := range req.GetResourceLogs() {
		res := resInfo{service: toAttrs(rl.GetResource().GetAttributes()).str("service.name")}
		for _, sl := range rl.GetScopeLogs() {
			for _, lr := range sl.GetLogRecords() {
				out = append(out, Span{mapLog(lr, res, Pos{})})
			}
		}
	}
	return out
}

// Build assembles the conversation the spans record, in time order, as a
// file of them would be read; nil when none carries GenAI data. Usage is
// in its metadata, as for files; problems are messages without places.
func Build(id string, spans []Span) (*agenteval.Sample, []string) {
	if len(spans) == 0 {
		return nil, nil
	}
	recs := make([]*record, len(spans))
	for i, s := range spans {
		s.r.ord = i
		recs[i] = s.r
	}
	c := assemble("otlp", id, recs)
	if c == nil {
		return nil, nil
	}
	var probs []string
	for _, p := range c.problems {
		probs = append(probs, p.msg)
	}
	return c.sample, probs
}

// Usage returns the usage a sample's metadata records (as Build and the
// readers write it).
func Usage(s *agenteval.Sample) agenteval.Usage {
	var u agenteval.Usage
	m, _ := s.Metadata["usage"].(map[string]any)
	if n, ok := m["input_tokens"].(int64); ok {
		u.InputTokens = n
	}
	if n, ok := m["output_tokens"].(int64); ok {
		u.OutputTokens = n
	}
	return u
}
