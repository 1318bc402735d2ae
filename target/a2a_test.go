package target

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenteval/agenteval"
	goldenfile "github.com/agenteval/agenteval/internal/golden"
	"github.com/agenteval/agenteval/suite"
)

// a2aServer is an A2A server for tests, on 127.0.0.1: it serves an agent
// card and answers JSON-RPC calls from a script, in order, recording each
// request. Its answers copy the shapes @a2a-js/sdk 1.x serves in each
// protocol version.
type a2aServer struct {
	t   *testing.T
	srv *httptest.Server
	// card is the agent card; $URL stands for the server's URL.
	card string
	// cardAt is the path the card is served at (default
	// /.well-known/agent-card.json); cardStatus and cardType, when set,
	// replace 200 and application/json.
	cardAt     string
	cardStatus int
	cardType   string
	steps      []a2aStep

	mu   sync.Mutex
	next int
	seen []string
}

// a2aStep answers one JSON-RPC call.
type a2aStep struct {
	method string
	// result is the JSON-RPC result; rpcErr the JSON-RPC error object;
	// events the results of a stream, one SSE event each; raw the whole
	// body as is. status replaces HTTP 200. hang answers nothing until
	// the client gives up.
	result string
	rpcErr string
	events []string
	raw    string
	status int
	ctype  string
	hang   bool
	// echo answers HTTP 500 with the request's headers, as a careless
	// server might.
	echo bool
}

func newA2AServer(t *testing.T, card string, steps ...a2aStep) *a2aServer {
	s := &a2aServer{t: t, card: card, steps: steps}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// shownHeaders are the request headers a transcript shows.
var shownHeaders = []string{"Accept", "A2A-Version", "Authorization", "Content-Type", "Traceparent", "X-Api-Key"}

func (s *a2aServer) record(r *http.Request, body []byte) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", r.Method, r.URL.Path)
	for _, h := range shownHeaders {
		if v := r.Header.Get(h); v != "" {
			fmt.Fprintf(&b, "%s: %s\n", h, v)
		}
	}
	if len(body) > 0 {
		var out bytes.Buffer
		if json.Indent(&out, body, "", "  ") != nil {
			out.Write(body)
		}
		b.WriteString(out.String())
		b.WriteString("\n")
	}
	s.mu.Lock()
	s.seen = append(s.seen, b.String())
	s.mu.Unlock()
}

// transcript returns the requests recorded since the last call.
func (s *a2aServer) transcript() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := strings.Join(s.seen, "")
	s.seen = nil
	return out
}

func (s *a2aServer) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.record(r, body)
	if r.Method == http.MethodGet {
		at := s.cardAt
		if at == "" {
			at = a2aCardPath
		}
		if r.URL.Path != at {
			http.NotFound(w, r)
			return
		}
		ctype := s.cardType
		if ctype == "" {
			ctype = "application/json"
		}
		w.Header().Set("Content-Type", ctype)
		if s.cardStatus != 0 {
			w.WriteHeader(s.cardStatus)
		}
		io.WriteString(w, strings.ReplaceAll(s.card, "$URL", s.srv.URL))
		return
	}
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		s.t.Errorf("the request is not JSON: %s", body)
	}
	s.mu.Lock()
	if s.next >= len(s.steps) {
		s.mu.Unlock()
		s.t.Errorf("unexpected call %s: %s", req.Method, body)
		http.Error(w, "no more steps", http.StatusTeapot)
		return
	}
	st := s.steps[s.next]
	s.next++
	s.mu.Unlock()
	if st.method != req.Method {
		s.t.Errorf("call %d is %s, want %s", s.next, req.Method, st.method)
	}
	wrap := func(field, v string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,%q:%s}`, req.ID, field, v)
	}
	switch {
	case st.hang:
		<-r.Context().Done()
	case st.echo:
		w.WriteHeader(http.StatusInternalServerError)
		for _, h := range []string{"Authorization", "X-Agent-Ident"} {
			fmt.Fprintf(w, "%s=%s ", h, r.Header.Get(h))
		}
	case st.raw != "":
		if st.ctype != "" {
			w.Header().Set("Content-Type", st.ctype)
		}
		if st.status != 0 {
			w.WriteHeader(st.status)
		}
		io.WriteString(w, st.raw)
	case st.events != nil:
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range st.events {
			fmt.Fprintf(w, "data: %s\n\n", wrap("result", ev))
			w.(http.Flusher).Flush()
		}
	default:
		w.Header().Set("Content-Type", "application/json")
		if st.status != 0 {
			w.WriteHeader(st.status)
		}
		if st.rpcErr != "" {
			io.WriteString(w, wrap("error", st.rpcErr))
		} else {
			io.WriteString(w, wrap("result", st.result))
		}
	}
}

// testA2A is an A2A agent on the test server with known message ids.
func testA2A(s *a2aServer, headers map[string]string) *A2AAgent {
	a := NewA2A(suite.ProtocolTarget{URL: s.srv.URL, Headers: headers}, 5*time.Second)
	n := 0
	a.newID = func() string { n++; return fmt.Sprintf("msg-%d", n) }
	a.PollInterval = time.Millisecond
	return a
}

// a2aConversation runs turns of one conversation and writes a transcript:
// per turn, the requests the server saw and the agent's reply.
func a2aConversation(t *testing.T, s *a2aServer, a *A2AAgent, turns ...string) string {
	t.Helper()
	var b strings.Builder
	var history agenteval.Conversation
	for i, text := range turns {
		conv := "conv-1"
		if text == "(close)" {
			if err := a.CloseConversation(conv); err != nil {
				t.Fatal(err)
			}
			history = nil
			continue
		}
		history = append(history, agenteval.Message{Role: agenteval.RoleUser, Content: text})
		req := &agenteval.AgentRequest{ConversationID: conv, Turn: i + 1, Messages: history,
			TraceParent: fmt.Sprintf("00-4bf92f3577b34da6a3ce929d0e0e47%02d-00f067aa0ba902b7-01", i+1)}
		resp, err := a.Respond(context.Background(), req)
		if err != nil {
			t.Fatalf("turn %d: %v", i+1, err)
		}
		out, _ := json.MarshalIndent(resp, "", "  ")
		fmt.Fprintf(&b, "=== turn %d: %s\n%s--- reply\n%s\n", i+1, text, s.transcript(), out)
		history = append(history, resp.Messages...)
	}
	return b.String()
}

// The card, answers and events of spec 1.0, as @a2a-js/sdk 1.x writes
// them (ProtoJSON: wrapped results, enum names, parts without "kind").
const (
	card10 = `{"name":"Restaurant agent","description":"Books tables.","version":"1.0.0",
"supportedInterfaces":[
 {"url":"$URL/grpc","protocolBinding":"GRPC","protocolVersion":"1.0"},
 {"url":"$URL/rpc","protocolBinding":"JSONRPC","tenant":"acme","protocolVersion":"1.0"},
 {"url":"$URL/rpc","protocolBinding":"JSONRPC","protocolVersion":"0.3"}],
"capabilities":{"streaming":false,"pushNotifications":false,"extensions":[],"extendedAgentCard":false},
"securitySchemes":{"bearer":{"scheme":{"$case":"httpAuthSecurityScheme","value":{"description":"","scheme":"Bearer","bearerFormat":""}}}},
"securityRequirements":[{"schemes":{"bearer":{"list":[]}}}],
"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[],"signatures":[]}`

	find10 = `{"task":{"id":"task-1","contextId":"ctx-1","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2026-01-01T00:00:00Z"},
"artifacts":[{"artifactId":"art-1","name":"answer","parts":[{"text":"I found Trattoria Roma.","mediaType":"text/plain"},{"data":{"restaurants":["Trattoria Roma"]},"mediaType":"application/json"}]}],
"history":[
 {"messageId":"msg-1","contextId":"ctx-1","taskId":"task-1","role":"ROLE_USER","parts":[{"text":"Find an Italian restaurant in Lisbon for 4 people."}]},
 {"messageId":"agent-1","contextId":"ctx-1","taskId":"task-1","role":"ROLE_AGENT","parts":[{"data":{"id":"call_1","name":"find_restaurants","args":{"cuisine":"italian","city":"Lisbon"}},"metadata":{"adk_type":"function_call"},"mediaType":"application/json"}]},
 {"messageId":"agent-2","contextId":"ctx-1","taskId":"task-1","role":"ROLE_AGENT","parts":[{"data":{"id":"call_1","name":"find_restaurants","response":{"restaurants":["Trattoria Roma"]}},"metadata":{"adk_type":"function_response"},"mediaType":"application/json"}]},
 {"messageId":"agent-3","contextId":"ctx-1","taskId":"task-1","role":"ROLE_AGENT","parts":[{"text":"Let me look.","metadata":{"adk_thought":true}}]}],
"metadata":{"usage":{"input_tokens":120,"output_tokens":30}}}}`

	working10 = `{"task":{"id":"task-2","contextId":"ctx-1","status":{"state":"TASK_STATE_WORKING"},
"history":[{"messageId":"msg-2","contextId":"ctx-1","taskId":"task-2","role":"ROLE_USER","parts":[{"text":"Book it at 8pm."}]}]}}`

	stillWorking10 = `{"id":"task-2","contextId":"ctx-1","status":{"state":"TASK_STATE_WORKING","message":{"messageId":"agent-4","contextId":"ctx-1","taskId":"task-2","role":"ROLE_AGENT","parts":[{"data":{"id":"call_2","name":"check_availability","args":{"restaurant":"Trattoria Roma","time":"20:00","party_size":4}},"metadata":{"adk_type":"function_call"}}]}}}`

	asks10 = `{"id":"task-2","contextId":"ctx-1","status":{"state":"TASK_STATE_INPUT_REQUIRED","message":{"messageId":"agent-6","contextId":"ctx-1","taskId":"task-2","role":"ROLE_AGENT","parts":[{"text":"Under which name?"}]}},
"history":[
 {"messageId":"msg-2","contextId":"ctx-1","taskId":"task-2","role":"ROLE_USER","parts":[{"text":"Book it at 8pm."}]},
 {"messageId":"agent-4","contextId":"ctx-1","taskId":"task-2","role":"ROLE_AGENT","parts":[{"data":{"id":"call_2","name":"check_availability","args":{"restaurant":"Trattoria Roma","time":"20:00","party_size":4}},"metadata":{"adk_type":"function_call"}}]},
 {"messageId":"agent-5","contextId":"ctx-1","taskId":"task-2","role":"ROLE_AGENT","parts":[{"data":{"id":"call_2","name":"check_availability","response":{"available":true}},"metadata":{"adk_type":"function_response"}}]},
 {"messageId":"agent-6","contextId":"ctx-1","taskId":"task-2","role":"ROLE_AGENT","parts":[{"text":"Under which name?"}]}]}`

	booked10 = `{"message":{"messageId":"agent-7","contextId":"ctx-1","taskId":"task-2","role":"ROLE_AGENT","parts":[{"text":"Booked for 4 under Ana."}]}}`

	fresh10 = `{"message":{"messageId":"agent-8","contextId":"ctx-2","role":"ROLE_AGENT","parts":[{"text":"Hello again."}]}}`
)

// TestA2AWire10 pins what is sent and read in spec 1.0 without streaming:
// the card's first JSON-RPC interface and its tenant, SendMessage with
// the conversation's contextId and the waiting task's taskId, GetTask
// polling, ADK function parts, artifacts, a direct message reply, and a
// closed conversation starting afresh.
func TestA2AWire10(t *testing.T) {
	s := newA2AServer(t, card10,
		a2aStep{method: "SendMessage", result: find10},
		a2aStep{method: "SendMessage", result: working10},
		a2aStep{method: "GetTask", result: stillWorking10},
		a2aStep{method: "GetTask", result: asks10},
		a2aStep{method: "SendMessage", result: booked10},
		a2aStep{method: "SendMessage", result: fresh10},
	)
	a := testA2A(s, map[string]string{"Authorization": "Bearer test-token"})
	got := a2aConversation(t, s, a,
		"Find an Italian restaurant in Lisbon for 4 people.",
		"Book it at 8pm.",
		"Ana.",
		"(close)",
		"Hello?")
	goldenfile.Check(t, filepath.Join("testdata", "a2a", "wire10.golden"), []byte(got))
}

// The card, answers and events of spec 0.3 ("kind" on everything,
// lower-case roles and states, results unwrapped).
const (
	card03 = `{"protocolVersion":"0.3.0","name":"Restaurant agent","description":"Books tables.","version":"1.0.0",
"url":"$URL/rpc","preferredTransport":"JSONRPC","additionalInterfaces":[{"url":"$URL/rest","transport":"HTTP+JSON"}],
"capabilities":{"streaming":true},
"securitySchemes":{"key":{"type":"apiKey","in":"header","name":"X-API-Key"}},"security":[{"key":[]}],
"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[]}`

	submitted03  = `{"kind":"task","id":"task-1","contextId":"ctx-1","status":{"state":"submitted"},"history":[{"kind":"message","messageId":"msg-1","role":"user","parts":[{"kind":"text","text":"Find an Italian restaurant in Lisbon for 4 people."}],"contextId":"ctx-1","taskId":"task-1"}]}`
	call03       = `{"kind":"status-update","taskId":"task-1","contextId":"ctx-1","status":{"state":"working","message":{"kind":"message","messageId":"agent-1","role":"agent","parts":[{"kind":"data","data":{"name":"find_restaurants","args":{"cuisine":"italian","city":"Lisbon"}},"metadata":{"adk_type":"function_call"}}],"contextId":"ctx-1","taskId":"task-1"}},"final":false,"metadata":{"adk_usage_metadata":{"promptTokenCount":100,"candidatesTokenCount":7,"totalTokenCount":107}}}`
	response03   = `{"kind":"status-update","taskId":"task-1","contextId":"ctx-1","status":{"state":"working","message":{"kind":"message","messageId":"agent-2","role":"agent","parts":[{"kind":"data","data":{"name":"find_restaurants","response":{"restaurants":["Trattoria Roma"]}},"metadata":{"adk_type":"function_response"}}],"contextId":"ctx-1","taskId":"task-1"}},"final":false}`
	answer03     = `{"kind":"status-update","taskId":"task-1","contextId":"ctx-1","status":{"state":"working","message":{"kind":"message","messageId":"agent-3","role":"agent","parts":[{"kind":"text","text":"I found Trattoria Roma."}],"contextId":"ctx-1","taskId":"task-1"}},"final":false,"metadata":{"adk_usage_metadata":{"promptTokenCount":130,"candidatesTokenCount":9,"thoughtsTokenCount":4}}}`
	chunk1of2_03 = `{"kind":"artifact-update","taskId":"task-1","contextId":"ctx-1","artifact":{"artifactId":"art-1","parts":[{"kind":"text","text":"I found "}]},"append":false,"lastChunk":false}`
	chunk2of2_03 = `{"kind":"artifact-update","taskId":"task-1","contextId":"ctx-1","artifact":{"artifactId":"art-1","parts":[{"kind":"text","text":"Trattoria Roma."}]},"append":true,"lastChunk":true}`
	completed03  = `{"kind":"status-update","taskId":"task-1","contextId":"ctx-1","status":{"state":"completed"},"final":true}`
	submitted03b = `{"kind":"task","id":"task-2","contextId":"ctx-1","status":{"state":"submitted"}}`
	asks03       = `{"kind":"status-update","taskId":"task-2","contextId":"ctx-1","status":{"state":"input-required","message":{"kind":"message","messageId":"agent-4","role":"agent","parts":[{"kind":"text","text":"Under which name?"}],"contextId":"ctx-1","taskId":"task-2"}},"final":true}`
	stale03      = `{"kind":"task","id":"task-2","contextId":"ctx-1","status":{"state":"input-required","message":{"kind":"message","messageId":"agent-4","role":"agent","parts":[{"kind":"text","text":"Under which name?"}],"contextId":"ctx-1","taskId":"task-2"}}}`
	resumed03    = `{"kind":"status-update","taskId":"task-2","contextId":"ctx-1","status":{"state":"working"},"final":false}`
	taskBooked03 = `{"kind":"task","id":"task-2","contextId":"ctx-1","status":{"state":"completed"},"artifacts":[{"artifactId":"art-2","name":"booking","parts":[{"kind":"data","data":{"confirmation":"R-1001","party_size":4}}]}],"history":[{"kind":"message","messageId":"msg-2","role":"user","parts":[{"kind":"text","text":"Book it at 8pm."}]},{"kind":"message","messageId":"agent-4","role":"agent","parts":[{"kind":"text","text":"Under which name?"}]},{"kind":"message","messageId":"msg-3","role":"user","parts":[{"kind":"text","text":"Ana."}]},{"kind":"message","messageId":"agent-5","role":"agent","parts":[{"kind":"data","data":{"name":"book_table","args":{"name":"Ana","party_size":4}},"metadata":{"adk_type":"function_call"}},{"kind":"data","data":{"name":"book_table","response":{"confirmation":"R-1001"}},"metadata":{"adk_type":"function_response"}}]}]}`
)

// TestA2AWire03 pins spec 0.3 with streaming: the card's url and
// preferredTransport, message/stream, 0.3 events, ADK function parts
// without ids, usage from ADK's event metadata, artifact chunks, an
// input-required task continued in the next turn, a stream that opens
// with the stale task and ends before the task does (then tasks/get).
func TestA2AWire03(t *testing.T) {
	s := newA2AServer(t, card03,
		a2aStep{method: "message/stream", events: []string{submitted03, call03, response03, answer03, chunk1of2_03, chunk2of2_03, completed03}},
		a2aStep{method: "message/stream", events: []string{submitted03b, asks03}},
		a2aStep{method: "message/stream", events: []string{stale03, resumed03}},
		a2aStep{method: "tasks/get", result: taskBooked03},
	)
	a := testA2A(s, map[string]string{"X-API-Key": "key-0123456789"})
	got := a2aConversation(t, s, a,
		"Find an Italian restaurant in Lisbon for 4 people.",
		"Book it at 8pm.",
		"Ana.")
	goldenfile.Check(t, filepath.Join("testdata", "a2a", "wire03.golden"), []byte(got))
}

// TestA2ACardForms checks which interface and version each card form
// leads to, and the card errors.
func TestA2ACardForms(t *testing.T) {
	for _, tc := range []struct {
		name, card           string
		url, version, tenant string
		header               string // A2A-Version
		streaming            bool
		err                  string
	}{
		{name: "1.0 first JSON-RPC entry wins", card: `{"supportedInterfaces":[{"url":"http://h/v03","protocolBinding":"JSONRPC","protocolVersion":"0.3"},{"url":"http://h/v10","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"capabilities":{"streaming":true}}`,
			url: "http://h/v03", version: a2aV03, header: "0.3", streaming: true},
		{name: "tenant", card: `{"supportedInterfaces":[{"url":"http://h/rpc","protocolBinding":"jsonrpc","protocolVersion":"1.0","tenant":"t1"}]}`,
			url: "http://h/rpc", version: a2aV10, header: "1.0", tenant: "t1"},
		{name: "unknown versions are skipped", card: `{"supportedInterfaces":[{"url":"http://h/v2","protocolBinding":"JSONRPC","protocolVersion":"2.0"},{"url":"http://h/v1","protocolBinding":"JSONRPC","protocolVersion":"1.1"}]}`,
			url: "http://h/v1", version: a2aV10, header: "1.1"},
		{name: "0.3 card", card: `{"protocolVersion":"0.3.0","url":"http://h/rpc","capabilities":{"streaming":false}}`,
			url: "http://h/rpc", version: a2aV03, header: "0.3"},
		{name: "0.3 card without a version", card: `{"url":"http://h/rpc"}`,
			url: "http://h/rpc", version: a2aV03},
		{name: "0.3 card with JSON-RPC as an additional interface", card: `{"protocolVersion":"0.3.0","url":"http://h/grpc","preferredTransport":"GRPC","additionalInterfaces":[{"url":"http://h/rpc","transport":"JSONRPC"}]}`,
			url: "http://h/rpc", version: a2aV03, header: "0.3"},
		{name: "relative url", card: `{"supportedInterfaces":[{"url":"/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`,
			url: "http://agent.test/a2a", version: a2aV10, header: "1.0"},
		{name: "no JSON-RPC", card: `{"supportedInterfaces":[{"url":"http://h/grpc","protocolBinding":"GRPC","protocolVersion":"1.0"},{"url":"http://h/rest","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"}]}`,
			err: "it offers no JSON-RPC interface in A2A 1.0 or 0.3, only GRPC 1.0 at http://h/grpc, HTTP+JSON 1.0 at http://h/rest; agenteval speaks A2A over JSON-RPC: serve that binding too"},
		{name: "0.3 without JSON-RPC", card: `{"url":"http://h/grpc","preferredTransport":"GRPC"}`,
			err: "it offers no JSON-RPC interface in A2A 1.0 or 0.3, only GRPC at http://h/grpc; agenteval speaks A2A over JSON-RPC: serve that binding too"},
		{name: "no interface", card: `{"name":"x"}`, err: "it declares no interface (neither supportedInterfaces nor url)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c wireCard
			if err := json.Unmarshal([]byte(tc.card), &c); err != nil {
				t.Fatal(err)
			}
			ep, err := c.endpoint("http://agent.test/.well-known/agent-card.json")
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ep.url != tc.url || ep.version != tc.version || ep.versionHeader != tc.header || ep.tenant != tc.tenant || ep.streaming != tc.streaming {
				t.Errorf("got %+v", *ep)
			}
		})
	}
}

// TestA2ASecurity checks that a card's security requirements are met by
// the configured headers, in the card forms of 0.3, 1.0 and @a2a-js/sdk.
func TestA2ASecurity(t *testing.T) {
	const (
		bearer03  = `{"securitySchemes":{"auth":{"type":"http","scheme":"bearer"}},"security":[{"auth":[]}]}`
		bearer10  = `{"securitySchemes":{"auth":{"httpAuthSecurityScheme":{"scheme":"Bearer"}}},"securityRequirements":[{"schemes":{"auth":{"list":[]}}}]}`
		bearerJS  = `{"securitySchemes":{"auth":{"scheme":{"$case":"httpAuthSecurityScheme","value":{"scheme":"bearer","bearerFormat":"JWT"}}}},"securityRequirements":[{"schemes":{"auth":{"list":[]}}}]}`
		apiKey10  = `{"securitySchemes":{"key":{"apiKeySecurityScheme":{"location":"header","name":"X-Agent-Key"}}}}`
		either    = `{"securitySchemes":{"key":{"type":"apiKey","in":"header","name":"X-API-Key"},"oidc":{"type":"openIdConnect","openIdConnectUrl":"https://id.test"}},"security":[{"oidc":["openid"]},{"key":[]}]}`
		both      = `{"securitySchemes":{"key":{"type":"apiKey","in":"header","name":"X-API-Key"},"auth":{"type":"http","scheme":"basic"}},"security":[{"key":[],"auth":[]}]}`
		anonymous = `{"securitySchemes":{"auth":{"type":"http","scheme":"bearer"}},"security":[{"auth":[]},{}]}`
		mtls      = `{"securitySchemes":{"tls":{"mtlsSecurityScheme":{}}}}`
		query     = `{"securitySchemes":{"key":{"type":"apiKey","in":"query","name":"api_key"}}}`
	)
	bearerErr := `requires the security scheme "auth", HTTP Bearer authentication: set headers: {Authorization: "Bearer ${{ A2A_TOKEN }}"} in the target's a2a block`
	for _, tc := range []struct {
		name, card string
		headers    map[string]string
		url        string
		err        string
	}{
		{name: "0.3 bearer missing", card: bearer03, err: bearerErr},
		{name: "1.0 bearer missing", card: bearer10, err: bearerErr},
		{name: "@a2a-js bearer missing", card: bearerJS, err: bearerErr},
		{name: "bearer given", card: bearerJS, headers: map[string]string{"authorization": "Bearer x"}},
		{name: "api key missing", card: apiKey10, headers: map[string]string{"X-API-Key": "k"},
			err: `requires the security scheme "key", an API key in the header "X-Agent-Key": set headers: {X-Agent-Key: "${{ A2A_API_KEY }}"} in the target's a2a block`},
		{name: "api key given", card: apiKey10, headers: map[string]string{"x-agent-key": "k"}},
		{name: "one alternative is enough", card: either, headers: map[string]string{"X-API-Key": "k"}},
		{name: "no alternative met names the first", card: either,
			err: `requires the security scheme "oidc", an openIdConnect access token: get one out of band and set headers: {Authorization: "Bearer ${{ A2A_TOKEN }}"} in the target's a2a block`},
		{name: "all schemes of a requirement", card: both, headers: map[string]string{"X-API-Key": "k"},
			err: `requires the security scheme "auth", HTTP Basic authentication: set headers: {Authorization: "Basic ${{ A2A_TOKEN }}"} in the target's a2a block`},
		{name: "anonymous allowed", card: anonymous},
		{name: "mutual TLS", card: mtls, err: `requires the security scheme "tls", mutual TLS, which agenteval's a2a target does not do`},
		{name: "query key in the url", card: query, url: "http://h/rpc?api_key=k"},
		{name: "query key missing", card: query, url: "http://h/rpc",
			err: `requires the security scheme "key", an API key in the query parameter "api_key": add it to the target's url`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c wireCard
			if err := json.Unmarshal([]byte(tc.card), &c); err != nil {
				t.Fatal(err)
			}
			err := c.checkSecurity(tc.headers, tc.url)
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.err != "" && (err == nil || err.Error() != tc.err):
				t.Fatalf("error %v\nwant %s", err, tc.err)
			}
		})
	}
}

// TestA2AErrors checks that each failure is an error naming the target,
// what went wrong and what to do, and that none hangs.
func TestA2AErrors(t *testing.T) {
	const plainCard = `{"supportedInterfaces":[{"url":"$URL/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"capabilities":{}}`
	const streamCard = `{"supportedInterfaces":[{"url":"$URL/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"capabilities":{"streaming":true}}`
	failed := `{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_FAILED","message":{"messageId":"a1","role":"ROLE_AGENT","parts":[{"text":"the kitchen is closed"}]}}}}`
	rejected := `{"kind":"task","id":"t1","contextId":"c1","status":{"state":"rejected"}}`
	working := `{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}}`
	for _, tc := range []struct {
		name    string
		server  func(t *testing.T) *a2aServer
		timeout time.Duration
		want    string // the error, after the "a2a target URL: " prefix
	}{
		{name: "no card", server: func(t *testing.T) *a2aServer {
			return &a2aServer{cardAt: "/elsewhere"}
		}, want: "no agent card at $URL/.well-known/agent-card.json nor at $URL/.well-known/agent.json (HTTP 404); url: should be the agent's base URL, where /.well-known/agent-card.json is served"},
		{name: "card not JSON", server: func(t *testing.T) *a2aServer {
			return &a2aServer{card: "<html>hello</html>", cardType: "text/html"}
		}, want: `the agent card at $URL/.well-known/agent-card.json is not JSON (Content-Type "text/html"): "<html>hello</html>"`},
		{name: "card needs auth", server: func(t *testing.T) *a2aServer {
			return &a2aServer{card: `{"error":"unauthorized"}`, cardStatus: 401}
		}, want: `the agent card at $URL/.well-known/agent-card.json answered HTTP 401: {"error":"unauthorized"}; give the credentials it needs as headers: in the target's a2a block`},
		{name: "card without JSON-RPC", server: func(t *testing.T) *a2aServer {
			return &a2aServer{card: `{"supportedInterfaces":[{"url":"$URL/grpc","protocolBinding":"GRPC","protocolVersion":"1.0"}]}`}
		}, want: "the agent card at $URL/.well-known/agent-card.json: it offers no JSON-RPC interface in A2A 1.0 or 0.3, only GRPC 1.0 at $URL/grpc; agenteval speaks A2A over JSON-RPC: serve that binding too"},
		{name: "card asks for a token", server: func(t *testing.T) *a2aServer {
			return &a2aServer{card: `{"url":"$URL/rpc","securitySchemes":{"b":{"type":"http","scheme":"bearer"}}}`}
		}, want: `the agent card at $URL/.well-known/agent-card.json requires the security scheme "b", HTTP Bearer authentication: set headers: {Authorization: "Bearer ${{ A2A_TOKEN }}"} in the target's a2a block`},
		{name: "JSON-RPC error", server: func(t *testing.T) *a2aServer {
			return &a2aServer{card: plainCard, steps: []a2aStep{{method: "SendMessage", rpcErr: `{"code":-32602,"message":"message.parts is empty"}`}}}
		}, want: "SendMessage failed with JSON-RPC error -32602 (invalid parameters): message.parts is empty"},
		{name: "method not found", server: func(t *testing.T) *a2aServer {
			return &a2aServer{card: plainCard, steps: []a2aStep{{method: "SendMessage", rpcErr: `{"code":-32601,"message":"Invalid method."}`}}}
		}, want: "SendMessage failed with JSON-RPC error -32601 (method not found): Invalid method.; the agent card's interface version and the server's disagree"},
		{name: "HTTP error", server: func(t *testing.T) *a2aServer {
			return &a2aServer{card: plainCard, steps: []a2aStep{{method: "SendMessage", raw: "boom", status: 502}}}
		}, want: "SendMessage answered HTTP 502: boom"},
		{name: "HTTP error with a JSON-RPC error", server: func(t *testing.T) *a2aServer {
			return &a2aServer{card: plainCard, steps: []a2aStep{{method: "SendMessage", rpcErr: `{"code":-32005,"message":"Unsupported Content-Type"}`, status: 400}}}
		}, want: "SendMessage answered HTTP 400, JSON-RPC error -32005 (content type not supported): Unsupported Content-Type"},
		{name: "not JSON-RPC", server: func(t *testing.T) *a2aServer {
			return &a2aServer{card: plainCard, steps: []a2aStep{{method: "SendMessage", raw: `{"messages":[]}`}}}
		}, want: `SendMessage: the answer is not a JSON-RPC response: "{\"messages\":[]}"`},
		{name: "neither task nor message", server: func(t *testing.T) *a2aServer {
			return &a2aServer{card: plainCard, steps: []a2aStep{{method: "SendMessage", result: `{"hello":1}`}}}
		}, want: `SendMessage: the result is neither a task, a message nor a task event: "{\"hello\":1}"`},
		{name: "empty stream", server: func(t *testing.T) *a2aServer {
			return &a2aServer{card: streamCard, steps: []a2aStep{{method: "SendStreamingMessage", events: []string{}}}}
		}, want: "SendStreamingMessage answered with neither a task nor a message"},
		{name: "error in the stream", server: func(t *testing.T) *a2aServer {
			return &a2aServer{card: streamCard, steps: []a2aStep{{method: "SendStreamingMessage",
				ctype: "text/event-stream", raw: "event: error\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32603,\"message\":\"executor crashed\"}}\n\n"}}}
		}, want: "SendStreamingMessage failed with JSON-RPC error -32603 (internal error): executor crashed"},
		{name: "failed task", server: func(t *testing.T) *a2aServer {
			return &a2aServer{card: plainCard, steps: []a2aStep{{method: "SendMessage", result: failed}}}
		}, want: "the agent's task t1 failed: the kitchen is closed"},
		{name: "rejected task", server: func(t *testing.T) *a2aServer {
			return &a2aServer{card: plainCard, steps: []a2aStep{{method: "SendMessage", result: rejected}}}
		}, want: "the agent's task t1 rejected: (the agent gave no reason)"},
		{name: "no answer", timeout: 200 * time.Millisecond, server: func(t *testing.T) *a2aServer {
			return &a2aServer{card: plainCard, steps: []a2aStep{{method: "SendMessage", hang: true}}}
		}, want: "no final answer within 200ms (the target's timeout)"},
		{name: "task never ends", timeout: 300 * time.Millisecond, server: func(t *testing.T) *a2aServer {
			steps := []a2aStep{{method: "SendMessage", result: working}}
			for i := 0; i < 100; i++ {
				steps = append(steps, a2aStep{method: "GetTask", result: strings.TrimSuffix(strings.TrimPrefix(working, `{"task":`), "}")})
			}
			return &a2aServer{card: plainCard, steps: steps}
		}, want: "no final answer within 300ms (the target's timeout); its task t1 was still working"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.server(t)
			s.t = t
			s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
			defer s.srv.Close()
			a := testA2A(s, nil)
			if tc.timeout > 0 {
				a.Timeout = tc.timeout
			}
			a.PollInterval = 20 * time.Millisecond
			start := time.Now()
			_, err := a.Respond(context.Background(), &agenteval.AgentRequest{ConversationID: "c", Turn: 1,
				Messages: agenteval.Conversation{{Role: agenteval.RoleUser, Content: "hi"}}})
			want := "a2a target " + s.srv.URL + ": " + strings.ReplaceAll(tc.want, "$URL", s.srv.URL)
			if err == nil || err.Error() != want {
				t.Errorf("error:\n %v\nwant:\n %s", err, want)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("took %s", d)
			}
		})
	}
}

// TestA2AUnreachable checks the error for an agent that is not running.
func TestA2AUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	a := NewA2A(suite.ProtocolTarget{URL: url}, time.Second)
	_, err := a.Respond(context.Background(), &agenteval.AgentRequest{ConversationID: "c", Turn: 1,
		Messages: agenteval.Conversation{{Role: agenteval.RoleUser, Content: "hi"}}})
	if err == nil || !strings.HasPrefix(err.Error(), "a2a target "+url+": unreachable: ") {
		t.Errorf("error %v", err)
	}
}

// TestA2ANoUserMessage checks a turn with nothing to send.
func TestA2ANoUserMessage(t *testing.T) {
	a := NewA2A(suite.ProtocolTarget{URL: "http://127.0.0.1:1"}, time.Second)
	_, err := a.Respond(context.Background(), &agenteval.AgentRequest{ConversationID: "c", Turn: 1})
	if want := "a2a target http://127.0.0.1:1: turn 1 has no user message to send"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}

// TestA2ASecretsNotShown checks that credentials never show in an error,
// even when the agent echoes them, including a header only the card's
// API-key scheme says is a credential.
func TestA2ASecretsNotShown(t *testing.T) {
	const card = `{"supportedInterfaces":[{"url":"$URL/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
"securitySchemes":{"a":{"httpAuthSecurityScheme":{"scheme":"Bearer"}},"k":{"apiKeySecurityScheme":{"location":"header","name":"X-Agent-Ident"}}},
"securityRequirements":[{"schemes":{"a":{"list":[]},"k":{"list":[]}}}]}`
	s := newA2AServer(t, card, a2aStep{method: "SendMessage", echo: true})
	secret, ident := "s3cr3t-t0ken-8f2a9c", "ident-7d41e0b2c9"
	a := testA2A(s, map[string]string{"Authorization": "Bearer " + secret, "X-Agent-Ident": ident})
	_, err := a.Respond(context.Background(), &agenteval.AgentRequest{ConversationID: "c", Turn: 1,
		Messages: agenteval.Conversation{{Role: agenteval.RoleUser, Content: "hi"}}})
	if err == nil {
		t.Fatal("no error")
	}
	if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), ident) {
		t.Errorf("a secret shows: %v", err)
	}
	if !strings.Contains(err.Error(), "SendMessage answered HTTP 500: Authorization=[REDACTED] X-Agent-Ident=[REDACTED]") {
		t.Errorf("error %v", err)
	}
}

// TestA2AConversations checks that conversations run at once keep their
// own contexts.
func TestA2AConversations(t *testing.T) {
	var mu sync.Mutex
	contexts := map[string][]string{} // conversation text -> contextIds sent
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			fmt.Fprintf(w, `{"supportedInterfaces":[{"url":"http://%s/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`, r.Host)
			return
		}
		var req struct {
			ID     int `json:"id"`
			Params struct {
				Message struct {
					ContextID string `json:"contextId"`
					Parts     []struct {
						Text string `json:"text"`
					} `json:"parts"`
				} `json:"message"`
			} `json:"params"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		m := req.Params.Message
		who := strings.Fields(m.Parts[0].Text)[0]
		mu.Lock()
		contexts[who] = append(contexts[who], m.ContextID)
		mu.Unlock()
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"result":{"message":{"messageId":"r","role":"ROLE_AGENT","contextId":"ctx-%s","parts":[{"text":"ok %s"}]}}}`, req.ID, who, who)
	}))
	defer srv.Close()
	a := NewA2A(suite.ProtocolTarget{URL: srv.URL}, 5*time.Second)
	var wg sync.WaitGroup
	for _, who := range []string{"ann", "bob", "cy"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var h agenteval.Conversation
			for turn := 1; turn <= 3; turn++ {
				h = append(h, agenteval.Message{Role: agenteval.RoleUser, Content: who + " turn"})
				resp, err := a.Respond(context.Background(), &agenteval.AgentRequest{ConversationID: who, Turn: turn, Messages: h})
				if err != nil {
					t.Error(err)
					return
				}
				h = append(h, resp.Messages...)
			}
		}()
	}
	wg.Wait()
	var got []string
	for who, ids := range contexts {
		got = append(got, who+": "+strings.Join(ids, ","))
	}
	sort.Strings(got)
	want := "ann: ,ctx-ann,ctx-ann|bob: ,ctx-bob,ctx-bob|cy: ,ctx-cy,ctx-cy"
	if strings.Join(got, "|") != want {
		t.Errorf("contexts sent: %s\nwant %s", strings.Join(got, "|"), want)
	}
}

// TestA2AOldCardPath checks that the 0.2 card name is read when the new
// one is missing, and that the card is read once.
func TestA2AOldCardPath(t *testing.T) {
	s := newA2AServer(t, `{"url":"$URL/rpc","protocolVersion":"0.2.5"}`,
		a2aStep{method: "message/send", result: `{"kind":"message","messageId":"r1","role":"agent","parts":[{"kind":"text","text":"one"}]}`},
		a2aStep{method: "message/send", result: `{"kind":"message","messageId":"r2","role":"agent","parts":[{"kind":"text","text":"two"}]}`})
	s.cardAt = a2aOldCardPath
	a := testA2A(s, nil)
	got := a2aConversation(t, s, a, "hi", "again")
	if n := strings.Count(got, "GET "); n != 2 {
		t.Errorf("%d card requests, want 2 (agent-card.json, then agent.json, once):\n%s", n, got)
	}
	if !strings.Contains(got, `"content": "two"`) {
		t.Errorf("transcript:\n%s", got)
	}
}

// TestA2AForgottenTask checks that a turn continuing a task the agent no
// longer knows fails, and the next turn starts a new task in the same
// context.
func TestA2AForgottenTask(t *testing.T) {
	const card = `{"supportedInterfaces":[{"url":"$URL/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`
	asks := `{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_INPUT_REQUIRED","message":{"messageId":"a1","role":"ROLE_AGENT","parts":[{"text":"Which day?"}]}}}}`
	s := newA2AServer(t, card,
		a2aStep{method: "SendMessage", result: asks},
		a2aStep{method: "SendMessage", rpcErr: `{"code":-32001,"message":"Task not found: t1"}`},
		a2aStep{method: "SendMessage", result: `{"message":{"messageId":"a2","contextId":"c1","role":"ROLE_AGENT","parts":[{"text":"Booked."}]}}`})
	a := testA2A(s, nil)
	var h agenteval.Conversation
	var sent []string
	for turn, text := range []string{"Book a table.", "Friday.", "Friday, please."} {
		h = append(h, agenteval.Message{Role: agenteval.RoleUser, Content: text})
		resp, err := a.Respond(context.Background(), &agenteval.AgentRequest{ConversationID: "c", Turn: turn + 1, Messages: h})
		if turn == 1 {
			if want := "SendMessage failed with JSON-RPC error -32001 (task not found): Task not found: t1"; err == nil || !strings.HasSuffix(err.Error(), want) {
				t.Errorf("turn 2: error %v, want ...%s", err, want)
			}
		} else if err != nil {
			t.Fatalf("turn %d: %v", turn+1, err)
		} else {
			h = append(h, resp.Messages...)
		}
		tr := s.transcript()
		sent = append(sent, fmt.Sprintf("context %v task %v", strings.Contains(tr, `"contextId": "c1"`), strings.Contains(tr, `"taskId": "t1"`)))
	}
	if got, want := strings.Join(sent, "; "), "context false task false; context true task true; context true task false"; got != want {
		t.Errorf("sent: %s\nwant %s", got, want)
	}
}

// a2aCapture is what a real A2A server sent agenteval during a
// conversation, recorded by a logging proxy between the two: the agent
// card, and per JSON-RPC call its result or its stream's results. $URL
// stands for the server's address.
type a2aCapture struct {
	Source string          `json:"source"`
	CardAt string          `json:"cardAt"`
	Card   json.RawMessage `json:"card"`
	Calls  []struct {
		Method string            `json:"method"`
		Result json.RawMessage   `json:"result"`
		Events []json.RawMessage `json:"events"`
	} `json:"calls"`
}

// TestA2AFrameworks replays what two frameworks' own A2A servers sent
// during the restaurant recipes (examples/frameworks) and pins the
// replies read from it, tool calls first:
//   - Google ADK JS 2.0.0 (toA2a) sends each function call and response
//     as an artifact of its own, a data part marked adk_type;
//   - Mastra 1.71.0 puts the calls in the completed task's metadata
//     (execution.toolCalls / toolResults), which a stream's events leave
//     out, so the finished task is read once after the stream; and its
//     "Generating response..." working status is progress, kept in the
//     metadata, not the answer.
//
// The -send captures are single message/send calls, whose result is the
// whole task.
func TestA2AFrameworks(t *testing.T) {
	for _, tc := range []struct {
		name  string
		turns []string
	}{
		{"adk-2.0.0", []string{"Find me an Italian restaurant near the river.", "Is there a table for 4 at 8pm?", "Great, book it under Ada."}},
		{"adk-2.0.0-send", []string{"Find me an Italian restaurant near the river."}},
		{"mastra-1.71.0", []string{"Find me an Italian restaurant near the river.", "Is there a table for 4 at 8pm?", "Great, book it under Ada."}},
		{"mastra-1.71.0-send", []string{"Find me an Italian restaurant near the river."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", "a2a", tc.name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			var c a2aCapture
			if err := json.Unmarshal(raw, &c); err != nil {
				t.Fatalf("%s.json: %v", tc.name, err)
			}
			// One SSE event is one line: the capture is indented.
			compact := func(v json.RawMessage) string {
				var b bytes.Buffer
				if len(v) > 0 && json.Compact(&b, v) != nil {
					t.Fatalf("%s.json: bad JSON %s", tc.name, v)
				}
				return b.String()
			}
			var steps []a2aStep
			for _, call := range c.Calls {
				st := a2aStep{method: call.Method, result: compact(call.Result)}
				for _, ev := range call.Events {
					st.events = append(st.events, compact(ev))
				}
				steps = append(steps, st)
			}
			s := newA2AServer(t, string(c.Card), steps...)
			s.cardAt = c.CardAt
			a := testA2A(s, nil)
			if c.CardAt != a2aCardPath {
				a.URL = s.srv.URL + c.CardAt
			}
			got := a2aConversation(t, s, a, tc.turns...)
			if s.next != len(steps) {
				t.Errorf("%d of the %d recorded calls were made", s.next, len(steps))
			}
			goldenfile.Check(t, filepath.Join("testdata", "a2a", tc.name+".golden"), []byte(got))
		})
	}
}

// TestA2AReplySources checks where a turn's tool calls and answer come
// from: tool parts in messages and artifacts in the order they came, a
// part reported both ways once, the task's metadata when no part has
// any, and the answer without superseded status messages.
func TestA2AReplySources(t *testing.T) {
	const (
		call   = `{"kind":"data","data":{"id":"c1","name":"find","args":{"q":"x","n":1}},"metadata":{"adk_type":"function_call"}}`
		callB  = `{"kind":"data","data":{"id":"c1","name":"find","args":{"n":1,"q":"x"}},"metadata":{"adk_type":"function_call"}}`
		resp   = `{"kind":"data","data":{"id":"c1","name":"find","response":{"found":2}},"metadata":{"adk_type":"function_response"}}`
		noID   = `{"kind":"data","data":{"name":"ping","args":{}},"metadata":{"adk_type":"function_call"}}`
		noIDr  = `{"kind":"data","data":{"name":"ping","response":"pong"},"metadata":{"adk_type":"function_response"}}`
		status = `{"kind":"status-update","taskId":"t","contextId":"c","status":{"state":"working","message":{"kind":"message","messageId":"%s","role":"agent","parts":[%s]}},"final":false}`
		art    = `{"kind":"artifact-update","taskId":"t","contextId":"c","artifact":{"artifactId":"%s","parts":[%s]}}`
		done   = `{"kind":"status-update","taskId":"t","contextId":"c","status":{"state":"completed"},"final":true}`
		text   = `{"kind":"text","text":%q}`
	)
	mastra := func(calls, results string) string {
		return `{"kind":"task","id":"t","contextId":"c","status":{"state":"completed"},"artifacts":[{"artifactId":"a","parts":[{"kind":"text","text":"Done."}]}],"metadata":{"execution":{"toolCalls":[` + calls + `],"toolResults":[` + results + `]}}}`
	}
	for _, tc := range []struct {
		name   string
		events []string
		want   string
	}{
		{"artifacts alone, in order",
			[]string{fmt.Sprintf(art, "a1", call), fmt.Sprintf(art, "a2", resp), fmt.Sprintf(art, "a3", fmt.Sprintf(text, "Two.")), done},
			"call c1 find {n:1,q:x} | tool c1 {found:2} | answer Two."},
		{"a message and an artifact say the same call, keys in another order",
			[]string{fmt.Sprintf(status, "m1", call), fmt.Sprintf(art, "a1", callB), fmt.Sprintf(art, "a2", resp), fmt.Sprintf(status, "m2", resp), fmt.Sprintf(art, "a3", fmt.Sprintf(text, "Two.")), done},
			"call c1 find {n:1,q:x} | tool c1 {found:2} | answer Two."},
		{"one source calls twice without ids, the other once",
			[]string{fmt.Sprintf(status, "m1", noID), fmt.Sprintf(status, "m2", noIDr), fmt.Sprintf(status, "m3", noID), fmt.Sprintf(status, "m4", noIDr),
				fmt.Sprintf(art, "a1", noID+","+noIDr), fmt.Sprintf(art, "a2", fmt.Sprintf(text, "Pong twice.")), done},
			"call a2a_call_1 ping {} | tool a2a_call_1 pong | call a2a_call_2 ping {} | tool a2a_call_2 pong | answer Pong twice."},
		{"messages and artifacts interleaved",
			[]string{fmt.Sprintf(status, "m1", noID), fmt.Sprintf(art, "a1", noIDr), fmt.Sprintf(status, "m2", call), fmt.Sprintf(art, "a2", resp+","+fmt.Sprintf(text, "Both.")), done},
			"call a2a_call_1 ping {} | tool a2a_call_1 pong | call c1 find {n:1,q:x} | tool c1 {found:2} | answer Both."},
		{"a working message, then the final status message",
			[]string{fmt.Sprintf(status, "m1", fmt.Sprintf(text, "Thinking...")), `{"kind":"status-update","taskId":"t","contextId":"c","status":{"state":"completed","message":{"kind":"message","messageId":"m2","role":"agent","parts":[{"kind":"text","text":"Done."}]}},"final":true}`},
			"answer Done. progress [Thinking...]"},
		{"working messages and no artifact: the messages are the answer",
			[]string{fmt.Sprintf(status, "m1", fmt.Sprintf(text, "Thinking...")), fmt.Sprintf(status, "m2", fmt.Sprintf(text, "It is 42.")), done},
			"answer Thinking...\nIt is 42."},
		{"mastra metadata: results matched by id, an unlisted result brings its call, an error, Mastra's own argument dropped",
			[]string{mastra(
				`{"type":"tool-call","payload":{"toolCallId":"k1","toolName":"find","args":{"q":"x","__mastraMetadata":{"a":1}}}},{"type":"tool-call","payload":{"toolCallId":"k2","toolName":"book","args":{}}}`,
				`{"type":"tool-result","payload":{"toolCallId":"k2","toolName":"book","result":{"error":"full"},"isError":true}},{"type":"tool-result","payload":{"toolCallId":"k1","toolName":"find","result":"two"}},{"type":"tool-result","payload":{"toolCallId":"k3","toolName":"pay","args":{"n":3},"result":"ok"}}`)},
			"call k1 find {q:x} | tool k1 two | call k2 book {} | tool k2 {error:full} error | call k3 pay {n:3} | tool k3 ok | answer Done."},
		{"metadata is not read when parts carry tool calls",
			[]string{fmt.Sprintf(art, "a1", call), mastra(`{"type":"tool-call","payload":{"toolCallId":"k9","toolName":"other","args":{}}}`, ``)},
			"call c1 find {n:1,q:x} | answer Done."},
		{"metadata without execution, or of another shape",
			[]string{`{"kind":"task","id":"t","contextId":"c","status":{"state":"completed"},"artifacts":[{"artifactId":"a","parts":[{"kind":"text","text":"Done."}]}],"metadata":{"execution":{"toolCalls":"none"}}}`},
			"answer Done."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			turn := newTurn(&a2aConv{seenMsgs: map[string]bool{}, seenArts: map[string]string{}}, "sent")
			turn.streaming = true
			for _, e := range tc.events {
				ev, err := decodeEvent(json.RawMessage(e))
				if err != nil {
					t.Fatalf("%s: %v", e, err)
				}
				turn.add(ev)
			}
			var got []string
			for _, m := range turn.reply().Messages {
				switch {
				case len(m.ToolCalls) > 0:
					for _, c := range m.ToolCalls {
						args, _ := json.Marshal(c.Args)
						got = append(got, fmt.Sprintf("call %s %s %s", c.ID, c.Name, strings.ReplaceAll(string(args), `"`, "")))
					}
				case m.Role == agenteval.RoleTool:
					s := fmt.Sprintf("tool %s %s", m.ToolCallID, strings.ReplaceAll(m.Content, `"`, ""))
					if m.Metadata["error"] == true {
						s += " error"
					}
					got = append(got, s)
				default:
					s := "answer " + m.Content
					if p, ok := m.Metadata["a2a_progress"]; ok {
						s += fmt.Sprintf(" progress %v", p)
					}
					got = append(got, s)
				}
			}
			if g := strings.Join(got, " | "); g != tc.want {
				t.Errorf("got  %s\nwant %s", g, tc.want)
			}
		})
	}
}
