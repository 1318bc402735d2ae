package fakellm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

// The Responses API (POST /v1/responses), as OpenAI serves it and as the
// OpenAI Agents SDK, the Vercel AI SDK's openai provider and Mastra call it
// by default. A request is read into the same Request as a chat request:
// instructions become a system message, message items messages,
// function_call items an assistant message's tool calls,
// function_call_output items tool messages, function tools tools, and
// text.format a ResponseFormat. So the rules, scripts, defaults, faults and
// the request log serve both APIs alike. The answer is written back as
// output items (reasoning, message, function_call), in JSON or as the
// real event stream.
//
// Responses are stored (store is true unless the request says false), so
// that previous_response_id continues a conversation: the request's
// Messages are then the stored input and output of the chain before the
// items it sent, and its instructions, which the API does not carry over.
// An id the fake does not hold (never stored, or evicted) is the real 400,
// code previous_response_not_found.

// maxStored bounds the stored responses; the oldest go first.
const maxStored = 10000

// responseStore holds stored responses by id, and their output items by
// id for item_reference inputs.
type responseStore struct {
	mu    sync.Mutex
	resps map[string]*storedResponse
	items map[string]Message
	order []string
}

// storedResponse is what a later request continues: the conversation up
// to and including the response's output, without instructions.
type storedResponse struct {
	history []Message
	// bytes is the history's text size, for the usage estimate.
	bytes   int
	itemIDs []string
}

func (st *responseStore) get(id string) (*storedResponse, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	r, ok := st.resps[id]
	return r, ok
}

func (st *responseStore) item(id string) (Message, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	m, ok := st.items[id]
	return m, ok
}

func (st *responseStore) put(id string, r *storedResponse, items map[string]Message) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.resps == nil {
		st.resps, st.items = map[string]*storedResponse{}, map[string]Message{}
	}
	for len(st.order) >= maxStored {
		old := st.resps[st.order[0]]
		delete(st.resps, st.order[0])
		if old != nil {
			for _, iid := range old.itemIDs {
				delete(st.items, iid)
			}
		}
		st.order = st.order[1:]
	}
	for iid, m := range items {
		st.items[iid] = m
		r.itemIDs = append(r.itemIDs, iid)
	}
	st.resps[id] = r
	st.order = append(st.order, id)
}

// ForgetResponses drops the stored responses, as a server that lost
// them (a restart, an expiry) would: continuing one is then the 400 of an
// unknown previous_response_id.
func (s *Server) ForgetResponses() {
	st := &s.stored
	st.mu.Lock()
	defer st.mu.Unlock()
	st.resps, st.items, st.order = nil, nil, nil
}

// responsesBody is a Responses API request, as far as the fake reads it.
type responsesBody struct {
	Model              string            `json:"model"`
	Instructions       json.RawMessage   `json:"instructions"`
	Input              json.RawMessage   `json:"input"`
	Tools              []json.RawMessage `json:"tools"`
	ToolChoice         json.RawMessage   `json:"tool_choice"`
	Text               json.RawMessage   `json:"text"`
	Temperature        *float64          `json:"temperature"`
	TopP               *float64          `json:"top_p"`
	MaxOutputTokens    *int              `json:"max_output_tokens"`
	ParallelToolCalls  *bool             `json:"parallel_tool_calls"`
	Stream             bool              `json:"stream"`
	Store              *bool             `json:"store"`
	PreviousResponseID string            `json:"previous_response_id"`
	Conversation       json.RawMessage   `json:"conversation"`
	Metadata           map[string]string `json:"metadata"`
}

// respItem is an input or output item. Content, Output and Summary stay
// raw on input, where each may be a string or a list of parts.
type respInputItem struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Output    json.RawMessage `json:"output"`
}

type respFunctionTool struct {
	Type        string         `json:"type"`
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Parameters  map[string]any `json:"parameters"`
}

type respTextParam struct {
	Format *struct {
		Type   string         `json:"type"`
		Name   string         `json:"name"`
		Schema map[string]any `json:"schema"`
		Strict *bool          `json:"strict"`
	} `json:"format"`
}

// invalid is a 400 invalid_request_error about param.
func invalid(param, format string, args ...any) *apiErr {
	return &apiErr{status: 400, typ: "invalid_request_error", param: param, msg: fmt.Sprintf(format, args...)}
}

func (s *Server) handleResponses(w http.ResponseWriter, r *http.Request) {
	s.calls.Add(1)
	var body responsesBody
	raw, err := readAll(r)
	if err == nil {
		err = json.Unmarshal(raw, &body)
	}
	if err != nil {
		writeError(w, 400, "invalid_request_error", "request body is not valid JSON: "+err.Error())
		return
	}
	req := &Request{Model: body.Model, Temperature: body.Temperature, Stream: body.Stream, Raw: raw, Header: r.Header,
		Path: r.URL.Path, PreviousResponseID: body.PreviousResponseID, Store: body.Store}
	rt := &respTurn{body: &body}
	reject := s.readResponses(req, rt)
	s.serve(w, r, req, reject, rt.answer(s))
}

// respTurn is one Responses API request on its way to an answer.
type respTurn struct {
	body *responsesBody
	// prev is the stored response it continues, if any; input the
	// messages its own items made.
	prev  *storedResponse
	input []Message
}

// readResponses fills req from the body: the conversation (instructions,
// the stored chain, the input items), tools and format. A request the
// API would refuse gets the error to answer with.
func (s *Server) readResponses(req *Request, rt *respTurn) *apiErr {
	body := rt.body
	if len(body.Conversation) > 0 && string(body.Conversation) != "null" {
		return invalid("conversation", "fakellm does not serve the Conversations API; continue a conversation with previous_response_id, or send the whole input")
	}
	if len(body.Instructions) > 0 && string(body.Instructions) != "null" {
		var text string
		if json.Unmarshal(body.Instructions, &text) == nil {
			if text != "" {
				req.Messages = append(req.Messages, textMessage("system", text))
			}
		} else {
			ms, e := s.readItems(body.Instructions, "instructions")
			if e != nil {
				return e
			}
			req.Messages = append(req.Messages, ms...)
		}
	}
	if id := body.PreviousResponseID; id != "" {
		prev, ok := s.stored.get(id)
		if !ok {
			return &apiErr{status: 400, typ: "invalid_request_error", code: "previous_response_not_found", param: "previous_response_id",
				msg: fmt.Sprintf("Previous response with id '%s' not found.", id)}
		}
		rt.prev = prev
		req.Messages = append(req.Messages, prev.history...)
	}
	var input []Message
	var text string
	switch {
	case len(body.Input) == 0 || string(body.Input) == "null":
		if body.PreviousResponseID == "" && len(req.Messages) == 0 {
			return invalid("input", "Missing required parameter: 'input'.")
		}
	case json.Unmarshal(body.Input, &text) == nil:
		input = []Message{textMessage("user", text)}
	default:
		ms, e := s.readItems(body.Input, "input")
		if e != nil {
			return e
		}
		input = ms
	}
	rt.input = input
	req.Messages = appendMessages(req.Messages, input)
	for i, t := range body.Tools {
		var ft respFunctionTool
		if err := json.Unmarshal(t, &ft); err != nil {
			return invalid(fmt.Sprintf("tools[%d]", i), "Invalid tool: %v", err)
		}
		if ft.Type != "function" {
			continue // hosted tools (web_search, file_search, ...) the fake never calls
		}
		if ft.Name == "" {
			return invalid(fmt.Sprintf("tools[%d].name", i), "Missing required parameter: 'tools[%d].name'.", i)
		}
		var wt wireTool
		wt.Type = "function"
		wt.Function.Name, wt.Function.Description, wt.Function.Parameters = ft.Name, ft.Description, ft.Parameters
		req.Tools = append(req.Tools, wt)
	}
	if len(body.Text) > 0 && string(body.Text) != "null" {
		var tp respTextParam
		if err := json.Unmarshal(body.Text, &tp); err != nil {
			return invalid("text", "Invalid 'text': %v", err)
		}
		if f := tp.Format; f != nil {
			switch f.Type {
			case "json_schema":
				if f.Name == "" {
					return invalid("text.format.name", "Missing required parameter: 'text.format.name'.")
				}
				rf := &ResponseFormat{Type: "json_schema"}
				rf.JSONSchema = &struct {
					Name   string         `json:"name"`
					Schema map[string]any `json:"schema"`
					Strict bool           `json:"strict"`
				}{Name: f.Name, Schema: f.Schema, Strict: f.Strict != nil && *f.Strict}
				req.ResponseFormat = rf
			case "json_object":
				req.ResponseFormat = &ResponseFormat{Type: "json_object"}
			}
		}
	}
	return nil
}

// textMessage is a message of plain text.
func textMessage(role, text string) Message {
	b, _ := json.Marshal(text)
	return Message{Role: role, Content: b}
}

// appendMessages appends ms to to, joining a message of tool calls to the
// assistant message before it, as chat completions holds them. Messages
// already in to are copied, not changed: they may be a stored history.
func appendMessages(to, ms []Message) []Message {
	out := append([]Message(nil), to...)
	for _, m := range ms {
		if n := len(out); n > 0 && m.Role == "assistant" && len(m.ToolCalls) > 0 && len(m.Content) == 0 &&
			out[n-1].Role == "assistant" {
			last := out[n-1]
			last.ToolCalls = append(last.ToolCalls[:len(last.ToolCalls):len(last.ToolCalls)], m.ToolCalls...)
			out[n-1] = last
			continue
		}
		out = append(out, m)
	}
	return out
}

// readItems reads a list of input items into messages.
func (s *Server) readItems(raw json.RawMessage, param string) ([]Message, *apiErr) {
	var items []respInputItem
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, invalid(param, "Invalid type for '%s': expected a string or an array of input items: %v", param, err)
	}
	var out []Message
	for i, it := range items {
		at := fmt.Sprintf("%s[%d]", param, i)
		switch it.Type {
		case "", "message":
			role := it.Role
			switch role {
			case "user", "assistant", "system":
			case "developer":
				role = "system"
			default:
				return nil, invalid(at+".role", "Invalid value for '%s.role': %q; supported values are 'user', 'assistant', 'system' and 'developer'.", at, it.Role)
			}
			m, err := partsMessage(role, it.Content)
			if err != nil {
				return nil, invalid(at+".content", "Invalid '%s.content': %v", at, err)
			}
			out = appendMessages(out, []Message{m})
		case "function_call":
			if it.CallID == "" || it.Name == "" {
				return nil, invalid(at, "A function_call item needs call_id and name.")
			}
			var c wireToolCall
			c.ID, c.Type, c.Function.Name, c.Function.Arguments = it.CallID, "function", it.Name, it.Arguments
			out = appendMessages(out, []Message{{Role: "assistant", ToolCalls: []wireToolCall{c}}})
		case "function_call_output":
			if it.CallID == "" {
				return nil, invalid(at+".call_id", "Missing required parameter: '%s.call_id'.", at)
			}
			text, err := partsText(it.Output)
			if err != nil {
				return nil, invalid(at+".output", "Invalid '%s.output': %v", at, err)
			}
			m := textMessage("tool", text)
			m.ToolCallID = it.CallID
			out = append(out, m)
		case "item_reference":
			m, ok := s.stored.item(it.ID)
			if !ok {
				return nil, invalid(at, "Item with id '%s' not found.", it.ID)
			}
			if m.Role != "" {
				out = appendMessages(out, []Message{m})
			}
		default:
			// Reasoning items and hosted tools' calls carry nothing the
			// fake answers from.
		}
	}
	return out, nil
}

// partsMessage reads a message's content: a string, or a list of parts
// (input_text, output_text, refusal, input_image). Images are kept as
// chat content parts, so Text still reads the text.
func partsMessage(role string, raw json.RawMessage) (Message, error) {
	var text string
	if len(raw) == 0 || string(raw) == "null" || json.Unmarshal(raw, &text) == nil {
		return textMessage(role, text), nil
	}
	var parts []struct {
		Type     string          `json:"type"`
		Text     string          `json:"text"`
		Refusal  string          `json:"refusal"`
		ImageURL json.RawMessage `json:"image_url"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return Message{}, fmt.Errorf("expected a string or an array of content parts")
	}
	var chat []map[string]any
	var b strings.Builder
	images := false
	for _, p := range parts {
		switch p.Type {
		case "input_text", "output_text", "text":
			b.WriteString(p.Text)
			chat = append(chat, map[string]any{"type": "text", "text": p.Text})
		case "refusal":
			b.WriteString(p.Refusal)
			chat = append(chat, map[string]any{"type": "text", "text": p.Refusal})
		case "input_image":
			var url string
			json.Unmarshal(p.ImageURL, &url)
			images = true
			chat = append(chat, map[string]any{"type": "image_url", "image_url": map[string]any{"url": url}})
		}
	}
	if !images {
		return textMessage(role, b.String()), nil
	}
	c, _ := json.Marshal(chat)
	return Message{Role: role, Content: c}, nil
}

// partsText is a function_call_output's output as text.
func partsText(raw json.RawMessage) (string, error) {
	m, err := partsMessage("tool", raw)
	if err != nil {
		return "", err
	}
	return m.Text(), nil
}

// The output items and the response object, as the API writes them.
type respItem struct {
	ID        string         `json:"id"`
	Type      string         `json:"type"`
	Status    string         `json:"status,omitempty"`
	Role      string         `json:"role,omitempty"`
	Content   *[]respPart    `json:"content,omitempty"`
	CallID    string         `json:"call_id,omitempty"`
	Name      string         `json:"name,omitempty"`
	Arguments *string        `json:"arguments,omitempty"`
	Summary   *[]respSummary `json:"summary,omitempty"`
}

type respPart struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Annotations []any  `json:"annotations"`
	Logprobs    []any  `json:"logprobs"`
}

type respSummary struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type respUsage struct {
	InputTokens        int `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens int `json:"total_tokens"`
}

type respError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type respIncomplete struct {
	Reason string `json:"reason"`
}

type respReasoning struct {
	Effort  *string `json:"effort"`
	Summary *string `json:"summary"`
}

type respObject struct {
	ID                 string            `json:"id"`
	Object             string            `json:"object"`
	CreatedAt          int64             `json:"created_at"`
	Status             string            `json:"status"`
	CompletedAt        *int64            `json:"completed_at"`
	Error              *respError        `json:"error"`
	IncompleteDetails  *respIncomplete   `json:"incomplete_details"`
	Instructions       json.RawMessage   `json:"instructions"`
	MaxOutputTokens    *int              `json:"max_output_tokens"`
	Model              string            `json:"model"`
	Output             []respItem        `json:"output"`
	ParallelToolCalls  bool              `json:"parallel_tool_calls"`
	PreviousResponseID *string           `json:"previous_response_id"`
	Reasoning          respReasoning     `json:"reasoning"`
	Store              bool              `json:"store"`
	Temperature        float64           `json:"temperature"`
	Text               json.RawMessage   `json:"text"`
	ToolChoice         json.RawMessage   `json:"tool_choice"`
	Tools              []json.RawMessage `json:"tools"`
	TopP               float64           `json:"top_p"`
	Truncation         string            `json:"truncation"`
	Usage              *respUsage        `json:"usage"`
	User               *string           `json:"user"`
	Metadata           map[string]string `json:"metadata"`
}

// answer returns the function that writes a reply as a response.
func (rt *respTurn) answer(s *Server) func(http.ResponseWriter, *Request, Reply, *LogEntry) {
	return func(w http.ResponseWriter, req *Request, reply Reply, le *LogEntry) {
		histBytes := 0
		if rt.prev != nil {
			histBytes = rt.prev.bytes
		}
		if reply.PromptTokens == 0 {
			// The whole context counts, the stored part too.
			reply.PromptTokens = tokensFor(len(req.Raw) + histBytes)
		}
		resp := rt.object()
		resp.ID = fmt.Sprintf("resp_fake%d", s.ids.Add(1))
		failed := reply.Fault == FaultFailed
		var rs resolved
		var stored map[string]Message
		var out []Message
		switch {
		case failed:
			resp.Status, resp.Output = "failed", []respItem{}
			resp.Error = &respError{Code: "server_error", Message: "The model failed to generate a response."}
			rs.usage.PromptTokens = reply.PromptTokens
			if le != nil {
				le.Status, le.Reply.Error = 200, "status failed: "+resp.Error.Message
				s.flushLog(le)
			}
		default:
			rs = s.resolve(req, reply, le)
			resp.Status = "completed"
			if reply.Incomplete != "" {
				resp.Status = "incomplete"
				resp.IncompleteDetails = &respIncomplete{Reason: reply.Incomplete}
			}
			stored = map[string]Message{}
			itemStatus := map[bool]string{true: "incomplete", false: "completed"}[reply.Incomplete != ""]
			if len(reply.Reasoning) > 0 {
				sum := make([]respSummary, len(reply.Reasoning))
				for i, t := range reply.Reasoning {
					sum[i] = respSummary{Type: "summary_text", Text: t}
				}
				resp.Output = append(resp.Output, respItem{ID: fmt.Sprintf("rs_fake%d", s.ids.Add(1)), Type: "reasoning", Summary: &sum})
			}
			if rs.content != "" {
				parts := []respPart{{Type: "output_text", Text: rs.content, Annotations: []any{}, Logprobs: []any{}}}
				it := respItem{ID: fmt.Sprintf("msg_fake%d", s.ids.Add(1)), Type: "message", Status: itemStatus, Role: "assistant", Content: &parts}
				resp.Output = append(resp.Output, it)
				m := textMessage("assistant", rs.content)
				stored[it.ID] = m
				out = append(out, m)
			}
			for _, c := range rs.calls {
				args := c.Function.Arguments
				it := respItem{ID: fmt.Sprintf("fc_fake%d", s.ids.Add(1)), Type: "function_call", Status: "completed", CallID: c.ID, Name: c.Function.Name, Arguments: &args}
				resp.Output = append(resp.Output, it)
				m := Message{Role: "assistant", ToolCalls: []wireToolCall{{ID: c.ID, Type: "function", Function: c.Function}}}
				stored[it.ID] = m
				out = appendMessages(out, []Message{m})
			}
			if resp.Output == nil {
				resp.Output = []respItem{}
			}
			now := time.Now().Unix()
			if resp.Status == "completed" {
				resp.CompletedAt = &now
			}
		}
		u := &respUsage{InputTokens: rs.usage.PromptTokens, OutputTokens: rs.usage.CompletionTokens}
		if failed {
			u.OutputTokens = 0
		}
		if histBytes > 0 {
			u.InputTokensDetails.CachedTokens = min(tokensFor(histBytes), u.InputTokens)
		}
		for _, t := range reply.Reasoning {
			u.OutputTokensDetails.ReasoningTokens += estimateTokens(t)
		}
		u.OutputTokens += u.OutputTokensDetails.ReasoningTokens
		u.TotalTokens = u.InputTokens + u.OutputTokens
		resp.Usage = u
		if !failed && resp.Store {
			// The chain's conversation, without instructions: the API
			// does not carry them over.
			var hist []Message
			n := 0
			if rt.prev != nil {
				hist, n = rt.prev.history, rt.prev.bytes
			}
			hist = appendMessages(appendMessages(hist, rt.input), out)
			for _, m := range rt.input {
				n += messageBytes(m)
			}
			for _, m := range out {
				n += messageBytes(m)
			}
			s.stored.put(resp.ID, &storedResponse{history: hist, bytes: n}, stored)
		}
		if req.Stream {
			s.streamResponse(w, resp)
			return
		}
		writeJSON(w, 200, resp)
	}
}

// messageBytes is a message's size for the usage estimate.
func messageBytes(m Message) int {
	n := len(m.Content)
	for _, c := range m.ToolCalls {
		n += len(c.Function.Name) + len(c.Function.Arguments)
	}
	return n
}

// object is the response's settings, echoed from the request as the API
// does.
func (rt *respTurn) object() *respObject {
	b := rt.body
	resp := &respObject{Object: "response", CreatedAt: time.Now().Unix(), Model: b.Model, MaxOutputTokens: b.MaxOutputTokens,
		ParallelToolCalls: true, Store: b.Store == nil || *b.Store, Temperature: 1, TopP: 1, Truncation: "disabled",
		Instructions: json.RawMessage("null"), Text: json.RawMessage(`{"format":{"type":"text"}}`), ToolChoice: json.RawMessage(`"auto"`),
		Tools: b.Tools, Metadata: b.Metadata}
	if len(b.Instructions) > 0 {
		resp.Instructions = b.Instructions
	}
	if len(b.Text) > 0 && string(b.Text) != "null" {
		resp.Text = b.Text
	}
	if len(b.ToolChoice) > 0 && string(b.ToolChoice) != "null" {
		resp.ToolChoice = b.ToolChoice
	}
	if resp.Tools == nil {
		resp.Tools = []json.RawMessage{}
	}
	if resp.Metadata == nil {
		resp.Metadata = map[string]string{}
	}
	if b.ParallelToolCalls != nil {
		resp.ParallelToolCalls = *b.ParallelToolCalls
	}
	if b.PreviousResponseID != "" {
		p := b.PreviousResponseID
		resp.PreviousResponseID = &p
	}
	if b.Temperature != nil {
		resp.Temperature = *b.Temperature
	}
	if b.TopP != nil {
		resp.TopP = *b.TopP
	}
	return resp
}

// streamResponse writes the response as the API streams it: server-sent
// events, each named by an event line and typed in its data, numbered by
// sequence_number. response.created and response.in_progress carry the
// response with no output yet; each output item is added, streamed in
// deltas and done; the last event carries the whole response:
// response.completed, response.incomplete or response.failed. There is no
// [DONE] line: the stream ends with the connection.
func (s *Server) streamResponse(w http.ResponseWriter, resp *respObject) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(200)
	fl, _ := w.(http.Flusher)
	seq := 0
	var buf bytes.Buffer
	emit := func(typ string, fields map[string]any) {
		fields["type"], fields["sequence_number"] = typ, seq
		seq++
		buf.Reset()
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.Encode(fields)
		fmt.Fprintf(w, "event: %s\ndata: %s\n", typ, buf.Bytes())
		if fl != nil {
			fl.Flush()
		}
	}
	start := *resp
	start.Status, start.Output, start.Usage, start.CompletedAt, start.Error, start.IncompleteDetails = "in_progress", []respItem{}, nil, nil, nil, nil
	emit("response.created", map[string]any{"response": &start})
	emit("response.in_progress", map[string]any{"response": &start})
	for i, it := range resp.Output {
		added := it
		switch it.Type {
		case "message":
			added.Status, added.Content = "in_progress", &[]respPart{}
		case "function_call":
			empty := ""
			added.Status, added.Arguments = "in_progress", &empty
		case "reasoning":
			added.Summary = &[]respSummary{}
		}
		emit("response.output_item.added", map[string]any{"output_index": i, "item": added})
		switch it.Type {
		case "message":
			for j, p := range *it.Content {
				emit("response.content_part.added", map[string]any{"item_id": it.ID, "output_index": i, "content_index": j,
					"part": respPart{Type: p.Type, Annotations: []any{}, Logprobs: []any{}}})
				for _, piece := range split(p.Text, 16) {
					emit("response.output_text.delta", map[string]any{"item_id": it.ID, "output_index": i, "content_index": j, "delta": piece, "logprobs": []any{}})
				}
				emit("response.output_text.done", map[string]any{"item_id": it.ID, "output_index": i, "content_index": j, "text": p.Text, "logprobs": []any{}})
				emit("response.content_part.done", map[string]any{"item_id": it.ID, "output_index": i, "content_index": j, "part": p})
			}
		case "function_call":
			for _, piece := range split(*it.Arguments, 16) {
				emit("response.function_call_arguments.delta", map[string]any{"item_id": it.ID, "output_index": i, "delta": piece})
			}
			emit("response.function_call_arguments.done", map[string]any{"item_id": it.ID, "output_index": i, "name": it.Name, "arguments": *it.Arguments})
		case "reasoning":
			for j, p := range *it.Summary {
				emit("response.reasoning_summary_part.added", map[string]any{"item_id": it.ID, "output_index": i, "summary_index": j, "part": respSummary{Type: "summary_text"}})
				for _, piece := range split(p.Text, 16) {
					emit("response.reasoning_summary_text.delta", map[string]any{"item_id": it.ID, "output_index": i, "summary_index": j, "delta": piece})
				}
				emit("response.reasoning_summary_text.done", map[string]any{"item_id": it.ID, "output_index": i, "summary_index": j, "text": p.Text})
				emit("response.reasoning_summary_part.done", map[string]any{"item_id": it.ID, "output_index": i, "summary_index": j, "part": p})
			}
		}
		emit("response.output_item.done", map[string]any{"output_index": i, "item": it})
	}
	final := "response.completed"
	switch resp.Status {
	case "incomplete":
		final = "response.incomplete"
	case "failed":
		final = "response.failed"
	}
	emit(final, map[string]any{"response": resp})
}
