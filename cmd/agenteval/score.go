package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/grade"
	"github.com/agenteval/agenteval/judge"
	"github.com/agenteval/agenteval/provider"
	"github.com/agenteval/agenteval/report"
	"github.com/agenteval/agenteval/results"
	"github.com/agenteval/agenteval/run"
	"github.com/agenteval/agenteval/session"
	"github.com/spf13/cobra"
)

type scoreFlags struct {
	judge     judgeFlags
	criteria  []string
	metrics   []string
	format    string
	output    string
	threshold float64
	jobs      int
	quiet     bool
	input     inputFlags
	otel      otelFlags
	noStore   bool
}

func metricsHelp() string {
	var b strings.Builder
	w := 0
	for _, d := range grade.All() {
		w = max(w, len(d.Name))
	}
	for _, d := range grade.All() {
		doc := d.Doc
		if len(d.Aliases) > 0 {
			doc += " (also " + strings.Join(d.Aliases, ", ") + ")"
		}
		fmt.Fprintf(&b, "  %-*s  %s\n", w, d.Name, doc)
	}
	return b.String()
}

func newScoreCmd(e *env) *cobra.Command {
	var f scoreFlags
	cmd := &cobra.Command{
		Use:   "score DATASET",
		Short: "Score recorded conversations or traces with one or more metrics",
		Long: `Score every conversation of a file with the metrics given by --metric; "-"
reads standard input. The file may be a dataset (Ragas MultiTurnSample JSONL,
OpenAI-messages JSONL, or a JSON array of either) or what agents already
record: OTLP JSON traces or logs (OpenTelemetry GenAI, OpenLLMetry,
OpenInference), an OpenAI Agents SDK trace export, LangChain/LangGraph
messages, an Inspect log, an ATIF trajectory, or a Claude Code, Codex or
Copilot CLI session log. The format is detected from the content;
--input-format forces one. Each conversation becomes one result: its test_id
is the row's id (for traces the conversation id, else the trace id), else
row-N. Traces carry no references: --reference FILE joins them by id from a
JSONL of {"id", "reference", "reference_tool_calls", ...} rows.

A metric takes settings in parentheses, and the settings name, weight,
threshold, required and negate apply to every metric:

  --metric tool_call_accuracy,tool_call_f1
  --metric 'tool_call_accuracy(strict_order=false)'
  --metric 'tool_calls(mode=any_order, args_match=superset)'
  --metric 'icontains(value=booked, name=confirms_booking)'

Metrics:
` + metricsHelp() + `
On a terminal the results are a table; when stdout is redirected they are
JSONL, one line per sample. -o writes them to a file (JSON when the name ends
in .json) and still shows the table on a terminal.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErr("score needs exactly one dataset file, got %d arguments\nUsage: agenteval score DATASET --metric NAME[,NAME...]", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return runScore(cmd, e, args[0], &f) },
	}
	fl := cmd.Flags()
	fl.StringArrayVarP(&f.metrics, "metric", "m", nil, "metric to compute, NAME or NAME(key=value,...); repeatable and comma-separated")
	fl.StringVar(&f.format, "format", "", "output format: table, jsonl or json (default: table on a terminal, else jsonl)")
	fl.StringVarP(&f.output, "output", "o", "", "write results to this file")
	fl.Float64Var(&f.threshold, "threshold", agenteval.DefaultThreshold, "score a sample and each metric must reach to pass")
	fl.IntVarP(&f.jobs, "jobs", "j", 0, "samples graded at once (default: one per CPU)")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress or summary on stderr")
	f.input.add(fl)
	f.otel.add(fl)
	fl.BoolVar(&f.noStore, "no-store", false, "do not record the scoring in the project's store (.agenteval/agenteval.db)")
	fl.StringArrayVar(&f.criteria, "criterion", nil, "a criterion for the rubrics metric (repeatable); adds rubrics when --metric lacks it")
	f.judge.add(fl)
	return cmd
}

func buildMetrics(flags, criteria []string, threshold float64, jf *judgeFlags) ([]run.Metric, []string, error) {
	specs, err := parseMetricFlags(flags)
	if err != nil {
		return nil, nil, usageErr("%v", err)
	}
	if len(criteria) > 0 {
		specs = withCriteria(specs, criteria)
	}
	if len(specs) == 0 {
		return nil, nil, usageErr("no metric given; add --metric NAME, for example --metric tool_call_accuracy,tool_call_f1\nKnown metrics: %s", strings.Join(grade.Names(grade.All()), ", "))
	}
	needJudge := false
	for _, s := range specs {
		needJudge = needJudge || s.NeedsJudge()
	}
	var j *judge.Judge
	if needJudge {
		if j, err = jf.build(); err != nil {
			return nil, nil, err
		}
	}
	var metrics []run.Metric
	var names []string
	for _, s := range specs {
		if s.Threshold == nil {
			t := threshold
			s.Threshold = &t
		}
		s.Judge = j
		g, err := grade.New(s)
		if err != nil {
			return nil, nil, usageErr("%v", err)
		}
		name := s.Name
		if name == "" {
			name = s.Type
		}
		metrics = append(metrics, run.Metric{Name: name, Grader: g})
		names = append(names, name)
	}
	return metrics, names, nil
}

// withCriteria adds --criterion texts to the rubrics metric, adding the
// metric when it is missing.
func withCriteria(specs []grade.Spec, criteria []string) []grade.Spec {
	extra := make([]any, len(criteria))
	for i, c := range criteria {
		extra[i] = c
	}
	for i, s := range specs {
		if d, _, _ := grade.Find(grade.All(), s.Type); d == grade.Rubrics {
			settings, _ := specs[i].Options.(map[string]any)
			if settings == nil {
				settings = map[string]any{}
				specs[i].Options = settings
			}
			have, _ := settings["criteria"].([]any)
			settings["criteria"] = append(have, extra...)
			return specs
		}
	}
	return append(specs, grade.Spec{Type: grade.Rubrics.Name, Options: map[string]any{"criteria": extra}})
}

func formatFor(explicit, path string, tty bool) (string, error) {
	if explicit != "" {
		for _, f := range report.Formats {
			if explicit == f {
				return f, nil
			}
		}
		return "", usageErr("unknown --format %q; use %s", explicit, strings.Join(report.Formats, ", "))
	}
	switch {
	case path != "" && strings.EqualFold(filepath.Ext(path), ".json"):
		return "json", nil
	case path != "":
		return "jsonl", nil
	case tty:
		return "table", nil
	}
	return "jsonl", nil
}

func newWriter(format string, w io.Writer, metrics []string, color bool) report.Writer {
	switch format {
	case "table":
		return report.NewTable(w, report.TableOptions{Metrics: metrics, Color: color})
	case "json":
		return report.NewJSON(w)
	}
	return report.NewJSONL(w)
}

func runScore(cmd *cobra.Command, e *env, path string, f *scoreFlags) error {
	if !(f.threshold >= 0 && f.threshold <= 1) {
		return usageErr("--threshold %v is outside [0, 1]", f.threshold)
	}
	if f.input.format == "" {
		if err := session.NotRecorded(path); err != nil {
			return cliErr(err)
		}
	}
	// The dataset's project holds the reply cache and the store, whatever
	// the working directory.
	root := e.root
	f.judge.models.Root = root
	metrics, names, err := buildMetrics(f.metrics, f.criteria, f.threshold, &f.judge)
	if err != nil {
		return err
	}
	format, err := formatFor(f.format, f.output, e.stdoutTTY)
	if err != nil {
		return err
	}
	if err := checkNotSameFile(path, f.output); err != nil {
		return err
	}
	src, err := f.input.open(path)
	if err != nil {
		return err
	}
	defer src.Close()
	src.MaxRowBytes = e.maxRow

	sink, err := f.sink(e, path, root, format, names)
	if err != nil {
		return err
	}

	var done atomic.Int64
	var prog *progressLine
	if e.stderrTTY && !e.stdoutTTY && !f.quiet {
		prog = startProgress(e.stderr, func() string { return fmt.Sprintf("scored %d samples…", done.Load()) })
	}

	start := time.Now()
	problems := newProblemPrinter(e.stderr)
	err = run.ScoreDataset(cmd.Context(), src, metrics, run.ScoreOptions{
		Concurrency: f.jobs,
		Threshold:   &f.threshold,
		Suite:       path,
		OnProblem:   problems.print,
	}, func(r *agenteval.Result) error {
		done.Add(1)
		return sink.Write(r)
	})
	prog.stop()
	for _, w := range src.Warnings() {
		problems.print(w, true)
	}
	problems.finish()
	sum, cerr := sink.Close(cmd.Context(), err, float64(time.Since(start).Microseconds())/1000)
	if cerr != nil && err == nil {
		err = cerr
	}
	if err != nil {
		var fe *agenteval.FatalError
		if errors.As(err, &fe) {
			// One clear message instead of the same failure for every sample.
			return &exitError{code: exitUsage, err: fmt.Errorf("%s\nStopped after %d samples; fix the configuration and run again", provider.Redact(fe.Error()), sum.Total)}
		}
		var pe *agenteval.PosError
		if errors.As(err, &pe) {
			// The file broke off: the rows after the break were not scored.
			fmt.Fprintln(e.stderr, pe.Error())
			return exitCode(exitExecution)
		}
		return &exitError{code: exitExecution, err: err}
	}
	if sum.Total == 0 {
		return usageErr("%s holds no samples; nothing was scored", path)
	}
	if !f.quiet && !e.stdoutTTY && e.stderrTTY {
		fmt.Fprintf(e.stderr, "%s: %d passed, %d failed, %s (%s)\n", counted(sum.Total, "sample"), sum.Passed, sum.Failed, counted(sum.Errored, "error"), time.Since(start).Round(time.Millisecond))
		if u := report.UsageLine(sum.Usage); u != "" {
			fmt.Fprintln(e.stderr, u)
		}
	}
	f.judge.models.ReportCache(e.stderr)
	return exitCode(runExit(sum))
}

// needsJudge reports whether some metric calls the judge.
func needsJudge(flags, criteria []string) bool {
	if len(criteria) > 0 {
		return true
	}
	specs, _ := parseMetricFlags(flags)
	for _, s := range specs {
		if s.NeedsJudge() {
			return true
		}
	}
	return false
}

// sink opens where the scores go, with the run header of a scoring: the
// results file or stdout, the table on a terminal, OTel export, the store.
func (f *scoreFlags) sink(e *env, path, root, format string, names []string) (*session.Sink, error) {
	opt := session.Options{Output: f.output, NoStore: f.noStore, Store: e.storeFlag, Root: root, Log: e.stderr, Quiet: f.quiet}
	if ow, err := f.otel.writer(e.stderr); err != nil {
		return nil, err
	} else if ow != nil {
		opt.Writers = append(opt.Writers, ow)
	}
	if f.output == "" {
		opt.Writers = append(opt.Writers, newWriter(format, e.stdout, names, e.color && format == "table"))
	} else if e.stdoutTTY {
		opt.Writers = append(opt.Writers, newWriter("table", e.stdout, names, e.color))
	}
	hdr := session.NewHeader("score", shortVersion(), root)
	sf, err := session.SuiteFile(path, "")
	if err != nil {
		return nil, usageErr("%v", err)
	}
	hdr.Suites = []results.SuiteFile{sf}
	if jm := f.judge.models.JudgeSpec(); jm != "" && needsJudge(f.metrics, f.criteria) {
		hdr.Judge = jm
	}
	th := f.threshold
	hdr.Threshold = &th
	sink, err := session.NewSink(&opt, session.SinkFile{Format: format, Metrics: names})
	if err != nil {
		return nil, cliErr(err)
	}
	if err := sink.Start(hdr); err != nil {
		sink.Abort()
		return nil, cliErr(err)
	}
	return sink, nil
}

// checkNotSameFile refuses to write results over the dataset being read.
func checkNotSameFile(in, out string) error {
	if out == "" || in == "-" {
		return nil
	}
	a, err1 := os.Stat(in)
	b, err2 := os.Stat(out)
	if err1 == nil && err2 == nil && os.SameFile(a, b) {
		return usageErr("-o %s is the dataset itself; writing there would destroy it. Choose another output file", out)
	}
	return nil
}

// problemPrinter writes the first few row problems of each kind (ten
// errors, five warnings) and then a count of the rest, so that a file with
// the same problem on every row stays readable.
type problemPrinter struct {
	w     io.Writer
	seen  map[problemKind]int
	kinds []problemKind // in order of first sight
}

type problemKind struct {
	msg     string
	warning bool
}

const (
	maxErrorsPerKind   = 10
	maxWarningsPerKind = 5
)

func newProblemPrinter(w io.Writer) *problemPrinter {
	return &problemPrinter{w: w, seen: map[problemKind]int{}}
}

func (p *problemPrinter) print(pe *agenteval.PosError, warning bool) {
	// Problems are of a kind whatever row or field they are in.
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

func (p *problemPrinter) finish() {
	for _, k := range p.kinds {
		what, limit := "errors", maxErrorsPerKind
		if k.warning {
			what, limit = "warnings", maxWarningsPerKind
		}
		if n := p.seen[k]; n > limit {
			fmt.Fprintf(p.w, "(%d more %s like: %s)\n", n-limit, what, k.msg)
		}
	}
}
