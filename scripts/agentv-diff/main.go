// Command agentv-diff pairs the runs of scripts/agentv-diff/run.sh and
// writes its report. The script runs it:
//
//	agentv-diff list --work DIR                  the tests either tool listed, as TSV
//	agentv-diff report --work DIR [--json FILE]  the Markdown report, on stdout
//
// DIR is the script's work folder: files.txt (the eval files), list/ (each
// file run whole by each tool), tests.tsv (the tests, from list), test/
// (each test run alone by each tool) and requests.jsonl (fakellm's log).
//
// It may import internal/fakellm (for the request log's types) and the
// standard library.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "agentv-diff:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: agentv-diff list|report --work DIR")
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	dir := fs.String("work", "", "the work folder of run.sh")
	var meta Meta
	fs.StringVar(&meta.Ref, "ref", "", "the AgentV ref whose examples ran")
	fs.StringVar(&meta.AgentV, "agentv", "", "the AgentV version that ran")
	fs.StringVar(&meta.Agenteval, "agenteval", "", "the agenteval that ran (a commit, or a binary's path)")
	fs.StringVar(&meta.Files, "files", "*", "the --files glob")
	jsonOut := fs.String("json", "", "also write the comparison as JSON to this file")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *dir == "" {
		return fmt.Errorf("%s: --work is required", args[0])
	}
	switch args[0] {
	case "list":
		tests, err := listTests(*dir)
		if err != nil {
			return err
		}
		for _, t := range tests {
			fmt.Fprintf(stdout, "%d\t%s\t%s\n", t.FileIndex, t.File, t.ID)
		}
		return nil
	case "report":
		c, err := compareWork(*dir)
		if err != nil {
			return err
		}
		c.Meta = meta
		if *jsonOut != "" {
			if err := writeJSON(*jsonOut, c); err != nil {
				return err
			}
		}
		return writeReport(stdout, c)
	}
	return fmt.Errorf("unknown command %q: want list or report", args[0])
}
