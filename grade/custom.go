package grade

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/proc"
	"github.com/agenteval/agenteval/internal/strictjson"
	"github.com/agenteval/agenteval/judge"
)

// The graders whose grading the eval file writes: a prompt, or a program.
var (
	LLMGrader = judged(Definition{Name: "llm_grader", Aliases: []string{"llm_judge"},
		Doc: "an LLM judges the reply with your prompt; {{ input }}, {{ output }}, {{ criteria }}, {{ expected_output }} and test vars are filled in"}, newLLMGrader)
	Script = deterministic(Definition{Name: "script", Aliases: []string{"code_grader", "code_judge"},
		Doc: "an external program grades: the graded context as JSON on stdin, {score, assertions} on stdout (command: [argv...])"}, newScript)
)

var templateVar = regexp.MustCompile(`\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\}\}`)

// templateVars are the four variables of a grader prompt, as the AgentV
// conversation-mode seed defines them, plus the test's vars.
func templateVars(in *agenteval.GradeInput) map[string]string {
	vars := map[string]string{}
	for k, v := range in.Vars {
		vars[k] = varText(v)
	}
	input, output := templateIO(in)
	vars["input"] = input.Pretty()
	vars["output"] = output
	vars["criteria"] = in.Criteria
	vars["expected_output"] = in.Reference
	return vars
}

func varText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// templateIO is the input and output of a grader prompt: at one turn, the
// history up to this turn's user message and this turn's text replies;
// otherwise the whole transcript and its last reply.
func templateIO(in *agenteval.GradeInput) (agenteval.Conversation, string) {
	input := in.Transcript
	output := in.Output.LastAssistant()
	if n := len(in.Output); in.Turn > 0 && n <= len(in.Transcript) {
		input = in.Transcript[:len(in.Transcript)-n]
		var texts []string
		for _, m := range in.Output {
			if m.Role == agenteval.RoleAssistant && m.Content != "" {
				texts = append(texts, m.Content)
			}
		}
		output = strings.Join(texts, "\n")
	}
	return input, output
}

// fill fills a grader prompt's variables. The prompt's own words are the
// author's and reach the judge as written; every variable is material
// under review, quoted in a block of its own (see judge.Parts), so that
// what the agent wrote can never pass for the author's instructions.
func fill(tmpl string, in *agenteval.GradeInput) (judge.Parts, error) {
	input, output := templateIO(in)
	var parts judge.Parts
	var missing []string
	last := 0
	for _, loc := range templateVar.FindAllStringSubmatchIndex(tmpl, -1) {
		if loc[0] > last {
			parts = append(parts, judge.Part{Text: tmpl[last:loc[0]]})
		}
		last = loc[1]
		name := tmpl[loc[2]:loc[3]]
		switch name {
		case "input":
			parts = append(parts, judge.Part{Tag: "input", Conversation: append(agenteval.Conversation{}, input...)})
		case "output":
			parts = append(parts, judge.Part{Tag: "output", Text: output})
		case "criteria":
			parts = append(parts, judge.Part{Tag: "criteria", Text: in.Criteria})
		case "expected_output":
			parts = append(parts, judge.Part{Tag: "expected_output", Text: in.Reference})
		default:
			v, ok := in.Vars[name]
			if !ok {
				missing = append(missing, name)
				continue
			}
			parts = append(parts, judge.Part{Tag: "var", Name: name, Text: varText(v)})
		}
	}
	if last < len(tmpl) {
		parts = append(parts, judge.Part{Text: tmpl[last:]})
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("the prompt uses {{ %s }}, which is not a variable here; use input, output, criteria, expected_output or a test var", strings.Join(missing, " }}, {{ "))
	}
	return parts, nil
}

// LLMGraderOptions is the options of llm_grader.
type LLMGraderOptions struct {
	Prompt  string `json:"prompt" doc:"the grading instructions, or the path of a file holding them"`
	Output  string `json:"output" enum:"pass,score" doc:"pass: the judge decides pass or fail (default); score: it gives a score from 0 to 1"`
	Samples int    `json:"samples" doc:"judge votes per decision, an odd number (default 1)"`
}

func newLLMGrader(cfg LLMGraderOptions, e Env) (Func, error) {
	prompt := cfg.Prompt
	if prompt == "" {
		return nil, fmt.Errorf("needs prompt: the grading instructions, with {{ input }}, {{ output }} and friends")
	}
	if p := filepath.Join(e.Dir, prompt); !strings.Contains(prompt, "\n") && len(prompt) < 300 && fileExists(p) {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("read prompt: %w", err)
		}
		prompt = string(b)
	}
	j, err := judgeFor(e.Judge, cfg.Samples)
	if err != nil {
		return nil, err
	}
	switch cfg.Output {
	case "", "pass":
		return func(ctx context.Context, in *agenteval.GradeInput) (Outcome, error) {
			text, err := fill(prompt, in)
			if err != nil {
				return Outcome{}, err
			}
			ds, usage, err := j.Decide(ctx, "llm_grader", map[string]any{"Instructions": text}, []judge.Criterion{{ID: "llm_grader", Text: "The reply meets the instructions above."}})
			o := Outcome{Usage: &usage}
			if err != nil {
				return o, err
			}
			d := ds[0]
			if d.Passed {
				o.Score = 1
			}
			o.Reason = d.Reason
			o.Assertions = []agenteval.Assertion{{Text: truncate(strings.TrimSpace(cfg.Prompt), 120), Passed: d.Passed, Evidence: d.Reason}}
			return o, nil
		}, nil
	case "score":
		return func(ctx context.Context, in *agenteval.GradeInput) (Outcome, error) {
			text, err := fill(prompt, in)
			if err != nil {
				return Outcome{}, err
			}
			p, err := judge.Render("llm_grader_score", map[string]any{"Instructions": text})
			if err != nil {
				return Outcome{}, err
			}
			schema := judge.ObjectSchema(
				judge.Field{Key: "reason", Value: judge.String("why this score")},
				judge.Field{Key: "score", Value: map[string]any{"type": "number", "description": "from 0 (fails entirely) to 1 (meets everything)"}},
			)
			v, usage, err := j.Ask(ctx, p, "llm_grader_score", schema)
			o := Outcome{Usage: &usage}
			if err != nil {
				return o, err
			}
			f, _ := number(v["score"])
			o.Score = min(1, max(0, f))
			o.Reason, _ = v["reason"].(string)
			o.Assertions = []agenteval.Assertion{{Text: truncate(strings.TrimSpace(cfg.Prompt), 120), Passed: o.Score >= agenteval.DefaultThreshold, Evidence: o.Reason}}
			return o, nil
		}, nil
	}
	return nil, fmt.Errorf("output %q is not pass or score", cfg.Output)
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// scriptInput is what a script grader reads on stdin.
type scriptInput struct {
	Input              string                 `json:"input"`
	Output             string                 `json:"output"`
	ExpectedOutput     string                 `json:"expected_output,omitempty"`
	Criteria           string                 `json:"criteria,omitempty"`
	Transcript         agenteval.Conversation `json:"transcript"`
	OutputMessages     agenteval.Conversation `json:"output_messages"`
	ReferenceToolCalls []agenteval.ToolCall   `json:"reference_tool_calls,omitempty"`
	Metadata           map[string]any         `json:"metadata,omitempty"`
	Vars               map[string]any         `json:"vars,omitempty"`
	Stats              *agenteval.Stats       `json:"stats,omitempty"`
}

// scriptOutput is what a script grader writes on stdout.
type scriptOutput struct {
	Score      *float64              `json:"score"`
	Pass       *bool                 `json:"pass"`
	Reason     string                `json:"reason"`
	Assertions []agenteval.Assertion `json:"assertions"`
}

// maxScriptOutput bounds what a script grader may print.
const maxScriptOutput = 16 << 20

// ScriptOptions is the options of script.
type ScriptOptions struct {
	// Command is the program and its arguments; a string is one program
	// path. It never runs through a shell.
	Command Strings `json:"command" alias:"script" doc:"the program and its arguments, as a list (a string is one program path; no shell is used)"`
	Timeout string  `json:"timeout" doc:"how long the program may take, such as 30s (default 60s)"`
	Cwd     string  `json:"cwd" doc:"the folder it runs in, relative to the eval file"`
}

func newScript(cfg ScriptOptions, e Env) (Func, error) {
	argv := append([]string(nil), cfg.Command...)
	if len(argv) == 0 || argv[0] == "" {
		return nil, fmt.Errorf("needs command: the program and its arguments as a list, e.g. [python3, grade.py]")
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
		dir = filepath.Join(e.Dir, cfg.Cwd)
	}
	// A relative program path is the eval file's, like its other paths.
	if strings.Contains(argv[0], string(filepath.Separator)) && !filepath.IsAbs(argv[0]) {
		// Absolute, so exec does not look a bare name up in PATH.
		if abs, err := filepath.Abs(filepath.Join(e.Dir, argv[0])); err == nil {
			argv[0] = abs
		}
	}
	return func(ctx context.Context, in *agenteval.GradeInput) (Outcome, error) {
		vars := templateVars(in)
		payload, err := json.Marshal(scriptInput{
			Input: vars["input"], Output: vars["output"], ExpectedOutput: in.Reference, Criteria: in.Criteria,
			Transcript: in.Transcript, OutputMessages: in.Output, ReferenceToolCalls: in.ReferenceToolCalls,
			Metadata: in.Metadata, Vars: in.Vars, Stats: in.Stats,
		})
		if err != nil {
			return Outcome{}, fmt.Errorf("encode script input: %w", err)
		}
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		cmd, err := proc.Command(ctx, argv)
		if err != nil {
			return Outcome{}, err
		}
		cmd.Dir = dir
		cmd.Stdin = bytes.NewReader(payload)
		// A grade is small: a script that writes megabytes is broken, and
		// must not take the run's memory with it.
		stdout, stderr := &proc.Buffer{Max: maxScriptOutput}, &proc.Buffer{Max: 64 << 10}
		cmd.Stdout, cmd.Stderr = stdout, stderr
		if err := proc.Run(cmd); err != nil {
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return Outcome{}, fmt.Errorf("script %s did not finish within %s", argv[0], timeout)
			}
			return Outcome{}, fmt.Errorf("script %s failed: %v; stderr: %s", argv[0], err, truncate(strings.TrimSpace(stderr.String()), 300))
		}
		if stdout.Over {
			return Outcome{}, fmt.Errorf("script %s wrote more than %d MB; it should write one JSON object {score, assertions}", argv[0], maxScriptOutput>>20)
		}
		var out scriptOutput
		if err := strictjson.Decode(bytes.TrimSpace(stdout.Bytes()), &out); err != nil {
			return Outcome{}, fmt.Errorf("script %s wrote %q, not a JSON object {score, assertions}: %v", argv[0], truncate(stdout.String(), 120), err)
		}
		o := Outcome{Reason: out.Reason, Assertions: out.Assertions}
		switch {
		case out.Score != nil:
			if !(*out.Score >= 0 && *out.Score <= 1) {
				return Outcome{}, fmt.Errorf("script %s gave score %v, outside [0, 1]", argv[0], *out.Score)
			}
			o.Score = *out.Score
		case out.Pass != nil:
			if *out.Pass {
				o.Score = 1
			}
		case len(out.Assertions) > 0:
			passed := 0
			for _, a := range out.Assertions {
				if a.Passed {
					passed++
				}
			}
			o.Score = float64(passed) / float64(len(out.Assertions))
		default:
			return Outcome{}, fmt.Errorf("script %s gave neither score, pass nor assertions", argv[0])
		}
		if o.Reason == "" {
			o.Reason = fmt.Sprintf("script %s scored %s", filepath.Base(argv[0]), fmtNum(o.Score))
		}
		return o, nil
	}, nil
}
