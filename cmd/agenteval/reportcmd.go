package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/compare"
	"github.com/agenteval/agenteval/report"
	"github.com/agenteval/agenteval/results"
	"github.com/spf13/cobra"
)

type reportFlags struct {
	format   string
	output   string
	minDelta float64
}

func newReportCmd(e *env) *cobra.Command {
	var f reportFlags
	cmd := &cobra.Command{
		Use:   "report RUN [RUN2] [--format html|junit|markdown|table] [-o FILE]",
		Short: "Write a run as a self-contained HTML report, JUnit XML, Markdown or a table",
		Long: `Write a run (from the store, or a results JSONL file) as:

  html      one self-contained page: a summary, a test list you can filter
            (failed only, search, tag, suite), and each test as a
            conversation with its tool calls, turn verdicts and the judge's
            reasons. No network: it works from file:// and as a CI artifact.
  junit     JUnit XML, for CI test tabs
  markdown  the summary and the failures, for a pull-request comment
  table     the terminal table

With two runs, html shows them side by side with what changed, and markdown
and table write the comparison (as agenteval compare does).

The format follows -o's extension (.html, .xml, .md) unless --format says;
without -o it is table.

` + runRefHelp + "\n\n" + agentvRunHelp,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return usageErr("report needs one run, or two to compare\nUsage: agenteval report RUN [RUN2] -o report.html")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return runReport(cmd.Context(), e, args, &f) },
	}
	cmd.Flags().StringVar(&f.format, "format", "", "html, junit, markdown or table (default: from -o's extension, else table)")
	cmd.Flags().StringVarP(&f.output, "output", "o", "", "write to this file instead of stdout")
	cmd.Flags().Float64Var(&f.minDelta, "min-delta", 0, "with two runs: ignore score drops smaller than this")
	return cmd
}

func reportFormat(explicit, out string) (string, error) {
	if explicit != "" {
		switch explicit {
		case "html", "junit", "markdown", "table":
			return explicit, nil
		}
		return "", usageErr("unknown --format %q; use html, junit, markdown or table", explicit)
	}
	switch strings.ToLower(filepath.Ext(out)) {
	case ".html", ".htm":
		return "html", nil
	case ".xml":
		return "junit", nil
	case ".md", ".markdown":
		return "markdown", nil
	}
	return "table", nil
}

func runReport(ctx context.Context, e *env, args []string, f *reportFlags) error {
	format, err := reportFormat(f.format, f.output)
	if err != nil {
		return err
	}
	h := newHistory(e, true)
	defer h.close()
	var srcs []*source
	for _, a := range args {
		s, err := resolveRun(ctx, e, h, a)
		if err != nil {
			return usageErr("%v", err)
		}
		srcs = append(srcs, s)
	}
	w, closeOut, err := writeTo(e, f.output)
	if err != nil {
		return err
	}
	err = writeReport(ctx, e, w, format, srcs, f)
	if cerr := closeOut(); err == nil {
		err = cerr
	}
	if err == nil && f.output != "" {
		fmt.Fprintf(e.stderr, "wrote %s\n", f.output)
	}
	return err
}

func writeReport(ctx context.Context, e *env, w io.Writer, format string, srcs []*source, f *reportFlags) error {
	color := e.color && f.output == ""
	if len(srcs) == 2 {
		c, err := compare.Compare(srcs[0].input(ctx), srcs[1].input(ctx), compare.Options{MinDelta: f.minDelta})
		if err != nil {
			return err
		}
		switch format {
		case "markdown":
			return c.WriteMarkdown(w)
		case "table":
			return c.WriteTable(w, color)
		case "junit":
			return usageErr("JUnit XML holds one run; give one RUN")
		}
		var js bytes.Buffer
		if err := c.WriteJSON(&js); err != nil {
			return err
		}
		return writeHTML(ctx, w, srcs, report.HTMLOptions{Compare: js.Bytes(), Agreement: agreementJSON(ctx, srcs[1])})
	}
	var wr report.Writer
	switch format {
	case "html":
		return writeHTML(ctx, w, srcs, report.HTMLOptions{Agreement: agreementJSON(ctx, srcs[0])})
	case "junit":
		wr = report.NewJUnit(w)
	case "markdown":
		wr = report.NewMarkdown(w)
	default:
		wr = report.NewTable(w, report.TableOptions{Color: color, NoMetricSummary: srcs[0].header != nil && srcs[0].header.Command == "run",
			Targets: headerlessTargets(ctx, srcs[0])})
	}
	sum, err := summarize(ctx, srcs[0], wr)
	if err != nil {
		return err
	}
	return wr.Close(sum)
}

// writeHTML writes one run, or two side by side, as one page.
func writeHTML(ctx context.Context, w io.Writer, srcs []*source, opt report.HTMLOptions) error {
	hw := report.NewHTML(w, opt)
	for i, s := range srcs {
		hdr := s.header
		if hdr == nil {
			// A file written before headers: its path names it.
			hdr = &results.Header{Suites: []results.SuiteFile{{Path: s.label}}}
		}
		if err := hw.Start(hdr); err != nil {
			return err
		}
		var sum results.Summary
		var err error
		if s.path != "" {
			// Lines from a file go into the page as they are.
			_, err = results.ReadResultLines(s.path, func(r *agenteval.Result, line []byte) error {
				sum.Add(r)
				return hw.WriteLine(r, line)
			})
		} else {
			err = s.results(ctx)(func(r *agenteval.Result) error {
				sum.Add(r)
				return hw.Write(r)
			})
		}
		if err != nil {
			return err
		}
		if s.run != nil {
			sum.DurationMS = s.run.DurationMS
		}
		if i < len(srcs)-1 {
			hw.EndRun(&sum)
			continue
		}
		return hw.Close(&sum)
	}
	return nil
}
