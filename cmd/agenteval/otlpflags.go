package main

import (
	"fmt"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/otlpreceiver"
	"github.com/agenteval/agenteval/target"
	"github.com/spf13/pflag"
)

// otlpFlags run an OTLP receiver beside a run, so graders see the tool
// calls agents report only in their telemetry.
type otlpFlags struct {
	listen   string
	wait     time.Duration
	receiver *otlpreceiver.Receiver
}

func (f *otlpFlags) add(fl *pflag.FlagSet) {
	fl.StringVar(&f.listen, "otlp-listen", "", "receive the agent's OpenTelemetry traces and logs over OTLP/HTTP on this address (such as 127.0.0.1:4318) during the run; graders then see the tool calls its spans record")
	fl.DurationVar(&f.wait, "otlp-wait", time.Second, "with --otlp-listen: the longest a turn waits after the reply for spans still being exported")
}

func (f *otlpFlags) start() error {
	if f.listen == "" {
		return nil
	}
	if f.wait < 0 {
		return usageErr("--otlp-wait %s is negative", f.wait)
	}
	r, err := otlpreceiver.Listen(f.listen)
	if err != nil {
		return usageErr("--otlp-listen %s: %v; choose another address or stop what uses it", f.listen, err)
	}
	f.receiver = r
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
		c.Env = env
	}
	return &otlpreceiver.Agent{Inner: a, Receiver: f.receiver, Wait: f.wait}
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
		msg += fmt.Sprintf("; %d arrived after their turn was graded (raise --otlp-wait, or have the agent flush its spans before it replies)", st.Late)
	}
	if st.Unmatched > 0 {
		msg += fmt.Sprintf("; %d matched none (give them gen_ai.conversation.id = the request's conversation_id, or parent them on its traceparent)", st.Unmatched)
	}
	if st.Rejected > 0 {
		msg += fmt.Sprintf("; %d requests refused (not OTLP)", st.Rejected)
	}
	fmt.Fprintln(e.stderr, msg)
}
