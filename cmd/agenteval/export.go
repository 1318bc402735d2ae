package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/dataset"
	"github.com/spf13/cobra"
)

func newExportCmd(e *env) *cobra.Command {
	var format, output string
	var input inputFlags
	cmd := &cobra.Command{
		Use:   "export FILE",
		Short: "Convert a dataset or traces to Ragas JSONL or CSV",
		Long: `Read a dataset or traces in any format score reads (Ragas JSONL,
OpenAI-messages JSONL, OTLP JSON, OpenAI Agents SDK traces, LangChain, Inspect,
ATIF, Claude Code, Codex or Copilot CLI logs; see agenteval score --help) and
write it as Ragas MultiTurnSample JSONL, or as CSV with one row per sample:
id, the conversation rendered for reading, the reference fields as JSON, and
the whole sample as JSON in the last column. --reference joins reference
fields onto the conversations by id.

Invalid rows are reported on stderr and left out; the exit code is then 1.
Warnings (parts of a trace that are not part of the conversation) are
reported too, and do not change the exit code.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErr("export needs exactly one file\nUsage: agenteval export FILE --format jsonl|csv [-o FILE]")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var write func(*agenteval.Sample) error
			var flush func() error
			out := e.stdout
			if err := checkNotSameFile(args[0], output); err != nil {
				return err
			}
			if output != "" {
				f, err := os.Create(output)
				if err != nil {
					return usageErr("create %s: %v", output, err)
				}
				defer f.Close()
				out = f
			}
			switch strings.ToLower(format) {
			case "jsonl", "ragas":
				w := dataset.NewWriter(out)
				write, flush = w.Write, w.Flush
			case "csv":
				w := dataset.NewCSVWriter(out)
				write, flush = w.Write, w.Flush
			default:
				return usageErr("unknown --format %q; use jsonl or csv", format)
			}
			r, err := input.open(args[0])
			if err != nil {
				return err
			}
			defer r.Close()
			r.MaxRowBytes = e.maxRow
			bad := 0
			for {
				row, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					flush()
					return &exitError{code: exitFailed, err: err}
				}
				for _, pe := range row.Warnings {
					fmt.Fprintln(e.stderr, warning(pe))
				}
				if len(row.Errors) > 0 {
					bad++
					for _, pe := range row.Errors {
						fmt.Fprintln(e.stderr, pe.Error())
					}
					continue
				}
				if err := write(row.Sample); err != nil {
					return &exitError{code: exitExecution, err: err}
				}
			}
			for _, pe := range r.Warnings() {
				fmt.Fprintln(e.stderr, warning(pe))
			}
			if err := flush(); err != nil {
				return &exitError{code: exitExecution, err: fmt.Errorf("write: %w", err)}
			}
			if bad > 0 {
				return &exitError{code: exitFailed, err: fmt.Errorf("%d invalid rows left out", bad)}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "jsonl", "output format: jsonl (Ragas) or csv")
	cmd.Flags().StringVarP(&output, "output", "o", "", "write to this file instead of stdout")
	input.add(cmd.Flags())
	return cmd
}
