// Package anthropic is the agenteval.Model adapter for Anthropic's Messages
// API, over the official anthropic-sdk-go (v1, which still sends
// temperature). Structured output is a forced tool call whose input schema
// is the requested schema, which every Claude model supports.
//
// Importing it registers the "anthropic" provider. It imports the root
// package, provider and the SDK.
package anthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/provider"
	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
)

func init() {
	provider.Register("anthropic", New, []string{"ANTHROPIC_API_KEY"}, "ANTHROPIC_BASE_URL")
}

// defaultMaxTokens is sent when a request sets none; the API requires one.
const defaultMaxTokens = 4096

type model struct {
	client sdk.Client
	name   string
}

// New builds the raw adapter; use provider.Open, which adds retries and
// limits.
func New(cfg provider.Config, client *http.Client) (agenteval.Model, error) {
	if err := provider.ChatOnly(cfg); err != nil {
		return nil, err
	}
	opts := []option.RequestOption{
		option.WithHTTPClient(client),
		option.WithMaxRetries(0),
		option.WithAPIKey(cfg.APIKey),
	}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(strings.TrimRight(cfg.BaseURL, "/")+"/"))
	}
	return &model{client: sdk.NewClient(opts...), name: cfg.Model}, nil
}

func (m *model) Generate(ctx context.Context, req *agenteval.ModelRequest) (*agenteval.ModelResponse, error) {
	params := sdk.MessageNewParams{Model: sdk.Model(m.name), MaxTokens: defaultMaxTokens}
	if req.MaxTokens > 0 {
		params.MaxTokens = int64(req.MaxTokens)
	}
	if req.Temperature != nil {
		params.Temperature = sdk.Float(*req.Temperature)
	}
	sys, msgs, err := toMessages(req.Messages.WithCallIDs())
	if err != nil {
		return nil, err
	}
	params.System, params.Messages = sys, msgs
	for _, t := range req.Tools {
		params.Tools = append(params.Tools, toTool(t.Name, t.Description, t.Parameters))
	}
	schemaTool := ""
	if req.Schema != nil {
		schemaTool = req.Schema.Name
		if schemaTool == "" {
			schemaTool = "respond"
		}
		params.Tools = append(params.Tools, toTool(schemaTool, "Give your answer by calling this tool with arguments that follow its schema.", req.Schema.Schema))
		params.ToolChoice = sdk.ToolChoiceParamOfTool(schemaTool)
	}
	resp, err := m.client.Messages.New(ctx, params)
	if err != nil {
		return nil, err
	}
	out := &agenteval.ModelResponse{
		Message:      agenteval.Message{Role: agenteval.RoleAssistant},
		Model:        string(resp.Model),
		FinishReason: string(resp.StopReason),
		Usage:        agenteval.Usage{InputTokens: resp.Usage.InputTokens, OutputTokens: resp.Usage.OutputTokens},
	}
	var texts []string
	for _, b := range resp.Content {
		switch b.Type {
		case "text":
			texts = append(texts, b.Text)
		case "tool_use":
			if schemaTool != "" && b.Name == schemaTool {
				// The forced call is the structured answer.
				texts = append(texts, string(b.Input))
				continue
			}
			call := agenteval.ToolCall{ID: b.ID, Name: b.Name}
			var args map[string]any
			dec := json.NewDecoder(strings.NewReader(string(b.Input)))
			dec.UseNumber()
			if err := dec.Decode(&args); err != nil || args == nil {
				call.RawArgs = string(b.Input)
			} else {
				call.Args = args
				if agenteval.HasNestedObjects(args) {
					call.KeyOrder = agenteval.KeyOrderOf(b.Input)
				}
			}
			out.Message.ToolCalls = append(out.Message.ToolCalls, call)
		}
	}
	out.Message.Content = strings.Join(texts, "\n")
	return out, nil
}

func toTool(name, desc string, schema map[string]any) sdk.ToolUnionParam {
	in := sdk.ToolInputSchemaParam{Properties: schema["properties"]}
	if req, ok := schema["required"].([]any); ok {
		for _, r := range req {
			if s, ok := r.(string); ok {
				in.Required = append(in.Required, s)
			}
		}
	} else if req, ok := schema["required"].([]string); ok {
		in.Required = req
	}
	extra := map[string]any{}
	for k, v := range schema {
		switch k {
		case "type", "properties", "required":
		default:
			extra[k] = v
		}
	}
	if len(extra) > 0 {
		in.ExtraFields = extra
	}
	t := sdk.ToolParam{Name: name, InputSchema: in}
	if desc != "" {
		t.Description = sdk.String(desc)
	}
	return sdk.ToolUnionParam{OfTool: &t}
}

// toMessages splits out system text and merges consecutive messages of one
// side, since the API wants user and assistant turns to alternate; tool
// results travel in the user turn.
func toMessages(conv agenteval.Conversation) ([]sdk.TextBlockParam, []sdk.MessageParam, error) {
	var sys []sdk.TextBlockParam
	var out []sdk.MessageParam
	add := func(role sdk.MessageParamRole, blocks ...sdk.ContentBlockParamUnion) {
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, blocks...)
			return
		}
		out = append(out, sdk.MessageParam{Role: role, Content: blocks})
	}
	for _, m := range conv {
		switch m.Role {
		case agenteval.RoleSystem:
			sys = append(sys, sdk.TextBlockParam{Text: m.Content})
		case agenteval.RoleUser:
			add(sdk.MessageParamRoleUser, sdk.NewTextBlock(m.Content))
		case agenteval.RoleTool:
			add(sdk.MessageParamRoleUser, sdk.NewToolResultBlock(m.ToolCallID, m.Content, false))
		case agenteval.RoleAssistant:
			var blocks []sdk.ContentBlockParamUnion
			if m.Content != "" {
				blocks = append(blocks, sdk.NewTextBlock(m.Content))
			}
			for _, c := range m.ToolCalls {
				var input any = c.Args
				if c.Args == nil {
					input = map[string]any{}
				}
				blocks = append(blocks, sdk.NewToolUseBlock(c.ID, input, c.Name))
			}
			if len(blocks) == 0 {
				blocks = append(blocks, sdk.NewTextBlock("(no reply)"))
			}
			add(sdk.MessageParamRoleAssistant, blocks...)
		default:
			return nil, nil, fmt.Errorf("cannot send a %q message to Anthropic", m.Role)
		}
	}
	return sys, out, nil
}
