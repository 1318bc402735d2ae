package target

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/proc"
	"github.com/agenteval/agenteval/internal/shellwords"
	"github.com/agenteval/agenteval/suite"
)

// TemplateAgent is AgentV's cli provider: a command template run once
// per turn. {PROMPT} is the prompt, {PROMPT_FILE} a file holding it,
// {OUTPUT_FILE} the file the command must write its reply to, {FILES} the
// input files, {EVAL_ID} the test and {ATTEMPT} the trial (0 first). The
// reply file holds JSON ({output: [messages]} or {text}, with
// token_usage {input, output, cached}, cost_usd and duration_ms, which
// become the turn's usage and time) or plain text, which is the reply;
// decodeOutputFile reads it as AgentV does.
//
// The command runs from its arguments, never through a shell: each
// placeholder is filled in within the one argument it is in, so nothing
// in a prompt or a path can end an argument or be read as shell syntax.
// {FILES} as an argument of its own gives one (or, with FilesFormat,
// several) per file.
//
// The prompt is AgentV's question on a first turn (promptOf), and the
// whole transcript (as Human:/AI: lines) on later turns, so that the
// command sees the history AgentV's CLI targets do not get.
type TemplateAgent struct {
	// Command is the command as written. When Argv is nil it is split
	// into arguments as a shell would, and refused if it uses the shell's
	// syntax (pipes, redirects, variables).
	Command string
	// Argv, when set, is what runs: the arguments, with the placeholders
	// as written (suite.TargetSpec.TemplateArgv).
	Argv []string
	Dir  string
	// FilesFormat formats each file in {FILES}: {path}, {basename}.
	FilesFormat string
	// Timeout bounds each turn; 0 means 120s.
	Timeout time.Duration
}

// template is the command's arguments, placeholders as written.
func (a *TemplateAgent) template() ([]string, error) {
	argv := a.Argv
	if argv == nil {
		words, err := shellwords.SplitRefs(strings.TrimSpace(a.Command), suite.CLIPlaceholders)
		var ne *shellwords.NeedsShellError
		switch {
		case errors.As(err, &ne):
			return nil, fmt.Errorf("cli target command %q uses the shell's syntax (%s), and it never runs through a shell: give it as a list of arguments, or run a shell yourself, [sh, -c, 'agent \"$1\" > \"$2\"', sh, {PROMPT}, {OUTPUT_FILE}]", a.Command, ne.What)
		case err != nil:
			return nil, fmt.Errorf("cli target command %q: %v", a.Command, err)
		}
		for _, w := range words {
			argv = append(argv, w.Fill(func(ref string) string { return ref }))
		}
	}
	if len(argv) == 0 || argv[0] == "" {
		return nil, errors.New("cli target has no command")
	}
	if i := shellwords.ShellScript(argv); i >= 0 && suite.CLIPlaceholders.MatchString(argv[i]) {
		return nil, fmt.Errorf("cli target command puts %s into the script of %s -c, where it would be read as shell code: pass it after the script, as \"$1\"", suite.CLIPlaceholders.FindString(argv[i]), argv[0])
	}
	return argv, nil
}

// filePath finds {path} and {basename} in FilesFormat.
var filePath = regexp.MustCompile(`\{path\}|\{basename\}`)

// Respond runs the command for one turn.
func (a *TemplateAgent) Respond(ctx context.Context, req *agenteval.AgentRequest) (*agenteval.AgentResponse, error) {
	tmpl, err := a.template()
	if err != nil {
		return nil, err
	}
	format := a.FilesFormat
	if format == "" {
		format = "{path}"
	}
	formatWords, err := shellwords.SplitRefs(format, filePath)
	if err != nil {
		return nil, fmt.Errorf("cli target files_format %q: %v", format, err)
	}
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
	var files []string
	for _, m := range req.Messages {
		for _, p := range m.Parts {
			if p.Path == "" {
				continue
			}
			for _, w := range formatWords {
				files = append(files, w.Fill(func(ref string) string {
					if ref == "{basename}" {
						return filepath.Base(p.Path)
					}
					return p.Path
				}))
			}
		}
	}
	fill := strings.NewReplacer(
		"{PROMPT}", prompt, "{PROMPT_FILE}", promptFile, "{OUTPUT_FILE}", outFile,
		"{FILES}", strings.Join(files, " "), "{EVAL_ID}", id, "{ATTEMPT}", strconv.Itoa(max(0, n-1)),
	)
	var argv []string
	for _, w := range tmpl {
		if w == "{FILES}" {
			argv = append(argv, files...)
			continue
		}
		argv = append(argv, fill.Replace(w))
	}
	timeout := a.Timeout
	if timeout <= 0 {
		timeout = 120 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd, err := proc.Command(ctx, argv)
	if err != nil {
		return nil, err
	}
	cmd.Dir = a.Dir
	stderr := &tailBuffer{}
	cmd.Stderr = stderr
	// proc.Run, not cmd.Run: it kills the command's whole group once it
	// exits, so nothing it left in the background outlives the turn.
	runErr := proc.Run(cmd)
	program := filepath.Base(argv[0])
	var ee *exec.ExitError
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		return nil, fmt.Errorf("cli target %s gave no reply within %s", program, timeout)
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.Is(runErr, exec.ErrNotFound), errors.Is(runErr, fs.ErrNotExist):
		return nil, fmt.Errorf("cli target cannot run: the program %s is not installed (not found in PATH)", argv[0])
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
