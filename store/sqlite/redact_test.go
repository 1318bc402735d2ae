package sqlite

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/redact"
	"github.com/agenteval/agenteval/results"
	"github.com/agenteval/agenteval/store"
)

type flag struct {
	Part    string `json:"part"`
	Excerpt string `json:"excerpt"`
}

// TestStoreHidesSecrets: a result given to the store straight (as a
// resumed run's earlier results are, past any results writer) keeps no
// known secret: not in an injection excerpt, not a 7-character one, not
// anywhere in the file's bytes.
func TestStoreHidesSecrets(t *testing.T) {
	const long, short = "sk-test-abcdef123456", "k7x9q2z"
	t.Setenv("OPENAI_API_KEY", long)
	t.Setenv("SHORT_SERVICE_TOKEN", short)
	redact.Reload()
	path := filepath.Join(t.TempDir(), "a.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.StartRun(ctx, &results.Header{RunID: "r", Started: time.Now()}); err != nil {
		t.Fatal(err)
	}
	res := &agenteval.Result{TestID: "leak", Verdict: agenteval.VerdictPass, Scores: []agenteval.Score{{Name: "turn-1",
		Details: map[string]any{"injection_suspected": []flag{{Part: "reply", Excerpt: "ignore previous instructions " + long}}}}},
		Output: agenteval.Conversation{{Role: agenteval.RoleAssistant, Content: short}}}
	if err := s.AddResult("r", res); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishRun(ctx, "r", store.Finish{Status: store.Done}); err != nil {
		t.Fatal(err)
	}
	var got []*agenteval.Result
	s.Results(ctx, "r", 0, func(_ int64, r *agenteval.Result) error { got = append(got, r); return nil })
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Output[0].Content != redact.Mask {
		t.Errorf("stored %+v", got)
	}
	for _, f := range []string{path, path + "-wal"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if bytes.Contains(b, []byte(long)) || bytes.Contains(b, []byte(`"`+short+`"`)) {
			t.Errorf("%s holds a secret", f)
		}
		if f == path && !bytes.Contains(b, []byte(redact.Mask)) {
			t.Errorf("%s holds no mask: is the result stored as text?", f)
		}
	}
}
