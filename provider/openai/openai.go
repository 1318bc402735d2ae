// Package openai is the agenteval.Model adapter for OpenAI's Chat
// Completions API and, with Config.API "responses", its Responses API
// (responses.go), over the official openai-go SDK. The same adapter serves
// every OpenAI-compatible server (Ollama, vLLM, llama.cpp, LM Studio,
// OpenRouter, Azure OpenAI's v1 endpoint) through the base URL, and the
// "ollama" provider is an alias with http://localhost:11434/v1 as its base.
//
// Importing it registers the "openai" and "ollama" providers. It imports the
// root package, provider and the SDK.
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/provider"
	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

func init() {
	provider.Register("openai", New, []string{"OPENAI_API_KEY"}, "OPENAI_BASE_URL")
	provider.RegisterAlias("ollama", "openai", "http://localhost:11434/v1", "OLLAMA_HOST")
}

type model struct {
	client sdk.Client
	name   string
	// base is the base URL, ending in /, for error messages.
	base string
	// responses speaks the Responses API; store is its store flag, and
	// threads, with store, the responses that continue conversations.
	responses bool
	store     bool
	threads   *threads
	// noTemperature is set once the model has refused a temperature (the
	// o-series reasoning models accept only their default).
	noTemperature atomic.Bool
}

// New builds the raw adapter. Use provider.Open, which adds retries and
// limits, rather than calling it directly.
func New(cfg provider.Config, client *http.Client) (agenteval.Model, error) {
	opts := []option.RequestOption{
		option.WithHTTPClient(client),
		option.WithMaxRetries(0), // provider.Open retries, the same way for every adapter
		option.WithAPIKey(cfg.APIKey),
	}
	base := "https://api.openai.com/v1/"
	if cfg.BaseURL != "" {
		base = strings.TrimRight(cfg.BaseURL, "/") + "/"
		opts = append(opts, option.WithBaseURL(base))
	}
	m := &model{client: sdk.NewClient(opts...), name: cfg.Model, base: base}
	switch cfg.API {
	case "", "chat":
		if cfg.Store != nil {
			return nil, fmt.Errorf("store is a setting of the Responses API; add api: responses, or remove store")
		}
	case "responses":
		m.responses, m.store = true, cfg.Store == nil || *cfg.Store
		if m.store {
			m.threads = newThreads()
		}
	default:
		return nil, fmt.Errorf("api %q is not one this adapter speaks: use chat (Chat Completions, the default) or responses (the Responses API)", cfg.API)
	}
	return m, nil
}

// The request and reply of chat completions. The SDK sends them (its
// client keeps authentication, base URL, headers and error decoding), but
// the bodies are our own plain structs: the SDK's reflective param types
// cost more CPU per call than the rest of the harness together, and a plain
// struct keeps a schema's property order as given.
type chatRequest struct {
	Model               string          `json:"model"`
	Messages            []chatMessage   `json:"messages"`
	Temperature         *float64        `json:"temperature,omitempty"`
	MaxCompletionTokens int             `json:"max_completion_tokens,omitempty"`
	Tools               []chatTool      `json:"tools,omitempty"`
	ResponseFormat      *responseFormat `json:"response_format,omitempty"`
}

type chatMessage struct {
	Role string `json:"role"`
	// Content is a *string, nil for an assistant message that only calls
	// tools, or []contentPart for a message with images (text and
	// image_url parts, as the chat API takes them). A plain field rather
	// than a MarshalJSON method: encoding/json re-validates and compacts
	// whatever a marshaler returns, which cost more than the encoding.
	Content    any        `json:"content,omitempty"`
	ToolCalls  []wireCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

type contentPart struct {
	Type     string    `json:"type"`
	Text     string    `json:"text,omitempty"`
	ImageURL *imageURL `json:"image_url,omitempty"`
}

type imageURL struct {
	URL string `json:"url"`
}

type wireCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type chatTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string         `json:"name"`
		Description string         `json:"description,omitempty"`
		Parameters  map[string]any `json:"parameters,omitempty"`
	} `json:"function"`
}

type responseFormat struct {
	Type       string `json:"type"`
	JSONSchema struct {
		Name   string `json:"name"`
		Strict bool   `json:"strict"`
		Schema any    `json:"schema"`
	} `json:"json_schema"`
}

type chatResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content   *string    `json:"content"`
			Refusal   *string    `json:"refusal"`
			ToolCalls []wireCall `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
	} `json:"usage"`
}

func (m *model) Generate(ctx context.Context, req *agenteval.ModelRequest) (*agenteval.ModelResponse, error) {
	if m.responses {
		return m.generateResponses(ctx, req)
	}
	body := chatRequest{Model: m.name, MaxCompletionTokens: req.MaxTokens}
	for _, msg := range req.Messages.WithCallIDs() {
		cm, err := toMessage(msg)
		if err != nil {
			return nil, err
		}
		body.Messages = append(body.Messages, cm)
	}
	if !m.noTemperature.Load() {
		body.Temperature = req.Temperature
	}
	for _, t := range req.Tools {
		var ct chatTool
		ct.Type = "function"
		ct.Function.Name, ct.Function.Description, ct.Function.Parameters = t.Name, t.Description, t.Parameters
		body.Tools = append(body.Tools, ct)
	}
	if req.Schema != nil {
		rf := &responseFormat{Type: "json_schema"}
		rf.JSONSchema.Name, rf.JSONSchema.Strict, rf.JSONSchema.Schema = req.Schema.Name, true, req.Schema.Schema
		if len(req.Schema.JSON) > 0 {
			rf.JSONSchema.Schema = json.RawMessage(req.Schema.JSON)
		}
		body.ResponseFormat = rf
	}
	resp, err := m.post(ctx, &body)
	if err != nil && body.Temperature != nil && refusesTemperature(err) {
		// Remember, and ask again at the model's own temperature.
		m.noTemperature.Store(true)
		body.Temperature = nil
		resp, err = m.post(ctx, &body)
	}
	if err != nil {
		return nil, err
	}
	if len(resp.Choices) == 0 {
		return nil, fmt.Errorf("the response has no choices")
	}
	ch := resp.Choices[0]
	out := &agenteval.ModelResponse{
		Message:      agenteval.Message{Role: agenteval.RoleAssistant},
		Model:        resp.Model,
		FinishReason: ch.FinishReason,
		Usage:        agenteval.Usage{InputTokens: resp.Usage.PromptTokens, OutputTokens: resp.Usage.CompletionTokens},
	}
	switch {
	case ch.Message.Content != nil && *ch.Message.Content != "":
		out.Message.Content = *ch.Message.Content
	case ch.Message.Refusal != nil && *ch.Message.Refusal != "":
		out.Message.Content = *ch.Message.Refusal
		out.FinishReason = "refusal"
	}
	for _, tc := range ch.Message.ToolCalls {
		call := agenteval.ToolCall{ID: tc.ID, Name: tc.Function.Name}
		call.Args, call.RawArgs = decodeArgs(tc.Function.Arguments)
		if agenteval.HasNestedObjects(call.Args) {
			call.KeyOrder = agenteval.KeyOrderOf([]byte(tc.Function.Arguments))
		}
		out.Message.ToolCalls = append(out.Message.ToolCalls, call)
	}
	return out, nil
}

func (m *model) post(ctx context.Context, body *chatRequest) (*chatResponse, error) {
	// Without HTML escaping: a judge's prompt is full of tags, and "\u003c"
	// for each "<" made its body a tenth longer to write and to read.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(body); err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	raw := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	var resp chatResponse
	if err := m.client.Post(ctx, "chat/completions", json.RawMessage(raw), &resp); err != nil {
		var apiErr *sdk.Error
		if errors.As(err, &apiErr) && apiErr.Message != "" {
			// The SDK's message is only the status line; the server's own
			// words say what is wrong.
			return nil, &apiError{status: apiErr.StatusCode, msg: apiErr.Message, err: err}
		}
		return nil, err
	}
	return &resp, nil
}

// apiError is an error answer from the API, with the server's message.
type apiError struct {
	status int
	msg    string
	err    error
}

func (e *apiError) Error() string { return fmt.Sprintf("%s (HTTP %d)", e.msg, e.status) }

func (e *apiError) Unwrap() error { return e.err }

// refusesTemperature recognises the 400 a model gives when it accepts only
// its default temperature.
func refusesTemperature(err error) bool {
	var ae *apiError
	return errors.As(err, &ae) && ae.status == http.StatusBadRequest && strings.Contains(strings.ToLower(ae.msg), "temperature")
}

// decodeArgs decodes OpenAI's JSON-string arguments at the edge; text that
// is not a JSON object is kept raw, so the call fails its checks instead of
// failing the run.
func decodeArgs(s string) (map[string]any, string) {
	if strings.TrimSpace(s) == "" {
		return map[string]any{}, ""
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil || dec.More() {
		return nil, s
	}
	return m, ""
}

func toMessage(m agenteval.Message) (chatMessage, error) {
	content := m.Content
	cm := chatMessage{Role: string(m.Role), Content: &content}
	switch m.Role {
	case agenteval.RoleSystem, agenteval.RoleUser:
		var parts []contentPart
		for _, p := range m.Parts {
			if p.Type != "image" || p.URL == "" {
				continue
			}
			if parts == nil {
				parts = []contentPart{{Type: "text", Text: m.Content}}
			}
			parts = append(parts, contentPart{Type: "image_url", ImageURL: &imageURL{URL: p.URL}})
		}
		if parts != nil {
			cm.Content = parts
		}
	case agenteval.RoleTool:
		cm.ToolCallID = m.ToolCallID
	case agenteval.RoleAssistant:
		if m.Content == "" && len(m.ToolCalls) > 0 {
			cm.Content = nil
		}
		for _, c := range m.ToolCalls {
			var wc wireCall
			wc.ID, wc.Type = c.ID, "function"
			wc.Function.Name, wc.Function.Arguments = c.Name, c.ArgsText()
			cm.ToolCalls = append(cm.ToolCalls, wc)
		}
	default:
		return cm, fmt.Errorf("cannot send a %q message to OpenAI", m.Role)
	}
	return cm, nil
}
