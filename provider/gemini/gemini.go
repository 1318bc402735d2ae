// Package gemini is the agenteval.Model adapter for Google's Gemini API,
// over the official google.golang.org/genai SDK (the Gemini API backend,
// keyed by GEMINI_API_KEY or GOOGLE_API_KEY). Structured output uses the
// API's responseJsonSchema.
//
// Importing it registers the "gemini" provider. It imports the root
// package, provider and the SDK.
package gemini

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/provider"
	"google.golang.org/genai"
)

func init() {
	provider.Register("gemini", New, []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"}, "GOOGLE_GEMINI_BASE_URL")
}

type model struct {
	client *genai.Client
	name   string
}

// New builds the raw adapter; use provider.Open, which adds retries and
// limits.
func New(cfg provider.Config, client *http.Client) (agenteval.Model, error) {
	if err := provider.ChatOnly(cfg); err != nil {
		return nil, err
	}
	cc := &genai.ClientConfig{APIKey: cfg.APIKey, Backend: genai.BackendGeminiAPI, HTTPClient: client}
	if cfg.BaseURL != "" {
		cc.HTTPOptions.BaseURL = strings.TrimRight(cfg.BaseURL, "/") + "/"
	}
	c, err := genai.NewClient(context.Background(), cc)
	if err != nil {
		return nil, fmt.Errorf("create Gemini client: %w", err)
	}
	return &model{client: c, name: cfg.Model}, nil
}

func (m *model) Generate(ctx context.Context, req *agenteval.ModelRequest) (*agenteval.ModelResponse, error) {
	conf := &genai.GenerateContentConfig{}
	if req.Temperature != nil {
		t := float32(*req.Temperature)
		conf.Temperature = &t
	}
	if req.MaxTokens > 0 {
		conf.MaxOutputTokens = int32(req.MaxTokens)
	}
	sys, contents, err := toContents(req.Messages.WithCallIDs())
	if err != nil {
		return nil, err
	}
	conf.SystemInstruction = sys
	if len(req.Tools) > 0 {
		var decls []*genai.FunctionDeclaration
		for _, t := range req.Tools {
			d := &genai.FunctionDeclaration{Name: t.Name, Description: t.Description}
			if t.Parameters != nil {
				d.ParametersJsonSchema = t.Parameters
			}
			decls = append(decls, d)
		}
		conf.Tools = []*genai.Tool{{FunctionDeclarations: decls}}
	}
	if req.Schema != nil {
		conf.ResponseMIMEType = "application/json"
		conf.ResponseJsonSchema = req.Schema.Schema
	}
	resp, err := m.client.Models.GenerateContent(ctx, m.name, contents, conf)
	if err != nil {
		return nil, err
	}
	out := &agenteval.ModelResponse{Message: agenteval.Message{Role: agenteval.RoleAssistant}, Model: resp.ModelVersion}
	if u := resp.UsageMetadata; u != nil {
		out.Usage.InputTokens = int64(u.PromptTokenCount)
		out.Usage.OutputTokens = int64(u.CandidatesTokenCount + u.ThoughtsTokenCount)
	}
	if len(resp.Candidates) == 0 || resp.Candidates[0].Content == nil {
		reason := "no candidates"
		if resp.PromptFeedback != nil && resp.PromptFeedback.BlockReason != "" {
			reason = "prompt blocked: " + string(resp.PromptFeedback.BlockReason)
		}
		return nil, fmt.Errorf("Gemini returned no answer (%s)", reason)
	}
	cand := resp.Candidates[0]
	out.FinishReason = string(cand.FinishReason)
	var texts []string
	for _, p := range cand.Content.Parts {
		switch {
		case p.FunctionCall != nil:
			args := p.FunctionCall.Args
			if args == nil {
				args = map[string]any{}
			}
			out.Message.ToolCalls = append(out.Message.ToolCalls, agenteval.ToolCall{ID: p.FunctionCall.ID, Name: p.FunctionCall.Name, Args: args})
		case p.Text != "" && !p.Thought:
			texts = append(texts, p.Text)
		}
	}
	out.Message.Content = strings.Join(texts, "")
	return out, nil
}

// toContents maps the conversation onto Gemini's user and model turns. Tool
// results become functionResponse parts, which Gemini matches by function
// name, so each carries the name of the call it answers.
func toContents(conv agenteval.Conversation) (*genai.Content, []*genai.Content, error) {
	var sys *genai.Content
	var out []*genai.Content
	names := map[string]string{}
	add := func(role string, parts ...*genai.Part) {
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Parts = append(out[n-1].Parts, parts...)
			return
		}
		out = append(out, &genai.Content{Role: role, Parts: parts})
	}
	for _, m := range conv {
		switch m.Role {
		case agenteval.RoleSystem:
			if sys == nil {
				sys = &genai.Content{}
			}
			sys.Parts = append(sys.Parts, &genai.Part{Text: m.Content})
		case agenteval.RoleUser:
			add(genai.RoleUser, &genai.Part{Text: m.Content})
		case agenteval.RoleAssistant:
			var parts []*genai.Part
			if m.Content != "" {
				parts = append(parts, &genai.Part{Text: m.Content})
			}
			for _, c := range m.ToolCalls {
				names[c.ID] = c.Name
				args := c.Args
				if args == nil {
					args = map[string]any{}
				}
				parts = append(parts, &genai.Part{FunctionCall: &genai.FunctionCall{ID: c.ID, Name: c.Name, Args: args}})
			}
			if len(parts) == 0 {
				parts = append(parts, &genai.Part{Text: "(no reply)"})
			}
			add(genai.RoleModel, parts...)
		case agenteval.RoleTool:
			add(genai.RoleUser, &genai.Part{FunctionResponse: &genai.FunctionResponse{
				ID: m.ToolCallID, Name: names[m.ToolCallID], Response: map[string]any{"output": m.Content},
			}})
		default:
			return nil, nil, fmt.Errorf("cannot send a %q message to Gemini", m.Role)
		}
	}
	return sys, out, nil
}
