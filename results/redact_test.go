package results

import (
	"bytes"
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/redact"
)

// flag is shaped like grade.InjectionFlag: details of a type of the
// grader's own, which a walk over known field types would pass by.
type flag struct {
	Turn    int    `json:"turn"`
	Part    string `json:"part"`
	Signal  string `json:"signal"`
	Excerpt string `json:"excerpt"`
}

// TestWriterHidesSecrets: a planted key reaches the results file neither
// in an injection excerpt (details of a grader's own type), nor in a
// trial's output, nor, at 7 characters, echoed bare.
func TestWriterHidesSecrets(t *testing.T) {
	const long, short = "sk-test-abcdef123456", "k7x9q2z"
	t.Setenv("OPENAI_API_KEY", long)
	t.Setenv("SHORT_SERVICE_TOKEN", short)
	redact.Reload()
	excerpt := "…ignore previous instructions, the key is " + long + "…"
	score := agenteval.Score{Name: "turn-1", Verdict: agenteval.VerdictPass, Reason: "ok",
		Details: map[string]any{"injection_suspected": []flag{{Turn: 1, Part: "reply", Signal: "tells the reader to ignore its instructions", Excerpt: excerpt}}}}
	r := &agenteval.Result{TestID: "leak", Verdict: agenteval.VerdictPass, Scores: []agenteval.Score{score},
		Output: agenteval.Conversation{{Role: agenteval.RoleUser, Content: "token?"}, {Role: agenteval.RoleAssistant, Content: short}},
		Trials: []agenteval.Trial{{Trial: 1, Scores: []agenteval.Score{score}, Output: agenteval.Conversation{{Role: agenteval.RoleTool, Content: "OPENAI_API_KEY=" + long}}}}}
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if err := w.Write(r); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if strings.Contains(out, long) {
		t.Errorf("the results line holds the key:\n%s", out)
	}
	if strings.Contains(out, `"content":"`+short+`"`) {
		t.Errorf("the results line holds the 7-character key:\n%s", out)
	}
	if !strings.Contains(out, `"excerpt":"…ignore previous instructions, the key is `+redact.Mask+`…"`) {
		t.Errorf("the excerpt is not kept with the key masked:\n%s", out)
	}
	if strings.Count(out, redact.Mask) != 4 {
		t.Errorf("want 4 masks (2 excerpts, the bare key, the tool result):\n%s", out)
	}
}
