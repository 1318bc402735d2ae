//go:build unix

package grade

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/fakellm"
)

// TestScriptTimeoutKillsGrandchildren: a script whose child outlives it
// (and holds its stdout) still ends at the grader's timeout, and the child
// goes with it.
func TestScriptTimeoutKillsGrandchildren(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	script := filepath.Join(dir, "slow.sh")
	os.WriteFile(script, []byte("#!/bin/sh\nsleep 20 &\necho $! > "+pidFile+"\nwait\n"), 0o755)
	g, err := New(Spec{Type: "script", Options: ScriptOptions{Command: Strings{script}, Timeout: "1s"}})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	s, err := Run(context.Background(), g, "script", "script", &agenteval.GradeInput{})
	took := time.Since(start)
	if err == nil || !strings.Contains(s.Reason, "did not finish within 1s") {
		t.Errorf("score %+v, err %v", s, err)
	}
	if took > 2*time.Second {
		t.Errorf("took %v for a 1s timeout", took)
	}
	// SIGKILL is delivered at once, but reaping takes a moment.
	pid, _ := os.ReadFile(pidFile)
	p := strings.TrimSpace(string(pid))
	for deadline := time.Now().Add(2 * time.Second); p != ""; time.Sleep(20 * time.Millisecond) {
		state, err := os.ReadFile("/proc/" + p + "/stat")
		if err != nil || strings.Contains(string(state), ") Z ") {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("the grandchild %s is still running: %s", p, state)
			break
		}
	}
}

// TestScriptBackgroundChild: a script that prints its grade and leaves a
// child holding its output still grades, and the child is killed.
func TestScriptBackgroundChild(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	script := filepath.Join(dir, "grade.sh")
	os.WriteFile(script, []byte("#!/bin/sh\nsleep 20 &\necho $! > "+pidFile+"\necho '{\"score\": 1}'\n"), 0o755)
	g, err := New(Spec{Type: "script", Options: ScriptOptions{Command: Strings{script}}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Run(context.Background(), g, "script", "script", &agenteval.GradeInput{})
	if err != nil || s.Score != 1 {
		t.Fatalf("score %+v, err %v", s, err)
	}
	pid, _ := os.ReadFile(pidFile)
	p := strings.TrimSpace(string(pid))
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		state, err := os.ReadFile("/proc/" + p + "/stat")
		if err != nil || strings.Contains(string(state), ") Z ") {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("the background child %s is still running", p)
			break
		}
	}
	if _, err := New(Spec{Type: "script", Options: ScriptOptions{Command: Strings{script}, Timeout: "0s"}}); err == nil {
		t.Error("a zero timeout was accepted")
	}
}

// TestDryRunStartsNoProgram: under DryRun, a script grader, an llm_grader's
// prompt_command and a composite's code aggregator start nothing; each
// scores a skip that names the program it would have started.
func TestDryRunStartsNoProgram(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "marker")
	touch := []any{"touch", marker}
	j, _ := fakeJudge(t)
	ctx := DryRun(context.Background())
	for _, spec := range []Spec{
		{Type: "script", Options: map[string]any{"command": touch}},
		{Type: "not_script", Options: map[string]any{"command": touch}},
		{Type: "llm_grader", Judge: j, Options: map[string]any{"prompt_command": touch}},
		{Type: "llm_grader", Judge: j, Options: map[string]any{"prompt_command": touch, "output": "pass"}},
		{Type: "composite", Options: map[string]any{
			"assertions": []any{map[string]any{"type": "contains", "value": "x"}},
			"aggregator": map[string]any{"type": "code_grader", "path": touch},
		}},
	} {
		g, err := New(spec)
		if err != nil {
			t.Fatalf("%s: %v", spec.Type, err)
		}
		s, err := Run(ctx, g, spec.Type, spec.Type, turnInput())
		if err != nil || s.Verdict != agenteval.VerdictSkip || !strings.Contains(s.Reason, "not run in a dry run: it would start touch "+marker) {
			t.Errorf("%s: score %+v, err %v", spec.Type, s, err)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a dry run started a program")
	}
	// The same grader outside a dry run does start it.
	g, _ := New(Spec{Type: "script", Options: map[string]any{"command": touch}})
	if _, err := Run(context.Background(), g, "script", "script", turnInput()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the script did not run: %v", err)
	}
}

// TestPromptCommandKillsBackgroundChild: a prompt_command that leaves a
// child running in the background does not leave it behind: the program's
// whole group is killed once it has written its prompt.
func TestPromptCommandKillsBackgroundChild(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	script := `sleep 60 >/dev/null 2>&1 & echo $! > "$1"; echo "Grade the reply."`
	j, s := fakeJudge(t)
	s.Add(&fakellm.Rule{Reply: fakellm.Reply{JSON: map[string]any{"reason": "fine", "score": 1}}})
	g, err := New(Spec{Type: "llm_grader", Judge: j, Options: map[string]any{"prompt_command": []any{"sh", "-c", script, "sh", pidFile}}})
	if err != nil {
		t.Fatal(err)
	}
	if sc, err := g.Grade(context.Background(), turnInput()); err != nil || sc.Score != 1 {
		t.Fatalf("score %+v, err %v", sc, err)
	}
	raw, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid := strings.TrimSpace(string(raw))
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		state, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil || strings.Contains(string(state), ") Z ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the prompt command's background child %s is still running", pid)
		}
	}
}

// A reply longer than 50,000 characters of JSON reaches the script in a
// file named by output_path, as in AgentV; output is null.
func TestScriptLongReplyInAFile(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "grade.sh")
	os.WriteFile(script, []byte(`#!/bin/sh
p=$(cat)
case $p in *'"output":null'*) ;; *) echo '{"score": 0}'; exit ;; esac
f=$(printf '%s' "$p" | sed -n 's/.*"output_path":"\([^"]*\)".*/\1/p')
echo "{\"score\": $(test "$(wc -c < "$f")" -eq 60002 && echo 1 || echo 0)}"
`), 0o755)
	g, err := New(Spec{Type: "script", Dir: dir, Options: map[string]any{"command": []any{script}}})
	if err != nil {
		t.Fatal(err)
	}
	conv := agenteval.Conversation{{Role: agenteval.RoleUser, Content: "long"}, {Role: agenteval.RoleAssistant, Content: strings.Repeat("x", 60000)}}
	sc, err := g.Grade(context.Background(), &agenteval.GradeInput{Transcript: conv, Output: conv[1:], Turn: 1})
	if err != nil || sc.Score != 1 {
		t.Errorf("score %+v, err %v", sc, err)
	}
}
