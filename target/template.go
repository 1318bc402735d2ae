package target

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/proc"
)

// TemplateAgent is AgentV's cli provider: a shell command template run
// once per turn. {PROMPT} is the prompt (shell-quoted), {PROMPT_FILE} a
// file holding it, {OUTPUT_FILE} the file the command must write its reply
// to, {FILES} the input files, {EVAL_ID} the test and {ATTEMPT} the trial
// (0 first). The reply file holds JSON ({output: [messages]}, {text}, with
// token_usage) or plain text, which is the reply.
//
// The prompt is the conversation so far: the user's text on the first
// turn of a single exchange, the whole transcript (as Human:/AI: lines)
// on later turns, so that the command sees the history AgentV's CLI
// targets do not get.
type TemplateAgent struct {
	Command string
	Dir     string
	// FilesFormat formats each file in {FILES}: {path}, {basename}.
	FilesFormat string
	// Timeout bounds each turn; 0 means 120s.
	Timeout time.Duration
}

// Respond runs the command for one turn.
func (a *TemplateAgent) Respond(ctx context.Context, req *agenteval.AgentRequest) (*agenteval.AgentResponse, error) {
	tmp, err := os.MkdirTemp("", "agenteval-cli-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	prompt := promptOf(req.Messages)
	promptFile := filepath.Join(tmp, "prompt.txt")
	outFile := filepath.Join(tmp, "output.txt")
	if err := os.WriteFile(promptFile, []byte(prompt), 0o600); err != nil {
		return nil, err
	}
	id, n := req.TestID, req.Trial
	if id == "" {
		// A caller that does not say: the id is the test's ("test#trial"),
		// as the runner named conversations before run ids were in them.
		var attempt string
		id, attempt, _ = strings.Cut(req.ConversationID, "#")
		n, _ = strconv.Atoi(attempt)
	}
	format := a.FilesFormat
	if format == "" {
		format = "{path}"
	}
	var files []string
	for _, m := range req.Messages {
		for _, p := range m.Parts {
			if p.Path != "" {
				f := strings.ReplaceAll(format, "{path}", shellQuote(p.Path))
				files = append(files, strings.ReplaceAll(f, "{basename}", shellQuote(filepath.Base(p.Path))))
			}
		}
	}
	line := strings.NewReplacer(
		"{PROMPT}", shellQuote(prompt), "{PROMPT_FILE}", shellQuote(promptFile), "{OUTPUT_FILE}", shellQuote(outFile),
		"{FILES}", strings.Join(files, " "), "{EVAL_ID}", shellQuote(id), "{ATTEMPT}", strconv.Itoa(max(0, n-1)),
	).Replace(a.Command)
	timeout := a.Timeout
	if timeout <= 0 {
		timeout = 120 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd, err := proc.Command(ctx, []string{"sh", "-c", line})
	if err != nil {
		return nil, err
	}
	cmd.Dir = a.Dir
	stderr := &tailBuffer{}
	cmd.Stderr = stderr
	// proc.Run, not cmd.Run: it kills the command's whole group once it
	// exits, so nothing it left in the background outlives the turn.
	runErr := proc.Run(cmd)
	program := strings.Fields(a.Command)[0]
	var ee *exec.ExitError
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		return nil, fmt.Errorf("cli target %s gave no reply within %s", program, timeout)
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.As(runErr, &ee) && ee.ExitCode() == 127:
		return nil, fmt.Errorf("cli target cannot run: the program %s is not installed (not found in PATH); stderr: %s", program, snippet(stderr.String()))
	case runErr != nil:
		return nil, fmt.Errorf("cli target %s failed (%v); stderr: %s", program, runErr, snippet(stderr.String()))
	}
	data, err := os.ReadFile(outFile)
	if err != nil {
		return nil, fmt.Errorf("cli target %s wrote no reply to {OUTPUT_FILE}; stderr: %s", program, snippet(stderr.String()))
	}
	return decodeOutputFile(data)
}

// decodeOutputFile reads a cli target's reply file: JSON with output (a
// list of messages) or text, or the whole file as the reply.
func decodeOutputFile(data []byte) (*agenteval.AgentResponse, error) {
	var v struct {
		Output     json.RawMessage `json:"output"`
		Text       *string         `json:"text"`
		TokenUsage *struct {
			Input  int64 `json:"input"`
			Output int64 `json:"output"`
		} `json:"token_usage"`
	}
	resp := &agenteval.AgentResponse{}
	if json.Unmarshal(data, &v) == nil && (v.Output != nil || v.Text != nil) {
		if v.TokenUsage != nil {
			resp.Usage.InputTokens, resp.Usage.OutputTokens = v.TokenUsage.Input, v.TokenUsage.Output
		}
		if v.Output != nil {
			r, err := decodeReply(append(append([]byte(`{"messages":`), v.Output...), '}'))
			if err == nil {
				r.Usage = resp.Usage
				return r, nil
			}
		}
		if v.Text != nil {
			resp.Messages = agenteval.Conversation{{Role: agenteval.RoleAssistant, Content: *v.Text}}
			return resp, nil
		}
	}
	resp.Messages = agenteval.Conversation{{Role: agenteval.RoleAssistant, Content: strings.TrimRight(string(data), "\n")}}
	return resp, nil
}

// promptOf is the text a cli target gets: the user's messages of a first
// turn, or the whole transcript once there is history.
func promptOf(msgs agenteval.Conversation) string {
	hasReply := false
	var users []string
	for _, m := range msgs {
		switch m.Role {
		case agenteval.RoleAssistant, agenteval.RoleTool:
			hasReply = true
		case agenteval.RoleUser:
			users = append(users, m.Content)
		}
	}
	if hasReply {
		return msgs.Pretty()
	}
	return strings.Join(users, "\n\n")
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
