package otlpreceiver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/trace"
)

// Agent wraps the agent under test. Each turn is sent with a fresh
// traceparent; once the agent has replied, the spans of the turn are
// collected from the receiver and what they show the agent did (its tool
// calls and their results, its token usage) is added to the reply the
// graders see. The agent itself never sees those messages: they are taken
// out of the history before it is sent.
type Agent struct {
	Inner    agenteval.Agent
	Receiver *Receiver
	// Wait bounds how long a turn waits after the reply for spans still
	// being exported; 0 means DefaultWait. A turn whose spans are all in
	// (see Receiver state: a top span with everything under it) does not
	// wait for it to run out.
	Wait time.Duration
	// Settle is how long no new span may arrive before spans that show no
	// single top span count as complete; 0 means DefaultSettle. It grows
	// to the longest the exporter has been seen to hold a span, when the
	// spans came before the reply, since more may come at its next
	// export.
	Settle time.Duration
}

// DefaultWait covers OpenTelemetry's batch span processor, which exports
// every 5 seconds unless told otherwise (OTEL_BSP_SCHEDULE_DELAY).
const DefaultWait = 6 * time.Second

// DefaultSettle is the quiet that closes a turn whose spans came after
// its reply but show no single top span.
const DefaultSettle = 150 * time.Millisecond

// WarningKey is the metadata key, on the last message of a reply, of what
// the turn's spans lacked when it was graded.
const WarningKey = "otlp_warning"

// Source marks the messages this package added to a reply, in their
// metadata under "source".
const Source = "otlp"

// Respond runs one turn of the wrapped agent and adds what its spans
// recorded.
func (a *Agent) Respond(ctx context.Context, req *agenteval.AgentRequest) (*agenteval.AgentResponse, error) {
	traceID, spanID := newID(16), newID(8)
	sent := time.Now()
	inner := *req
	inner.Messages = withoutOTLP(req.Messages)
	inner.TraceParent = "00-" + traceID + "-" + spanID + "-01"
	resp, err := a.Inner.Respond(ctx, &inner)
	replied := time.Now()
	if err != nil || resp == nil {
		a.Receiver.take(req.ConversationID, traceID, sent, replied)
		return resp, err
	}
	spans, warning := a.collect(ctx, req.ConversationID, traceID, spanID, sent, replied)
	if warning != "" && len(resp.Messages) > 0 {
		last := &resp.Messages[len(resp.Messages)-1]
		if last.Metadata == nil {
			last.Metadata = map[string]any{}
		}
		last.Metadata[WarningKey] = warning
	}
	if len(spans) == 0 {
		return resp, nil
	}
	merge(resp, spans, req.ConversationID)
	return resp, nil
}

// CloseConversation passes the end of a conversation on.
func (a *Agent) CloseConversation(id string) error {
	if c, ok := a.Inner.(agenteval.Closer); ok {
		return c.CloseConversation(id)
	}
	return nil
}

// afterReply is how long after the reply an export must come to have
// been made after it, and so to hold every span that had ended by then.
const afterReply = 50 * time.Millisecond

// collect waits for the turn's spans and takes them. The turn closes as
// soon as they are complete (see turnState); else once they have been
// quiet long enough; else when the wait runs out, with a warning when
// they are known to lack something.
func (a *Agent) collect(ctx context.Context, conv, traceID, spanID string, sent, replied time.Time) ([]trace.Span, string) {
	wait, settle := a.Wait, a.Settle
	if wait <= 0 {
		wait = DefaultWait
	}
	if settle <= 0 {
		settle = DefaultSettle
	}
	deadline := replied.Add(wait)
	for {
		st := a.Receiver.state(conv, traceID, spanID, sent)
		now := time.Now()
		// Spans that came only before the reply may be the first export
		// of several: wait as long as the exporter holds spans.
		quiet := settle
		if !st.last.After(replied.Add(afterReply)) {
			quiet = min(max(settle, st.lag+settle), wait)
		}
		from := st.last
		if replied.After(from) {
			from = replied
		}
		next := deadline
		switch {
		case st.complete:
			return a.take(conv, traceID, sent, replied, ""), ""
		case !now.Before(deadline):
			w := a.shortfall(st, wait)
			return a.take(conv, traceID, sent, replied, w), w
		case st.n == 0 && st.refused.After(sent):
			// The agent's exports are being refused (a wrong token, an
			// unexpected Host): its spans will not come.
			if !now.Before(st.refused.Add(settle)) {
				w := "no span of this turn was taken: the receiver refused the agent's exports (see the run's otlp line)"
				return a.take(conv, traceID, sent, replied, w), w
			}
			if st.refused.Add(settle).Before(deadline) {
				next = st.refused.Add(settle)
			}
		case st.n > 0 && st.missing == 0 && st.awaiting == 0:
			if !now.Before(from.Add(quiet)) {
				return a.take(conv, traceID, sent, replied, ""), ""
			}
			if from.Add(quiet).Before(deadline) {
				next = from.Add(quiet)
			}
		}
		t := time.NewTimer(time.Until(next))
		select {
		case <-st.arrived:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return a.take(conv, traceID, sent, replied, ""), ""
		}
		t.Stop()
	}
}

// take takes the turn's spans, counting it partial or empty as warning
// says.
func (a *Agent) take(conv, traceID string, sent, replied time.Time, warning string) []trace.Span {
	spans := a.Receiver.take(conv, traceID, sent, replied)
	if warning != "" {
		a.Receiver.mu.Lock()
		if len(spans) == 0 {
			a.Receiver.empty++
		} else {
			a.Receiver.partial++
		}
		a.Receiver.mu.Unlock()
	}
	return spans
}

// shortfall says what a turn's spans lacked when the wait ran out; ""
// when nothing is known to be missing.
func (a *Agent) shortfall(st turnState, wait time.Duration) string {
	var what []string
	if st.n == 0 {
		return fmt.Sprintf("no span of this turn arrived within --otlp-wait %s: its tool calls are what the reply says", wait)
	}
	if st.missing > 0 {
		what = append(what, fmt.Sprintf("%d spans whose parent span had not arrived", st.missing))
	}
	if st.awaiting > 0 {
		what = append(what, fmt.Sprintf("%d model calls whose content events had not arrived", st.awaiting))
	}
	if len(what) == 0 {
		return ""
	}
	return fmt.Sprintf("graded on a partial trace: %s when --otlp-wait %s ran out (raise it, or have the agent flush its spans before it replies)",
		strings.Join(what, " and "), wait)
}

// merge adds to a reply what the turn's spans show. A reply that already
// reports tool calls is trusted as it is; one that does not gets the
// calls and results the spans recorded, before its own messages. Usage
// the reply does not report comes from the model calls' spans.
func merge(resp *agenteval.AgentResponse, spans []trace.Span, conv string) {
	s, _ := trace.Build(conv, spans)
	if s == nil {
		return
	}
	if resp.Usage.InputTokens == 0 && resp.Usage.OutputTokens == 0 {
		resp.Usage = trace.Usage(s)
	}
	// The reply's response id, for evaluation results that cite it.
	if n := len(resp.Messages); n > 0 {
		if id := lastResponseID(s.UserInput); id != "" {
			last := &resp.Messages[n-1]
			if _, ok := last.Metadata["response_id"]; !ok {
				if last.Metadata == nil {
					last.Metadata = map[string]any{}
				}
				last.Metadata["response_id"] = id
			}
		}
	}
	for _, m := range resp.Messages {
		if len(m.ToolCalls) > 0 {
			return
		}
	}
	// The agent's part of the turn: what follows the last user message.
	msgs := s.UserInput
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == agenteval.RoleUser {
			msgs = msgs[i+1:]
			break
		}
	}
	// Up to the last tool result; the reply that follows is the agent's own.
	end := -1
	for i, m := range msgs {
		if m.Role == agenteval.RoleTool || len(m.ToolCalls) > 0 {
			end = i
		}
	}
	if end < 0 {
		return
	}
	var added agenteval.Conversation
	for _, m := range msgs[:end+1] {
		if m.Role != agenteval.RoleAssistant && m.Role != agenteval.RoleTool {
			continue
		}
		if m.Metadata == nil {
			m.Metadata = map[string]any{}
		}
		m.Metadata["source"] = Source
		added = append(added, m)
	}
	// A reply may not end on a tool result: when the agent said nothing
	// after the calls, its reply text stays last.
	resp.Messages = append(added, resp.Messages...)
}

// withoutOTLP drops the messages added from spans, so the agent gets the
// history it wrote.
func withoutOTLP(c agenteval.Conversation) agenteval.Conversation {
	out := make(agenteval.Conversation, 0, len(c))
	for _, m := range c {
		if src, _ := m.Metadata["source"].(string); src == Source {
			continue
		}
		out = append(out, m)
	}
	return out
}

func newID(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return strings.ToLower(hex.EncodeToString(b))
}

func lastResponseID(c agenteval.Conversation) string {
	for i := len(c) - 1; i >= 0; i-- {
		if id, ok := c[i].Metadata["response_id"].(string); ok && id != "" {
			return id
		}
	}
	return ""
}
