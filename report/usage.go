package report

import (
	"fmt"
	"time"

	"github.com/agenteval/agenteval"
)

// UsageLine describes token use and cost in one line, or "" when no model
// was called. An unknown price is said to be unknown, never shown as $0.
func UsageLine(u agenteval.Usage) string {
	if u.Calls == 0 && u.CachedCalls == 0 {
		return ""
	}
	s := fmt.Sprintf("%d model call", u.Calls)
	if u.Calls != 1 {
		s += "s"
	}
	if u.CachedCalls > 0 {
		s += fmt.Sprintf(" (+%d from cache)", u.CachedCalls)
	}
	s += fmt.Sprintf(", %d input + %d output tokens", u.InputTokens, u.OutputTokens)
	switch {
	case u.Calls == 0:
		s += ", $0 (all cached)"
	case u.CostUSD != nil:
		s += fmt.Sprintf(", $%.4f", *u.CostUSD)
	default:
		s += ", cost unknown (no price for the model; see --prices)"
	}
	if u.Retries > 0 || u.WaitedMS >= 1000 {
		s += fmt.Sprintf("; %d %s, %s waiting on backoff and rate limits", u.Retries, map[bool]string{true: "retry", false: "retries"}[u.Retries == 1], time.Duration(u.WaitedMS*float64(time.Millisecond)).Round(100*time.Millisecond))
	}
	return s
}
