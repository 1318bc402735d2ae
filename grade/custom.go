package grade

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/proc"
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

// templateVars are the four variables of a grader prompt, under the names
// AgentV's conversation mode gives them so that its prompts work here
// unchanged, plus the test's vars.
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

// defaultPrompt is the instructions of an llm_grader that has no prompt
// of its own: grade the reply against the test's criteria, its reference
// answer and the grader's rubric, whichever the test has.
func defaultPrompt(in *agenteval.GradeInput, rubric string) string {
	var b strings.Builder
	b.WriteString("Grade how well the assistant's answer accomplishes the task.")
	if in.Criteria != "" {
		b.WriteString("\n\nWhat a good answer does:\n{{ criteria }}")
	}
	if rubric != "" {
		b.WriteString("\n\nWhat to check:\n{{ rubric }}")
	}
	b.WriteString("\n\nThe task, as the assistant received it:\n{{ input }}")
	if in.Reference != "" {
		b.WriteString("\n\nA reference answer of high quality, as a guide to grade by. The answer need not follow its words or its form; it should cover its key points in the same spirit. When the reference is a sequence of messages, its last message is the final answer expected.\n{{ expected_output }}")
	}
	b.WriteString("\n\nThe answer to grade:\n{{ output }}")
	if in.Criteria == "" && rubric == "" && in.Reference == "" {
		b.WriteString("\n\nWith no criteria or reference given, judge whether the answer does what the task asks, correctly and completely.")
	}
	return b.String()
}

// fill fills a grader prompt's variables. The prompt's own words are the
// author's and reach the judge as written; every variable is material
// under review, quoted in a block of its own (see judge.Parts), so that
// what the agent wrote can never pass for the author's instructions.
func fill(tmpl string, in *agenteval.GradeInput, extra map[string]string) (judge.Parts, error) {
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
			if v, ok := extra[name]; ok {
				parts = append(parts, judge.Part{Tag: "var", Name: name, Text: v})
				continue
			}
			v, ok := in.Vars[strings.TrimPrefix(name, "vars.")]
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
		return nil, fmt.Errorf("the prompt uses {{ %s }}, which is not a variable here; use input, output, criteria, expected_output, metadata, tool_calls or a test var", strings.Join(missing, " }}, {{ "))
	}
	return parts, nil
}

// extraVars are the other variables AgentV's grader prompts use:
// metadata (as JSON), the tool calls made, and the grader's rubric.
func extraVars(in *agenteval.GradeInput, rubric string) map[string]string {
	md, _ := json.MarshalIndent(in.Metadata, "", "  ")
	mdc, _ := json.Marshal(in.Metadata)
	if in.Metadata == nil {
		md, mdc = nil, nil
	}
	var calls []string
	for _, c := range in.Output.ToolCalls() {
		calls = append(calls, "- "+c.String())
	}
	return map[string]string{
		"metadata": string(md), "metadata_json": string(mdc), "tool_calls": strings.Join(calls, "\n"),
		"rubric": rubric, "rubrics": rubric, "file_changes": "",
	}
}

// LLMGraderOptions is the options of llm_grader.
type LLMGraderOptions struct {
	Prompt string `json:"prompt" doc:"the grading instructions, or the path of a file holding them (default: grade the reply against the test's criteria, reference and rubric)"`
	Output string `json:"output" enum:"score,pass" doc:"score: the judge gives a score from 0 to 1 (default, as AgentV's llm-grader); pass: it decides pass or fail"`
	// Rubric is what to check, for the default prompt (promptfoo's
	// llm-rubric value); a prompt of your own reads it as {{ rubric }}.
	Rubric  string `json:"rubric" alias:"value" doc:"what to check (llm-rubric's value); the default prompt grades against it, a prompt of your own reads it as {{ rubric }}"`
	Samples int    `json:"samples" doc:"judge votes per decision, an odd number (default 1)"`
	// PromptCommand makes the prompt by running a program (AgentV's
	// prompt: {command}): it reads the graded context as JSON on stdin and
	// writes the prompt on stdout.
	PromptCommand Strings        `json:"prompt_command" doc:"a program that writes the prompt: it reads the graded context as JSON on stdin (AgentV's prompt: {command})"`
	Config        map[string]any `json:"config" doc:"settings passed to prompt_command as config"`
}

func newLLMGrader(cfg LLMGraderOptions, e Env) (Func, error) {
	prompt := cfg.Prompt
	if p := filepath.Join(e.Dir, prompt); prompt != "" && !strings.Contains(prompt, "\n") && len(prompt) < 300 && fileExists(p) {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("read prompt: %w", err)
		}
		prompt = string(b)
	}
	var command []string
	if len(cfg.PromptCommand) > 0 {
		argv, err := ScriptOptions{Command: cfg.PromptCommand}.Argv()
		if err != nil {
			return nil, fmt.Errorf("prompt_command: %w", err)
		}
		command = argv
	}
	j, err := judgeFor(e.Judge, cfg.Samples)
	if err != nil {
		return nil, err
	}
	label := strings.TrimSpace(cfg.Prompt)
	if label == "" {
		label = "llm grader: " + cfg.Rubric
	}
	instructions := func(ctx context.Context, in *agenteval.GradeInput) (judge.Parts, error) {
		if command != nil {
			text, err := promptFromCommand(ctx, command, e.Dir, in, cfg.Config)
			if err != nil {
				return nil, err
			}
			return judge.Parts{{Text: text}}, nil
		}
		tmpl, rubric := prompt, cfg.Rubric
		if tmpl != "" && !templateVar.MatchString(tmpl) {
			// A prompt with no variables is what to check, as AgentV has
			// it: it goes where the default prompt's criteria go, so the
			// judge still sees the task, the reference and the answer.
			tmpl, rubric = "", strings.TrimSpace(strings.TrimSpace(tmpl)+"\n"+rubric)
		}
		if tmpl == "" {
			tmpl = defaultPrompt(in, rubric)
		}
		return fill(tmpl, in, extraVars(in, rubric))
	}
	switch cfg.Output {
	case "pass":
		return func(ctx context.Context, in *agenteval.GradeInput) (Outcome, error) {
			if command != nil && dryRun(ctx) {
				return notRun(command), nil
			}
			text, err := instructions(ctx, in)
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
			o.Assertions = []agenteval.Assertion{{Text: truncate(label, 120), Passed: d.Passed, Evidence: d.Reason}}
			return o, nil
		}, nil
	case "", "score":
		return func(ctx context.Context, in *agenteval.GradeInput) (Outcome, error) {
			if command != nil && dryRun(ctx) {
				return notRun(command), nil
			}
			text, err := instructions(ctx, in)
			if err != nil {
				return Outcome{}, err
			}
			p, err := judge.Render("llm_grader_score", map[string]any{"Instructions": text})
			if err != nil {
				return Outcome{}, err
			}
			schema := judge.ObjectSchema(
				judge.Field{Key: "reason", Value: judge.String("why this score")},
				judge.Field{Key: "score", Value: map[string]any{"type": "number", "minimum": 0, "maximum": 1, "description": "from 0 (fails entirely) to 1 (meets everything)"}},
			)
			v, usage, err := j.Ask(ctx, p, "llm_grader_score", schema)
			o := Outcome{Usage: &usage}
			if err != nil {
				return o, err
			}
			f, _ := number(v["score"])
			o.Score = min(1, max(0, f))
			o.Reason, _ = v["reason"].(string)
			o.Assertions = []agenteval.Assertion{{Text: truncate(label, 120), Passed: o.Score >= agenteval.DefaultThreshold, Evidence: o.Reason}}
			return o, nil
		}, nil
	}
	return nil, fmt.Errorf("output %q is not score or pass", cfg.Output)
}

// promptFromCommand runs a prompt program: the graded context on stdin,
// the prompt on stdout.
func promptFromCommand(ctx context.Context, argv []string, dir string, in *agenteval.GradeInput, config map[string]any) (string, error) {
	payload, err := json.Marshal(scriptPayload(in, config))
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cmd, err := proc.Command(ctx, argv)
	if err != nil {
		return "", err
	}
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(payload)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// proc.Run, not cmd.Run: it kills the program's whole group once it
	// exits, so nothing it left in the background outlives the call.
	if err := proc.Run(cmd); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return "", fmt.Errorf("prompt_command cannot run: the program %s is not installed (not found in PATH)", argv[0])
		}
		return "", fmt.Errorf("prompt_command %s failed: %v; stderr: %s", argv[0], err, truncate(strings.TrimSpace(stderr.String()), 300))
	}
	text := strings.TrimSpace(stdout.String())
	if text == "" {
		return "", fmt.Errorf("prompt_command %s wrote no prompt", argv[0])
	}
	return text, nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}
