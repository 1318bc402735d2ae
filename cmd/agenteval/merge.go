package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/project"
	"github.com/agenteval/agenteval/report"
	"github.com/agenteval/agenteval/results"
	"github.com/agenteval/agenteval/session"
	"github.com/agenteval/agenteval/shard"
	"github.com/agenteval/agenteval/suite"
	"github.com/spf13/cobra"
)

type mergeFlags struct {
	output  string
	junit   string
	html    string
	format  string
	noStore bool
	quiet   bool
	filter  string
}

func newMergeCmd(e *env) *cobra.Command {
	var f mergeFlags
	cmd := &cobra.Command{
		Use:   "merge SHARD.jsonl... -o ALL.jsonl",
		Short: "Put the results files of a run's shards together into the whole run's",
		Long: `Put together the results files that the shards of one run wrote
(agenteval run SUITE --shard i/n --run-id ID, on n CI jobs or machines):
one results file with the run's header and every result, the summary,
pass@k and JUnit recomputed over the whole run, and the exit status the
whole run would have had (0 passed, 1 a test failed, 3 a test ended in
execution_error).

The files are checked first, and nothing is written unless all is well:
every file is a shard of the same run (the same run id and number of
shards), with the same suites (by content hash), target, judge and
settings; every shard is there exactly once and holds all the results it
was to write; and no test's result is in two files. Each verdict is made
again from the result's scores, as the run made it, and a result recorded
otherwise is refused. When the suite files are here as the shards ran them
(the same path and content hash), every test of them must have a result
(give --filter when the shards ran with one), and each verdict is checked
against its test's pass mark. Each problem is named, with its file (exit
2).

The merged run is recorded in the project's store, unless it is there
already (shards that wrote to a shared --store).`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErr("merge needs the shards' results files\nUsage: agenteval merge SHARD.jsonl... -o ALL.jsonl")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return runMerge(cmd.Context(), e, args, &f) },
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.output, "output", "o", "", "write the whole run's results (JSONL) to this file (default: stdout, when it is not a terminal)")
	fl.StringVar(&f.junit, "junit", "", "also write JUnit XML of the whole run to this file")
	fl.StringVar(&f.html, "html", "", "also write a self-contained HTML report of the whole run to this file")
	fl.StringVar(&f.format, "format", "", "stdout format: table, jsonl or json (default: table on a terminal; with -o, nothing on stdout)")
	fl.BoolVar(&f.noStore, "no-store", false, "do not record the merged run in the project's store")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no totals on stderr")
	fl.StringVar(&f.filter, "filter", "", "the --filter the shards ran with: tests whose id it does not match are not expected")
	return cmd
}

func runMerge(ctx context.Context, e *env, paths []string, f *mergeFlags) error {
	for _, p := range paths {
		if st, err := os.Stat(f.output); err == nil && f.output != "" {
			if sp, err := os.Stat(p); err == nil && os.SameFile(sp, st) {
				return usageErr("-o %s is one of the shards' files; write the merged run to a new file", f.output)
			}
		}
	}
	m, err := shard.CheckWith(paths, shard.Options{Suite: mergeSuite, Filter: f.filter})
	if err != nil {
		return usageErr("merge: %v", err)
	}
	if len(m.Unchecked) > 0 && !f.quiet {
		fmt.Fprintf(e.stderr, "merge: %s %s not here as the shards ran %s, so the shards were not checked to hold every test of %s, nor the verdicts against their pass marks\n",
			strings.Join(m.Unchecked, ", "), plural(len(m.Unchecked), "is", "are"), plural(len(m.Unchecked), "it", "them"), plural(len(m.Unchecked), "it", "them"))
	}
	// The results are copied line for line, not encoded again: a merge of
	// a large run costs reading it, not more.
	var lines *bufio.Writer
	var out *os.File
	if f.output != "" || (f.format == "" && !e.stdoutTTY) {
		var w io.Writer = e.stdout
		if f.output != "" {
			if out, err = os.Create(f.output); err != nil {
				return usageErr("%v", err)
			}
			defer out.Close()
			w = out
		}
		if err := report.NewJSONL(w).(report.Starter).Start(m.Header); err != nil {
			return err
		}
		lines = bufio.NewWriterSize(w, 256<<10)
	}
	opt := session.Options{JUnit: f.junit, HTML: f.html, NoStore: f.noStore, Store: e.storeFlag, Log: e.stderr}
	format := f.format
	if format == "" && e.stdoutTTY && f.output == "" {
		format = "table"
	}
	if format != "" && (f.output != "" || format != "jsonl") {
		switch format {
		case "table":
			opt.Writers = append(opt.Writers, report.NewTable(e.stdout, report.TableOptions{Color: e.color, NoMetricSummary: true}))
		case "json", "jsonl":
			opt.Writers = append(opt.Writers, newWriter(format, e.stdout, nil, false))
		default:
			return usageErr("unknown --format %q; use table, jsonl or json", format)
		}
	}
	sink, err := session.NewSink(&opt, session.SinkFile{})
	if err != nil {
		return cliErr(err)
	}
	sink.SkipStoreIfHolds(ctx, m.Header.RunID, m.Count)
	if err := sink.Start(m.Header); err != nil {
		sink.Abort()
		return cliErr(err)
	}
	err = m.Results(func(r *agenteval.Result, line []byte) error {
		if lines != nil {
			lines.Write(line)
			if err := lines.WriteByte('\n'); err != nil {
				return fmt.Errorf("write merged results: %w", err)
			}
		}
		return sink.Write(r)
	})
	if lines != nil {
		if ferr := lines.Flush(); err == nil && ferr != nil {
			err = fmt.Errorf("write merged results: %w", ferr)
		}
	}
	// No duration of its own: the store keeps the shards' (the longest).
	sum, cerr := sink.Close(ctx, err, 0)
	if err == nil {
		err = cerr
	}
	if out != nil {
		if cerr := out.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}
	if err != nil {
		return &exitError{code: exitExecution, err: err}
	}
	if !f.quiet && !(e.stdoutTTY && format == "table") {
		fmt.Fprintf(e.stderr, "merged %s of run %s: %s · %d passed · %d failed · %s · %d skipped\n",
			counted(len(m.Files), "shard"), m.Header.RunID, counted(sum.Total, "test"), sum.Passed, sum.Failed, counted(sum.Errored, "error"), sum.Skipped)
		if u := report.UsageLine(sum.Usage); u != "" {
			fmt.Fprintln(e.stderr, u)
		}
	}
	return exitCode(runExit(sum))
}

// mergeSuite loads one of a run's suite files for merge's checks, when it
// is at the path the headers name with the content they hashed: its tests
// are then the ones the shards ran. The project file that governs it gives
// it what it gives a run (the pass mark). Nothing in it runs.
func mergeSuite(sf results.SuiteFile) *shard.Suite {
	if sf.Path == "" || sf.Path == "-" {
		return nil
	}
	if sum, err := results.HashFile(sf.Path); err != nil || sum != sf.SHA256 {
		return nil
	}
	cfg, err := project.For(sf.Path, "", suite.Options{})
	if err != nil {
		return nil
	}
	// Judge and simulator count as there: merge calls neither, and a
	// file that needs them is still the file the shards ran.
	lo := session.ProjectOptions(cfg, true, true)
	lo.NoJudgeNeeded = true
	st, err := suite.Load(sf.Path, lo)
	if err != nil {
		return nil
	}
	project.Apply(cfg, st)
	return &shard.Suite{Path: sf.Path, Tests: st.Tests, Threshold: st.Threshold}
}
