package openai

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/agenteval/agenteval"
	sdk "github.com/openai/openai-go/v3"
)

// The Responses API (api: responses): POST {base}/responses. A
// conversation's first system message is the instructions; the rest are
// input items: messages, function_call items for the assistant's tool
// calls and function_call_output items for their results. The reply's
// message items are the content, its function_call items the tool calls,
// its reasoning items go to the message's metadata.
//
// With store (the default) a conversation is threaded: each response's id
// is remembered under a hash of the conversation it ends (the request's
// messages and the reply), and a later request whose messages begin with
// that conversation sends only the messages after it, with
// previous_response_id. A server that no longer holds the response
// (previous_response_not_found) gets the whole input again, once, in the
// same call. With store false every call sends the whole input.

// respRequest is a Responses API request. Plain structs, as for chat: a
// schema keeps its property order.
type respRequest struct {
	Model              string      `json:"model"`
	Instructions       string      `json:"instructions,omitempty"`
	Input              []respInput `json:"input"`
	Tools              []respTool  `json:"tools,omitempty"`
	Temperature        *float64    `json:"temperature,omitempty"`
	MaxOutputTokens    int         `json:"max_output_tokens,omitempty"`
	Text               *respText   `json:"text,omitempty"`
	Store              bool        `json:"store"`
	PreviousResponseID string      `json:"previous_response_id,omitempty"`
}

// respInput is an input item: a message (Role, Content), a function_call
// (CallID, Name, Arguments) or a function_call_output (CallID, Output).
type respInput struct {
	Type string `json:"type"`
	Role string `json:"role,omitempty"`
	// Content is a string, or []respPart for a message with images.
	Content   any     `json:"content,omitempty"`
	CallID    string  `json:"call_id,omitempty"`
	Name      string  `json:"name,omitempty"`
	Arguments string  `json:"arguments,omitempty"`
	Output    *string `json:"output,omitempty"`
}

type respPart struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	ImageURL string `json:"image_url,omitempty"`
	Detail   string `json:"detail,omitempty"`
}

// respTool is a function tool. The API requires parameters and strict;
// strict is false, as a suite's schemas are not written for strict mode
// (where every property is required and no other is allowed).
type respTool struct {
	Type        string         `json:"type"`
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters"`
	Strict      bool           `json:"strict"`
}

type respText struct {
	Format respFormat `json:"format"`
}

type respFormat struct {
	Type   string `json:"type"`
	Name   string `json:"name"`
	Schema any    `json:"schema"`
	Strict bool   `json:"strict"`
}

// respResponse is the part of a response the adapter reads.
type respResponse struct {
	ID     string `json:"id"`
	Model  string `json:"model"`
	Status string `json:"status"`
	Error  *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Output []struct {
		Type    string `json:"type"`
		ID      string `json:"id"`
		Content []struct {
			Type    string `json:"type"`
			Text    string `json:"text"`
			Refusal string `json:"refusal"`
		} `json:"content"`
		CallID    string `json:"call_id"`
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
		Summary   []struct {
			Text string `json:"text"`
		} `json:"summary"`
	} `json:"output"`
	Usage struct {
		InputTokens        int64 `json:"input_tokens"`
		InputTokensDetails struct {
			CachedTokens int64 `json:"cached_tokens"`
		} `json:"input_tokens_details"`
		OutputTokens        int64 `json:"output_tokens"`
		OutputTokensDetails struct {
			ReasoningTokens int64 `json:"reasoning_tokens"`
		} `json:"output_tokens_details"`
	} `json:"usage"`
}

// generateResponses is Generate over the Responses API.
func (m *model) generateResponses(ctx context.Context, req *agenteval.ModelRequest) (*agenteval.ModelResponse, error) {
	msgs := req.Messages.WithCallIDs()
	items := make([][]respInput, len(msgs))
	for i, msg := range msgs {
		it, err := toItems(msg)
		if err != nil {
			return nil, err
		}
		items[i] = it
	}
	body := respRequest{Model: m.name, MaxOutputTokens: req.MaxTokens, Store: m.store}
	first := 0
	if len(msgs) > 0 && msgs[0].Role == agenteval.RoleSystem && !hasImages(msgs[0]) {
		body.Instructions, first = msgs[0].Content, 1
	}
	if !m.noTemperature.Load() {
		body.Temperature = req.Temperature
	}
	for _, t := range req.Tools {
		params := t.Parameters
		if params == nil {
			params = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		body.Tools = append(body.Tools, respTool{Type: "function", Name: t.Name, Description: t.Description, Parameters: params})
	}
	if req.Schema != nil {
		f := respFormat{Type: "json_schema", Name: req.Schema.Name, Schema: req.Schema.Schema, Strict: true}
		if len(req.Schema.JSON) > 0 {
			f.Schema = json.RawMessage(req.Schema.JSON)
		}
		body.Text = &respText{Format: f}
	}
	var chain []threadKey
	start := first
	if m.threads != nil {
		chain = chainOf(items)
		if k, id := m.threads.find(msgs, chain); k > 0 {
			body.PreviousResponseID, start = id, max(k, first)
		}
	}
	body.Input = flatten(items[start:])
	var resp *respResponse
	for {
		var err error
		resp, err = m.postResponses(ctx, &body)
		switch {
		case err == nil:
		case body.PreviousResponseID != "" && previousNotFound(err):
			// The server no longer holds it (expired, or another
			// server): the whole conversation, in the same call.
			m.threads.forget(body.PreviousResponseID)
			body.PreviousResponseID, body.Input = "", flatten(items[first:])
			continue
		case body.Temperature != nil && refusesTemperature(err):
			// Remember, and ask again at the model's own temperature.
			m.noTemperature.Store(true)
			body.Temperature = nil
			continue
		default:
			return nil, err
		}
		break
	}
	out, err := readResponse(resp)
	if err != nil {
		return nil, err
	}
	if m.threads != nil && resp.ID != "" {
		reply, err := toItems(out.Message)
		if err == nil {
			m.threads.remember(next(chainEnd(chain), reply), resp.ID)
		}
	}
	return out, nil
}

// readResponse turns a response into the assistant's message.
func readResponse(resp *respResponse) (*agenteval.ModelResponse, error) {
	if resp.Status == "failed" || resp.Error != nil {
		code, msg := "", "no reason given"
		if resp.Error != nil {
			code, msg = resp.Error.Code, resp.Error.Message
		}
		if code != "" {
			msg = code + ": " + msg
		}
		return nil, fmt.Errorf("the response %s failed: %s", resp.ID, msg)
	}
	out := &agenteval.ModelResponse{
		Message: agenteval.Message{Role: agenteval.RoleAssistant},
		Model:   resp.Model,
		Usage:   agenteval.Usage{InputTokens: resp.Usage.InputTokens, OutputTokens: resp.Usage.OutputTokens},
	}
	var text strings.Builder
	refused := false
	var reasoning []map[string]any
	for _, it := range resp.Output {
		switch it.Type {
		case "message":
			for _, c := range it.Content {
				switch c.Type {
				case "output_text":
					text.WriteString(c.Text)
				case "refusal":
					text.WriteString(c.Refusal)
					refused = true
				}
			}
		case "function_call":
			call := agenteval.ToolCall{ID: it.CallID, Name: it.Name}
			call.Args, call.RawArgs = decodeArgs(it.Arguments)
			if agenteval.HasNestedObjects(call.Args) {
				call.KeyOrder = agenteval.KeyOrderOf([]byte(it.Arguments))
			}
			out.Message.ToolCalls = append(out.Message.ToolCalls, call)
		case "reasoning":
			summary := make([]string, 0, len(it.Summary))
			for _, s := range it.Summary {
				summary = append(summary, s.Text)
			}
			reasoning = append(reasoning, map[string]any{"id": it.ID, "summary": summary})
		}
	}
	out.Message.Content = text.String()
	switch {
	case resp.Status == "incomplete":
		reason := ""
		if resp.IncompleteDetails != nil {
			reason = resp.IncompleteDetails.Reason
		}
		// The chat path's words for the same ends.
		switch reason {
		case "max_output_tokens":
			out.FinishReason = "length"
		case "content_filter":
			out.FinishReason = "content_filter"
		default:
			out.FinishReason = strings.TrimSuffix("incomplete: "+reason, ": ")
		}
	case refused:
		out.FinishReason = "refusal"
	case len(out.Message.ToolCalls) > 0:
		out.FinishReason = "tool_calls"
	default:
		out.FinishReason = "stop"
	}
	meta := map[string]any{}
	if resp.ID != "" {
		meta["response_id"] = resp.ID
	}
	if reasoning != nil {
		meta["reasoning"] = reasoning
	}
	// Usage counts cached input in the input tokens and reasoning in the
	// output tokens, as the API does; their share is kept here.
	details := map[string]any{}
	if n := resp.Usage.InputTokensDetails.CachedTokens; n > 0 {
		details["cached_tokens"] = n
	}
	if n := resp.Usage.OutputTokensDetails.ReasoningTokens; n > 0 {
		details["reasoning_tokens"] = n
	}
	if len(details) > 0 {
		meta["usage_details"] = details
	}
	if len(meta) > 0 {
		out.Message.Metadata = meta
	}
	return out, nil
}

func (m *model) postResponses(ctx context.Context, body *respRequest) (*respResponse, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(body); err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	raw := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	var resp respResponse
	if err := m.client.Post(ctx, "responses", json.RawMessage(raw), &resp); err != nil {
		var apiErr *sdk.Error
		if errors.As(err, &apiErr) {
			switch {
			case apiErr.Message != "":
				return nil, &apiError{status: apiErr.StatusCode, msg: apiErr.Message, err: err}
			case apiErr.StatusCode == http.StatusNotFound:
				// A server that speaks only chat completions.
				return nil, &apiError{status: apiErr.StatusCode, err: err,
					msg: "nothing answers POST " + m.base + "responses: the server may not serve the Responses API; api: chat speaks Chat Completions"}
			}
		}
		return nil, err
	}
	return &resp, nil
}

// previousNotFound recognises the 400 of a previous_response_id the
// server does not hold.
func previousNotFound(err error) bool {
	var apiErr *sdk.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest {
		return false
	}
	return apiErr.Code == "previous_response_not_found" ||
		(apiErr.Param == "previous_response_id" && strings.Contains(strings.ToLower(apiErr.Message), "not found"))
}

func hasImages(m agenteval.Message) bool {
	for _, p := range m.Parts {
		if p.Type == "image" && p.URL != "" {
			return true
		}
	}
	return false
}

// toItems is a message as input items.
func toItems(m agenteval.Message) ([]respInput, error) {
	switch m.Role {
	case agenteval.RoleSystem, agenteval.RoleUser:
		it := respInput{Type: "message", Role: string(m.Role), Content: m.Content}
		if m.Role == agenteval.RoleUser && hasImages(m) {
			parts := []respPart{{Type: "input_text", Text: m.Content}}
			for _, p := range m.Parts {
				if p.Type == "image" && p.URL != "" {
					parts = append(parts, respPart{Type: "input_image", ImageURL: p.URL, Detail: "auto"})
				}
			}
			it.Content = parts
		}
		return []respInput{it}, nil
	case agenteval.RoleAssistant:
		var out []respInput
		if m.Content != "" || len(m.ToolCalls) == 0 {
			out = append(out, respInput{Type: "message", Role: "assistant", Content: m.Content})
		}
		for _, c := range m.ToolCalls {
			out = append(out, respInput{Type: "function_call", CallID: c.ID, Name: c.Name, Arguments: c.ArgsText()})
		}
		return out, nil
	case agenteval.RoleTool:
		content := m.Content
		return []respInput{{Type: "function_call_output", CallID: m.ToolCallID, Output: &content}}, nil
	}
	return nil, fmt.Errorf("cannot send a %q message to OpenAI", m.Role)
}

func flatten(items [][]respInput) []respInput {
	out := []respInput{}
	for _, it := range items {
		out = append(out, it...)
	}
	return out
}

// threadKey identifies a conversation: a hash chained over its messages'
// input items.
type threadKey [sha256.Size]byte

// next chains one message's items onto a key.
func next(prev threadKey, items []respInput) threadKey {
	h := sha256.New()
	h.Write(prev[:])
	b, _ := json.Marshal(items)
	h.Write(b)
	var k threadKey
	h.Sum(k[:0])
	return k
}

// chainOf is the key of each prefix of a conversation: chain[i] is that
// of its first i+1 messages.
func chainOf(items [][]respInput) []threadKey {
	out := make([]threadKey, len(items))
	var k threadKey
	for i, it := range items {
		k = next(k, it)
		out[i] = k
	}
	return out
}

func chainEnd(chain []threadKey) threadKey {
	if len(chain) == 0 {
		return threadKey{}
	}
	return chain[len(chain)-1]
}

// maxThreads bounds the remembered responses: a run's conversations in
// flight need a few each; the oldest go first.
const maxThreads = 4096

// threads remembers, per conversation, the response that ended it.
type threads struct {
	mu    sync.Mutex
	ids   map[threadKey]string
	order []threadKey
}

func newThreads() *threads { return &threads{ids: map[threadKey]string{}} }

// find is the longest prefix of msgs (short of all of them) that ends
// with an assistant message a remembered response gave: its length and
// the response's id, or 0 and "".
func (t *threads) find(msgs agenteval.Conversation, chain []threadKey) (int, string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k := len(msgs) - 1; k >= 1; k-- {
		if msgs[k-1].Role != agenteval.RoleAssistant {
			continue
		}
		if id, ok := t.ids[chain[k-1]]; ok {
			return k, id
		}
	}
	return 0, ""
}

func (t *threads) remember(k threadKey, id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.ids[k]; !ok {
		for len(t.order) >= maxThreads {
			delete(t.ids, t.order[0])
			t.order = t.order[1:]
		}
		t.order = append(t.order, k)
	}
	t.ids[k] = id
}

// forget drops a response the server no longer holds.
func (t *threads) forget(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, v := range t.ids {
		if v == id {
			delete(t.ids, k)
		}
	}
}
