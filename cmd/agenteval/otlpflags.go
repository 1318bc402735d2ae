package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/bytesize"
	"github.com/agenteval/agenteval/otlpreceiver"
	"github.com/agenteval/agenteval/target"
	"github.com/spf13/pflag"
)

// otlpFlags run an OTLP receiver beside a run, so graders see the tool
// calls agents report only in their telemetry.
type otlpFlags struct {
	listen   string
	wait     time.Duration
	token    string
	receiver *otlpreceiver.Receiver
	stderr   io.Writer
	warned   map[string]bool
}

// tokenEnv holds the --otlp-token a run takes when the flag is not given;
// a token in the environment stays out of the process list.
const tokenEnv = "AGENTEVAL_OTLP_TOKEN"

func (f *otlpFlags) add(fl *pflag.FlagSet) {
	fl.StringVar(&f.listen, "otlp-listen", "", "receive the agent's OpenTelemetry traces and logs over OTLP/HTTP on this address (such as 127.0.0.1:4318, or just a port, on the loopback address) during the run; graders then see the tool calls its spans record. :PORT or 0.0.0.0:PORT listens on every network interface")
	fl.DurationVar(&f.wait, "otlp-wait", otlpreceiver.DefaultWait, "with --otlp-listen: the longest a turn waits after the reply for spans still being exported; a turn whose spans are all in (a top span with everything under it) closes at once. The default covers OpenTelemetry's 5s batch export delay")
	fl.StringVar(&f.token, "otlp-token", "", "with --otlp-listen: take only exports sent with Authorization: Bearer TOKEN (default $"+tokenEnv+"); a command target is given it in OTEL_EXPORTER_OTLP_HEADERS")
}

func (f *otlpFlags) start(stderr io.Writer) error {
	if f.listen == "" {
		if f.token != "" {
			return usageErr("--otlp-token needs --otlp-listen")
		}
		return nil
	}
	if f.wait < 0 {
		return usageErr("--otlp-wait %s is negative", f.wait)
	}
	token := f.token
	if token == "" {
		token = os.Getenv(tokenEnv)
	}
	for _, c := range token {
		if c <= ' ' || c > '~' {
			return usageErr("the OTLP token (--otlp-token or $%s) may hold only visible ASCII characters, no spaces", tokenEnv)
		}
	}
	addr := f.listen
	// A bare port is on the loopback address: only this machine may send.
	if _, err := strconv.ParseUint(addr, 10, 16); err == nil {
		addr = "127.0.0.1:" + addr
	}
	r, err := otlpreceiver.ListenWith(addr, otlpreceiver.Options{Token: token})
	if err != nil {
		return usageErr("--otlp-listen %s: %v; choose another address or stop what uses it", f.listen, err)
	}
	f.token = token
	f.receiver = r
	f.stderr = stderr
	// Said when the receiver starts, not when the run ends.
	if where := r.Exposed(); where != "" {
		hint := " and --otlp-token (or $" + tokenEnv + ") to require a token"
		if token != "" {
			hint = ""
		}
		fmt.Fprintf(stderr, "agenteval: warning: --otlp-listen %s listens on %s: other machines can send spans to this run (use 127.0.0.1:PORT to keep it to this one%s)\n", f.listen, where, hint)
	}
	return nil
}

// wrap makes the agent's spans part of its replies. A command agent also
// gets the environment OpenTelemetry SDKs read: where to export, without
// waiting seconds between batches, and with message content.
func (f *otlpFlags) wrap(a agenteval.Agent) agenteval.Agent {
	if f.receiver == nil {
		return a
	}
	if c, ok := a.(*target.CommandAgent); ok {
		env := map[string]string{}
		for k, v := range c.Env {
			env[k] = v
		}
		for k, v := range map[string]string{
			"OTEL_EXPORTER_OTLP_ENDPOINT":                        f.receiver.Endpoint(),
			"OTEL_EXPORTER_OTLP_PROTOCOL":                        "http/protobuf",
			"OTEL_BSP_SCHEDULE_DELAY":                            "100",
			"OTEL_BLRP_SCHEDULE_DELAY":                           "100",
			"OTEL_SEMCONV_STABILITY_OPT_IN":                      "gen_ai_latest_experimental",
			"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true",
		} {
			if _, set := env[k]; !set {
				env[k] = v
			}
		}
		if f.token != "" {
			env["OTEL_EXPORTER_OTLP_HEADERS"] = withAuth(env["OTEL_EXPORTER_OTLP_HEADERS"], f.token)
		}
		c.Env = env
		f.checkSchedule(env)
	}
	return &otlpreceiver.Agent{Inner: a, Receiver: f.receiver, Wait: f.wait}
}

// checkSchedule warns, once per setting, when a command target's own
// export delay (OTEL_BSP_SCHEDULE_DELAY, or OTEL_BLRP_SCHEDULE_DELAY for
// events, in milliseconds) is longer than --otlp-wait: its spans would
// come after its turns are graded.
func (f *otlpFlags) checkSchedule(env map[string]string) {
	for _, k := range []string{"OTEL_BSP_SCHEDULE_DELAY", "OTEL_BLRP_SCHEDULE_DELAY"} {
		ms, err := strconv.ParseFloat(strings.TrimSpace(env[k]), 64)
		if err != nil || ms <= 0 {
			continue
		}
		delay := time.Duration(ms * float64(time.Millisecond))
		key := k + "=" + env[k]
		if delay < f.wait || f.warned[key] || f.stderr == nil {
			continue
		}
		if f.warned == nil {
			f.warned = map[string]bool{}
		}
		f.warned[key] = true
		fmt.Fprintf(f.stderr, "agenteval: warning: the target exports every %s (%s) but --otlp-wait is %s: spans of a turn may come after it is graded; raise --otlp-wait above %s\n",
			delay, key, f.wait, delay)
	}
}

func (f *otlpFlags) stop(e *env, quiet bool) {
	if f.receiver == nil {
		return
	}
	f.receiver.Close()
	st := f.receiver.Stats()
	if quiet {
		return
	}
	msg := fmt.Sprintf("otlp: %d spans and events received on %s, %d matched a turn", st.Received, f.receiver.Endpoint(), st.Taken)
	if st.Late > 0 {
		msg += fmt.Sprintf("; %d arrived after their turn was graded", st.Late)
		if st.LateBy > 0 {
			msg += fmt.Sprintf(", up to %s after its reply", st.LateBy.Round(time.Millisecond))
		}
		msg += " (raise --otlp-wait, or have the agent flush its spans before it replies)"
	}
	if st.Partial > 0 {
		msg += fmt.Sprintf("; %d turns were graded on a partial trace (each says so in its reply's metadata %q)", st.Partial, otlpreceiver.WarningKey)
	}
	switch {
	case st.Empty > 0 && st.Received > 0:
		msg += fmt.Sprintf("; %d turns got no span", st.Empty)
	case st.Received == 0 && st.Refused+st.Rejected+st.TooLarge+st.Busy+st.Slow == 0:
		msg += fmt.Sprintf(" (none came within --otlp-wait %s of a reply: check that the agent exports to %s, as OTEL_EXPORTER_OTLP_ENDPOINT says, and how long it holds spans, as OTEL_BSP_SCHEDULE_DELAY says)", f.wait, f.receiver.Endpoint())
	}
	if st.Unmatched > 0 {
		msg += fmt.Sprintf("; %d matched none (give them gen_ai.conversation.id = the request's conversation_id, or parent them on its traceparent)", st.Unmatched)
	}
	if st.Dropped > 0 {
		msg += fmt.Sprintf("; %d dropped unmatched to keep what waits for a turn under %s", st.Dropped, bytesize.Format(f.receiver.Limits().MaxBuffered))
	}
	if st.Rejected > 0 {
		msg += fmt.Sprintf("; %d requests refused (not OTLP)", st.Rejected)
	}
	if st.Refused > 0 {
		msg += fmt.Sprintf("; %d requests refused for a missing or wrong token or an unexpected Host header", st.Refused)
	}
	if st.TooLarge > 0 {
		msg += fmt.Sprintf("; %d requests refused as over %s once inflated", st.TooLarge, bytesize.Format(f.receiver.Limits().MaxBody))
	}
	if st.Busy > 0 {
		msg += fmt.Sprintf("; %d requests told to retry while %d others were read", st.Busy, f.receiver.Limits().MaxReading)
	}
	if st.Slow > 0 {
		msg += fmt.Sprintf("; %d requests dropped for taking over %s", st.Slow, f.receiver.Limits().ReadTimeout)
	}
	fmt.Fprintln(e.stderr, msg)
	// The exporter's delay, learned from how long it held spans, against
	// the wait.
	if lag := max(st.Lag, st.LateBy); lag > f.wait && (st.Late > 0 || st.Partial > 0 || st.Empty > 0) {
		fmt.Fprintf(e.stderr, "agenteval: warning: spans came up to %s after they ended or after their turn's reply, longer than --otlp-wait %s; raise --otlp-wait to %s\n",
			lag.Round(time.Millisecond), f.wait, (lag + time.Second).Truncate(time.Second))
	}
}

// withAuth adds the bearer token to an OTEL_EXPORTER_OTLP_HEADERS value
// (comma-separated key=value, values percent-encoded), unless the target
// already sends an Authorization header of its own.
func withAuth(headers, token string) string {
	for _, kv := range strings.Split(headers, ",") {
		if k, _, _ := strings.Cut(kv, "="); strings.EqualFold(strings.TrimSpace(k), "authorization") {
			return headers
		}
	}
	auth := "Authorization=Bearer%20" + percentEncode(token)
	if strings.TrimSpace(headers) == "" {
		return auth
	}
	return headers + "," + auth
}

// percentEncode escapes all but the unreserved characters of RFC 3986,
// which the SDKs decode in header values.
func percentEncode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}
