package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/agenteval/agenteval/internal/bytesize"
	"github.com/agenteval/agenteval/internal/dotenv"
	"github.com/agenteval/agenteval/internal/proc"
	"github.com/agenteval/agenteval/project"
	"github.com/agenteval/agenteval/results"
	"github.com/agenteval/agenteval/session"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/agenteval/agenteval/internal/redact"
)

// Exit codes: scripts and CI depend on them, so they never change.
const (
	exitOK        = 0 // success: every test passed, every file is valid, or the command did what it was asked
	exitFailed    = 1 // a test failed, or validate found an invalid file
	exitUsage     = 2 // a usage or configuration error
	exitExecution = 3 // a test ended in execution_error
)

// exitError carries an exit code through cobra's error return.
type exitError struct {
	code int
	err  error
	// bare messages are printed as they are, without "agenteval: ": a list
	// of path:line:col problems.
	bare bool
}

func (e *exitError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// usageErr is a usage or configuration error: exit 2.
func usageErr(format string, a ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, a...)}
}

// runExit is the exit status of a finished run or scoring: 3 when some test
// ended in an execution error, 1 when some test failed, 0 otherwise. The
// report counts; the command decides.
func runExit(s results.Summary) int {
	switch {
	case s.Errored > 0:
		return exitExecution
	case s.Failed > 0:
		return exitFailed
	}
	return exitOK
}

// loadEnvFile reads --env-file, or the .env of the project at root when
// there is one. Its secrets are redacted like the environment's. A
// project's own .env arrives with the project, from wherever it was
// cloned, so the variables that change which code programs load or where
// connections go (dotenv.Untrusted) are skipped, with a warning naming
// them, unless the user chose the file (--env-file) or set
// AGENTEVAL_TRUST_ENV=1. One line (left out under -q) names the variables
// it set, never their values, so that nothing is taken from the file
// unseen.
func loadEnvFile(w io.Writer, path, root string, quiet bool) error {
	trust := path != "" || trustEnv()
	if path == "" {
		path = filepath.Join(root, ".env")
		if _, err := os.Stat(path); err != nil {
			return nil
		}
	}
	set, skipped, err := dotenv.Load(path, trust)
	if err != nil {
		return usageErr("--env-file: %v", err)
	}
	redact.Reload()
	shown := path
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, path); err == nil && filepath.IsAbs(path) && !strings.HasPrefix(rel, "..") {
			shown = rel
		}
	}
	if len(skipped) > 0 {
		fmt.Fprintf(w, "agenteval: warning: %s: skipped %s, which change what programs load or where connections go; to use them, pass --env-file %s or set AGENTEVAL_TRUST_ENV=1\n",
			shown, strings.Join(skipped, ", "), shown)
	}
	if len(set) > 0 && !quiet {
		fmt.Fprintf(w, "agenteval: %s: set %s\n", shown, strings.Join(set, ", "))
	}
	return nil
}

// trustEnv is AGENTEVAL_TRUST_ENV from the real environment: every
// variable of the project's .env may be used.
func trustEnv() bool {
	v := strings.ToLower(os.Getenv("AGENTEVAL_TRUST_ENV"))
	return v != "" && v != "0" && v != "false"
}

// commandRoot is the project a command works in: for the commands that
// read eval or data files, the first file's (so that agenteval run
// myproject/evals from elsewhere uses myproject's .env, store and cache);
// for the others, the working directory's.
func commandRoot(cmd *cobra.Command, args []string) string {
	switch cmd.Name() {
	case "run", "score", "validate":
		if len(args) > 0 {
			return session.RootOf(args[0])
		}
	}
	return project.Here()
}

// cliErr gives a session's problems their exit code: 2 for a
// configuration or loading problem. Other errors pass unchanged.
func cliErr(err error) error {
	var le *session.LoadError
	var ce *session.ConfigError
	switch {
	case errors.As(err, &le):
		return &exitError{code: exitUsage, err: err, bare: true}
	case errors.As(err, &ce):
		return &exitError{code: exitUsage, err: err}
	}
	return err
}

// exitCode ends the command with a code and no further message.
func exitCode(code int) error { return &exitError{code: code} }

// env is what every command needs from the process: its streams, and
// whether they are terminals.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	stdoutTTY      bool
	stderrTTY      bool
	color          bool
	// noExec is --no-exec: no command target or script grader may run.
	noExec bool
	// maxRow and maxFile are --max-row-size and --max-file-size; 0 means
	// the defaults.
	maxRow, maxFile int64
	// storeFlag is --store: where runs are recorded (see session.ChooseStore).
	storeFlag string
	// root is the project the command works in (commandRoot), found once
	// before it runs: its .env is read, its store and cache used.
	root string
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// termWidth is stdout's width on a terminal, else 80.
func termWidth(e *env) int {
	if f, ok := e.stdout.(*os.File); ok && e.stdoutTTY {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 20 {
			return min(w, 120)
		}
	}
	return 80
}

func newEnv(stdin io.Reader, stdout, stderr io.Writer) *env {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, stdoutTTY: isTerminal(stdout), stderrTTY: isTerminal(stderr)}
	e.color = e.stdoutTTY && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"
	return e
}

func newRoot(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:   "agenteval",
		Short: "Evaluate multi-turn, tool-using AI agents",
		Long: `agenteval evaluates multi-turn, tool-using AI agents, offline or against any
provider (OpenAI, Anthropic, Gemini, Ollama, any OpenAI-compatible server).
New here? agenteval init DIR writes a starter project and runs it offline.

Run live conversation tests (AgentV's mode: conversation): the agent answers
each turn with the whole history, every turn is graded, then the whole
conversation; with trials, pass@k and pass^k.
  agenteval run suite.yaml --target openai:gpt-4o-mini --judge openai:gpt-4o-mini
  agenteval validate suite.yaml

Let a simulated user drive the agent from an instruction and a persona, and
measure subgoal progress and expected tool calls (agent_inspect): a test
with user: in the eval file, run the same way (--simulator picks its model).

Score recorded conversations (Ragas MultiTurnSample JSONL, OpenAI messages,
OTel GenAI and other traces) for tool-call accuracy and F1, trajectories,
goal accuracy, rubrics and topic adherence:
  agenteval score data.jsonl --metric tool_call_accuracy,tool_call_f1,tool_calls

Test agents written in Go inside go test: see the evaltest package.

Exit codes: 0 all passed or valid; 1 a test failed or a file is invalid;
2 usage or configuration error; 3 a test ended in execution_error.
Shell completion: agenteval completion bash|zsh|fish|powershell --help.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	// --version prints what the version command prints. Cobra would print
	// it through text/template, and a template run anywhere keeps every
	// exported method of every type in the binary (the linker cannot tell
	// which ones a template calls). So the flag is declared here as cobra
	// would declare it, and answered by the root's help function, which
	// cobra calls when a command with nothing to run is given no command.
	root.Flags().BoolP("version", "v", false, "version for agenteval")
	_ = root.Flags().SetAnnotation("version", cobra.FlagSetByCobraAnnotation, []string{"true"})
	help := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		if c == root {
			helpVal, _ := c.Flags().GetBool("help")
			if v, _ := c.Flags().GetBool("version"); v && !helpVal {
				fmt.Fprintln(c.OutOrStdout(), versionString())
				return
			}
		}
		help(c, args)
	})
	root.SetIn(e.stdin)
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageErr("%v\nRun '%s --help' for usage.", err, c.CommandPath())
	})
	root.PersistentFlags().BoolVar(&e.noExec, "no-exec", os.Getenv("AGENTEVAL_NO_EXEC") != "",
		"run no program the eval file names: refuse command targets and script graders (also AGENTEVAL_NO_EXEC=1)")
	root.PersistentFlags().Var(bytesize.Value{N: &e.maxRow}, "max-row-size", "largest dataset row read (default 32MB); a longer row is an error for that row")
	root.PersistentFlags().Var(bytesize.Value{N: &e.maxFile}, "max-file-size", "largest eval file read (default 64MB)")
	var envFile string
	root.PersistentFlags().StringVar(&e.storeFlag, "store", "", "where runs are recorded and read: a postgres:// URL (shared by machines) or a SQLite file (default $AGENTEVAL_STORE, else store: in agenteval.yaml, else .agenteval/agenteval.db)")
	root.PersistentFlags().StringVar(&envFile, "env-file", "", "read environment variables from this file, all of them (default: .env in the project root, if there is one, without the variables that change what programs load or where they connect unless AGENTEVAL_TRUST_ENV=1); real ones win")
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		if e.noExec {
			proc.Refuse("--no-exec")
		} else {
			proc.Refuse("")
		}
		quiet, _ := cmd.Flags().GetBool("quiet")
		e.root = commandRoot(cmd, args)
		return loadEnvFile(e.stderr, envFile, e.root, quiet)
	}
	root.AddCommand(newRunCmd(e), newScoreCmd(e), newValidateCmd(e), newExportCmd(e), newImportCmd(e), newSchemaCmd(e), newVersionCmd(e), newFakeLLMCmd(e), newCacheCmd(e), newInitCmd(e),
		newMergeCmd(e), newRunsCmd(e), newShowCmd(e), newTagCmd(e), newCompareCmd(e), newReportCmd(e), newViewCmd(e))
	root.AddCommand(newRegradeCmd(e))
	root.AddCommand(newLabelsCmd(e), newCalibrateCmd(e))
	return root
}

// Main runs the CLI and returns its exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	// Everything said on stderr (errors, progress, agent failures) is a
	// whole message per write, so each write is redacted as it goes.
	e := newEnv(stdin, stdout, stderr)
	stderr = redactingWriter{stderr}
	e.stderr = stderr
	root := newRoot(e)
	root.SetArgs(args)
	// SIGTERM and SIGHUP (a CI timeout, a closed terminal) end the run like
	// Ctrl-C, so the children in their own process groups are killed too.
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals...)
	defer stop()
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		switch {
		case ee.err != nil && ee.bare:
			fmt.Fprintln(stderr, ee.err)
		case ee.err != nil:
			fmt.Fprintf(stderr, "agenteval: %v\n", ee.err)
		}
		return ee.code
	}
	msg := err.Error()
	// cobra's own argument errors ("unknown command", "accepts 1 arg") are
	// usage errors.
	fmt.Fprintf(stderr, "agenteval: %s\n", msg)
	if strings.HasPrefix(msg, "unknown command") {
		fmt.Fprintln(stderr, "Run 'agenteval --help' for the list of commands.")
	}
	return exitUsage
}

// redactingWriter hides known secrets in each write.
type redactingWriter struct{ w io.Writer }

func (r redactingWriter) Write(p []byte) (int, error) {
	if !redact.Any() {
		return r.w.Write(p)
	}
	if _, err := io.WriteString(r.w, redact.String(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
