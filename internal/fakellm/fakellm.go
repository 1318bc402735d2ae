// Package fakellm is an OpenAI-compatible server on 127.0.0.1 for tests
// and load runs: chat completions, and the Responses API (responses.go).
// It speaks the real wire protocol over real HTTP, both plain JSON and
// streaming (SSE), so the code under test is the code that talks to real
// providers: only the base URL differs.
//
// Responses come from scripted rules, matched per request, or from defaults:
// a structured-output request gets JSON generated from its schema. Rules can
// also inject faults (429 with Retry-After, 500, 401, a body that is not
// JSON, a hang), and every request is logged for assertions. A
// rate-limit mode (Options.RateLimit, ratelimit.go) limits requests and
// tokens per minute as OpenAI does, with its 429s and x-ratelimit-*
// headers, and Stats counts the requests in flight. StructureJudge
// (structure.go) answers judge requests only while the prompt keeps its
// quoted material inside its nonce-tagged blocks, so that any prompt that
// lets an agent's text out fails a test.
//
// It imports the standard library, and the YAML parser for scripts.
package fakellm

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Fault makes the server misbehave instead of answering.
type Fault string

// The faults a rule can inject.
const (
	FaultNone         Fault = ""
	FaultRateLimit    Fault = "429"     // 429 with Retry-After (Reply.RetryAfter, default 1s)
	FaultServer       Fault = "500"     // 500 with an error body
	FaultUnavailable  Fault = "503"     // 503 with an error body
	FaultUnauthorized Fault = "401"     // 401 invalid_api_key
	FaultGarbage      Fault = "garbage" // 200 with a body that is not JSON
	FaultHang         Fault = "hang"    // never answers; waits for the client to give up
	// FaultFailed is a model that fails mid-answer: the Responses API
	// answers 200 with status "failed" and an error object (in a stream,
	// response.failed); chat completions, which has no such state, 500.
	FaultFailed Fault = "failed"
)

// ToolCall is a tool call the fake model makes. Arguments is the raw JSON
// text, as OpenAI sends it; it may be deliberately malformed.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
}

// Reply is what a rule answers.
type Reply struct {
	Content   string
	ToolCalls []ToolCall
	// JSON, when set, is marshalled into Content.
	JSON any
	// Fault, when set, replaces the answer.
	Fault      Fault
	RetryAfter time.Duration
	// Delay is added to the server's latency for this reply.
	Delay time.Duration
	// Func computes the reply from the request; it overrides the fields above.
	Func func(*Request) Reply
	// PromptTokens and CompletionTokens override the estimated usage.
	PromptTokens, CompletionTokens int
	// Status, when set, answers with that HTTP status and ErrorMessage in
	// OpenAI's error shape.
	Status       int
	ErrorMessage string
	// Reasoning, on the Responses API, puts a reasoning item with these
	// summaries before the answer; chat completions has no place for it.
	Reasoning []string
	// Incomplete ends the answer early for this reason (max_output_tokens
	// or content_filter): the Responses API's status "incomplete", chat's
	// finish_reason "length" or "content_filter".
	Incomplete string
}

// Rule answers the requests it matches, in order of registration; the first
// rule that matches and has answers left wins.
type Rule struct {
	// Match selects requests; nil matches every request.
	Match func(*Request) bool
	// Times is how many requests the rule answers; 0 means no limit.
	Times int
	Reply Reply

	used atomic.Int64
}

// Message is a chat message as the request carried it.
type Message struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []wireToolCall  `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
}

// Text returns the message's content as text, joining content parts.
func (m Message) Text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(m.Content, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return ""
}

// Request is one logged request.
type Request struct {
	Model          string          `json:"model"`
	Messages       []Message       `json:"messages"`
	Tools          []wireTool      `json:"tools"`
	ResponseFormat *ResponseFormat `json:"response_format"`
	Temperature    *float64        `json:"temperature"`
	Stream         bool            `json:"stream"`
	StreamOptions  *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	// Header is the request's HTTP header, for checking authentication.
	Header http.Header `json:"-"`
	// Raw is the request body as sent.
	Raw []byte `json:"-"`
	// Path is the request's URL path: /v1/chat/completions, /v1/responses.
	Path string `json:"-"`
	// PreviousResponseID and Store are a Responses API request's; its
	// Messages are then the whole conversation, the stored responses'
	// input and output before the items it sent.
	PreviousResponseID string `json:"-"`
	Store              *bool  `json:"-"`
}

// ResponseFormat is the request's structured-output setting.
type ResponseFormat struct {
	Type       string `json:"type"`
	JSONSchema *struct {
		Name   string         `json:"name"`
		Schema map[string]any `json:"schema"`
		Strict bool           `json:"strict"`
	} `json:"json_schema"`
}

// Text is every message's text, joined, for matching.
func (r *Request) Text() string {
	var b strings.Builder
	for _, m := range r.Messages {
		b.WriteString(m.Text())
		b.WriteByte('\n')
	}
	return b.String()
}

// LastUser is the text of the last user message.
func (r *Request) LastUser() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Text()
		}
	}
	return ""
}

// SchemaName is the name of the requested JSON schema, or "".
func (r *Request) SchemaName() string {
	if r.ResponseFormat != nil && r.ResponseFormat.JSONSchema != nil {
		return r.ResponseFormat.JSONSchema.Name
	}
	return ""
}

// Contains matches requests whose messages contain s.
func Contains(s string) func(*Request) bool {
	return func(r *Request) bool { return strings.Contains(r.Text(), s) }
}

// SchemaNamed matches structured-output requests for the named schema.
func SchemaNamed(name string) func(*Request) bool {
	return func(r *Request) bool { return r.SchemaName() == name }
}

type wireTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string         `json:"name"`
		Description string         `json:"description,omitempty"`
		Parameters  map[string]any `json:"parameters,omitempty"`
	} `json:"function"`
}

type wireToolCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// Options configures a server.
type Options struct {
	// Latency is added to every response, to model a real provider.
	Latency time.Duration
	// APIKey, when set, is required as a Bearer token; other keys get 401.
	APIKey string
	// CallTools makes the default answer to a request that offers tools a
	// tool call (CallNextTool), so that agents driven by the fake call
	// tools.
	CallTools bool
	// NoLog keeps no request log (Requests returns nothing), for load
	// runs: a long run would hold every request it was sent.
	NoLog bool
	// Log, when set, receives one JSON line (a LogEntry) per request,
	// with its answer; NoLog does not affect it.
	Log io.Writer
	// Tag tags the Log's entries of requests that carry no tag of their
	// own (see TagHeader).
	Tag string
	// RateLimit, when set, limits requests and tokens per minute as a
	// provider does (ratelimit.go).
	RateLimit *RateLimit
}

// Server is a running fake. Its zero value is not usable; call Start.
type Server struct {
	// URL is the base URL to give an OpenAI client, ending in /v1.
	URL string

	opts  Options
	srv   *http.Server
	ln    net.Listener
	mu    sync.Mutex
	rules []*Rule
	log   []*Request
	rlog  *reqLog
	calls atomic.Int64
	stop  chan struct{}
	ids   atomic.Int64
	// late is how late the runtime's timers fire here, learned as requests
	// are served, so that the fake's latency is the latency asked for and
	// not a millisecond more: load runs measure the harness, not the fake.
	late atomic.Int64
	// stored holds the Responses API's stored responses.
	stored responseStore
	// rl is the rate-limit mode's state, nil without it; counters are
	// the Stats.
	rl *rateLimiter
	counters
}

// Start starts a server on 127.0.0.1 on a free port.
func Start(opts Options) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fakellm: listen: %w", err)
	}
	return Serve(ln, opts), nil
}

// Serve runs a server on ln, which should be a loopback listener.
func Serve(ln net.Listener, opts Options) *Server {
	s := &Server{opts: opts, ln: ln, stop: make(chan struct{})}
	if opts.RateLimit != nil {
		s.rl = newRateLimiter(*opts.RateLimit, time.Now)
	}
	if opts.Log != nil {
		s.rlog = &reqLog{w: opts.Log}
	}
	s.URL = "http://" + ln.Addr().String() + "/v1"
	mux := http.NewServeMux()
	models := func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"object": "list", "data": []any{map[string]any{"id": "fake-model", "object": "model"}}})
	}
	// The same API under /t/TAG/ tags the requests in the log.
	for _, prefix := range []string{"", "/t/{tag}"} {
		mux.HandleFunc("POST "+prefix+"/v1/chat/completions", s.handleChat)
		mux.HandleFunc("POST "+prefix+"/chat/completions", s.handleChat)
		mux.HandleFunc("POST "+prefix+"/v1/responses", s.handleResponses)
		mux.HandleFunc("POST "+prefix+"/responses", s.handleResponses)
		mux.HandleFunc("GET "+prefix+"/v1/models", models)
	}
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
	return s
}

// Close stops the server; hanging requests are released.
func (s *Server) Close() {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	s.srv.Close()
}

// Add appends rules. Rules added later are tried later.
func (s *Server) Add(rules ...*Rule) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rules = append(s.rules, rules...)
}

// Reset drops all rules and the request log.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rules = nil
	s.log = nil
	s.calls.Store(0)
}

// Requests returns a copy of the request log (empty with Options.NoLog).
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.log...)
}

// Calls is the number of requests received (chat and Responses API),
// faults included.
func (s *Server) Calls() int { return int(s.calls.Load()) }

func (s *Server) pick(req *Request) Reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.rules {
		if r.Match != nil && !r.Match(req) {
			continue
		}
		if r.Times > 0 && r.used.Load() >= int64(r.Times) {
			continue
		}
		r.used.Add(1)
		return r.Reply
	}
	return Reply{}
}

func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	s.calls.Add(1)
	var req Request
	body, err := readAll(r)
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	if err != nil {
		writeError(w, 400, "invalid_request_error", "request body is not valid JSON: "+err.Error())
		return
	}
	req.Raw, req.Header, req.Path = body, r.Header, r.URL.Path
	s.serve(w, r, &req, nil, s.answer)
}

// apiErr is an error answer in OpenAI's shape.
type apiErr struct {
	status           int
	typ, code, param string
	msg              string
}

// serve logs a parsed request and answers it: with the error reject
// (after the key is checked), with a fault or status a rule asks for, or
// with answer. Both APIs share it, so rules, faults and the log work the
// same for each.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, req *Request, reject *apiErr, answer func(http.ResponseWriter, *Request, Reply, *LogEntry)) {
	s.started.Add(1)
	defer s.answered.Add(1)
	if !s.opts.NoLog {
		req.Header = r.Header.Clone()
		s.mu.Lock()
		s.log = append(s.log, req)
		s.mu.Unlock()
	}
	// The log's line is written before the answer, so that a client that
	// has its answer finds the line in the log; a request that gets none
	// is logged when it ends.
	var le *LogEntry
	if s.rlog != nil {
		le = newLogEntry(r, req, s.opts.Tag)
		defer s.flushLog(le)
	}
	// fail answers with an error, and notes it in the log.
	fail := func(status int, code, msg string) {
		if le != nil {
			le.Status, le.Reply.Error = status, msg
			s.flushLog(le)
		}
		writeError(w, status, code, msg)
	}

	if s.opts.APIKey != "" && r.Header.Get("Authorization") != "Bearer "+s.opts.APIKey {
		fail(401, "invalid_api_key", "Incorrect API key provided.")
		return
	}
	if reject != nil {
		if le != nil {
			le.Status, le.Reply.Error = reject.status, reject.msg
			s.flushLog(le)
		}
		writeErrorShape(w, *reject)
		return
	}
	if !s.limit(w, req, fail) {
		return
	}
	reply := s.pick(req)
	if reply.Func != nil {
		reply = reply.Func(req)
	}
	if !s.sleep(r, s.opts.Latency+reply.Delay) {
		return
	}
	if reply.Status != 0 {
		fail(reply.Status, "invalid_request_error", reply.ErrorMessage)
		return
	}
	switch reply.Fault {
	case FaultRateLimit:
		ra := reply.RetryAfter
		if ra == 0 {
			ra = time.Second
		}
		secs := ra.Seconds()
		w.Header().Set("Retry-After", strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.3f", secs), "0"), "."))
		w.Header().Set("Retry-After-Ms", fmt.Sprint(ra.Milliseconds()))
		fail(429, "rate_limit_exceeded", "Rate limit reached; try again later.")
		return
	case FaultServer:
		fail(500, "server_error", "The server had an error while processing your request.")
		return
	case FaultFailed:
		if req.Path == "" || !strings.HasSuffix(req.Path, "/responses") {
			fail(500, "server_error", "The model failed to generate a response.")
			return
		}
	case FaultUnavailable:
		fail(503, "server_error", "The engine is currently overloaded.")
		return
	case FaultUnauthorized:
		fail(401, "invalid_api_key", "Incorrect API key provided.")
		return
	case FaultGarbage:
		if le != nil {
			le.Status, le.Reply.Error = 200, "a body that is not JSON"
			s.flushLog(le)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(200)
		w.Write([]byte("<html>502 Bad Gateway</html> not json {"))
		return
	case FaultHang:
		select {
		case <-r.Context().Done():
		case <-s.stop:
		}
		return
	}
	answer(w, req, reply, le)
}

// sleep waits d, or returns false when the client goes away first.
func (s *Server) sleep(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	late := time.Duration(s.late.Load())
	begin := time.Now()
	t := time.NewTimer(max(d-late, 0))
	defer t.Stop()
	select {
	case <-t.C:
		// Learn the timer's lateness: a running average, kept within half
		// the latency.
		miss := time.Since(begin) - d
		next := late + (miss)/8
		s.late.Store(int64(min(max(next, 0), d/2)))
		return true
	case <-r.Context().Done():
		return false
	case <-s.stop:
		return false
	}
}

// resolved is a reply made concrete: its text, its tool calls with ids,
// and its usage.
type resolved struct {
	content string
	calls   []wireToolCall
	usage   wireUsage
}

// resolve makes a reply concrete: the default answers (a tool call for a
// tool-calling fake, JSON for a schema, a short text), call ids, and the
// estimated usage. It notes the answer in le when the log is kept.
func (s *Server) resolve(req *Request, reply Reply, le *LogEntry) resolved {
	content := reply.Content
	if reply.JSON != nil {
		b, _ := json.Marshal(reply.JSON)
		content = string(b)
	}
	if content == "" && len(reply.ToolCalls) == 0 && s.opts.CallTools {
		if c, ok := CallNextTool(req); ok {
			reply.ToolCalls = []ToolCall{c}
		}
	}
	if content == "" && len(reply.ToolCalls) == 0 {
		content = defaultContent(req)
	}
	calls := make([]wireToolCall, len(reply.ToolCalls))
	for i, c := range reply.ToolCalls {
		calls[i].ID = c.ID
		if calls[i].ID == "" {
			calls[i].ID = fmt.Sprintf("call_%d", s.ids.Add(1))
		}
		calls[i].Type = "function"
		calls[i].Function.Name = c.Name
		calls[i].Function.Arguments = c.Arguments
	}
	if le != nil {
		le.Status, le.Reply.Content = 200, content
		for _, c := range calls {
			le.Reply.ToolCalls = append(le.Reply.ToolCalls, LogToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
		}
		s.flushLog(le)
	}
	prompt, completion := reply.PromptTokens, reply.CompletionTokens
	if prompt == 0 {
		prompt = tokensFor(len(req.Raw))
	}
	if completion == 0 {
		completion = estimateTokens(content)
		for _, c := range calls {
			completion += estimateTokens(c.Function.Name + c.Function.Arguments)
		}
	}
	usage := wireUsage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion}
	return resolved{content: content, calls: calls, usage: usage}
}

// answer writes the reply as a chat completion, and notes it in le when
// the log is kept.
func (s *Server) answer(w http.ResponseWriter, req *Request, reply Reply, le *LogEntry) {
	rs := s.resolve(req, reply, le)
	content, calls, usage := rs.content, rs.calls, rs.usage
	finish := "stop"
	switch {
	case reply.Incomplete == "max_output_tokens":
		finish = "length"
	case reply.Incomplete != "":
		finish = reply.Incomplete
	case len(calls) > 0:
		finish = "tool_calls"
	}
	id := fmt.Sprintf("chatcmpl-fake%d", s.ids.Add(1))
	model := req.Model
	if req.Stream {
		s.stream(w, id, model, content, calls, finish, usage, req.StreamOptions != nil && req.StreamOptions.IncludeUsage)
		return
	}
	out := wireCompletion{ID: id, Object: "chat.completion", Created: time.Now().Unix(), Model: model, Usage: usage,
		Choices: []wireChoice{{FinishReason: finish, Message: wireReply{Role: "assistant", ToolCalls: calls}}}}
	if content != "" {
		out.Choices[0].Message.Content = &content
	}
	writeJSON(w, 200, out)
}

// The answer to a chat request, as OpenAI writes it. Structs rather than
// maps: the fake serves load runs in the benchmarks' own process, and
// maps' sorted keys cost it more than the rest of an answer.
type wireCompletion struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []wireChoice `json:"choices"`
	Usage   wireUsage    `json:"usage"`
}

type wireChoice struct {
	Index        int       `json:"index"`
	Message      wireReply `json:"message"`
	FinishReason string    `json:"finish_reason"`
	Logprobs     *struct{} `json:"logprobs"`
}

type wireReply struct {
	Role      string         `json:"role"`
	Content   *string        `json:"content"`
	Refusal   *string        `json:"refusal"`
	ToolCalls []wireToolCall `json:"tool_calls,omitempty"`
}

type wireUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// stream writes the reply as server-sent events, the way OpenAI streams:
// a role chunk, content in pieces, tool-call deltas, a finish chunk, an
// optional usage chunk, then [DONE].
func (s *Server) stream(w http.ResponseWriter, id, model, content string, calls []wireToolCall, finish string, usage wireUsage, withUsage bool) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(200)
	fl, _ := w.(http.Flusher)
	send := func(delta map[string]any, fin any, extra map[string]any) {
		chunk := map[string]any{"id": id, "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": fin}}}
		if delta == nil {
			chunk["choices"] = []any{}
		}
		for k, v := range extra {
			chunk[k] = v
		}
		b, _ := json.Marshal(chunk)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if fl != nil {
			fl.Flush()
		}
	}
	send(map[string]any{"role": "assistant", "content": ""}, nil, nil)
	for _, piece := range split(content, 16) {
		send(map[string]any{"content": piece}, nil, nil)
	}
	for i, c := range calls {
		idx := i
		first := wireToolCall{Index: &idx, ID: c.ID, Type: "function"}
		first.Function.Name = c.Function.Name
		send(map[string]any{"tool_calls": []any{first}}, nil, nil)
		for _, piece := range split(c.Function.Arguments, 16) {
			d := wireToolCall{Index: &idx}
			d.Function.Arguments = piece
			send(map[string]any{"tool_calls": []any{d}}, nil, nil)
		}
	}
	send(map[string]any{}, finish, nil)
	if withUsage {
		send(nil, nil, map[string]any{"usage": usage})
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	if fl != nil {
		fl.Flush()
	}
}

func split(s string, n int) []string {
	var out []string
	r := []rune(s)
	for len(r) > n {
		out = append(out, string(r[:n]))
		r = r[n:]
	}
	if len(r) > 0 {
		out = append(out, string(r))
	}
	return out
}

// CallNextTool is the tool call a tool-calling fake makes: when the request
// offers tools and asks for no structured output, and its last message is
// the user's (no tool result yet in this step), it calls the first offered
// tool that no message of the conversation has called yet, with arguments
// made from the tool's parameter schema (Generate: first enum values,
// minimums, "fake" strings). Once every tool was called, or after a tool
// result, the fake answers in text. So a conversation calls each tool once,
// one a turn, in the order offered.
func CallNextTool(req *Request) (ToolCall, bool) {
	if len(req.Tools) == 0 || req.ResponseFormat != nil || len(req.Messages) == 0 || req.Messages[len(req.Messages)-1].Role != "user" {
		return ToolCall{}, false
	}
	called := map[string]bool{}
	for _, m := range req.Messages {
		for _, c := range m.ToolCalls {
			called[c.Function.Name] = true
		}
	}
	for _, t := range req.Tools {
		if called[t.Function.Name] {
			continue
		}
		params := t.Function.Parameters
		if params == nil {
			params = map[string]any{"type": "object"}
		}
		b, _ := json.Marshal(Generate(params))
		return ToolCall{Name: t.Function.Name, Arguments: string(b)}, true
	}
	return ToolCall{}, false
}

// defaultContent answers a request no rule matched: JSON generated from the
// requested schema, {} for JSON mode, and a short text otherwise.
func defaultContent(req *Request) string {
	if rf := req.ResponseFormat; rf != nil {
		switch rf.Type {
		case "json_schema":
			if rf.JSONSchema != nil {
				b, _ := json.Marshal(Generate(rf.JSONSchema.Schema))
				return string(b)
			}
		case "json_object":
			return "{}"
		}
	}
	return "This is a fake reply."
}

// Generate makes a value that satisfies a JSON schema, choosing the first
// enum value, true for booleans, the maximum of a bounded number (else its
// minimum, else 0), and "fake" for strings. It covers the
// subset of JSON Schema that structured output uses.
func Generate(schema map[string]any) any { return generate(schema, false) }

// GeneratePassing is Generate for a judge that passes everything: an
// unbounded number is 1 (a score out of 1) rather than 0.
func GeneratePassing(schema map[string]any) any { return generate(schema, true) }

func generate(schema map[string]any, passing bool) any {
	if c, ok := schema["const"]; ok {
		return c
	}
	if e, ok := schema["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if alts, ok := schema[k].([]any); ok && len(alts) > 0 {
			if m, ok := alts[0].(map[string]any); ok {
				return generate(m, passing)
			}
		}
	}
	typ := schema["type"]
	if list, ok := typ.([]any); ok && len(list) > 0 {
		typ = list[0]
	}
	switch typ {
	case "object":
		out := map[string]any{}
		props, _ := schema["properties"].(map[string]any)
		for k, v := range props {
			if m, ok := v.(map[string]any); ok {
				out[k] = generate(m, passing)
			}
		}
		return out
	case "array":
		n := 1
		if mi, ok := schema["minItems"].(float64); ok && int(mi) > n {
			n = int(mi)
		}
		items, _ := schema["items"].(map[string]any)
		out := make([]any, n)
		for i := range out {
			out[i] = generate(items, passing)
		}
		return out
	case "boolean":
		return true
	case "integer", "number":
		// A bounded number is a score: the best one, as every criterion
		// passes.
		if mx, ok := schema["maximum"].(float64); ok {
			return mx
		}
		if passing {
			return 1
		}
		if mn, ok := schema["minimum"].(float64); ok {
			return mn
		}
		return 0
	case "null":
		return nil
	}
	return "fake"
}

// estimateTokens approximates a token count as a quarter of the bytes.
func estimateTokens(s string) int { return tokensFor(len(s)) }

// tokensFor is estimateTokens for n bytes.
func tokensFor(n int) int { return (n + 3) / 4 }

// readAll reads a request's body. A body of known length is read into one
// buffer of that size: io.ReadAll's growing from 512 bytes was the largest
// allocation of a load run.
func readAll(r *http.Request) ([]byte, error) {
	defer r.Body.Close()
	if n := r.ContentLength; n > 0 && n <= 64<<20 {
		b := make([]byte, n)
		if _, err := io.ReadFull(r.Body, b); err != nil {
			return nil, err
		}
		return b, nil
	}
	return io.ReadAll(r.Body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": code, "code": code, "param": nil}})
}

// writeErrorShape writes an error whose type, code and param differ, as
// the Responses API's invalid_request_error with a code does.
func writeErrorShape(w http.ResponseWriter, e apiErr) {
	var code, param any
	if e.code != "" {
		code = e.code
	}
	if e.param != "" {
		param = e.param
	}
	writeJSON(w, e.status, map[string]any{"error": map[string]any{"message": e.msg, "type": e.typ, "code": code, "param": param}})
}

// Main starts a server with rules, points the OpenAI adapter at it
// (OPENAI_BASE_URL, OPENAI_API_KEY), keeps the judge cache in a temporary
// folder (AGENTEVAL_CACHE_DIR), runs run (a test binary's m.Run) and
// returns its exit code. Runnable examples use it, so that their code is
// what a user writes, provider.OpenSpec("openai:gpt-4o-mini") included.
func Main(run func() int, rules ...*Rule) int {
	s, err := Start(Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakellm:", err)
		return 2
	}
	defer s.Close()
	s.Add(rules...)
	dir, err := os.MkdirTemp("", "agenteval-cache-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakellm:", err)
		return 2
	}
	defer os.RemoveAll(dir)
	os.Setenv("OPENAI_BASE_URL", s.URL)
	os.Setenv("OPENAI_API_KEY", "sk-fake-for-examples")
	os.Setenv("AGENTEVAL_CACHE_DIR", dir)
	return run()
}
