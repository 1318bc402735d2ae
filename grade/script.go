package grade

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/proc"
	"github.com/agenteval/agenteval/internal/shellwords"
)

// A script grader runs a program of the user's, as AgentV's code graders
// do: the graded context goes to its stdin as JSON, in AgentV's wire
// format, and it answers on stdout with a JSON object {score, assertions}
// (or {pass}), or with plain text, whose exit status is the verdict.

// ScriptOptions is the options of script.
type ScriptOptions struct {
	// Command is the program and its arguments. A string is split into
	// words as a shell would (quotes and backslashes), and is refused when
	// it uses the shell's own syntax (pipes, redirects, variables, globs):
	// it never runs through sh -c. A script that needs a shell says so as
	// a list, [sh, -c, "..."].
	Command Strings `json:"command" alias:"script" doc:"the program and its arguments: a list, or a command line split into words (no pipes, redirects or $VARIABLES: for those, write [sh, -c, \"...\"])"`
	Timeout string  `json:"timeout" doc:"how long the program may take, such as 30s (default 60s)"`
	Cwd     string  `json:"cwd" doc:"the folder it runs in, relative to the eval file (default: the eval file's folder)"`
	// Config is passed to the program as config, with any setting of the
	// assertion that agenteval does not know (AgentV's pass-through).
	Config map[string]any `json:"config" doc:"settings passed to the program as config (an eval file's other keys on the assertion are added)"`
}

// Argv is the command to run: a list as it is, one string split into
// words. A string that needs a shell is an error: running it through
// sh -c would let whatever was filled into it (an environment variable, a
// test's variable) run as shell code.
func (o ScriptOptions) Argv() ([]string, error) {
	if len(o.Command) != 1 {
		return append([]string(nil), o.Command...), nil
	}
	line := strings.TrimSpace(o.Command[0])
	if line == "" {
		return nil, nil
	}
	words, err := shellwords.Split(line)
	if errors.Is(err, shellwords.ErrNeedsShell) {
		return nil, NeedsShellError(line, err)
	}
	if err != nil {
		return nil, fmt.Errorf("command %q: %v", line, err)
	}
	return words, nil
}

// NeedsShellError is the error of a command line that uses the shell's
// syntax: it says how to write the command instead.
func NeedsShellError(line string, err error) error {
	return fmt.Errorf("command %q needs a shell: %v; agenteval runs a command line without one, so write it as a list, [program, arg, ...], or run a shell explicitly, [sh, -c, \"...\"], and give it values as arguments after the script (\"$1\") or through the environment (\"$VAR\"), never inside the script's text", line, err)
}

func newScript(cfg ScriptOptions, e Env) (Func, error) {
	argv, err := cfg.Argv()
	if err != nil {
		return nil, err
	}
	if len(argv) == 0 || argv[0] == "" {
		return nil, fmt.Errorf("needs command: the program and its arguments, e.g. [python3, grade.py] or \"python3 grade.py\"")
	}
	timeout := 60 * time.Second
	if cfg.Timeout != "" {
		d, err := time.ParseDuration(cfg.Timeout)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("timeout %q is not a duration such as 30s", cfg.Timeout)
		}
		timeout = d
	}
	dir := e.Dir
	if cfg.Cwd != "" {
		dir = cfg.Cwd
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(e.Dir, cfg.Cwd)
		}
	}
	// A relative program path is the eval file's, like its other paths.
	if strings.Contains(argv[0], string(filepath.Separator)) && !filepath.IsAbs(argv[0]) {
		// Absolute, so exec does not look a bare name up in PATH.
		if abs, err := filepath.Abs(filepath.Join(dir, argv[0])); err == nil {
			argv[0] = abs
		}
	}
	return func(ctx context.Context, in *agenteval.GradeInput) (Outcome, error) {
		payload, err := json.Marshal(scriptPayload(in, cfg.Config))
		if err != nil {
			return Outcome{}, fmt.Errorf("encode script input: %w", err)
		}
		return runScript(ctx, argv, dir, timeout, payload)
	}, nil
}

// scriptInput is what a script reads on stdin: AgentV's code-grader wire
// format (snake_case), and ours besides (transcript, vars,
// reference_tool_calls).
type scriptInput struct {
	Input              []wireMessage          `json:"input"`
	InputFiles         []string               `json:"input_files"`
	Criteria           string                 `json:"criteria"`
	Output             string                 `json:"output"`
	ExpectedOutput     []wireMessage          `json:"expected_output"`
	Messages           []wireMessage          `json:"messages"`
	Metadata           map[string]any         `json:"metadata"`
	TraceSummary       traceSummary           `json:"trace_summary"`
	TokenUsage         *tokenUsage            `json:"token_usage"`
	CostUSD            *float64               `json:"cost_usd"`
	DurationMS         *float64               `json:"duration_ms"`
	Config             map[string]any         `json:"config"`
	Transcript         agenteval.Conversation `json:"transcript"`
	Vars               map[string]any         `json:"vars,omitempty"`
	ReferenceToolCalls []agenteval.ToolCall   `json:"reference_tool_calls,omitempty"`
}

// wireMessage is a message as AgentV's graders read it: tool calls as
// {tool, input, output, id, duration_ms}.
type wireMessage struct {
	Role       string     `json:"role"`
	Content    any        `json:"content"`
	ToolCalls  []wireCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	Name       string     `json:"name,omitempty"`
}

type wireCall struct {
	Tool       string         `json:"tool"`
	Input      map[string]any `json:"input"`
	Output     any            `json:"output,omitempty"`
	ID         string         `json:"id,omitempty"`
	DurationMS float64        `json:"duration_ms,omitempty"`
}

type traceSummary struct {
	EventCount    int                  `json:"event_count"`
	ToolCalls     map[string]int       `json:"tool_calls"`
	ErrorCount    int                  `json:"error_count"`
	LLMCallCount  int                  `json:"llm_call_count"`
	ToolDurations map[string][]float64 `json:"tool_durations,omitempty"`
}

type tokenUsage struct {
	Input  int64 `json:"input"`
	Output int64 `json:"output"`
}

func wireMessages(c agenteval.Conversation) []wireMessage {
	out := make([]wireMessage, 0, len(c))
	recs := records(c)
	k := 0
	for _, m := range c {
		w := wireMessage{Role: string(m.Role), Content: m.Content, ToolCallID: m.ToolCallID, Name: m.Name}
		for _, tc := range m.ToolCalls {
			call := wireCall{Tool: tc.Name, Input: tc.Args, ID: tc.ID, DurationMS: tc.DurationMS}
			if k < len(recs) && recs[k].result != nil {
				call.Output = *recs[k].result
			}
			k++
			w.ToolCalls = append(w.ToolCalls, call)
		}
		out = append(out, w)
	}
	return out
}

// scriptPayload builds a script's stdin from what is graded.
func scriptPayload(in *agenteval.GradeInput, config map[string]any) scriptInput {
	input, output := templateIO(in)
	p := scriptInput{
		Input: wireMessages(input), InputFiles: []string{}, Criteria: in.Criteria, Output: output,
		Messages: wireMessages(in.Output), Metadata: in.Metadata, Config: config,
		Transcript: in.Transcript, Vars: in.Vars, ReferenceToolCalls: in.ReferenceToolCalls,
		ExpectedOutput: []wireMessage{},
	}
	if in.Reference != "" {
		// Structured references travel as the object they were.
		var content any = in.Reference
		var v any
		if t := strings.TrimSpace(in.Reference); (strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[")) && json.Unmarshal([]byte(t), &v) == nil {
			content = v
		}
		p.ExpectedOutput = []wireMessage{{Role: "assistant", Content: content}}
	}
	sum := traceSummary{ToolCalls: map[string]int{}}
	for _, m := range in.Output {
		if m.Role == agenteval.RoleAssistant {
			sum.LLMCallCount++
		}
		for _, tc := range m.ToolCalls {
			sum.EventCount++
			sum.ToolCalls[tc.Name]++
			if tc.DurationMS > 0 {
				if sum.ToolDurations == nil {
					sum.ToolDurations = map[string][]float64{}
				}
				sum.ToolDurations[tc.Name] = append(sum.ToolDurations[tc.Name], tc.DurationMS)
			}
		}
	}
	p.TraceSummary = sum
	if in.Stats != nil {
		p.TokenUsage = &tokenUsage{Input: in.Stats.Usage.InputTokens, Output: in.Stats.Usage.OutputTokens}
		p.CostUSD = in.Stats.Usage.CostUSD
		ms := in.Stats.LatencyMS
		p.DurationMS = &ms
	}
	return p
}

// scriptOutput is the JSON a script may write on stdout.
type scriptOutput struct {
	Score      *float64              `json:"score"`
	Pass       *bool                 `json:"pass"`
	Reason     string                `json:"reason"`
	Reasoning  string                `json:"reasoning"`
	Assertions []agenteval.Assertion `json:"assertions"`
	Details    map[string]any        `json:"details"`
}

// maxScriptOutput bounds what a script grader may print.
const maxScriptOutput = 16 << 20

// runScript runs a grading program and reads its answer: a JSON object,
// or plain text whose exit status decides (0 passes, another status
// without anything on stderr fails). A program that cannot start, that
// exits non-zero with something on stderr, or that writes JSON that is not
// an answer, is an error, not a failing score.
func runScript(ctx context.Context, argv []string, dir string, timeout time.Duration, payload []byte) (Outcome, error) {
	if dryRun(ctx) {
		return notRun(argv), nil
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd, err := proc.Command(ctx, argv)
	if err != nil {
		return Outcome{}, err
	}
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(payload)
	// A grade is small: a script that writes megabytes is broken, and must
	// not take the run's memory with it.
	stdout, stderr := &proc.Buffer{Max: maxScriptOutput}, &proc.Buffer{Max: 64 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	runErr := proc.Run(cmd)
	name := filepath.Base(argv[0])
	if argv[0] == "sh" && len(argv) == 3 {
		name = argv[2]
	}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return Outcome{}, fmt.Errorf("script %s did not finish within %s", name, timeout)
	case errors.Is(runErr, exec.ErrNotFound), errors.Is(runErr, fs.ErrNotExist):
		return Outcome{}, fmt.Errorf("script %s cannot run: the program %s is not installed (not found in PATH)", name, argv[0])
	case runErr != nil && !errors.As(runErr, &ee):
		return Outcome{}, fmt.Errorf("script %s cannot run: %v", name, runErr)
	}
	if ee != nil && ee.ExitCode() == 127 && argv[0] == "sh" {
		return Outcome{}, fmt.Errorf("script %s cannot run: %s", name, missingProgram(stderr.String()))
	}
	if stdout.Over {
		return Outcome{}, fmt.Errorf("script %s wrote more than %d MB; it should write one JSON object {score, assertions}", name, maxScriptOutput>>20)
	}
	out := bytes.TrimSpace(stdout.Bytes())
	looksJSON := len(out) > 0 && (out[0] == '{' || out[0] == '[')
	errText := strings.TrimSpace(stderr.String())
	if ee != nil && (looksJSON || errText != "") {
		return Outcome{}, fmt.Errorf("script %s exited with status %d; stderr: %s", name, ee.ExitCode(), truncate(errText, 300))
	}
	var o scriptOutput
	if looksJSON && json.Unmarshal(out, &o) == nil {
		return o.outcome(name)
	}
	if looksJSON {
		return Outcome{}, fmt.Errorf("script %s wrote %q, not a JSON object {score, assertions}", name, truncate(string(out), 120))
	}
	// Plain text: the exit status is the verdict, stdout the evidence.
	text := string(out)
	passed := ee == nil
	if text == "" {
		text = "exit 0"
		if !passed {
			text = fmt.Sprintf("exit %d", ee.ExitCode())
		}
	}
	o2 := Outcome{Reason: fmt.Sprintf("script %s exited %s", name, map[bool]string{true: "0", false: "non-zero"}[passed]),
		Assertions: []agenteval.Assertion{{Text: truncate(text, 300), Passed: passed}}}
	if passed {
		o2.Score = 1
	}
	return o2, nil
}

// outcome reads a script's JSON answer.
func (o scriptOutput) outcome(name string) (Outcome, error) {
	out := Outcome{Reason: o.Reason, Assertions: o.Assertions, Details: o.Details}
	if out.Reason == "" {
		out.Reason = o.Reasoning
	}
	switch {
	case o.Score != nil:
		if !(*o.Score >= 0 && *o.Score <= 1) {
			return Outcome{}, fmt.Errorf("script %s gave score %v, outside [0, 1]", name, *o.Score)
		}
		out.Score = *o.Score
	case o.Pass != nil:
		if *o.Pass {
			out.Score = 1
		}
	case len(o.Assertions) > 0:
		passed := 0
		for _, a := range o.Assertions {
			if a.Passed {
				passed++
			}
		}
		out.Score = float64(passed) / float64(len(o.Assertions))
	default:
		return Outcome{}, fmt.Errorf("script %s gave neither score, pass nor assertions", name)
	}
	if out.Reason == "" {
		out.Reason = fmt.Sprintf("script %s scored %s", name, fmtNum(out.Score))
	}
	return out, nil
}

type dryRunKey struct{}

// DryRun returns a context under which the graders that start a program
// of the eval file's (script, an llm_grader's prompt_command, a
// composite's code aggregator) start nothing: each gives a skip that names
// the program. agenteval run --dry-run grades under it, since a dry run
// starts nothing the suite names.
func DryRun(ctx context.Context) context.Context {
	return context.WithValue(ctx, dryRunKey{}, true)
}

func dryRun(ctx context.Context) bool {
	v, _ := ctx.Value(dryRunKey{}).(bool)
	return v
}

// notRun is the score of a program a dry run leaves alone.
func notRun(argv []string) Outcome {
	shown := append([]string{filepath.Base(argv[0])}, argv[1:]...)
	return Outcome{Skip: true, Reason: "not run in a dry run: it would start " + truncate(strings.Join(shown, " "), 200)}
}

// missingProgram names the program a shell could not find, from its
// "sh: 1: uv: not found" message.
func missingProgram(stderr string) string {
	line := strings.TrimSpace(stderr)
	if i := strings.LastIndex(line, "\n"); i >= 0 {
		line = line[i+1:]
	}
	parts := strings.Split(line, ":")
	for i := len(parts) - 1; i > 0; i-- {
		if strings.TrimSpace(parts[i]) == "not found" {
			return "the program " + strings.TrimSpace(parts[i-1]) + " is not installed (not found in PATH)"
		}
	}
	return "the shell exited 127 (command not found): " + truncate(line, 200)
}
