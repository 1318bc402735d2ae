package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/dataset"
	"github.com/agenteval/agenteval/suite"
	"github.com/spf13/cobra"
)

func newValidateCmd(e *env) *cobra.Command {
	var judgeSpec, simulator string
	var explain, strict bool
	cmd := &cobra.Command{
		Use:   "validate FILE...",
		Short: "Check eval files and datasets, reporting every problem with its line and column",
		Long: `Check eval files (YAML suites, agent_inspect JSON) and datasets (Ragas or
OpenAI-messages JSONL, or a JSON array), and report every problem as
path:line:col: message on stderr. Exit 0 when every file is valid, 1 when
any is not, 2 when a file cannot be read.

Validation is about the file: it needs neither secrets nor a judge. An
unset environment variable, an unknown key, a setting agenteval ignores, or
graders that a judge will grade (run needs --judge) are warnings
(path:line:col: warning: ...), and the file is still valid; --strict makes
them errors. Each file ends with one line: loaded or invalid, its tests,
its warnings, and the tests that will be skipped and why. JSONL is read as
AgentV tests or as recorded conversations (Ragas, OpenAI messages),
whichever its lines are, and the line says which.

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
			opt := suite.Options{JudgeAvailable: judgeSpec != "" || os.Getenv("AGENTEVAL_JUDGE") != "", SimulatorAvailable: simulator != "",
				NoJudgeNeeded: true, Strict: strict}
			for _, path := range args {
				c := validateFile(e, path, opt, explain)
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
	cmd.Flags().BoolVar(&explain, "explain", false, "print how each test was read (input, reference, graders, targets)")
	cmd.Flags().BoolVar(&strict, "strict", false, "make every warning an error")
	return cmd
}

// validateSuite checks one eval file and returns its exit code.
func validateSuite(e *env, path string, opt suite.Options, explain bool) int {
	s, err := suite.Load(path, opt)
	if s != nil {
		for _, w := range s.Warnings {
			fmt.Fprintln(e.stderr, warningText(w))
		}
	}
	if err != nil {
		if s == nil && !strings.Contains(err.Error(), path+":") {
			fmt.Fprintf(e.stderr, "%s: %v\n", path, errors.Unwrap(err))
			return exitUsage
		}
		fmt.Fprintln(e.stderr, err.Error())
		n := strings.Count(err.Error(), "\n") + 1
		fmt.Fprintf(e.stdout, "%s: invalid: %d errors\n", path, n)
		return exitFailed
	}
	if explain {
		suite.Explain(e.stdout, s)
	}
	fmt.Fprintln(e.stdout, suite.CompatLine(s))
	return exitOK
}

// warningText renders a warning as path:line:col: warning: message.
func warningText(w *agenteval.PosError) string {
	c := *w
	c.Msg = "warning: " + c.Msg
	return c.Error()
}

// validateFile checks one file and returns its exit code.
func validateFile(e *env, path string, opt suite.Options, explain bool) int {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml":
		return validateSuite(e, path, opt, explain)
	case ".json":
		if b, err := os.ReadFile(path); err == nil && suite.IsInspect(b) {
			return validateSuite(e, path, opt, explain)
		}
	case ".jsonl":
		if b, err := os.ReadFile(path); err == nil && suite.SniffJSONL(b) == suite.JSONLTests {
			return validateSuite(e, path, opt, explain)
		}
	}
	r, err := dataset.Open(path)
	if err != nil {
		fmt.Fprintf(e.stderr, "%s: %v\n", path, errors.Unwrap(err))
		return exitUsage
	}
	defer r.Close()
	rows, bad, nerr, nwarn := 0, 0, 0, 0
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
			fmt.Fprintln(e.stderr, pe.Error())
			nerr++
		}
		for _, pe := range row.Warnings {
			w := *pe
			w.Msg = "warning: " + w.Msg
			fmt.Fprintln(e.stderr, w.Error())
			nwarn++
		}
	}
	warn := ""
	if nwarn > 0 {
		warn = fmt.Sprintf(", %d warnings", nwarn)
	}
	if bad > 0 {
		fmt.Fprintf(e.stdout, "%s: invalid: %d of %d rows have problems (%d errors%s)\n", path, bad, rows, nerr, warn)
		return exitFailed
	}
	if rows == 0 {
		fmt.Fprintf(e.stdout, "%s: invalid: no rows\n", path)
		return exitFailed
	}
	fmt.Fprintf(e.stdout, "%s: ok, %d samples (%s%s)\n", path, rows, r.FormatName(), warn)
	return exitOK
}
