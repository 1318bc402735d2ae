// Command agent is the agent under test of the agent_inspect example: a
// model with tools, speaking agenteval's command protocol. It reads one JSON
// request per line on stdin ({"conversation_id", "turn", "messages",
// "tools"}) and answers each with one line: the model's reply, either text
// or tool calls. It runs no tool itself: agenteval answers the calls with
// the mock results of the project file's tools (agenteval.yaml) and sends
// the request again, with the calls and their results, until the model
// answers in text.
//
//	go run ./agent --model openai:gpt-4o-mini   # OPENAI_API_KEY, OPENAI_BASE_URL
//
// Like every example, it may import any public package of agenteval and the
// standard library.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/provider"
	_ "github.com/agenteval/agenteval/provider/openai"
)

const system = "You are a helpful assistant. Use the tools you are given to look things up and to act; never make up what a tool would tell you."

type reply struct {
	Messages agenteval.Conversation `json:"messages,omitempty"`
	Usage    *usage                 `json:"usage,omitempty"`
	Error    string                 `json:"error,omitempty"`
}

type usage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
}

func main() {
	spec := flag.String("model", "openai:gpt-4o-mini", "the model behind the agent, as provider:model")
	flag.Parse()
	model, err := provider.OpenSpec(*spec)
	if err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		os.Exit(1)
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var req agenteval.AgentRequest
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			fmt.Fprintln(os.Stderr, "agent: bad request:", err)
			os.Exit(1)
		}
		if err := out.Encode(respond(context.Background(), model, &req)); err != nil {
			os.Exit(1)
		}
	}
}

// respond asks the model for the next step: the conversation so far, with
// the tools the request declares.
func respond(ctx context.Context, model agenteval.Model, req *agenteval.AgentRequest) reply {
	msgs := append(agenteval.Conversation{{Role: agenteval.RoleSystem, Content: system}}, req.Messages...)
	resp, err := model.Generate(ctx, &agenteval.ModelRequest{Messages: msgs, Tools: req.Tools})
	if err != nil {
		return reply{Error: err.Error()}
	}
	msg := resp.Message
	msg.Role = agenteval.RoleAssistant
	for i, c := range msg.ToolCalls {
		if c.ID == "" {
			msg.ToolCalls[i].ID = fmt.Sprintf("call-%d-%d-%d", req.Turn, len(req.Messages), i)
		}
	}
	return reply{Messages: agenteval.Conversation{msg}, Usage: &usage{resp.Usage.InputTokens, resp.Usage.OutputTokens}}
}
