// Package otelexport sends evaluation results to an observability backend
// as OpenTelemetry traces (agenteval run --otel, agenteval score --otel),
// built with the official Go SDK and sent over OTLP/HTTP (binary protobuf)
// by a client of its own (client.go), configured by the standard
// OTEL_EXPORTER_OTLP_* variables.
//
// Each test is one trace: a span per test, a child span per turn (and for
// the conversation-level grading), and a child span per grader. Every
// score carries a gen_ai.evaluation.result event with
// gen_ai.evaluation.name, gen_ai.evaluation.score.value,
// gen_ai.evaluation.score.label (pass, fail, error or skip),
// gen_ai.evaluation.explanation (the grader's reason, redacted) and
// gen_ai.response.id when the graded reply recorded one. Test spans carry
// test.suite.name, test.case.id and test.case.result.status, as semantic
// conventions v1.41.0 name them.
//
// It may import the root package, results, internal/redact, the
// OpenTelemetry SDK with its otlptrace exporter (not otlptracehttp, which
// links gRPC), the OTLP trace types and protobuf.
package otelexport

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/redact"
	"github.com/agenteval/agenteval/results"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// Options configure an Exporter. The zero value exports to what the
// standard OTEL_EXPORTER_OTLP_* variables say, else http://localhost:4318.
// Options win over the variables.
//
// The variables honoured, each also in its OTEL_EXPORTER_OTLP_TRACES_
// form, which wins: ENDPOINT (a base URL that /v1/traces is added to; the
// TRACES_ form is used as is), HEADERS (key=value pairs separated by
// commas, URL-encoded), TIMEOUT (milliseconds), COMPRESSION (gzip or
// none), CERTIFICATE, CLIENT_CERTIFICATE and CLIENT_KEY (PEM files, for an
// https endpoint), and PROTOCOL, which must be http/protobuf if set: grpc
// and http/json are errors, as is any value that cannot be read.
type Options struct {
	// Endpoint is the OTLP/HTTP base URL (such as http://127.0.0.1:4318);
	// traces go to its /v1/traces. Empty leaves it to the environment.
	Endpoint string
	// Headers are sent with every export (such as an API key), over
	// those OTEL_EXPORTER_OTLP_HEADERS names. Their values, and the
	// variable's, are hidden from every message.
	Headers map[string]string
	// ServiceName names the resource; empty means OTEL_SERVICE_NAME, else
	// "agenteval".
	ServiceName string
	// Version is the agenteval version, for service.version.
	Version string
	// Timeout bounds each export, retries included; 0 means
	// OTEL_EXPORTER_OTLP_TIMEOUT, else 10s.
	Timeout time.Duration
}

// Exporter is a report.Writer that turns each result into a trace.
type Exporter struct {
	tp     *sdktrace.TracerProvider
	tracer trace.Tracer
	mu     sync.Mutex
	n      int
	err    error // the last export error
}

// New starts an exporter. Spans are batched and sent in the background;
// Close flushes them.
func New(ctx context.Context, opt Options) (*Exporter, error) {
	cfg, err := configure(opt)
	if err != nil {
		return nil, fmt.Errorf("otel export: %w", err)
	}
	exp, err := otlptrace.New(ctx, newClient(cfg))
	if err != nil {
		return nil, fmt.Errorf("otel export: %w", err)
	}
	attrs := []attribute.KeyValue{semconv.TelemetrySDKLanguageGo}
	if opt.ServiceName != "" {
		attrs = append(attrs, semconv.ServiceName(opt.ServiceName))
	}
	if opt.Version != "" {
		attrs = append(attrs, semconv.ServiceVersion(opt.Version))
	}
	res, err := resource.New(ctx, resource.WithFromEnv(), resource.WithAttributes(attrs...))
	if err != nil {
		res = resource.NewSchemaless(attrs...)
	}
	if opt.ServiceName == "" {
		if v, ok := res.Set().Value(semconv.ServiceNameKey); !ok || v.AsString() == "" || strings.HasPrefix(v.AsString(), "unknown_service") {
			res, _ = resource.Merge(res, resource.NewSchemaless(semconv.ServiceName("agenteval")))
		}
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	e := &Exporter{tp: tp, tracer: tp.Tracer("github.com/agenteval/agenteval/otelexport")}
	// The SDK reports failed background exports to a global handler that
	// would log them; keep the last one for Close to return instead.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		e.mu.Lock()
		e.err = err
		e.mu.Unlock()
	}))
	return e, nil
}

// Write exports one result as a trace. The test span ends when the result
// arrives and starts its duration earlier; child spans start with it and
// last as long as their grading did.
func (e *Exporter) Write(r *agenteval.Result) error {
	end := time.Now()
	start := end.Add(-ms(r.DurationMS))
	ctx, span := e.tracer.Start(context.Background(), "test "+r.TestID, trace.WithTimestamp(start), trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(testAttrs(r)...))
	score := agenteval.Score{Name: "score", Type: "test", Score: r.Score, Verdict: r.Verdict, Reason: r.Error}
	addEvaluation(span, score, responseID(r.Output, 0))
	turns := turnReplies(r.Output)
	for _, s := range r.Scores {
		turn := 0
		if n, ok := strings.CutPrefix(s.Name, "turn-"); ok {
			turn, _ = strconv.Atoi(n)
		}
		e.scoreSpan(ctx, start, s, responseIDFrom(turns, turn, r.Output))
	}
	if r.ExecutionStatus == agenteval.StatusExecutionError {
		span.SetStatus(codes.Error, redact.String(firstLine(r.Error)))
	}
	span.End(trace.WithTimestamp(end))
	e.mu.Lock()
	e.n++
	e.mu.Unlock()
	return nil
}

// scoreSpan exports a score: a turn, the conversation, or a grader, with
// its nested scores as children.
func (e *Exporter) scoreSpan(ctx context.Context, start time.Time, s agenteval.Score, respID string) {
	name := "grade " + s.Name
	switch {
	case strings.HasPrefix(s.Name, "turn-"):
		name = "turn " + strings.TrimPrefix(s.Name, "turn-")
	case s.Name == "conversation":
		name = "conversation"
	}
	attrs := []attribute.KeyValue{
		attribute.String("agenteval.score.name", s.Name),
		attribute.String("agenteval.score.type", s.Type),
		attribute.Float64("agenteval.score.weight", s.Weight),
		attribute.Bool("agenteval.score.required", s.Required),
	}
	if n, ok := strings.CutPrefix(s.Name, "turn-"); ok {
		if t, err := strconv.Atoi(n); err == nil {
			attrs = append(attrs, attribute.Int("agenteval.turn", t))
		}
	}
	if s.Usage != nil && (s.Usage.InputTokens > 0 || s.Usage.OutputTokens > 0) {
		attrs = append(attrs, semconv.GenAIUsageInputTokens(int(s.Usage.InputTokens)), semconv.GenAIUsageOutputTokens(int(s.Usage.OutputTokens)))
	}
	cctx, span := e.tracer.Start(ctx, name, trace.WithTimestamp(start), trace.WithAttributes(attrs...))
	addEvaluation(span, s, respID)
	children := s.Scores
	if name != "grade "+s.Name && len(children) == 0 && s.Type != "" && s.Type != "turn" && s.Type != "conversation" && s.Type != "skip" {
		// A turn graded by one grader carries its score directly: give the
		// grader its own span all the same.
		g := s
		g.Name, g.Scores = s.Type, nil
		children = []agenteval.Score{g}
	}
	for _, c := range children {
		e.scoreSpan(cctx, start, c, respID)
	}
	if s.Verdict == agenteval.VerdictError {
		span.SetStatus(codes.Error, redact.String(firstLine(s.Reason)))
	}
	span.End(trace.WithTimestamp(start.Add(ms(s.DurationMS))))
}

// addEvaluation records a score as a gen_ai.evaluation.result event.
func addEvaluation(span trace.Span, s agenteval.Score, respID string) {
	attrs := []attribute.KeyValue{
		semconv.GenAIEvaluationName(s.Name),
		semconv.GenAIEvaluationScoreValue(s.Score),
		semconv.GenAIEvaluationScoreLabel(string(s.Verdict)),
	}
	if s.Reason != "" {
		attrs = append(attrs, semconv.GenAIEvaluationExplanation(redact.String(s.Reason)))
	}
	if respID != "" {
		attrs = append(attrs, semconv.GenAIResponseID(respID))
	}
	if s.Verdict == agenteval.VerdictError {
		attrs = append(attrs, semconv.ErrorTypeOther)
	}
	span.AddEvent("gen_ai.evaluation.result", trace.WithAttributes(attrs...))
}

func testAttrs(r *agenteval.Result) []attribute.KeyValue {
	status := semconv.TestCaseResultStatusFail
	if r.Verdict == agenteval.VerdictPass {
		status = semconv.TestCaseResultStatusPass
	}
	attrs := []attribute.KeyValue{
		semconv.TestSuiteName(r.Suite),
		attribute.String("test.case.id", r.TestID),
		semconv.TestCaseName(r.TestID),
		status,
		attribute.String("agenteval.verdict", string(r.Verdict)),
		attribute.String("agenteval.execution_status", string(r.ExecutionStatus)),
		attribute.Float64("agenteval.score", r.Score),
	}
	if r.Target != "" {
		attrs = append(attrs, attribute.String("agenteval.target", r.Target))
	}
	if len(r.Trials) > 0 {
		attrs = append(attrs, attribute.Int("agenteval.trials", len(r.Trials)))
	}
	if r.Usage != nil {
		attrs = append(attrs, semconv.GenAIUsageInputTokens(int(r.Usage.InputTokens)), semconv.GenAIUsageOutputTokens(int(r.Usage.OutputTokens)))
	}
	return attrs
}

// turnReplies splits a transcript after each user message, so turn k's
// reply is replies[k-1].
func turnReplies(c agenteval.Conversation) []agenteval.Conversation {
	var out []agenteval.Conversation
	for i, m := range c {
		if m.Role == agenteval.RoleUser {
			j := i + 1
			for j < len(c) && c[j].Role != agenteval.RoleUser {
				j++
			}
			out = append(out, c[i+1:j])
		}
	}
	return out
}

func responseIDFrom(turns []agenteval.Conversation, turn int, all agenteval.Conversation) string {
	if turn > 0 && turn <= len(turns) {
		return responseID(turns[turn-1], 0)
	}
	return responseID(all, 0)
}

// responseID is the response id the last assistant message recorded, as
// trace readers and the OTLP receiver keep it in its metadata.
func responseID(c agenteval.Conversation, _ int) string {
	for i := len(c) - 1; i >= 0; i-- {
		if c[i].Role == agenteval.RoleAssistant {
			id, _ := c[i].Metadata["response_id"].(string)
			return id
		}
	}
	return ""
}

// Close flushes every span and stops the exporter. An endpoint that could
// not be reached is an error, after the results were written elsewhere.
func (e *Exporter) Close(*results.Summary) error {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	err := e.tp.ForceFlush(ctx)
	if serr := e.tp.Shutdown(ctx); err == nil {
		err = serr
	}
	e.mu.Lock()
	if err == nil {
		err = e.err
	}
	e.mu.Unlock()
	if err != nil {
		return fmt.Errorf("otel export: %s; the results were not all sent", redact.String(err.Error()))
	}
	return nil
}

func ms(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
