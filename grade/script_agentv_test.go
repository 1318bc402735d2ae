package grade

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
)

// agentvCase is a graded unit, as testdata/agentv-trace/NAME.case.json
// describes it; NAME.agentv.json is the stdin AgentV 4.42.4 gave its code
// grader for the same test and agent output.
type agentvCase struct {
	TestID    string                 `json:"test_id"`
	Target    string                 `json:"target"`
	Criteria  string                 `json:"criteria"`
	Reference string                 `json:"reference"`
	Metadata  map[string]any         `json:"metadata"`
	Config    map[string]any         `json:"config"`
	Input     agenteval.Conversation `json:"input"`
	Output    agenteval.Conversation `json:"output"`
	LatencyMS float64                `json:"latency_ms"`
	Usage     agenteval.Usage        `json:"usage"`
}

func (c agentvCase) gradeInput() *agenteval.GradeInput {
	transcript := append(append(agenteval.Conversation{}, c.Input...), c.Output...)
	return &agenteval.GradeInput{Transcript: transcript, Output: c.Output, Turn: 1, Criteria: c.Criteria, Reference: c.Reference,
		Metadata: c.Metadata, TestID: c.TestID, Target: c.Target,
		Stats: &agenteval.Stats{LatencyMS: c.LatencyMS, Usage: c.Usage, Turns: 1}}
}

// TestScriptPayloadIsAgentVs: the payload carries what AgentV's does, key
// for key and value for value, but for what agenteval cannot know or keeps
// in another form (agentvKnownDifferences), and for its own fields.
func TestScriptPayloadIsAgentVs(t *testing.T) {
	cases, _ := filepath.Glob("testdata/agentv-trace/*.case.json")
	if len(cases) == 0 {
		t.Fatal("no cases")
	}
	for _, file := range cases {
		name := strings.TrimSuffix(filepath.Base(file), ".case.json")
		t.Run(name, func(t *testing.T) {
			var c agentvCase
			readJSON(t, file, &c)
			var want map[string]any
			readJSON(t, strings.TrimSuffix(file, ".case.json")+".agentv.json", &want)
			b, err := json.Marshal(scriptPayload(c.gradeInput(), c.Config))
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"transcript", "vars", "reference_tool_calls"} {
				delete(got, k)
			}
			agentvKnownDifferences(t, got, want)
			for k := range want {
				if !reflect.DeepEqual(got[k], want[k]) {
					g, _ := json.MarshalIndent(got[k], "", " ")
					w, _ := json.MarshalIndent(want[k], "", " ")
					t.Errorf("%s:\n got %s\nwant %s", k, g, w)
				}
			}
			for k := range got {
				if _, ok := want[k]; !ok {
					t.Errorf("%s: AgentV does not send it", k)
				}
			}
		})
	}
}

// agentvKnownDifferences checks, then removes, what the two payloads hold
// differently by design: the test's input, which AgentV gives as the
// content blocks written in the eval file and agenteval as the text its
// agent received; and the provider kind in trace.metadata, which a grader
// here does not know.
func agentvKnownDifferences(t *testing.T, got, want map[string]any) {
	t.Helper()
	gi, _ := got["input"].([]any)
	wi, _ := want["input"].([]any)
	if len(gi) != len(wi) {
		t.Errorf("input: %d messages, AgentV %d", len(gi), len(wi))
	}
	for i := range min(len(gi), len(wi)) {
		g, w := gi[i].(map[string]any), wi[i].(map[string]any)
		if g["role"] != w["role"] {
			t.Errorf("input[%d]: role %v, AgentV %v", i, g["role"], w["role"])
		}
		if s, ok := w["content"].(string); ok && g["content"] != s {
			t.Errorf("input[%d]: content %q, AgentV %q", i, g["content"], s)
		}
	}
	delete(got, "input")
	delete(want, "input")
	if tr, ok := want["trace"].(map[string]any); ok {
		if md, ok := tr["metadata"].(map[string]any); ok {
			delete(md, "provider")
		}
	}
}

func readJSON(t *testing.T, file string, v any) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

// At a later turn the trace's reply is the turn's; tool results join
// their calls (by ID, or by place when the message names the same tool or
// none); the counts are the reply's.
func TestAgentVTraceOfATurn(t *testing.T) {
	conv := agenteval.Conversation{
		{Role: agenteval.RoleUser, Content: "Book a table.", Parts: []agenteval.Part{{Type: "file", Path: "menu.txt"}}},
		{Role: agenteval.RoleAssistant, Content: "Booked."},
		{Role: agenteval.RoleUser, Content: "And a taxi?"},
		{Role: agenteval.RoleAssistant, ToolCalls: []agenteval.ToolCall{{ID: "call_1", Name: "book_taxi", Args: map[string]any{"pickUp": "7pm"}}, {Name: "notify", Args: map[string]any{}}}},
		{Role: agenteval.RoleTool, ToolCallID: "call_1", Name: "book_taxi", Content: `{"taxiId": 7}`},
		{Role: agenteval.RoleTool, Name: "notify", Content: "sent"},
		{Role: agenteval.RoleTool, Name: "audit", Content: "logged"},
		{Role: agenteval.RoleAssistant, Content: "Taxi at 7."},
	}
	in := &agenteval.GradeInput{Transcript: conv, Output: conv[3:], Turn: 2, Stats: &agenteval.Stats{LatencyMS: 12.6, Usage: agenteval.Usage{Calls: 2, InputTokens: 30, OutputTokens: 9}}}
	p := scriptPayload(in, nil)
	if *p.Output != "Taxi at 7." || len(p.Input) != 3 || p.Input[2].Content != "And a taxi?" {
		t.Errorf("output %q, input %+v", *p.Output, p.Input)
	}
	abs, _ := filepath.Abs("menu.txt")
	if len(p.InputFiles) != 1 || p.InputFiles[0] != abs {
		t.Errorf("input_files = %v, want [%s]", p.InputFiles, abs)
	}
	tr := p.Trace
	if tr.EventCount != 2 || tr.LLMCallCount != 2 || tr.ToolCalls["book_taxi"] != 1 || tr.ToolCalls["notify"] != 1 || *tr.DurationMS != 13 {
		t.Errorf("trace summary = %+v", tr)
	}
	// input (3), then the reply: the call message, the audit message no
	// call was waiting for, the answer.
	if len(tr.Messages) != 6 || tr.Messages[4].Role != "tool" || tr.Messages[4].Content != "logged" {
		b, _ := json.Marshal(tr.Messages)
		t.Fatalf("messages = %s", b)
	}
	calls := tr.Messages[3].ToolCalls
	if !reflect.DeepEqual(calls[0].Output, map[string]any{"taxi_id": 7.0}) || !reflect.DeepEqual(calls[0].Input, map[string]any{"pick_up": "7pm"}) || calls[1].Output != "sent" {
		t.Errorf("calls = %+v", calls)
	}
	var kinds []string
	for _, e := range tr.Events {
		kinds = append(kinds, e.Type)
	}
	want := "message message message message tool_call tool_result tool_call tool_result message message final_response"
	if strings.Join(kinds, " ") != want {
		t.Errorf("events = %s\nwant %s", strings.Join(kinds, " "), want)
	}
	if last := tr.Events[len(tr.Events)-1]; last.ParentID != "message-5" || last.Message.Content != "Taxi at 7." {
		t.Errorf("final response = %+v", last)
	}
}
