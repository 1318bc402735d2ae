package openai

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/fakellm"
	"github.com/agenteval/agenteval/provider"
)

// TestFailedCallSpent: a call that fails says what it spent (one call,
// its retries, its waits; $0 for the tokens of none), where
// agenteval.UsageOf finds it; a later call refused at once for the same
// fatal cause spent nothing.
func TestFailedCallSpent(t *testing.T) {
	for _, tc := range []struct {
		name        string
		fault       fakellm.Fault
		retries     int // configured
		wantRetries int
		wantFatal   bool
	}{
		{"429 every time", fakellm.FaultRateLimit, 2, 2, false},
		{"500 every time", fakellm.FaultServer, 2, 2, false},
		{"no retries", fakellm.FaultServer, -1, 0, false},
		{"rejected key", fakellm.FaultUnauthorized, 2, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := start(t, fakellm.Options{})
			s.Add(&fakellm.Rule{Reply: fakellm.Reply{Fault: tc.fault, RetryAfter: 5 * time.Millisecond}})
			m := open(t, s, func(c *provider.Config) { c.MaxRetries = tc.retries })
			_, err := m.Generate(context.Background(), ask("x"))
			u := agenteval.UsageOf(err)
			if u == nil || u.Calls != 1 || u.Retries != tc.wantRetries || u.InputTokens != 0 || u.CostUSD == nil || *u.CostUSD != 0 {
				t.Fatalf("UsageOf(%v) = %+v, want 1 call, %d retries, $0", err, u, tc.wantRetries)
			}
			if tc.wantRetries > 0 && u.WaitedMS <= 0 {
				t.Errorf("waited %vms, want the waits between attempts", u.WaitedMS)
			}
			if s.Calls() != u.Calls+u.Retries {
				t.Errorf("%d requests, usage counts %d", s.Calls(), u.Calls+u.Retries)
			}
			var fe *agenteval.FatalError
			if errors.As(err, &fe) != tc.wantFatal {
				t.Fatalf("fatal = %v, want %v", !tc.wantFatal, tc.wantFatal)
			}
			if tc.wantFatal {
				_, err := m.Generate(context.Background(), ask("x"))
				if u := agenteval.UsageOf(err); !errors.As(err, &fe) || u == nil || u.Calls != 0 || u.Retries != 0 {
					t.Errorf("second call: %v spent %+v, want nothing", err, u)
				}
			}
		})
	}
}
