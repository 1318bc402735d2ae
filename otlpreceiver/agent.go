package otlpreceiver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
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
	// being exported; 0 means 1s.
	Wait time.Duration
	// Settle is how long no new span may arrive before the turn's spans
	// count as complete; 0 means 150ms.
	Settle time.Duration
}

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
	if err != nil || resp == nil {
		a.Receiver.take(req.ConversationID, traceID, sent)
		return resp, err
	}
	spans := a.collect(ctx, req.ConversationID, traceID, spanID, sent)
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

func (a *Agent) collect(ctx context.Context, conv, traceID, spanID string, sent time.Time) []trace.Span {
	wait, settle := a.Wait, a.Settle
	if wait <= 0 {
		wait = time.Second
	}
	if settle <= 0 {
		settle = 150 * time.Millisecond
	}
	deadline := time.Now().Add(wait)
	for {
		n, last, root, arrived := a.Receiver.pending(conv, traceID, spanID, sent)
		now := time.Now()
		quiet := now.Sub(last)
		switch {
		case root && quiet >= 20*time.Millisecond:
			return a.Receiver.take(conv, traceID, sent)
		case n > 0 && quiet >= settle:
			return a.Receiver.take(conv, traceID, sent)
		case !now.Before(deadline):
			return a.Receiver.take(conv, traceID, sent)
		}
		next := deadline
		if n > 0 {
			next = last.Add(settle)
			if root {
				next = last.Add(20 * time.Millisecond)
			}
			if next.After(deadline) {
				next = deadline
			}
		}
		t := time.NewTimer(time.Until(next))
		select {
		case <-arrived:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return a.Receiver.take(conv, traceID, sent)
		}
		t.Stop()
	}
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
