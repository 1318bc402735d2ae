package agent

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/agenteval/agenteval"
)

// ToolLoop runs a model with tools until it answers without calling any.
// The zero values work: no system prompt, 10 iterations, the provider's
// default temperature, no result extraction.
type ToolLoop struct {
	Model agenteval.Model
	// Name labels trace events ("component").
	Name string
	// System is the agent's own system prompt, sent first when the history
	// has none.
	System string
	Tools  []Tool
	// MaxIterations bounds model calls per run (per turn, as an Agent); 0
	// means 10.
	MaxIterations int
	Temperature   *float64
	// MaxTokens bounds each reply; 0 leaves the provider's default.
	MaxTokens int
	// Extract, when set, turns the final answer into the run's result (see
	// LastNumber); its failure ends the run with an error.
	Extract func(answer string) (any, error)
	// Prompt, when set, formats Solve's input into the user message, such as
	// "Solve this mathematical expression step by step: %s".
	Prompt string
	// TraceDir, when set, is where each run's trace is exported.
	TraceDir string

	runs atomic.Int64
}

// ErrMaxIterations is wrapped by the error of a run that was still calling
// tools when MaxIterations ran out.
var ErrMaxIterations = errors.New("the model was still calling tools after the last allowed iteration")

// Run is the outcome of one run.
type Run struct {
	// Answer is the model's final text.
	Answer string
	// Result is Extract's value, when Extract is set and succeeded.
	Result any
	Trace  *Trace
	// LogFile is the exported trace, when TraceDir is set.
	LogFile string
	// Err is why the run ended early (iteration limit, model error,
	// extraction failure); nil after a final answer.
	Err error
}

// Solve runs the loop on one input, from a fresh conversation. It never
// panics on a model's or tool's misbehaviour: every end, good or bad, is a
// recorded Run.
func (l *ToolLoop) Solve(ctx context.Context, input string) *Run {
	user := input
	if l.Prompt != "" {
		user = fmt.Sprintf(l.Prompt, input)
	}
	n := l.runs.Add(1)
	runID := fmt.Sprintf("%s_%s_%04d", time.Now().Format("20060102_150405"), safeName(l.Name), n)
	return l.run(ctx, runID, input, agenteval.Conversation{{Role: agenteval.RoleUser, Content: user}}, "call_")
}

// Respond makes a ToolLoop an agenteval.Agent: each turn runs the loop on
// the conversation so far and returns the messages it added.
func (l *ToolLoop) Respond(ctx context.Context, req *agenteval.AgentRequest) (*agenteval.AgentResponse, error) {
	runID := fmt.Sprintf("%s_turn%d", req.ConversationID, req.Turn)
	// Call IDs carry the turn, so they stay unique across a conversation.
	r := l.run(ctx, runID, lastUser(req.Messages), req.Messages, "call_"+strconv.Itoa(req.Turn)+"_")
	added := r.Trace.Messages[len(r.Trace.Messages)-r.added():]
	resp := &agenteval.AgentResponse{Messages: added, Usage: r.Trace.Usage}
	if r.Err != nil {
		return resp, r.Err
	}
	return resp, nil
}

// added is how many messages the run added to the history it was given.
func (r *Run) added() int {
	n := 0
	for i := len(r.Trace.Messages) - 1; i >= 0; i-- {
		m := r.Trace.Messages[i]
		if m.Role == agenteval.RoleUser || m.Role == agenteval.RoleSystem {
			break
		}
		n++
	}
	return n
}

func lastUser(c agenteval.Conversation) string {
	for i := len(c) - 1; i >= 0; i-- {
		if c[i].Role == agenteval.RoleUser {
			return c[i].Content
		}
	}
	return ""
}

func (l *ToolLoop) component() string {
	if l.Name != "" {
		return l.Name
	}
	return "agent"
}

// run loops from history. Calls the model leaves without an ID get
// idPrefix + iteration + "_" + index.
func (l *ToolLoop) run(ctx context.Context, runID, input string, history agenteval.Conversation, idPrefix string) *Run {
	tr := &Trace{RunID: runID, Input: input}
	run := &Run{Trace: tr}
	msgs := append(agenteval.Conversation(nil), history...)
	if l.System != "" && (len(msgs) == 0 || msgs[0].Role != agenteval.RoleSystem) {
		msgs = append(agenteval.Conversation{{Role: agenteval.RoleSystem, Content: l.System}}, msgs...)
	}
	specs := make([]agenteval.ToolSpec, len(l.Tools))
	byName := make(map[string]Tool, len(l.Tools))
	for i, t := range l.Tools {
		specs[i] = t.Spec()
		byName[t.Name] = t
	}
	limit := l.MaxIterations
	if limit <= 0 {
		limit = 10
	}
	finish := func(end End, err error) *Run {
		tr.End, tr.Messages, run.Err = end, msgs, err
		if err != nil {
			tr.Error = err.Error()
		}
		if l.TraceDir != "" {
			if p, xerr := tr.Export(l.TraceDir); xerr == nil {
				run.LogFile = p
			} else if run.Err == nil {
				run.Err = xerr
			}
		}
		return run
	}
	if l.Model == nil {
		return finish(EndError, errors.New("the ToolLoop has no Model; set Model, for example from provider.OpenSpec(\"openai:gpt-4o-mini\")"))
	}
	for iter := 1; iter <= limit; iter++ {
		start := time.Now()
		tr.add(Event{Type: EventLLMCall, Component: "model", Time: start, Data: map[string]any{"iteration": iter, "messages": len(msgs)}})
		resp, err := l.Model.Generate(ctx, &agenteval.ModelRequest{Messages: msgs, Tools: specs, Temperature: l.Temperature, MaxTokens: l.MaxTokens})
		ms := float64(time.Since(start).Microseconds()) / 1000
		if err != nil {
			// A call that failed after its retries still spent them.
			tr.Usage.Add(agenteval.UsageOf(err))
			tr.add(Event{Type: EventLLMResponse, Component: "model", Time: time.Now(), DurationMS: ms, Data: map[string]any{"error": err.Error()}})
			return finish(EndError, fmt.Errorf("iteration %d: model: %w", iter, err))
		}
		tr.Usage.Add(&resp.Usage)
		msg := resp.Message
		msg.Role = agenteval.RoleAssistant
		for i := range msg.ToolCalls {
			if msg.ToolCalls[i].ID == "" {
				msg.ToolCalls[i].ID = idPrefix + strconv.Itoa(iter) + "_" + strconv.Itoa(i)
			}
		}
		msgs = append(msgs, msg)
		calls := make([]map[string]any, len(msg.ToolCalls))
		for i, c := range msg.ToolCalls {
			calls[i] = map[string]any{"id": c.ID, "name": c.Name, "args": c.Args}
		}
		tr.add(Event{Type: EventLLMResponse, Component: "model", Time: time.Now(), DurationMS: ms, Data: map[string]any{"content": msg.Content, "tool_calls": calls}})
		if len(msg.ToolCalls) == 0 {
			if msg.Content == "" {
				return finish(EndError, fmt.Errorf("iteration %d: the model returned an empty reply (finish reason %q)", iter, resp.FinishReason))
			}
			run.Answer = msg.Content
			if l.Extract != nil {
				t0 := time.Now()
				v, err := l.Extract(msg.Content)
				data := map[string]any{"final_result": v}
				if err != nil {
					data = map[string]any{"error": err.Error()}
				}
				tr.add(Event{Type: EventResultExtraction, Component: l.component(), Time: t0, DurationMS: float64(time.Since(t0).Microseconds()) / 1000, Data: data})
				if err != nil {
					return finish(EndError, fmt.Errorf("extract the result: %w", err))
				}
				run.Result, tr.Result = v, v
			}
			return finish(EndFinalAnswer, nil)
		}
		for _, c := range msg.ToolCalls {
			result := l.execute(ctx, tr, byName, c)
			msgs = append(msgs, agenteval.Message{Role: agenteval.RoleTool, ToolCallID: c.ID, Name: c.Name, Content: result})
		}
	}
	return finish(EndMaxIterations, fmt.Errorf("%w (no final answer within %d iterations)", ErrMaxIterations, limit))
}

// execute runs one tool call. Unknown tools, undecodable arguments, tool
// errors and tool panics all become an error result for the model.
func (l *ToolLoop) execute(ctx context.Context, tr *Trace, byName map[string]Tool, c agenteval.ToolCall) (result string) {
	start := time.Now()
	tr.add(Event{Type: EventToolExecution, Component: l.component(), Time: start, Data: map[string]any{"tool_name": c.Name, "args": c.Args}})
	var err error
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the tool panicked: %v", p)
			result = "error: " + err.Error()
		}
		data := map[string]any{"result": result}
		if err != nil {
			data["error"] = err.Error()
		}
		tr.add(Event{Type: EventToolResult, Component: l.component(), Time: time.Now(), DurationMS: float64(time.Since(start).Microseconds()) / 1000, Data: data})
	}()
	t, ok := byName[c.Name]
	switch {
	case !ok:
		err = fmt.Errorf("unknown tool %q", c.Name)
	case c.Args == nil && c.RawArgs != "":
		err = fmt.Errorf("the arguments are not valid JSON: %s", truncate(c.RawArgs, 200))
	case t.Run == nil:
		err = fmt.Errorf("tool %q has no implementation", c.Name)
	default:
		result, err = t.Run(ctx, c.Args)
	}
	if err != nil {
		return "error: " + err.Error()
	}
	return result
}
