package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/dataset"
	"github.com/agenteval/agenteval/project"
	"github.com/agenteval/agenteval/session"
	"github.com/agenteval/agenteval/suite"
	"github.com/spf13/cobra"
)

func newValidateCmd(e *env) *cobra.Command {
	var judgeSpec, simulator, config string
	var explain, strict, allWarnings bool
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

A trace or session log is read as score reads it, streamed. It is "ok" only
when every tool call was read with its name, its arguments and its result;
otherwise the line says what is missing ("read with gaps"), each gap is a
warning at its conversation, and --strict fails the file, as it does on
any warning. Warnings of one kind are shown five at a time, with a count
of the rest; --all-warnings lists every one.

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
				// A large file's tests are checked a chunk at a time, and
				// counted as they are read, rather than all held.
				opt.Stream = true
				check := func(s *suite.Suite) []error {
					// What a run would refuse before it starts, so that a
					// file that validates is one whose run starts.
					project.Apply(cfg, s)
					return session.Check(s, cfg, judgeSpec, simulator)
				}
				c := validateFile(e, path, opt, &input, cfg, explain, check, dataChecks{strict: strict, allWarnings: allWarnings})
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
	cmd.Flags().BoolVar(&allWarnings, "all-warnings", false, "list every warning, not five of each kind")
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
	turns, simulated, subgoals, calls := 0, 0, 0, 0
	opt.Visit = func(t *agenteval.Test) {
		turns += len(t.Turns)
		if t.User != nil {
			simulated++
		}
		subgoals += len(t.Subgoals)
		calls += len(t.ExpectedToolCalls)
	}
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
	fmt.Fprintf(e.stdout, "%s: ok, %s (%s%s); read as %s%s%s\n", path, counted(s.NumTests(), "test"), counted(turns, "conversation turn"), extra, s.Schema, with, compatNote(s))
	return exitOK
}

// dataChecks are validate's settings for datasets and traces.
type dataChecks struct {
	strict, allWarnings bool
}

// sniffBytes is how much of a data file is read to tell an eval file from
// data: a trace may be gigabytes, and is streamed after.
const sniffBytes = 4 << 20

// head returns the start of a file, or all of it when it is no larger
// than limit (what an eval file may be); whole says which.
func head(path string, limit int64) (b []byte, whole bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	if st.Size() <= limit {
		b, err = io.ReadAll(f)
		return b, true, err
	}
	b = make([]byte, sniffBytes)
	n, err := io.ReadFull(f, b)
	if err == io.ErrUnexpectedEOF {
		err = nil
	}
	return b[:n], false, err
}

// validateFile checks one file and returns its exit code.
func validateFile(e *env, path string, opt suite.Options, input *inputFlags, cfg *project.Config, explain bool, check func(*suite.Suite) []error, dc dataChecks) int {
	limit := e.maxFile
	if limit <= 0 {
		limit = 64 << 20
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml":
		return validateSuite(e, path, opt, cfg, explain, check)
	case ".jsonl":
		// AgentV's JSONL tests are told from recorded conversations by
		// their content: the first lines say.
		if b, _, err := head(path, sniffBytes); err == nil && suite.SniffJSONL(b) == suite.JSONLTests {
			return validateSuite(e, path, opt, cfg, explain, check)
		}
	default:
		// agent_inspect JSON is told from a dataset by its content; a
		// file larger than an eval file may be is data.
		if b, whole, err := head(path, limit); err == nil && whole && suite.IsInspect(b) {
			return validateSuite(e, path, opt, cfg, explain, check)
		}
	}
	// A trace may be gigabytes, streamed conversation by conversation (and
	// span formats are read twice, the first time as it opens): validate
	// only reads, so it trades some speed for a smaller peak (a 1 GB OTLP
	// file: about 125 MB instead of 160 MB).
	defer debug.SetGCPercent(debug.SetGCPercent(50))
	r, err := input.open(path)
	if err != nil {
		fmt.Fprintf(e.stderr, "%s: %s\n", path, strings.TrimPrefix(err.Error(), "open dataset: "))
		return exitUsage
	}
	r.MaxRowBytes = e.maxRow
	defer r.Close()
	isTrace := r.Format().Name != "ragas"
	rows, bad, nerr, nwarn := 0, 0, 0, 0
	var gaps traceGaps
	problems := newValidatePrinter(e.stderr, dc.allWarnings)
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
		if isTrace && row.Sample != nil {
			// What a reader could not find is said where it is missing.
			row.Warnings = append(row.Warnings, gaps.check(row)...)
		}
		if len(row.Errors) > 0 || (dc.strict && len(row.Warnings) > 0) {
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
	fileWarn := r.Warnings()
	for _, pe := range fileWarn {
		problems.print(pe, true)
		nwarn++
	}
	warn := ""
	if nwarn > 0 {
		warn = ", " + counted(nwarn, "warning")
	}
	if bad > 0 {
		what := "problems"
		if nerr == 0 {
			what = "warnings, which --strict makes errors"
		}
		fmt.Fprintf(e.stdout, "%s: invalid: %d of %s %s %s (%s%s)\n", path, bad, counted(rows, "row"), plural(bad, "has", "have"), what, counted(nerr, "error"), warn)
		return exitFailed
	}
	if rows == 0 {
		fmt.Fprintf(e.stdout, "%s: invalid: no rows\n", path)
		return exitFailed
	}
	if dc.strict && len(fileWarn) > 0 {
		fmt.Fprintf(e.stdout, "%s: invalid: %s about the file, which --strict makes errors\n", path, counted(len(fileWarn), "warning"))
		return exitFailed
	}
	if isTrace && gaps.any() {
		fmt.Fprintf(e.stdout, "%s: read with gaps, %s (%s; %s%s)\n", path, counted(rows, "sample"), r.FormatName(), gaps.summary(), warn)
		return exitOK
	}
	calls := ""
	switch {
	case isTrace && gaps.calls == 0:
		calls = ", no tool calls"
	case isTrace:
		calls = ", " + counted(gaps.calls, "tool call") + " with arguments and results"
	}
	fmt.Fprintf(e.stdout, "%s: ok, %s (%s%s%s)\n", path, counted(rows, "sample"), r.FormatName(), calls, warn)
	return exitOK
}

// traceGaps counts what the conversations of a trace lack: calls whose
// arguments did not parse or were not found, calls with no result.
type traceGaps struct {
	calls, noResult, rawArgs, emptyArgs int
}

func (g *traceGaps) any() bool {
	return g.noResult > 0 || g.rawArgs > 0 || (g.calls > 0 && g.emptyArgs == g.calls)
}

func (g *traceGaps) summary() string {
	var parts []string
	if g.noResult > 0 {
		parts = append(parts, fmt.Sprintf("%d of %s have no result", g.noResult, counted(g.calls, "tool call")))
	}
	if g.rawArgs > 0 {
		parts = append(parts, fmt.Sprintf("%d of %s have arguments that are not a JSON object", g.rawArgs, counted(g.calls, "tool call")))
	}
	if g.calls > 0 && g.emptyArgs == g.calls {
		parts = append(parts, fmt.Sprintf("no arguments were found for any of the %s", counted(g.calls, "tool call")))
	}
	return strings.Join(parts, "; ")
}

// check counts a conversation's calls and says which lack a result or
// readable arguments.
func (g *traceGaps) check(row *dataset.Row) []*agenteval.PosError {
	conv := row.Sample.UserInput
	answered := map[string]bool{}
	for _, m := range conv {
		if m.Role == agenteval.RoleTool && m.ToolCallID != "" {
			answered[m.ToolCallID] = true
		}
	}
	var out []*agenteval.PosError
	at := func(msg string) {
		out = append(out, &agenteval.PosError{File: row.File, Line: row.Line, Col: row.Col, Msg: msg})
	}
	for i, m := range conv {
		if m.Role != agenteval.RoleAssistant {
			continue
		}
		// Results answer calls by id, or, without ids, by following them.
		following := 0
		for j := i + 1; j < len(conv) && conv[j].Role == agenteval.RoleTool; j++ {
			following++
		}
		for k, c := range m.ToolCalls {
			g.calls++
			switch {
			case c.Args == nil && c.RawArgs != "":
				g.rawArgs++
			case len(c.Args) == 0:
				g.emptyArgs++
			}
			if (c.ID != "" && answered[c.ID]) || (c.ID == "" && k < following) {
				continue
			}
			g.noResult++
			at(fmt.Sprintf("message %d: tool call %s (%s) has no result in the conversation", i, c.Name, orNone(c.ID)))
		}
	}
	return out
}

func orNone(id string) string {
	if id == "" {
		return "no id"
	}
	return "id " + id
}

// validatePrinter prints problems: errors ten and warnings five of a
// kind, then how many more, unless every warning is asked for.
type validatePrinter struct {
	w     io.Writer
	all   bool
	seen  map[problemKind]int
	kinds []problemKind
}

func newValidatePrinter(w io.Writer, all bool) *validatePrinter {
	return &validatePrinter{w: w, all: all, seen: map[problemKind]int{}}
}

func (p *validatePrinter) print(pe *agenteval.PosError, warning bool) {
	k := problemKind{msg: pe.Msg, warning: warning}
	if i := strings.LastIndex(k.msg, ": "); i >= 0 && warning {
		k.msg = k.msg[i+2:]
	}
	if p.seen[k] == 0 {
		p.kinds = append(p.kinds, k)
	}
	p.seen[k]++
	limit := maxErrorsPerKind
	if warning {
		limit = maxWarningsPerKind
		if p.all {
			limit = int(^uint(0) >> 1)
		}
	}
	if p.seen[k] > limit {
		return
	}
	w := *pe
	if warning {
		w.Msg = "warning: " + w.Msg
	}
	fmt.Fprintln(p.w, w.Error())
}

func (p *validatePrinter) finish() {
	for _, k := range p.kinds {
		what, limit, hint := "errors", maxErrorsPerKind, ""
		if k.warning {
			what, limit, hint = "warnings", maxWarningsPerKind, "; --all-warnings lists them"
			if p.all {
				continue
			}
		}
		if n := p.seen[k]; n > limit {
			fmt.Fprintf(p.w, "(%d more %s like: %s%s)\n", n-limit, what, k.msg, hint)
		}
	}
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
