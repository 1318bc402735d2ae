package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/fakellm"
	"github.com/google/go-cmp/cmp"
)

// The issue's bar: `score FILE --metric
// tool_call_accuracy,tool_call_f1,agent_goal_accuracy` gives, on a
// fixture of every trace format, the scores of the equivalent Ragas JSONL.
// The judge is internal/fakellm, answering from what the conversation it
// is shown says, so a conversation that lost a tool result or a reply
// would score differently.
func TestTraceFormatsScoreLikeRagas(t *testing.T) {
	srv, err := fakellm.Start(fakellm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	srv.Add(&fakellm.Rule{Reply: fakellm.Reply{Func: goalJudge}})
	t.Setenv("OPENAI_BASE_URL", srv.URL)
	t.Setenv("OPENAI_API_KEY", "test")
	t.Setenv("AGENTEVAL_JUDGE", "")

	td := filepath.Join("..", "..", "trace", "testdata")
	score := func(t *testing.T, file string) (map[string]agenteval.Result, string) {
		t.Helper()
		var out, errb bytes.Buffer
		code := Main([]string{"score", filepath.Join(td, file), "-m", "tool_call_accuracy,tool_call_f1,agent_goal_accuracy",
			"--judge", "openai:gpt-4o-mini", "--reference", filepath.Join(td, "golden_path.refs.jsonl"), "--format", "jsonl", "--no-cache", "-q"},
			strings.NewReader(""), &out, &errb)
		// Other conversations in a fixture have no reference, so their
		// reference metrics are errors (exit 3); the golden path's matter.
		if code != 0 && code != 1 && code != 3 {
			t.Fatalf("score %s: exit %d\n%s%s", file, code, out.String(), errb.String())
		}
		res := map[string]agenteval.Result{}
		for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			var r agenteval.Result
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatalf("%s: %v: %s", file, err, line)
			}
			res[r.TestID] = r
		}
		return res, errb.String()
	}
	ragas, _ := score(t, "golden_path.ragas.jsonl")
	want := ragas["golden-path"]
	if len(want.Scores) != 3 || want.Score != 1 {
		t.Fatalf("the Ragas sample should score 1 on all three metrics: %+v", want.Scores)
	}
	ids := []string{"golden-path", "conversation-1", "4f9c2e7a-1b3d-4c5e-8f60-7a8b9c0d1e2f", "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5", "b1d0c5e2-9f4a-4e7b-a3c6-2d8e1f0a9b7c"}
	for _, file := range []string{
		"otel_genai.jsonl", "otel_events.jsonl", "openllmetry.json", "openinference.jsonl", "openai_agents.jsonl",
		"langchain_messages.json", "inspect_log.json", "atif.json", "claude_session.jsonl", "codex_rollout.jsonl", "copilot_events.jsonl",
	} {
		t.Run(file, func(t *testing.T) {
			res, _ := score(t, file)
			var got agenteval.Result
			found := false
			for _, id := range ids {
				if r, ok := res[id]; ok {
					got, found = r, true
				}
			}
			if !found {
				t.Fatalf("no golden-path conversation among %v", res)
			}
			type metric struct {
				Name    string
				Score   float64
				Verdict agenteval.Verdict
				Details map[string]any
			}
			pick := func(r agenteval.Result) []metric {
				var m []metric
				for _, s := range r.Scores {
					m = append(m, metric{s.Name, s.Score, s.Verdict, s.Details})
				}
				return m
			}
			if diff := cmp.Diff(pick(want), pick(got)); diff != "" {
				t.Errorf("scores differ from the Ragas JSONL's (-ragas +%s):\n%s", file, diff)
			}
			// The conversation is the Ragas one: same roles, text and calls,
			// once the context some logs add as system messages is set aside.
			if diff := cmp.Diff(plain(want.Output), plain(got.Output)); diff != "" {
				t.Errorf("conversation differs (-ragas +%s):\n%s", file, diff)
			}
		})
	}
}

type plainMsg struct {
	Role    agenteval.Role
	Content string
	Calls   []string
}

func plain(c agenteval.Conversation) []plainMsg {
	var out []plainMsg
	for _, m := range c {
		if m.Role == agenteval.RoleSystem {
			continue
		}
		p := plainMsg{Role: m.Role, Content: m.Content}
		for _, tc := range m.ToolCalls {
			p.Calls = append(p.Calls, tc.String())
		}
		out = append(out, p)
	}
	return out
}

// goalJudge plays agent_goal_accuracy's judge from the transcript it is
// shown: the end state says a table is booked only when the tool result
// that booked it is in the conversation.
func goalJudge(r *fakellm.Request) fakellm.Reply {
	text := r.Text()
	if r.ResponseFormat == nil || r.ResponseFormat.JSONSchema == nil {
		return fakellm.Reply{Content: "ok"}
	}
	if r.ResponseFormat.JSONSchema.Name == "goal_and_end_state" {
		end := "Nothing is booked."
		if strings.Contains(text, "Table booked at Golden Dragon for 8pm.") && strings.Contains(text, "Your table at Golden Dragon is booked for 8pm!") {
			end = "A table at Golden Dragon, a Chinese restaurant, is booked for 8pm, and the user was told."
		}
		return fakellm.Reply{JSON: map[string]any{"user_goal": "Book a table at a Chinese restaurant for 8pm.", "end_state": end}}
	}
	v := fakellm.Generate(r.ResponseFormat.JSONSchema.Schema)
	passed := strings.Contains(text, "is booked for 8pm, and the user was told")
	for _, c := range v.(map[string]any) {
		if m, ok := c.(map[string]any); ok {
			m["passed"] = passed
			m["reason"] = "compared the end state with the desired outcome"
		}
	}
	return fakellm.Reply{JSON: v}
}
