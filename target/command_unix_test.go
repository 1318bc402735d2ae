//go:build unix

package target

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agenteval/agenteval"
)

// TestCommandCloseKillsChildren: an agent that leaves a child holding its
// pipes must not hang the run, and the child must not outlive it.
func TestCommandCloseKillsChildren(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	script := `sleep 60 & echo $! > "$1"; while read line; do echo '{"content": "ok"}'; done`
	a := &CommandAgent{Argv: []string{"/bin/sh", "-c", script, "sh", pidFile}}
	resp, err := a.Respond(context.Background(), req(1, user("hi")))
	if err != nil || len(resp.Messages) != 1 || resp.Messages[0].Content != "ok" {
		t.Fatalf("resp %+v, err %v", resp, err)
	}
	start := time.Now()
	if err := a.CloseConversation("t#1"); err != nil {
		t.Fatal(err)
	}
	t.Logf("close took %s", time.Since(start))
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("close took %s; a child holding the pipes must not block it", d)
	}
	raw, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the agent's child %d is still running after close", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive reports whether pid runs; a zombie waiting to be reaped does not.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	f := strings.Fields(string(stat))
	return !(len(f) > 2 && f[2] == "Z")
}

// TestTemplateEvalIDAndAttempt: a cli target's {EVAL_ID} is the test's id
// and {ATTEMPT} its trial from 0, whatever the conversation id looks like
// (the runner's start with the run, the target and the suite); a caller
// that names no test still gets them from a "test#trial" id.
func TestTemplateEvalIDAndAttempt(t *testing.T) {
	a := &TemplateAgent{Argv: []string{"sh", "-c", `printf '%s %s' "$1" "$2" > "$3"`, "sh", "{EVAL_ID}", "{ATTEMPT}", "{OUTPUT_FILE}"}}
	for _, tt := range []struct {
		req  agenteval.AgentRequest
		want string
	}{
		{agenteval.AgentRequest{ConversationID: "a1b2c3/cli/shop/find-book#2", TestID: "find-book", Trial: 2}, "find-book 1"},
		{agenteval.AgentRequest{ConversationID: "find-book#3"}, "find-book 2"},
	} {
		tt.req.Turn, tt.req.Messages = 1, agenteval.Conversation{{Role: agenteval.RoleUser, Content: "hi"}}
		resp, err := a.Respond(context.Background(), &tt.req)
		if err != nil || len(resp.Messages) != 1 || resp.Messages[0].Content != tt.want {
			t.Errorf("%s: resp %+v, err %v, want %q", tt.req.ConversationID, resp, err, tt.want)
		}
	}
}

// TestTemplateKillsBackgroundChild: a cli target whose command leaves a
// child running in the background does not leave it behind: the command's
// whole group is killed at the end of the turn.
func TestTemplateKillsBackgroundChild(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	script := filepath.Join(dir, "agent.sh")
	os.WriteFile(script, []byte("sleep 60 >/dev/null 2>&1 &\necho $! > \"$1\"\necho ok > \"$2\"\n"), 0o644)
	a := &TemplateAgent{Command: "sh agent.sh child.pid {OUTPUT_FILE}", Dir: dir}
	resp, err := a.Respond(context.Background(), req(1, user("hi")))
	// The reply is the file as written, its newline too, as in AgentV.
	if err != nil || len(resp.Messages) != 1 || resp.Messages[0].Content != "ok\n" {
		t.Fatalf("resp %+v, err %v", resp, err)
	}
	raw, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
	for deadline := time.Now().Add(5 * time.Second); alive(pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the cli target's background child %d is still running after the turn", pid)
		}
	}
}

// TestTemplateNoShellInjection: a cli target's command runs from its
// arguments, never through a shell, so a prompt (or a file name) holding
// shell syntax stays one argument and runs nothing; a command line that
// needs a shell is refused, and a placeholder pasted into the script of
// sh -c too.
func TestTemplateNoShellInjection(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "marker")
	for _, payload := range []string{"; touch " + marker, "| touch " + marker, "$(touch " + marker + ")", "`touch " + marker + "`", "' ; touch " + marker + " ; '"} {
		for _, a := range []*TemplateAgent{
			{Command: "sh -c 'printf %s \"$1\" > \"$2\"' sh {PROMPT} {OUTPUT_FILE}", Dir: dir},
			{Argv: []string{"sh", "-c", `printf %s "$1" > "$2"`, "sh", "--prompt={PROMPT}", "{OUTPUT_FILE}"}, Dir: dir},
		} {
			resp, err := a.Respond(context.Background(), req(1, user(payload)))
			if err != nil || len(resp.Messages) != 1 || !strings.HasSuffix(resp.Messages[0].Content, payload) {
				t.Errorf("%q: resp %+v, err %v", payload, resp, err)
			}
		}
	}
	// {FILES} alone gives an argument per file (two with this format),
	// each path whole.
	odd := filepath.Join(dir, "a b; touch "+marker)
	a := &TemplateAgent{Argv: []string{"sh", "-c", `printf '%s|' "$@" > "$0"`, "{OUTPUT_FILE}", "{FILES}"}, FilesFormat: "--file {path}"}
	r := req(1, agenteval.Message{Role: agenteval.RoleUser, Content: "hi", Parts: []agenteval.Part{{Type: "file", Path: odd}, {Type: "file", Path: "b.txt"}}})
	resp, err := a.Respond(context.Background(), r)
	if want := "--file|" + odd + "|--file|b.txt|"; err != nil || resp.Messages[0].Content != want {
		t.Errorf("{FILES}: resp %+v, err %v; want %q", resp, err, want)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a prompt ran as shell code")
	}
	for _, a := range []*TemplateAgent{
		{Command: "agent {PROMPT} > {OUTPUT_FILE}"},
		{Command: "agent {PROMPT} | tee {OUTPUT_FILE}"},
		{Command: "agent $(cat {PROMPT_FILE})"},
		{Argv: []string{"sh", "-c", "agent {PROMPT} > {OUTPUT_FILE}"}},
	} {
		if _, err := a.Respond(context.Background(), req(1, user("hi"))); err == nil || !strings.Contains(err.Error(), "shell") {
			t.Errorf("%q %q: %v", a.Command, a.Argv, err)
		}
	}
}
