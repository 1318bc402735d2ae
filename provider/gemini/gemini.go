// Package gemini is the agenteval.Model adapter for Google's Gemini API
// (generateContent, keyed by GEMINI_API_KEY or GOOGLE_API_KEY), spoken
// over net/http. Structured output uses the API's responseJsonSchema.
//
// It speaks the REST API itself rather than through the google.golang.org/genai
// SDK: one call and its JSON are all agenteval needs, and the SDK brought
// Google Cloud's authentication and gRPC packages into every build of the
// CLI (96 packages, 4 % of a first build's CPU and 4.7 MB of its binary)
// for the Vertex AI backend, which agenteval does not use.
//
// Importing it registers the "gemini" provider. It imports the root
// package, provider and the standard library.
package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/provider"
)

func init() {
	provider.Register("gemini", New, []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"}, "GOOGLE_GEMINI_BASE_URL")
}

// defaultBaseURL is the Gemini API's; the API version follows it.
const (
	defaultBaseURL = "https://generativelanguage.googleapis.com/"
	apiVersion     = "v1beta"
)

// maxErrorBody bounds what is read of an error response for its message.
const maxErrorBody = 64 << 10

type model struct {
	client *http.Client
	url    string // the model's generateContent endpoint
	key    string
	name   string
}

// New builds the raw adapter; use provider.Open, which adds retries and
// limits.
func New(cfg provider.Config, client *http.Client) (agenteval.Model, error) {
	if err := provider.ChatOnly(cfg); err != nil {
		return nil, err
	}
	base := defaultBaseURL
	if cfg.BaseURL != "" {
		base = strings.TrimRight(cfg.BaseURL, "/") + "/"
	}
	if _, err := url.Parse(base); err != nil {
		return nil, fmt.Errorf("create Gemini client: the base URL %q: %w", base, err)
	}
	if strings.ContainsAny(cfg.Model, "?&#") || strings.Contains(cfg.Model, "..") {
		return nil, fmt.Errorf("create Gemini client: the model name %q is not one the API takes (such as gemini-2.5-flash)", cfg.Model)
	}
	// A bare name is a model's; "models/..." and "tunedModels/..." are
	// resource names already.
	name := cfg.Model
	if !strings.HasPrefix(name, "models/") && !strings.HasPrefix(name, "tunedModels/") {
		name = "models/" + name
	}
	return &model{client: client, url: base + apiVersion + "/" + name + ":generateContent", key: cfg.APIKey, name: cfg.Model}, nil
}

// The request and response of generateContent, as much of them as the
// adapter uses; field names are the API's JSON names.
type (
	content struct {
		Role  string  `json:"role,omitempty"`
		Parts []*part `json:"parts"`
	}
	part struct {
		Text             string            `json:"text,omitempty"`
		Thought          bool              `json:"thought,omitempty"`
		FunctionCall     *functionCall     `json:"functionCall,omitempty"`
		FunctionResponse *functionResponse `json:"functionResponse,omitempty"`
	}
	functionCall struct {
		ID   string          `json:"id,omitempty"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args,omitempty"`
	}
	functionResponse struct {
		ID       string         `json:"id,omitempty"`
		Name     string         `json:"name"`
		Response map[string]any `json:"response"`
	}
	functionDeclaration struct {
		Name                 string `json:"name"`
		Description          string `json:"description,omitempty"`
		ParametersJSONSchema any    `json:"parametersJsonSchema,omitempty"`
	}
	tool struct {
		FunctionDeclarations []functionDeclaration `json:"functionDeclarations"`
	}
	generationConfig struct {
		Temperature        *float64 `json:"temperature,omitempty"`
		MaxOutputTokens    int      `json:"maxOutputTokens,omitempty"`
		ResponseMIMEType   string   `json:"responseMimeType,omitempty"`
		ResponseJSONSchema any      `json:"responseJsonSchema,omitempty"`
	}
	request struct {
		Contents          []*content        `json:"contents"`
		SystemInstruction *content          `json:"systemInstruction,omitempty"`
		Tools             []tool            `json:"tools,omitempty"`
		GenerationConfig  *generationConfig `json:"generationConfig,omitempty"`
	}
	response struct {
		Candidates []struct {
			Content      *content `json:"content"`
			FinishReason string   `json:"finishReason"`
		} `json:"candidates"`
		PromptFeedback *struct {
			BlockReason string `json:"blockReason"`
		} `json:"promptFeedback"`
		UsageMetadata *struct {
			PromptTokenCount     int64 `json:"promptTokenCount"`
			CandidatesTokenCount int64 `json:"candidatesTokenCount"`
			ThoughtsTokenCount   int64 `json:"thoughtsTokenCount"`
		} `json:"usageMetadata"`
		ModelVersion string `json:"modelVersion"`
	}
	// apiError is the body of a failed call.
	apiError struct {
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Status  string `json:"status"`
		} `json:"error"`
	}
)

func (m *model) Generate(ctx context.Context, req *agenteval.ModelRequest) (*agenteval.ModelResponse, error) {
	if m.name == "" {
		return nil, fmt.Errorf("no Gemini model named: give one, such as gemini:gemini-2.5-flash")
	}
	sys, contents, err := toContents(req.Messages.WithCallIDs())
	if err != nil {
		return nil, err
	}
	gc := &generationConfig{Temperature: req.Temperature}
	body := &request{Contents: contents, SystemInstruction: sys, GenerationConfig: gc}
	if req.MaxTokens > 0 {
		gc.MaxOutputTokens = req.MaxTokens
	}
	if len(req.Tools) > 0 {
		var decls []functionDeclaration
		for _, t := range req.Tools {
			d := functionDeclaration{Name: t.Name, Description: t.Description}
			if t.Parameters != nil {
				d.ParametersJSONSchema = t.Parameters
			}
			decls = append(decls, d)
		}
		body.Tools = []tool{{FunctionDeclarations: decls}}
	}
	if req.Schema != nil {
		gc.ResponseMIMEType = "application/json"
		gc.ResponseJSONSchema = req.Schema.Schema
	}
	resp, err := m.post(ctx, body)
	if err != nil {
		return nil, err
	}
	out := &agenteval.ModelResponse{Message: agenteval.Message{Role: agenteval.RoleAssistant}, Model: resp.ModelVersion}
	if u := resp.UsageMetadata; u != nil {
		out.Usage.InputTokens = u.PromptTokenCount
		out.Usage.OutputTokens = u.CandidatesTokenCount + u.ThoughtsTokenCount
	}
	if len(resp.Candidates) == 0 || resp.Candidates[0].Content == nil {
		reason := "no candidates"
		if resp.PromptFeedback != nil && resp.PromptFeedback.BlockReason != "" {
			reason = "prompt blocked: " + resp.PromptFeedback.BlockReason
		}
		return nil, fmt.Errorf("Gemini returned no answer (%s)", reason)
	}
	cand := resp.Candidates[0]
	out.FinishReason = cand.FinishReason
	var texts []string
	for _, p := range cand.Content.Parts {
		switch {
		case p == nil:
		case p.FunctionCall != nil:
			call := agenteval.ToolCall{ID: p.FunctionCall.ID, Name: p.FunctionCall.Name, Args: map[string]any{}}
			if a := p.FunctionCall.Args; len(a) > 0 && !bytes.Equal(a, []byte("null")) {
				if err := json.Unmarshal(a, &call.Args); err != nil {
					return nil, fmt.Errorf("read Gemini's call of %s: its args are not a JSON object: %w", call.Name, err)
				}
				if agenteval.HasNestedObjects(call.Args) {
					call.KeyOrder = agenteval.KeyOrderOf(a)
				}
			}
			out.Message.ToolCalls = append(out.Message.ToolCalls, call)
		case p.Text != "" && !p.Thought:
			texts = append(texts, p.Text)
		}
	}
	out.Message.Content = strings.Join(texts, "")
	return out, nil
}

// post sends one generateContent call. A failure's error carries the API's
// own status and message; provider.Open reads the HTTP status from the
// transport to decide on retries, and redacts the key from the text.
func (m *model) post(ctx context.Context, body *request) (*response, error) {
	raw, err := marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encode the Gemini request: %w", err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, m.url, bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("build the Gemini request: %w", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	if m.key != "" {
		hreq.Header.Set("X-Goog-Api-Key", m.key)
	}
	hresp, err := m.client.Do(hreq)
	if err != nil {
		return nil, err
	}
	defer hresp.Body.Close()
	if hresp.StatusCode < 200 || hresp.StatusCode > 299 {
		b, _ := io.ReadAll(io.LimitReader(hresp.Body, maxErrorBody))
		return nil, statusError(hresp, b)
	}
	var out response
	if err := json.NewDecoder(hresp.Body).Decode(&out); err != nil {
		return nil, fmt.Errorf("read the Gemini response: %w", err)
	}
	return &out, nil
}

// statusError describes a failed call by the API's status and message
// when the body is its error object, else by the body's first line. The
// HTTP status ends the text, which provider.Open trims when it names the
// status itself.
func statusError(resp *http.Response, body []byte) error {
	var e apiError
	msg := ""
	if json.Unmarshal(body, &e) == nil && e.Error != nil && (e.Error.Message != "" || e.Error.Status != "") {
		msg = e.Error.Message
		if e.Error.Status != "" {
			msg = e.Error.Status + ": " + msg
		}
	} else {
		msg, _, _ = strings.Cut(strings.TrimSpace(string(body)), "\n")
		if len(msg) > 300 {
			msg = strings.ToValidUTF8(msg[:300], "") + "…"
		}
	}
	if msg == "" {
		msg = "no message"
	}
	return fmt.Errorf("Gemini API: %s (HTTP %d)", msg, resp.StatusCode)
}

// toContents maps the conversation onto Gemini's user and model turns. Tool
// results become functionResponse parts, which Gemini matches by function
// name, so each carries the name of the call it answers.
func toContents(conv agenteval.Conversation) (*content, []*content, error) {
	var sys *content
	var out []*content
	names := map[string]string{}
	add := func(role string, parts ...*part) {
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Parts = append(out[n-1].Parts, parts...)
			return
		}
		out = append(out, &content{Role: role, Parts: parts})
	}
	for _, m := range conv {
		switch m.Role {
		case agenteval.RoleSystem:
			if sys == nil {
				sys = &content{Role: "user"} // as Google's SDKs send it
			}
			sys.Parts = append(sys.Parts, &part{Text: m.Content})
		case agenteval.RoleUser:
			add("user", &part{Text: m.Content})
		case agenteval.RoleAssistant:
			var parts []*part
			if m.Content != "" {
				parts = append(parts, &part{Text: m.Content})
			}
			for _, c := range m.ToolCalls {
				names[c.ID] = c.Name
				fc := &functionCall{ID: c.ID, Name: c.Name}
				if len(c.Args) > 0 {
					b, err := marshal(c.Args)
					if err != nil {
						return nil, nil, fmt.Errorf("send the arguments of %s to Gemini: %w", c.Name, err)
					}
					fc.Args = b
				}
				parts = append(parts, &part{FunctionCall: fc})
			}
			if len(parts) == 0 {
				parts = append(parts, &part{Text: "(no reply)"})
			}
			add("model", parts...)
		case agenteval.RoleTool:
			add("user", &part{FunctionResponse: &functionResponse{
				ID: m.ToolCallID, Name: names[m.ToolCallID], Response: map[string]any{"output": m.Content},
			}})
		default:
			return nil, nil, fmt.Errorf("cannot send a %q message to Gemini", m.Role)
		}
	}
	return sys, out, nil
}

// marshal encodes v without HTML escaping: prompts are full of tags, and
// "\u003c" for each "<" makes a body longer to write and to read.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
