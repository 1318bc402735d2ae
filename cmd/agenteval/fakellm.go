package main

import (
	"fmt"
	"net"
	"os"
	"time"

	"github.com/agenteval/agenteval/internal/fakellm"
	"github.com/spf13/cobra"
)

// newFakeLLMCmd serves the fake OpenAI-compatible model that the tests use,
// so judge metrics and load runs can be tried offline. It only listens on
// loopback.
func newFakeLLMCmd(e *env) *cobra.Command {
	var addr string
	var latency, window time.Duration
	var rpm, tpm int
	var statsPath string
	var structure, callTools bool
	var script, logPath, tag string
	var evidence, judgeModels []string
	cmd := &cobra.Command{
		Use:   "fakellm",
		Short: "Serve a fake OpenAI-compatible model on 127.0.0.1, for trying judge metrics offline",
		Long: `Serve a fake OpenAI-compatible chat-completions API on a loopback address.
It also serves the Responses API at /v1/responses (JSON and streaming,
store and previous_response_id), which the OpenAI Agents SDK and the Vercel
AI SDK use by default.
It answers structured-output requests with JSON generated from the schema
(every judge criterion passes), other requests with a short text, and adds
--latency to each answer. With --call-tools, a request that offers tools
and ends with the user's message gets a call to the first offered tool the
conversation has not called yet, with arguments generated from its
parameters' schema; after the result it answers in text. With --check-structure it judges like the tests'
structure-checking judge: a judge request whose prompt lets quoted material
out of its block (or shows an --evidence text outside every block) gets a
422 naming the fault, and a criterion with a phrase in double quotes passes
only when the quoted material holds that phrase. With --script FILE it plays
an agent: each step says, for a last user message matching its pattern,
which tools to call and what to say after their results:

  - when: "table for (\\w+)"
    tool_calls: [{name: book_table, arguments: {party: 2, time: 7pm}}]
    reply: Booked a table for $1.

With --judge-model NAME, requests for model NAME are answered as a judge
that passes everything: structured output with every number at its
maximum (or 1), and a request that asks for no structured output
(AgentV's llm-grader reads its verdict from plain text) with JSON in the
shape its prompt names: "score" 1, or every listed "checks" item
satisfied (or scored 10).

With --log FILE it appends one JSON line per request to FILE: time, tag,
path, client (User-Agent), model, messages (role and text), tool names,
response_format and schema name, status and the reply. A request's tag
is its X-Fakellm-Tag header, or TAG when the client's base URL is
http://ADDR/t/TAG/v1, or else --tag.

With --rpm N and --tpm N it limits requests and tokens per minute as
OpenAI does: a request over the limit gets 429 with Retry-After, and every
answer carries x-ratelimit-limit-requests, -remaining- and -reset- (and
the -tokens trio) and Anthropic's anthropic-ratelimit-* headers, so a
client can pace itself. Each limit is a bucket refilled continuously that
holds --rate-window's share of the minute's limit (default 1s: 600 a
minute is 10 at once); a request's tokens are its prompt's estimate.
With --stats FILE it appends one line a second: seconds since the start,
requests started, answered, answered 429 by the limit, and in flight.

It stands in for a model's protocol, not its judgement: every criterion
passes unless a script or --check-structure says otherwise, and a simulated
user gets the same short text each turn. Point agenteval at it with:

  export OPENAI_BASE_URL=http://127.0.0.1:8089/v1
  agenteval score data.jsonl --metric rubrics --judge openai:fake`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				return usageErr("--addr %q: %v", addr, err)
			}
			if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
				return usageErr("--addr %s is not a loopback address; the fake only serves 127.0.0.1", addr)
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return usageErr("listen on %s: %v", addr, err)
			}
			var rules []*fakellm.Rule
			if script != "" {
				if rules, err = fakellm.LoadScript(script); err != nil {
					ln.Close()
					return usageErr("%v", err)
				}
			}
			opts := fakellm.Options{Latency: latency, CallTools: callTools, NoLog: true, Tag: tag}
			if rpm < 0 || tpm < 0 {
				ln.Close()
				return usageErr("--rpm and --tpm are limits per minute: 0 (none) or more")
			}
			if rpm > 0 || tpm > 0 {
				opts.RateLimit = &fakellm.RateLimit{RequestsPerMinute: rpm, TokensPerMinute: tpm, Window: window}
			}
			var logf *os.File
			if logPath != "" {
				// Unbuffered: each line is one write, so the log is whole
				// whenever the server is stopped, even by a kill.
				if logf, err = os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err != nil {
					ln.Close()
					return usageErr("--log: %v", err)
				}
				opts.Log = logf
			}
			s := fakellm.Serve(ln, opts)
			s.Add(rules...)
			if len(judgeModels) > 0 {
				s.Add(&fakellm.Rule{Match: fakellm.IsModel(judgeModels...), Reply: fakellm.Reply{Func: fakellm.PassingVerdict}})
			}
			if structure {
				s.Add(&fakellm.Rule{Match: func(r *fakellm.Request) bool { return r.SchemaName() != "" }, Reply: fakellm.StructureJudge(evidence...)})
			}
			stopStats := func() error { return nil }
			if statsPath != "" {
				if stopStats, err = writeFakeStats(s, statsPath); err != nil {
					s.Close()
					return usageErr("--stats: %v", err)
				}
			}
			fmt.Fprintf(e.stdout, "fake OpenAI-compatible server at %s\nexport OPENAI_BASE_URL=%s\n", s.URL, s.URL)
			<-cmd.Context().Done()
			s.Close()
			fmt.Fprintf(e.stderr, "served %d requests", s.Calls())
			if n := s.Stats().Limited; opts.RateLimit != nil {
				fmt.Fprintf(e.stderr, ", %d answered 429 by the rate limit", n)
			}
			fmt.Fprintln(e.stderr)
			if err := stopStats(); err != nil {
				return fmt.Errorf("--stats %s: %w", statsPath, err)
			}
			if logf != nil {
				if err := logf.Close(); err != nil {
					return fmt.Errorf("--log %s: %w", logPath, err)
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8089", "loopback address to listen on (port 0 picks a free one)")
	cmd.Flags().DurationVar(&latency, "latency", 0, "delay added to every answer, to model a real provider")
	cmd.Flags().BoolVar(&structure, "check-structure", false, "judge only prompts whose quoted material stays in its blocks; answer 422 otherwise")
	cmd.Flags().BoolVar(&callTools, "call-tools", false, "answer a request that offers tools with a call to the next tool not called yet (arguments from its schema), then text after its result")
	cmd.Flags().StringVar(&script, "script", "", "play an agent from a YAML script: steps of {when: regexp on the last user message, tool_calls: [{name, arguments}], reply: text}")
	cmd.Flags().StringVar(&logPath, "log", "", "append one JSON line per request (what was asked and answered) to this file")
	cmd.Flags().StringVar(&tag, "tag", "", "with --log: the tag of requests that carry none (no X-Fakellm-Tag header, no /t/TAG/ path)")
	cmd.Flags().StringArrayVar(&judgeModels, "judge-model", nil, "answer requests for this model as a judge that passes everything, plain-text ones with the JSON verdict their prompt asks for (repeatable)")
	cmd.Flags().IntVar(&rpm, "rpm", 0, "limit requests per minute as OpenAI does: 429 with Retry-After above it, x-ratelimit-* headers on every answer (0: no limit)")
	cmd.Flags().IntVar(&tpm, "tpm", 0, "limit tokens per minute (a request's prompt estimate), as --rpm does requests (0: no limit)")
	cmd.Flags().DurationVar(&window, "rate-window", time.Second, "with --rpm or --tpm: the share of a minute's limit that may come at once")
	cmd.Flags().StringVar(&statsPath, "stats", "", "append one line a second to this file: seconds, requests started, answered, answered 429, in flight")
	cmd.Flags().StringArrayVar(&evidence, "evidence", nil, "with --check-structure: text that must appear only inside a prompt's blocks (repeatable)")
	return cmd
}

// writeFakeStats appends the fake's counts to path once a second, until
// the returned stop is called; stop writes a last line and closes the
// file.
func writeFakeStats(s *fakellm.Server, path string) (func() error, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	begin := time.Now()
	line := func() error {
		st := s.Stats()
		_, err := fmt.Fprintf(f, "%.1f %d %d %d %d\n", time.Since(begin).Seconds(), st.Started, st.Answered, st.Limited, st.InFlight())
		return err
	}
	done, stopped := make(chan struct{}), make(chan error, 1)
	go func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		var werr error
		for {
			select {
			case <-tick.C:
				if err := line(); err != nil && werr == nil {
					werr = err
				}
			case <-done:
				if err := line(); err != nil && werr == nil {
					werr = err
				}
				stopped <- werr
				return
			}
		}
	}()
	return func() error {
		close(done)
		err := <-stopped
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}, nil
}
