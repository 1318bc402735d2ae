package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/dataset"
	"github.com/agenteval/agenteval/internal/bytesize"
	"github.com/agenteval/agenteval/trace"
	"github.com/spf13/cobra"
)

func newImportCmd(e *env) *cobra.Command {
	var since, dir, output string
	cmd := &cobra.Command{
		Use:   "import claude|codex|copilot|gemini",
		Short: "Collect a coding agent's session logs into Ragas JSONL",
		Long: `Find the session logs a coding agent keeps on this machine and write each
session as one Ragas MultiTurnSample row (JSONL), ready for agenteval score:

  claude   ~/.claude/projects/<project>/<session>.jsonl ($CLAUDE_CONFIG_DIR)
  codex    ~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl  ($CODEX_HOME)
  copilot  ~/.copilot/session-state/<session>/events.jsonl ($COPILOT_HOME)
  gemini   ~/.gemini/tmp/<project hash>/chats/session-*.json

--dir reads another folder instead; --since keeps the logs changed on or
after a date (2025-11-23) or time (RFC 3339). Sessions that cannot be read
are reported on stderr and left out (exit 1); what a log holds that is not
part of the conversation is reported as a warning. A session too long for
one row (--max-row-size) is written as several, split at user turns.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErr("import needs one coding agent: claude, codex, copilot or gemini\nUsage: agenteval import claude|codex|copilot|gemini [--since DATE] [-o FILE]")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			logs, err := trace.Sessions(strings.ToLower(args[0]))
			if err != nil {
				return usageErr("%v", err)
			}
			if dir != "" {
				logs.Dir = dir
			}
			var from time.Time
			if since != "" {
				if from, err = parseSince(since); err != nil {
					return usageErr("--since %q: %v", since, err)
				}
			}
			paths, err := logs.Find(from)
			if err != nil {
				if os.IsNotExist(err) || strings.Contains(err.Error(), "no such file") {
					return usageErr("no %s session logs: %s does not exist; point --dir at the folder that holds them", args[0], logs.Dir)
				}
				return usageErr("%v", err)
			}
			// A named pipe among the logs would block the import for good,
			// deaf to Ctrl-C; it is refused before anything is written.
			for _, p := range paths {
				if err := dataset.RegularFile(p); err != nil {
					return usageErr("%v", err)
				}
			}
			out := e.stdout
			if output != "" {
				f, err := os.Create(output)
				if err != nil {
					return usageErr("create %s: %v", output, err)
				}
				defer f.Close()
				out = f
			}
			w := dataset.NewWriter(out)
			n, bad, err := importLogs(e, w, paths, logs.Format)
			if err != nil {
				return err
			}
			if err := w.Flush(); err != nil {
				return &exitError{code: exitExecution, err: fmt.Errorf("write: %w", err)}
			}
			fmt.Fprintf(e.stderr, "imported %d sessions from %d logs in %s", n, len(paths), logs.Dir)
			if bad > 0 {
				fmt.Fprintf(e.stderr, "; %d could not be read\n", bad)
				return exitCode(exitFailed)
			}
			fmt.Fprintln(e.stderr)
			return nil
		},
	}
	cmd.Flags().StringVar(&since, "since", "", "only logs changed on or after this date (YYYY-MM-DD) or time (RFC 3339)")
	cmd.Flags().StringVar(&dir, "dir", "", "read the session logs from this folder instead of the agent's usual place")
	cmd.Flags().StringVarP(&output, "output", "o", "", "write to this file instead of stdout")
	return cmd
}

// importLogs writes each session of the logs as a row, reporting those
// that cannot be read; it returns how many were written and how many not.
func importLogs(e *env, w *dataset.Writer, paths []string, format string) (n, bad int, err error) {
	for _, p := range paths {
		src, err := trace.Open(p, trace.Options{Format: format})
		if err != nil {
			fmt.Fprintln(e.stderr, err)
			bad++
			continue
		}
		for {
			row, err := src.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				fmt.Fprintln(e.stderr, err)
				bad++
				break
			}
			for _, pe := range row.Warnings {
				fmt.Fprintln(e.stderr, warning(pe))
			}
			if len(row.Errors) > 0 || row.Sample == nil {
				for _, pe := range row.Errors {
					fmt.Fprintln(e.stderr, pe.Error())
				}
				bad++
				continue
			}
			if row.Sample.Metadata == nil {
				row.Sample.Metadata = map[string]any{}
			}
			row.Sample.Metadata["source_file"] = p
			parts, note := splitSession(row.Sample, rowLimit(e.maxRow))
			if note != "" {
				fmt.Fprintln(e.stderr, warning(&agenteval.PosError{File: p, Line: row.Line, Col: row.Col, Msg: note}))
			}
			for _, part := range parts {
				if err := w.Write(part); err != nil {
					src.Close()
					return n, bad, &exitError{code: exitExecution, err: err}
				}
			}
			n++
		}
		src.Close()
	}
	return n, bad, nil
}

// rowLimit is the largest row score reads (--max-row-size); 0 is none.
func rowLimit(maxRow int64) int64 {
	switch {
	case maxRow == 0:
		return dataset.DefaultMaxRowBytes
	case maxRow < 0:
		return 0
	}
	return maxRow
}

// encodedSize is the size of a sample as a Ragas row.
func encodedSize(s *agenteval.Sample) int64 {
	var c byteCounter
	w := dataset.NewWriter(&c)
	w.Write(s)
	w.Flush()
	return int64(c)
}

type byteCounter int64

func (c *byteCounter) Write(p []byte) (int, error) { *c += byteCounter(len(p)); return len(p), nil }

// splitSession keeps a session within the row limit, so that score reads
// every row import writes: a longer one is split into parts at user turns
// (within a turn too long for one row, before an assistant message, never
// between a call and its results), each a row "<id>-part-N" whose metadata
// says which part of which session it is. note says what was done.
func splitSession(s *agenteval.Sample, limit int64) (parts []*agenteval.Sample, msg string) {
	if limit <= 0 {
		return []*agenteval.Sample{s}, ""
	}
	total := encodedSize(s)
	if total <= limit {
		return []*agenteval.Sample{s}, ""
	}
	// The room a part has for messages: the limit, less what every part
	// carries (its id, metadata and reference fields) and a margin.
	empty := *s
	empty.UserInput = nil
	base := encodedSize(&empty) + 256
	room := limit - base
	conv := s.UserInput
	size := make([]int64, len(conv))
	for i, m := range conv {
		one := agenteval.Sample{UserInput: agenteval.Conversation{m}}
		size[i] = encodedSize(&one)
	}
	// A part starts at a user message, or, in a turn too long for one row,
	// at an assistant message; never at a tool result, which stays with
	// its call.
	var starts []int
	start, used := 0, int64(0)
	lastUser, lastAny := -1, -1 // where the part being filled could end
	note := func(i int) {
		if i > start && conv[i].Role != agenteval.RoleTool {
			lastAny = i
			if conv[i].Role == agenteval.RoleUser {
				lastUser = i
			}
		}
	}
	for i := range conv {
		note(i)
		if used+size[i] > room && i > start {
			cut := lastUser
			if cut <= start {
				cut = lastAny
			}
			if cut > start {
				starts = append(starts, start)
				start, used, lastUser, lastAny = cut, 0, -1, -1
				for j := cut; j < i; j++ {
					used += size[j]
					note(j)
				}
				note(i)
			}
		}
		used += size[i]
	}
	starts = append(starts, start)
	if len(starts) == 1 {
		return []*agenteval.Sample{s}, fmt.Sprintf("the session %s is %s as a row, over the %s score reads (--max-row-size), and has no place to split; score will refuse it unless --max-row-size is raised",
			s.ID, bytesize.Format(total), bytesize.Format(limit))
	}
	big := 0
	for k, st := range starts {
		end := len(conv)
		if k+1 < len(starts) {
			end = starts[k+1]
		}
		p := *s
		p.ID = fmt.Sprintf("%s-part-%d", s.ID, k+1)
		p.UserInput = append(agenteval.Conversation(nil), conv[st:end]...)
		p.Metadata = make(map[string]any, len(s.Metadata)+1)
		for mk, mv := range s.Metadata {
			p.Metadata[mk] = mv
		}
		p.Metadata["split"] = map[string]any{"session": s.ID, "part": k + 1, "of": len(starts), "first_message": st}
		if encodedSize(&p) > limit {
			big++
		}
		parts = append(parts, &p)
	}
	msg = fmt.Sprintf("the session %s is %s as a row, over the %s score reads (--max-row-size); written as %d rows, %s-part-1 to -part-%d, split at user turns",
		s.ID, bytesize.Format(total), bytesize.Format(limit), len(parts), s.ID, len(parts))
	if big > 0 {
		msg += fmt.Sprintf("; %d of them still hold a message over the limit, which score will refuse unless --max-row-size is raised", big)
	}
	return parts, msg
}

func parseSince(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("not a date (YYYY-MM-DD) or an RFC 3339 time")
}
