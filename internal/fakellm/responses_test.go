package fakellm

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// postResponses sends a Responses API request and returns the status and
// the body.
func postResponses(t *testing.T, s *Server, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(s.URL+"/responses", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// respShape is the part of a response the tests compare.
type respShape struct {
	ID                 string  `json:"id"`
	Object             string  `json:"object"`
	Status             string  `json:"status"`
	PreviousResponseID *string `json:"previous_response_id"`
	Store              bool    `json:"store"`
	IncompleteDetails  *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Output []struct {
		Type    string `json:"type"`
		Role    string `json:"role,omitempty"`
		Status  string `json:"status,omitempty"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content,omitempty"`
		CallID    string `json:"call_id,omitempty"`
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments,omitempty"`
		Summary   []struct {
			Text string `json:"text"`
		} `json:"summary,omitempty"`
	} `json:"output"`
	Usage *struct {
		InputTokens        int `json:"input_tokens"`
		InputTokensDetails struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"input_tokens_details"`
		OutputTokens        int `json:"output_tokens"`
		OutputTokensDetails struct {
			ReasoningTokens int `json:"reasoning_tokens"`
		} `json:"output_tokens_details"`
		TotalTokens int `json:"total_tokens"`
	} `json:"usage"`
}

func decodeResp(t *testing.T, body string) respShape {
	t.Helper()
	var r respShape
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatalf("response %s: %v", body, err)
	}
	return r
}

// outline is a response's output in one line per item, for comparing.
func outline(r respShape) []string {
	var out []string
	for _, it := range r.Output {
		switch it.Type {
		case "message":
			var b strings.Builder
			for _, c := range it.Content {
				b.WriteString(c.Type + ":" + c.Text)
			}
			out = append(out, "message "+it.Role+" "+it.Status+" "+b.String())
		case "function_call":
			out = append(out, "function_call "+it.Name+" "+it.Arguments)
		case "reasoning":
			var parts []string
			for _, s := range it.Summary {
				parts = append(parts, s.Text)
			}
			out = append(out, "reasoning "+strings.Join(parts, "|"))
		}
	}
	return out
}

// TestResponses: requests in the Responses API's shapes get the answers
// the rules and defaults give chat requests, written as output items.
func TestResponses(t *testing.T) {
	s, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Add(
		&Rule{Match: Contains("weather"), Reply: Reply{Func: func(r *Request) Reply {
			if r.Messages[len(r.Messages)-1].Role == "tool" {
				return Reply{Content: "Sunny, says " + r.Messages[len(r.Messages)-1].Text()}
			}
			return Reply{ToolCalls: []ToolCall{{ID: "call_w", Name: "get_weather", Arguments: `{"city":"Paris"}`}}}
		}}},
		&Rule{Match: Contains("think"), Reply: Reply{Content: "42", Reasoning: []string{"Adding up.", "Checking."}}},
		&Rule{Match: Contains("long essay"), Reply: Reply{Content: "Once upon", Incomplete: "max_output_tokens"}},
		&Rule{Match: Contains("break"), Reply: Reply{Fault: FaultFailed}},
	)
	for _, tc := range []struct {
		name   string
		body   string
		want   []string
		status string
	}{
		{"string input", `{"model": "m", "input": "hello"}`, []string{"message assistant completed output_text:This is a fake reply."}, "completed"},
		{"message items and instructions", `{"model": "m", "instructions": "be brief", "input": [{"role": "user", "content": [{"type": "input_text", "text": "hello"}]}]}`,
			[]string{"message assistant completed output_text:This is a fake reply."}, "completed"},
		{"a rule's tool call", `{"model": "m", "input": [{"type": "message", "role": "user", "content": "weather in Paris?"}], "tools": [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}, "strict": false}]}`,
			[]string{`function_call get_weather {"city":"Paris"}`}, "completed"},
		{"after the tool's output", `{"model": "m", "input": [{"role": "user", "content": "weather in Paris?"},
			{"type": "function_call", "id": "fc_1", "call_id": "call_w", "name": "get_weather", "arguments": "{\"city\":\"Paris\"}", "status": "completed"},
			{"type": "function_call_output", "call_id": "call_w", "output": "22C"}],
			"tools": [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}, "strict": false}]}`,
			[]string{"message assistant completed output_text:Sunny, says 22C"}, "completed"},
		{"structured output", `{"model": "m", "input": "judge", "text": {"format": {"type": "json_schema", "name": "verdict", "strict": true,
			"schema": {"type": "object", "properties": {"passed": {"type": "boolean"}}, "required": ["passed"], "additionalProperties": false}}}}`,
			[]string{`message assistant completed output_text:{"passed":true}`}, "completed"},
		{"reasoning", `{"model": "m", "input": "think"}`, []string{"reasoning Adding up.|Checking.", "message assistant completed output_text:42"}, "completed"},
		{"incomplete", `{"model": "m", "input": "long essay"}`, []string{"message assistant incomplete output_text:Once upon"}, "incomplete"},
		{"failed", `{"model": "m", "input": "break"}`, nil, "failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := postResponses(t, s, tc.body)
			if code != 200 {
				t.Fatalf("status %d: %s", code, body)
			}
			r := decodeResp(t, body)
			if diff := cmp.Diff(tc.want, outline(r)); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			if r.Object != "response" || r.Status != tc.status || !strings.HasPrefix(r.ID, "resp_") || r.Usage == nil {
				t.Errorf("response = %s", body)
			}
			if tc.status == "failed" && (r.Error == nil || r.Error.Code != "server_error") {
				t.Errorf("a failed response has no error: %s", body)
			}
			if tc.status == "incomplete" && (r.IncompleteDetails == nil || r.IncompleteDetails.Reason != "max_output_tokens") {
				t.Errorf("incomplete_details: %s", body)
			}
			if tc.name == "reasoning" && r.Usage.OutputTokensDetails.ReasoningTokens == 0 {
				t.Errorf("no reasoning tokens: %s", body)
			}
		})
	}
	// The rules saw each request as a chat request: the instructions as
	// a system message, the function_call_output as a tool message.
	reqs := s.Requests()
	if m := reqs[1].Messages; len(m) != 2 || m[0].Role != "system" || m[0].Text() != "be brief" || m[1].Text() != "hello" {
		t.Errorf("instructions and input read as %+v", m)
	}
	if m := reqs[3].Messages; len(m) != 3 || m[1].Role != "assistant" || m[1].ToolCalls[0].ID != "call_w" || m[2].Role != "tool" || m[2].ToolCallID != "call_w" {
		t.Errorf("tool call and output read as %+v", m)
	}
	if reqs[4].SchemaName() != "verdict" || reqs[2].Tools[0].Function.Name != "get_weather" {
		t.Errorf("format or tools not read: %+v %+v", reqs[4].ResponseFormat, reqs[2].Tools)
	}
}

// TestResponsesChain: a stored response continues by
// previous_response_id, the rules seeing the whole conversation; store
// false keeps nothing; an id the fake does not hold is the API's 400.
func TestResponsesChain(t *testing.T) {
	s, err := Start(Options{CallTools: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tools := `"tools": [{"type": "function", "name": "book", "parameters": {"type": "object", "properties": {"time": {"type": "string"}}}, "strict": false}]`
	code, body := postResponses(t, s, `{"model": "m", "instructions": "You book tables.", "input": "a table at 7pm", `+tools+`}`)
	first := decodeResp(t, body)
	if code != 200 || len(first.Output) != 1 || first.Output[0].Type != "function_call" || !first.Store {
		t.Fatalf("first: %d %s", code, body)
	}
	call := first.Output[0].CallID
	code, body = postResponses(t, s, `{"model": "m", "instructions": "You book tables.", "previous_response_id": "`+first.ID+`",
		"input": [{"type": "function_call_output", "call_id": "`+call+`", "output": "{\"ok\":true}"}], `+tools+`}`)
	second := decodeResp(t, body)
	if code != 200 || second.PreviousResponseID == nil || *second.PreviousResponseID != first.ID || outline(second)[0] != "message assistant completed output_text:This is a fake reply." {
		t.Fatalf("second: %d %s", code, body)
	}
	if second.Usage.InputTokensDetails.CachedTokens == 0 {
		t.Errorf("the stored part is not counted as cached: %s", body)
	}
	code, body = postResponses(t, s, `{"model": "m", "previous_response_id": "`+second.ID+`", "input": "thanks", `+tools+`}`)
	if code != 200 {
		t.Fatalf("third: %d %s", code, body)
	}
	got := s.Requests()[2].Messages
	var roles []string
	for _, m := range got {
		roles = append(roles, m.Role)
	}
	// No instructions on the third request: the API does not carry them.
	if diff := cmp.Diff([]string{"user", "assistant", "tool", "assistant", "user"}, roles); diff != "" {
		t.Errorf("the third request's conversation (-want +got):\n%s", diff)
	}
	if got[1].ToolCalls[0].Function.Name != "book" || got[2].ToolCallID != call || got[4].Text() != "thanks" {
		t.Errorf("conversation = %+v", got)
	}

	// store: false keeps nothing to continue.
	code, body = postResponses(t, s, `{"model": "m", "store": false, "input": "hi"}`)
	unstored := decodeResp(t, body)
	if code != 200 || unstored.Store {
		t.Fatalf("store false: %d %s", code, body)
	}
	for _, id := range []string{unstored.ID, "resp_nope"} {
		code, body = postResponses(t, s, `{"model": "m", "previous_response_id": "`+id+`", "input": "again"}`)
		var e struct {
			Error struct {
				Message, Type, Param, Code string
			}
		}
		json.Unmarshal([]byte(body), &e)
		if code != 400 || e.Error.Code != "previous_response_not_found" || e.Error.Param != "previous_response_id" ||
			e.Error.Type != "invalid_request_error" || e.Error.Message != "Previous response with id '"+id+"' not found." {
			t.Errorf("unknown id %s: %d %s", id, code, body)
		}
	}
}

// TestResponsesFaults: the rules' faults answer Responses requests as
// they answer chat requests.
func TestResponsesFaults(t *testing.T) {
	s, err := Start(Options{APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Add(&Rule{Match: Contains("slow down"), Reply: Reply{Fault: FaultRateLimit, RetryAfter: 1500 * time.Millisecond}},
		&Rule{Match: Contains("crash"), Reply: Reply{Fault: FaultServer}},
		&Rule{Match: Contains("bad"), Reply: Reply{Status: 422, ErrorMessage: "no"}})
	for _, tc := range []struct {
		input, key  string
		status      int
		retryAfter  string
		errContains string
	}{
		{"hi", "wrong", 401, "", "Incorrect API key"},
		{"slow down", "k", 429, "1.5", "Rate limit"},
		{"crash", "k", 500, "", "server had an error"},
		{"bad", "k", 422, "", "no"},
	} {
		req, _ := http.NewRequest("POST", s.URL+"/responses", strings.NewReader(`{"model":"m","input":"`+tc.input+`"}`))
		req.Header.Set("Authorization", "Bearer "+tc.key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || resp.Header.Get("Retry-After") != tc.retryAfter || !strings.Contains(string(b), tc.errContains) {
			t.Errorf("%s: %d Retry-After %q %s", tc.input, resp.StatusCode, resp.Header.Get("Retry-After"), b)
		}
	}
}

// sseEvent is one server-sent event.
type sseEvent struct {
	name string
	data map[string]any
}

func readSSE(t *testing.T, r io.Reader) []sseEvent {
	t.Helper()
	var out []sseEvent
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var name string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var d map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &d); err != nil {
				t.Fatalf("data %q: %v", line, err)
			}
			out = append(out, sseEvent{name, d})
		case line == "":
		default:
			t.Fatalf("unexpected line %q", line)
		}
	}
	return out
}

// TestResponsesStream: stream: true gets the API's events, in order, each
// named as its type says and numbered; the last carries the response, as
// a request without stream gets it.
func TestResponsesStream(t *testing.T) {
	s, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Add(&Rule{Match: Contains("plan"), Reply: Reply{Content: "Checking the diary first.", Reasoning: []string{"The user wants a table."},
		ToolCalls: []ToolCall{{ID: "call_1", Name: "check", Arguments: `{"time":"7pm","party_size":2}`}}}})
	resp, err := http.Post(s.URL+"/responses", "application/json", strings.NewReader(`{"model":"m","stream":true,"input":"plan a dinner",
		"tools":[{"type":"function","name":"check","parameters":{"type":"object"},"strict":false}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	events := readSSE(t, resp.Body)
	var names []string
	text, args := "", ""
	for i, e := range events {
		if e.data["type"] != e.name || e.data["sequence_number"] != float64(i) {
			t.Errorf("event %d: name %q, data type %v, sequence_number %v", i, e.name, e.data["type"], e.data["sequence_number"])
		}
		if len(names) == 0 || names[len(names)-1] != e.name {
			names = append(names, e.name)
		}
		switch e.name {
		case "response.output_text.delta":
			text += e.data["delta"].(string)
		case "response.function_call_arguments.delta":
			args += e.data["delta"].(string)
		}
	}
	want := []string{"response.created", "response.in_progress",
		"response.output_item.added", "response.reasoning_summary_part.added", "response.reasoning_summary_text.delta", "response.reasoning_summary_text.done", "response.reasoning_summary_part.done", "response.output_item.done",
		"response.output_item.added", "response.content_part.added", "response.output_text.delta", "response.output_text.done", "response.content_part.done", "response.output_item.done",
		"response.output_item.added", "response.function_call_arguments.delta", "response.function_call_arguments.done", "response.output_item.done",
		"response.completed"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if text != "Checking the diary first." || args != `{"time":"7pm","party_size":2}` {
		t.Errorf("deltas: text %q, arguments %q", text, args)
	}
	created := events[0].data["response"].(map[string]any)
	if created["status"] != "in_progress" || len(created["output"].([]any)) != 0 {
		t.Errorf("response.created = %v", created)
	}
	b, _ := json.Marshal(events[len(events)-1].data["response"])
	final := decodeResp(t, string(b))
	if diff := cmp.Diff([]string{"reasoning The user wants a table.", "message assistant completed output_text:Checking the diary first.", `function_call check {"time":"7pm","party_size":2}`}, outline(final)); diff != "" {
		t.Errorf("final response (-want +got):\n%s", diff)
	}

	// A failed answer ends the stream with response.failed.
	s.Add(&Rule{Match: Contains("break"), Reply: Reply{Fault: FaultFailed}})
	resp2, err := http.Post(s.URL+"/responses", "application/json", strings.NewReader(`{"model":"m","stream":true,"input":"break"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp2.Body.Close()
	events = readSSE(t, resp2.Body)
	if last := events[len(events)-1]; last.name != "response.failed" || last.data["response"].(map[string]any)["error"] == nil {
		t.Errorf("failed stream ends with %s %v", last.name, last.data)
	}
}

// TestResponsesLog: the request log has a line per Responses request,
// with its path, the whole conversation and the previous response's id.
func TestResponsesLog(t *testing.T) {
	var buf syncBuffer
	s, err := Start(Options{Log: &buf})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, body := postResponses(t, s, `{"model": "m", "input": "one"}`)
	first := decodeResp(t, body)
	postResponses(t, s, `{"model": "m", "input": "two", "previous_response_id": "`+first.ID+`"}`)
	postResponses(t, s, `{"model": "m", "input": "three", "previous_response_id": "resp_gone"}`)
	lines := buf.lines(t)
	if len(lines) != 3 {
		t.Fatalf("%d lines", len(lines))
	}
	if l := lines[1]; l.Path != "/v1/responses" || l.PreviousResponseID != first.ID || len(l.Messages) != 3 || l.Messages[2].Content != "two" || l.Status != 200 {
		t.Errorf("second line = %+v", l)
	}
	if l := lines[2]; l.Status != 400 || !regexp.MustCompile(`Previous response with id 'resp_gone' not found`).MatchString(l.Reply.Error) {
		t.Errorf("third line = %+v", l)
	}
}
