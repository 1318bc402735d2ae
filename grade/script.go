package grade

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
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
		p := scriptPayload(in, cfg.Config)
		// A long reply goes in a file, named by output_path, as AgentV
		// passes it.
		if b, _ := json.Marshal(p.Output); p.Output != nil && len(b) > fileBackedOutput {
			tmp, err := os.MkdirTemp("", "agenteval-grader-")
			if err != nil {
				return Outcome{}, fmt.Errorf("write the reply for script: %w", err)
			}
			defer os.RemoveAll(tmp)
			path := filepath.Join(tmp, "output.json")
			if err := os.WriteFile(path, b, 0o600); err != nil {
				return Outcome{}, fmt.Errorf("write the reply for script: %w", err)
			}
			p.Output, p.OutputPath = nil, path
		}
		payload, err := json.Marshal(p)
		if err != nil {
			return Outcome{}, fmt.Errorf("encode script input: %w", err)
		}
		return runScript(ctx, argv, dir, timeout, payload)
	}, nil
}

// fileBackedOutput is the size of JSON-encoded reply above which a script
// reads it from output_path, as AgentV does (50,000 characters).
const fileBackedOutput = 50_000

// scriptInput is what a script reads on stdin: AgentV 4.42.4's code-grader
// payload, field for field (agentvtrace.go derives trace), and ours
// besides: transcript, vars, reference_tool_calls.
type scriptInput struct {
	Criteria       string         `json:"criteria"`
	ExpectedOutput []avMessage    `json:"expected_output"`
	Output         *string        `json:"output"`
	Messages       []avMessage    `json:"messages"`
	OutputPath     string         `json:"output_path,omitempty"`
	InputFiles     []string       `json:"input_files"`
	Input          []avMessage    `json:"input"`
	Metadata       any            `json:"metadata"`
	Trace          *avTrace       `json:"trace"`
	TraceSummary   *avSummary     `json:"trace_summary"`
	TokenUsage     *avTokens      `json:"token_usage"`
	CostUSD        *float64       `json:"cost_usd"`
	DurationMS     *float64       `json:"duration_ms"`
	StartTime      *string        `json:"start_time"`
	EndTime        *string        `json:"end_time"`
	FileChanges    *string        `json:"file_changes"`
	WorkspacePath  *string        `json:"workspace_path"`
	Config         map[string]any `json:"config"`
	// Ours: the whole conversation as agenteval holds it, the test's
	// vars, and its expected tool calls. Their keys are as written.
	Transcript         agenteval.Conversation `json:"transcript"`
	Vars               map[string]any         `json:"vars,omitempty"`
	ReferenceToolCalls []agenteval.ToolCall   `json:"reference_tool_calls,omitempty"`
}

// scriptPayload builds a script's stdin from what is graded.
func scriptPayload(in *agenteval.GradeInput, config map[string]any) scriptInput {
	r := agentvRun(in)
	out := r.candidate
	p := scriptInput{
		Criteria: in.Criteria, ExpectedOutput: []avMessage{}, Output: &out, Messages: r.messages,
		InputFiles: r.inputFiles, Input: r.input, Trace: r.trace, TraceSummary: r.summary,
		TokenUsage: r.tokens, CostUSD: r.costUSD, DurationMS: r.durationMS, StartTime: r.startTime, EndTime: r.endTime,
		Transcript: in.Transcript, Vars: in.Vars, ReferenceToolCalls: in.ReferenceToolCalls,
	}
	if len(in.Metadata) > 0 {
		p.Metadata = snakeDeep(in.Metadata)
	}
	if config != nil {
		p.Config = snakeDeep(config).(map[string]any)
	}
	if in.Reference != "" {
		// Structured references travel as the object they were.
		var content any = in.Reference
		var v any
		if t := strings.TrimSpace(in.Reference); (strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[")) && json.Unmarshal([]byte(t), &v) == nil {
			content = snakeDeep(v)
		}
		p.ExpectedOutput = []avMessage{{Role: "assistant", Content: content}}
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
