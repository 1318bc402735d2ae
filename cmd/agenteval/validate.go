package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/project"
	"github.com/agenteval/agenteval/session"
	"github.com/agenteval/agenteval/suite"
	"github.com/spf13/cobra"
)

func newValidateCmd(e *env) *cobra.Command {
	var judgeSpec, simulator, config string
	var explain, strict bool
	var input inputFlags
	cmd := &cobra.Command{
		Use:   "validate FILE...",
		Short: "Check eval files and datasets, reporting every problem with its line and column",
		Long: `Check eval files (YAML suites, agent_inspect JSON), datasets (Ragas or
OpenAI-messages JSONL, or a JSON array) and traces in any format score reads,
and report every problem as path:line:col: message on stderr. Exit 0 when every file is valid, 1 when
any is not, 2 when a file cannot be read.

Validation is about the file: it needs neither secrets nor a judge. An
unset environment variable, an unknown key (unless it is a misspelling of a
known one, which is an error), a setting agenteval ignores, or
graders that a judge will grade (run needs --judge) are warnings
(path:line:col: warning: ...), and the file is still valid; --strict makes
them errors. Each eval file ends with one line: what it was read as, its
tests, its warnings, and the tests that will be skipped and why. JSONL is
read as AgentV tests or as recorded conversations (Ragas, OpenAI
messages), whichever its lines are.

--explain prints how each test was read: its input, reference, graders
and targets, whichever spelling (AgentV v4 or v5 keys) the file used.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErr("validate needs at least one file\nUsage: agenteval validate FILE...")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			code := exitOK
			judge := judgeSpec != "" || os.Getenv("AGENTEVAL_JUDGE") != ""
			// A folder or a glob stands for its eval files, as in run.
			paths, err := session.EvalFiles(args)
			if err != nil {
				return cliErr(err)
			}
			for _, path := range paths {
				if filepath.Base(path) == project.FileName {
					code = max(code, validateProject(e, path))
					continue
				}
				cfg, err := project.For(path, config, suite.Options{NoExec: e.noExec})
				if err != nil {
					fmt.Fprintln(e.stderr, err.Error())
					code = max(code, exitFailed)
					continue
				}
				opt := session.ProjectOptions(cfg, judge, simulator != "")
				opt.NoExec, opt.MaxFileBytes = e.noExec, e.maxFile
				opt.NoJudgeNeeded, opt.Strict = true, strict
				check := func(s *suite.Suite) []error {
					// What a run would refuse before it starts, so that a
					// file that validates is one whose run starts.
					project.Apply(cfg, s)
					return session.Check(s, cfg, judgeSpec, simulator)
				}
				c := validateFile(e, path, opt, &input, cfg, explain, check)
				code = max(code, c)
			}
			if code == exitUsage {
				return exitCode(exitUsage)
			}
			return exitCode(code)
		},
	}
	cmd.Flags().StringVar(&judgeSpec, "judge", "", "the judge that will grade the suites' string assertions")
	cmd.Flags().StringVar(&simulator, "simulator", "", "the model that will play simulated users")
	cmd.Flags().StringVar(&input.format, "input-format", "", "read data files as this format instead of detecting it")
	cmd.Flags().BoolVar(&explain, "explain", false, "print how each test was read (input, reference, graders, targets)")
	cmd.Flags().BoolVar(&strict, "strict", false, "make every warning an error")
	cmd.Flags().StringVar(&config, "config", "", "project file (default: the nearest agenteval.yaml at or above each file)")
	return cmd
}

// validateProject checks a project file and returns its exit code.
func validateProject(e *env, path string) int {
	c, err := project.Load(path, suite.Options{NoExec: e.noExec})
	if err != nil {
		if c == nil {
			fmt.Fprintf(e.stderr, "%s: %v\n", path, errors.Unwrap(err))
			return exitUsage
		}
		fmt.Fprintln(e.stderr, err.Error())
		fmt.Fprintf(e.stdout, "%s: invalid: %s\n", path, counted(strings.Count(err.Error(), "\n")+1, "error"))
		return exitFailed
	}
	for _, w := range c.Warnings {
		fmt.Fprintln(e.stderr, warning(w))
	}
	fmt.Fprintf(e.stdout, "%s: ok, project file: %s, %s\n", path, counted(len(c.Targets), "target"), counted(len(c.Tools), "tool"))
	return exitOK
}

// validateSuite checks one eval file and returns its exit code.
func validateSuite(e *env, path string, opt suite.Options, cfg *project.Config, explain bool, check func(*suite.Suite) []error) int {
	s, err := suite.Load(path, opt)
	if s != nil {
		for _, w := range s.Warnings {
			fmt.Fprintln(e.stderr, warning(w))
		}
	}
	if err != nil {
		if s == nil && !strings.Contains(err.Error(), path+":") {
			fmt.Fprintf(e.stderr, "%s: %v\n", path, errors.Unwrap(err))
			return exitUsage
		}
		fmt.Fprintln(e.stderr, err.Error())
		n := strings.Count(err.Error(), "\n") + 1
		fmt.Fprintf(e.stdout, "%s: invalid: %s\n", path, counted(n, "error"))
		return exitFailed
	}
	turns, simulated, subgoals, calls := 0, 0, 0, 0
	for _, t := range s.Tests {
		turns += len(t.Turns)
		if t.User != nil {
			simulated++
		}
		subgoals += len(t.Subgoals)
		calls += len(t.ExpectedToolCalls)
	}
	extra := ""
	if simulated > 0 {
		extra = fmt.Sprintf(", %d simulated", simulated)
	}
	if subgoals > 0 {
		extra += ", " + counted(subgoals, "subgoal")
	}
	if calls > 0 {
		extra += ", " + counted(calls, "expected tool call")
	}
	with := ""
	if cfg != nil {
		with = ", with " + cfg.File
	}
	if explain {
		suite.Explain(e.stdout, s)
	}
	if errs := check(s); len(errs) > 0 {
		for _, err := range errs {
			fmt.Fprintln(e.stderr, err)
		}
		fmt.Fprintf(e.stdout, "%s: invalid: %s\n", path, counted(len(errs), "error"))
		return exitFailed
	}
	fmt.Fprintf(e.stdout, "%s: ok, %s (%s%s); read as %s%s%s\n", path, counted(len(s.Tests), "test"), counted(turns, "conversation turn"), extra, s.Schema, with, compatNote(s))
	return exitOK
}

// validateFile checks one file and returns its exit code.
func validateFile(e *env, path string, opt suite.Options, input *inputFlags, cfg *project.Config, explain bool, check func(*suite.Suite) []error) int {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml":
		return validateSuite(e, path, opt, cfg, explain, check)
	case ".jsonl":
		// AgentV's JSONL tests are told from recorded conversations by
		// their content.
		if b, err := os.ReadFile(path); err == nil && suite.SniffJSONL(b) == suite.JSONLTests {
			return validateSuite(e, path, opt, cfg, explain, check)
		}
	default:
		// agent_inspect JSON is told from a dataset by its content.
		if b, err := os.ReadFile(path); err == nil && suite.IsInspect(b) {
			return validateSuite(e, path, opt, cfg, explain, check)
		}
	}
	r, err := input.open(path)
	if err != nil {
		fmt.Fprintf(e.stderr, "%s: %s\n", path, strings.TrimPrefix(err.Error(), "open dataset: "))
		return exitUsage
	}
	r.MaxRowBytes = e.maxRow
	defer r.Close()
	rows, bad, nerr, nwarn := 0, 0, 0, 0
	problems := newProblemPrinter(e.stderr)
	defer problems.finish()
	for {
		row, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *agenteval.PosError
			if errors.As(err, &pe) {
				fmt.Fprintln(e.stderr, pe.Error())
				nerr++
				bad++
				break
			}
			fmt.Fprintf(e.stderr, "%s: %v\n", path, err)
			return exitUsage
		}
		rows++
		if len(row.Errors) > 0 {
			bad++
		}
		for _, pe := range row.Errors {
			problems.print(pe, false)
			nerr++
		}
		for _, pe := range row.Warnings {
			problems.print(pe, true)
			nwarn++
		}
	}
	for _, pe := range r.Warnings() {
		problems.print(pe, true)
		nwarn++
	}
	warn := ""
	if nwarn > 0 {
		warn = ", " + counted(nwarn, "warning")
	}
	if bad > 0 {
		fmt.Fprintf(e.stdout, "%s: invalid: %d of %s %s problems (%s%s)\n", path, bad, counted(rows, "row"), plural(bad, "has", "have"), counted(nerr, "error"), warn)
		return exitFailed
	}
	if rows == 0 {
		fmt.Fprintf(e.stdout, "%s: invalid: no rows\n", path)
		return exitFailed
	}
	fmt.Fprintf(e.stdout, "%s: ok, %s (%s%s)\n", path, counted(rows, "sample"), r.FormatName(), warn)
	return exitOK
}

// warning renders a problem that does not make its row invalid.
func warning(pe *agenteval.PosError) string { return session.Warning(pe) }

// compatNote ends a file's line: its warnings, and the tests that will be
// skipped and why.
func compatNote(s *suite.Suite) string {
	note := ""
	if n := len(s.Warnings); n > 0 {
		note += "; " + counted(n, "warning")
	}
	if skips := suite.SkipSummary(s); skips != "" {
		note += "; " + skips
	}
	return note
}
