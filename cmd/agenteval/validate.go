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
	"github.com/agenteval/agenteval/project"
	"github.com/agenteval/agenteval/suite"
	"github.com/spf13/cobra"
)

func newValidateCmd(e *env) *cobra.Command {
	var judgeSpec, simulator, config string
	cmd := &cobra.Command{
		Use:   "validate FILE...",
		Short: "Check eval files and datasets, reporting every problem with its line and column",
		Long: `Check eval files (YAML suites, agent_inspect JSON) and datasets (Ragas or
OpenAI-messages JSONL, or a JSON array), and report every problem as
path:line:col: message on stderr. Exit 0 when every file is valid, 1 when
any is not, 2 when a file cannot be read.

Suites with string assertions need a judge; --judge (or AGENTEVAL_JUDGE)
says one will be given at run time, and --simulator that a model will play
the simulated users.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErr("validate needs at least one file\nUsage: agenteval validate FILE...")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			code := exitOK
			judge := judgeSpec != "" || os.Getenv("AGENTEVAL_JUDGE") != ""
			for _, path := range args {
				if filepath.Base(path) == project.FileName {
					code = max(code, validateProject(e, path))
					continue
				}
				cfg, err := loadProject(path, config)
				if err != nil {
					fmt.Fprintln(e.stderr, err.Error())
					code = max(code, exitFailed)
					continue
				}
				c := validateFile(e, path, projectOptions(cfg, judge, simulator != ""), cfg)
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
	cmd.Flags().StringVar(&config, "config", "", "project file (default: the nearest agenteval.yaml at or above each file)")
	return cmd
}

// validateProject checks a project file and returns its exit code.
func validateProject(e *env, path string) int {
	c, err := project.Load(path, suite.Options{})
	if err != nil {
		if c == nil {
			fmt.Fprintf(e.stderr, "%s: %v\n", path, errors.Unwrap(err))
			return exitUsage
		}
		fmt.Fprintln(e.stderr, err.Error())
		fmt.Fprintf(e.stdout, "%s: invalid: %d errors\n", path, strings.Count(err.Error(), "\n")+1)
		return exitFailed
	}
	fmt.Fprintf(e.stdout, "%s: ok, project file: %d targets, %d tools\n", path, len(c.Targets), len(c.Tools))
	return exitOK
}

// validateSuite checks one eval file and returns its exit code.
func validateSuite(e *env, path string, opt suite.Options, cfg *project.Config) int {
	s, err := suite.Load(path, opt)
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
		extra += fmt.Sprintf(", %d subgoals", subgoals)
	}
	if calls > 0 {
		extra += fmt.Sprintf(", %d expected tool calls", calls)
	}
	with := ""
	if cfg != nil {
		with = ", with " + cfg.File
	}
	fmt.Fprintf(e.stdout, "%s: ok, %d tests (%d conversation turns%s); read as %s%s\n", path, len(s.Tests), turns, extra, s.Schema, with)
	return exitOK
}

// validateFile checks one file and returns its exit code.
func validateFile(e *env, path string, opt suite.Options, cfg *project.Config) int {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml":
		return validateSuite(e, path, opt, cfg)
	default:
		// agent_inspect JSON is told from a dataset by its content.
		if b, err := os.ReadFile(path); err == nil && suite.IsInspect(b) {
			return validateSuite(e, path, opt, cfg)
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
