package target

import (
	"encoding/json"
	"fmt"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/jsonvalue"
)

// toolParts turns tool parts (Google ADK's function_call and
// function_response data parts) into assistant tool calls and tool
// messages, in the order it reads them.
//
// Messages and artifacts are two sources: an agent may report a call in
// both (a status message as it happens, an artifact at the end), and
// then it counts once. A part counts once for each time one source
// reports it, not once for each source, so that a call the agent really
// made twice, with the same arguments and no id, stays twice.
type toolParts struct {
	conv *a2aConv
	out  agenteval.Conversation
	// open holds, per tool name, the ids given to calls that came
	// without one and still await their response.
	open map[string][]string
	// seen counts each part's key per source (0 messages, 1 artifacts);
	// kept how many of each key are in out.
	seen [2]map[string]int
	kept map[string]int
}

func newToolParts(conv *a2aConv) *toolParts {
	return &toolParts{conv: conv, open: map[string][]string{},
		seen: [2]map[string]int{{}, {}}, kept: map[string]int{}}
}

// adkFunction is the data of an ADK function_call or function_response
// part.
type adkFunction struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Args stays raw until it is read, so that the order its nested
	// objects were written in is kept (KeyOrder), as Ragas compares them.
	Args     json.RawMessage `json:"args"`
	Response json.RawMessage `json:"response"`
}

// toolCall is the call d describes, its arguments decoded with their
// nested key order. Arguments that are not an object are kept as raw
// text, with no arguments, as a model's malformed ones are.
func (d adkFunction) toolCall() agenteval.ToolCall {
	c := agenteval.ToolCall{ID: d.ID, Name: d.Name, Args: map[string]any{}}
	if len(d.Args) == 0 || string(d.Args) == "null" {
		return c
	}
	var args map[string]any
	if err := json.Unmarshal(d.Args, &args); err != nil {
		c.Args, c.RawArgs = nil, string(d.Args)
		return c
	}
	c.Args = argsOrEmpty(args)
	c.KeyOrder = agenteval.KeyOrderOf(d.Args)
	return c
}

// read takes the tool parts of parts, from a message or an artifact, and
// returns the other parts.
func (r *toolParts) read(parts []a2aPart, fromArtifact bool) []a2aPart {
	var rest []a2aPart
	for _, p := range parts {
		kind, ok := toolPart(p)
		if !ok {
			rest = append(rest, p)
			continue
		}
		var d adkFunction
		if err := json.Unmarshal(p.Data, &d); err != nil || d.Name == "" {
			rest = append(rest, p)
			continue
		}
		if !r.first(kind, d, fromArtifact) {
			continue
		}
		if kind == "function_call" {
			if d.ID == "" {
				d.ID = r.conv.newCallID()
				r.open[d.Name] = append(r.open[d.Name], d.ID)
			}
			r.call(d.toolCall())
			continue
		}
		if d.ID == "" && len(r.open[d.Name]) > 0 {
			d.ID, r.open[d.Name] = r.open[d.Name][0], r.open[d.Name][1:]
		}
		content := ""
		if len(d.Response) > 0 {
			content = jsonvalue.Text(d.Response)
		}
		r.out = append(r.out, agenteval.Message{Role: agenteval.RoleTool, Content: content, ToolCallID: d.ID, Name: d.Name})
	}
	return rest
}

// first reports whether a tool part is new: not one the other source has
// already reported as many times as this one now has.
func (r *toolParts) first(kind string, d adkFunction, fromArtifact bool) bool {
	src := 0
	if fromArtifact {
		src = 1
	}
	// Arguments and responses are keyed in a canonical form (sorted
	// keys), since two sources may write one value differently.
	var args, resp any
	_ = json.Unmarshal(d.Args, &args)
	_ = json.Unmarshal(d.Response, &resp)
	body, _ := json.Marshal([]any{args, resp})
	key := kind + "\x00" + d.ID + "\x00" + d.Name + "\x00" + string(body)
	r.seen[src][key]++
	if r.seen[src][key] <= r.kept[key] {
		return false
	}
	r.kept[key]++
	return true
}

// call adds a tool call; calls made together (no response between them)
// are one assistant message.
func (r *toolParts) call(c agenteval.ToolCall) {
	if n := len(r.out); n > 0 && r.out[n-1].Role == agenteval.RoleAssistant && len(r.out[n-1].ToolCalls) > 0 {
		r.out[n-1].ToolCalls = append(r.out[n-1].ToolCalls, c)
		return
	}
	r.out = append(r.out, agenteval.Message{Role: agenteval.RoleAssistant, ToolCalls: []agenteval.ToolCall{c}})
}

// newCallID numbers a tool call the agent reported without an id.
func (c *a2aConv) newCallID() string {
	c.calls++
	return fmt.Sprintf("a2a_call_%d", c.calls)
}

func argsOrEmpty(args map[string]any) map[string]any {
	if args == nil {
		return map[string]any{}
	}
	return args
}

// mastraChunk is a tool call or tool result as Mastra's A2A server
// (@mastra/server 1.x) lists them in a completed task's metadata,
// execution.toolCalls and execution.toolResults: Mastra's stream chunks,
// {type: "tool-call" | "tool-result", runId, from, payload}.
type mastraChunk struct {
	Payload struct {
		ToolCallID string          `json:"toolCallId"`
		ToolName   string          `json:"toolName"`
		Args       map[string]any  `json:"args"`
		Result     json.RawMessage `json:"result"`
		IsError    bool            `json:"isError"`
	} `json:"payload"`
}

// mastraMetadataKey is a key Mastra adds to a call's arguments for its
// own use; it is not an argument the model gave.
const mastraMetadataKey = "__mastraMetadata"

// metadataTools reads the tool calls a task's metadata reports, for
// agents that put them nowhere else: Mastra's execution.toolCalls and
// execution.toolResults. Each call is followed by its result; a result
// whose call is not listed brings the call its payload names.
func metadataTools(md map[string]any, conv *a2aConv) agenteval.Conversation {
	exec, ok := md["execution"].(map[string]any)
	if !ok {
		return nil
	}
	chunks := func(key string) []mastraChunk {
		raw, err := json.Marshal(exec[key])
		if err != nil {
			return nil
		}
		var out []mastraChunk
		if json.Unmarshal(raw, &out) != nil {
			return nil
		}
		return out
	}
	calls, results := chunks("toolCalls"), chunks("toolResults")
	used := make([]bool, len(results))
	var out agenteval.Conversation
	emit := func(c mastraChunk, result *mastraChunk) {
		id := c.Payload.ToolCallID
		if id == "" {
			id = conv.newCallID()
		}
		args := argsOrEmpty(c.Payload.Args)
		if _, ok := args[mastraMetadataKey]; ok {
			args = copyWithout(args, mastraMetadataKey)
		}
		out = append(out, agenteval.Message{Role: agenteval.RoleAssistant,
			ToolCalls: []agenteval.ToolCall{{ID: id, Name: c.Payload.ToolName, Args: args}}})
		if result == nil {
			return
		}
		m := agenteval.Message{Role: agenteval.RoleTool, ToolCallID: id, Name: c.Payload.ToolName}
		if len(result.Payload.Result) > 0 {
			m.Content = jsonvalue.Text(result.Payload.Result)
		}
		if result.Payload.IsError {
			m.Metadata = map[string]any{"error": true}
		}
		out = append(out, m)
	}
	for _, c := range calls {
		if c.Payload.ToolName == "" {
			continue
		}
		var match *mastraChunk
		for i := range results {
			if !used[i] && c.Payload.ToolCallID != "" && results[i].Payload.ToolCallID == c.Payload.ToolCallID {
				used[i], match = true, &results[i]
				break
			}
		}
		emit(c, match)
	}
	for i := range results {
		if !used[i] && results[i].Payload.ToolName != "" {
			emit(results[i], &results[i])
		}
	}
	return out
}

func copyWithout(m map[string]any, key string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}
