//go:build unix

package grade

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
)

// TestAgentVTraceEvaluationGraders runs AgentV 4.42.4's own trace
// evaluation graders (examples/features/trace-evaluation/graders, written
// in TypeScript against its SDK) on agenteval's payload, with the settings
// of that example's five tests, for a reply like a model target's. Each
// must score 1, as it does in AgentV.
//
// It needs what those graders need, and skips without it: AgentV's
// sources (a git mirror, $AGENTV_MIRROR, default
// /work/.mirror/EntityProcess+agentv/repo), which give the graders and the
// SDK; a TypeScript runner, bun or tsx, on PATH; and, for tsx, a
// node_modules folder holding zod 3 and yaml, the SDK's dependencies
// ($AGENTV_NODE_MODULES).
func TestAgentVTraceEvaluationGraders(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a TypeScript runner per grader")
	}
	mirror := os.Getenv("AGENTV_MIRROR")
	if mirror == "" {
		mirror = "/work/.mirror/EntityProcess+agentv/repo"
	}
	const ref = "v4.42.4"
	if err := exec.Command("git", "--git-dir", mirror, "rev-parse", "--verify", "-q", ref).Run(); err != nil {
		t.Skipf("no AgentV mirror with %s at %s (set AGENTV_MIRROR)", ref, mirror)
	}
	var runner []string
	if p, err := exec.LookPath("bun"); err == nil {
		runner = []string{p, "run"}
	} else if p, err := exec.LookPath("tsx"); err == nil {
		runner = []string{p}
	} else {
		t.Skip("neither bun nor tsx is on PATH")
	}
	dir := t.TempDir()
	show := func(path string) []byte {
		out, err := exec.Command("git", "--git-dir", mirror, "show", ref+":"+path).Output()
		if err != nil {
			t.Fatalf("git show %s: %v", path, err)
		}
		return out
	}
	// The SDK as a package of TypeScript sources, beside the graders.
	sdk := filepath.Join(dir, "node_modules", "@agentv", "sdk")
	os.MkdirAll(filepath.Join(sdk, "src"), 0o755)
	list, err := exec.Command("git", "--git-dir", mirror, "ls-tree", "--name-only", ref, "packages/sdk/src/").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range strings.Fields(string(list)) {
		os.WriteFile(filepath.Join(sdk, "src", filepath.Base(f)), show(f), 0o644)
	}
	os.WriteFile(filepath.Join(sdk, "package.json"), []byte(`{"name":"@agentv/sdk","type":"module","main":"./src/index.ts","exports":{".":"./src/index.ts"}}`), 0o644)
	os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"type":"module"}`), 0o644)
	if runner[0] != "bun" && !strings.HasSuffix(runner[0], "/bun") {
		deps := os.Getenv("AGENTV_NODE_MODULES")
		for _, m := range []string{"zod", "yaml"} {
			if _, err := os.Stat(filepath.Join(deps, m, "package.json")); deps == "" || err != nil {
				t.Skipf("tsx needs zod 3 and yaml for AgentV's SDK: set AGENTV_NODE_MODULES to a node_modules folder that holds them")
			}
			os.Symlink(filepath.Join(deps, m), filepath.Join(dir, "node_modules", m))
		}
	}
	os.MkdirAll(filepath.Join(dir, "graders"), 0o755)
	for _, g := range []string{"span-count", "error-spans", "span-duration"} {
		os.WriteFile(filepath.Join(dir, "graders", g+".ts"), show("examples/features/trace-evaluation/graders/"+g+".ts"), 0o644)
	}

	// A model target's reply to the example's question, as the runner
	// gives it to graders.
	conv := agenteval.Conversation{{Role: agenteval.RoleUser, Content: "Summarize the key points of this document."}, {Role: agenteval.RoleAssistant, Content: "This is a fake reply."}}
	in := &agenteval.GradeInput{Transcript: conv, Output: conv[1:], Turn: 1, Criteria: "Agent completes the task.", TestID: "span-count-check", Target: "llm",
		Stats: &agenteval.Stats{LatencyMS: 412.7, Usage: agenteval.Usage{Calls: 1, InputTokens: 23, OutputTokens: 6}, Turns: 1}}
	// The example's tests: each grader with its settings.
	tests := []struct {
		test, grader string
		config       map[string]any
	}{
		{"span-count-check", "span-count", map[string]any{"maxLlmCalls": 5, "maxToolCalls": 10}},
		{"error-free-execution", "error-spans", map[string]any{"maxErrors": 0}},
		{"no-forbidden-tools", "error-spans", map[string]any{"maxErrors": 0, "forbiddenTools": []any{"execute_code", "shell_command"}}},
		{"duration-check", "span-duration", map[string]any{"maxSpanMs": 3000, "maxTotalMs": 15000}},
		{"comprehensive-trace-check", "span-count", map[string]any{"maxLlmCalls": 8, "maxToolCalls": 20}},
		{"comprehensive-trace-check", "error-spans", nil},
		{"comprehensive-trace-check", "span-duration", map[string]any{"maxSpanMs": 5000}},
	}
	for _, tt := range tests {
		t.Run(tt.test+"/"+tt.grader, func(t *testing.T) {
			cmd := append(append([]string{}, runner...), "graders/"+tt.grader+".ts")
			g, err := New(Spec{Type: "script", Dir: dir, Options: ScriptOptions{Command: cmd, Timeout: "60s", Config: tt.config}})
			if err != nil {
				t.Fatal(err)
			}
			sc, err := g.Grade(context.Background(), in)
			if err != nil || sc.Score != 1 {
				t.Errorf("score %+v, err %v", sc, err)
			}
		})
	}
}
