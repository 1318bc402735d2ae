package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/calibrate"
	"github.com/agenteval/agenteval/internal/suggest"
	"github.com/agenteval/agenteval/store"
	"github.com/spf13/cobra"
)

// labelColumns are the keys of a label row, in the order export writes
// them. test_id, score, criterion and human are required; run names the
// run the labels were made on, which --run overrides.
var labelColumns = []string{"run", "suite", "test_id", "target", "trial", "score", "criterion", "human", "note", "labeller", "time"}

func newLabelsCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "labels",
		Short: "Import and export human verdicts on judged criteria (for agenteval calibrate)",
		Long: `A label is a person's verdict, pass or fail, on one criterion a judge
decided in a stored run, with an optional note. agenteval calibrate sets the
judge's verdicts beside the labels to tell how far the judge can be trusted.
Labels are kept in the store beside the run; make them in the viewer
(agenteval view), or in a spreadsheet:

  agenteval labels export last --all -o labels.csv   # one row per criterion, human left blank
  # fill in human (pass or fail) and note, then
  agenteval labels import labels.csv
  agenteval calibrate last

A row has test_id, target, score (the score's name in the results),
criterion (its id, such as a rubric's, or its text as the results show it)
and human (pass or fail); trial (for a test run with trials), suite (when
test ids repeat across suites), note, and run, labeller and time as export
writes them, are optional.`,
	}
	cmd.AddCommand(newLabelsImportCmd(e), newLabelsExportCmd(e))
	return cmd
}

func newLabelsImportCmd(e *env) *cobra.Command {
	var runRef, as string
	cmd := &cobra.Command{
		Use:   "import FILE",
		Short: "Store labels from a JSONL or CSV file",
		Long: `Read labels from FILE (JSONL, one object per line, or CSV with a header
row; by its extension, else by its first character; - reads standard input
as JSONL) and store them beside the run they label: --run, else the run
column of the rows, else the newest run. Each row is checked against the
run's results first: a test, score or criterion the run does not have is an
error at FILE:LINE, and nothing is stored until every row is right. A row
whose human is blank is skipped (a criterion not labelled yet). A label
replaces an earlier one of the same criterion.

The labeller is the row's, else --as, else git config user.name (not under
--no-exec), else the user's login name.

` + runRefHelp,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErr("labels import needs one file\nUsage: agenteval labels import FILE [--run RUN] [--as NAME]")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("as") && strings.TrimSpace(as) == "" {
				return usageErr("--as %q: give a name", as)
			}
			return importLabels(cmd.Context(), e, args[0], runRef, as)
		},
	}
	cmd.Flags().StringVar(&runRef, "run", "", "the run the labels are for (default: the run column of the rows, else last)")
	cmd.Flags().StringVar(&as, "as", "", "the labeller's name (default: git config user.name)")
	return cmd
}

func newLabelsExportCmd(e *env) *cobra.Command {
	var format, output string
	var all bool
	cmd := &cobra.Command{
		Use:   "export RUN",
		Short: "Write a run's labels as JSONL or CSV",
		Long: `Write the labels of RUN, one row per label, in the shape labels import
reads, so that labels round-trip through a file or a spreadsheet. --all
writes a row for every criterion of the run, with human blank where it has
no label yet: a sheet to label. The judge's verdict is left out on purpose,
so that people label without being led by it.

` + runRefHelp,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErr("labels export needs one run\nUsage: agenteval labels export RUN [--all] [--format jsonl|csv] [-o FILE]")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return exportLabels(cmd.Context(), e, args[0], format, output, all)
		},
	}
	cmd.Flags().StringVar(&format, "format", "", "jsonl or csv (default: by -o's extension, else jsonl)")
	cmd.Flags().StringVarP(&output, "output", "o", "", "write to this file instead of standard output")
	cmd.Flags().BoolVar(&all, "all", false, "a row for every criterion of the run, labelled or not")
	return cmd
}

// labelRow is one row of a label file.
type labelRow struct {
	line     int
	run      string
	row      calibrate.Row
	human    string
	note     string
	labeller string
	time     string
}

// storedRun opens the store and resolves a RUN that must be in it: labels
// are kept beside stored runs, not in results files.
func storedRun(ctx context.Context, h *history, ref string) (store.Store, *store.Run, error) {
	if looksLikePath(ref) {
		if _, err := os.Stat(ref); err == nil {
			return nil, nil, usageErr("%s: labels are kept beside runs in the store, not results files; give a stored run (agenteval runs lists them)", ref)
		}
	}
	db, err := h.open()
	if err != nil {
		return nil, nil, usageErr("%v", err)
	}
	id, err := store.Resolve(ctx, db, ref)
	if err != nil {
		return nil, nil, usageErr("%v", err)
	}
	run, err := db.Run(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	return db, run, nil
}

// runIndex indexes the criteria of a stored run.
func runIndex(ctx context.Context, db store.Store, runID string) (*calibrate.Index, error) {
	x := calibrate.NewIndex()
	err := db.Results(ctx, runID, 0, func(_ int64, r *agenteval.Result) error {
		x.Add(r)
		return nil
	})
	return x, err
}

func importLabels(ctx context.Context, e *env, path, runRef, as string) error {
	rows, err := readLabelRows(e, path)
	if err != nil {
		return err
	}
	if runRef == "" {
		for _, r := range rows {
			if r.run != "" && runRef == "" {
				runRef = r.run
			} else if r.run != "" && r.run != runRef {
				return &exitError{code: exitFailed, bare: true, err: fmt.Errorf("%s:%d: run %q, but earlier rows are for run %q: import each run's labels apart, or pass --run", path, r.line, r.run, runRef)}
			}
		}
	}
	if runRef == "" {
		runRef = "last"
	}
	h := newHistory(e, false)
	defer h.close()
	db, run, err := storedRun(ctx, h, runRef)
	if err != nil {
		return err
	}
	lb, err := store.LabelsOf(db)
	if err != nil {
		return err
	}
	x, err := runIndex(ctx, db, run.ID)
	if err != nil {
		return err
	}
	who := ""
	var labels []store.Label
	var problems []string
	seen := map[store.LabelKey]int{}
	skipped := 0
	for _, r := range rows {
		if strings.TrimSpace(r.human) == "" {
			skipped++
			continue
		}
		fail := func(format string, a ...any) {
			problems = append(problems, fmt.Sprintf("%s:%d: %s", path, r.line, fmt.Sprintf(format, a...)))
		}
		human := agenteval.Verdict(strings.ToLower(strings.TrimSpace(r.human)))
		if human != agenteval.VerdictPass && human != agenteval.VerdictFail {
			fail("human %q: write pass or fail", r.human)
			continue
		}
		u, err := x.Resolve(r.row)
		if err != nil {
			fail("%v", err)
			continue
		}
		if prev, dup := seen[u.Key]; dup {
			fail("labels the same criterion as line %d", prev)
			continue
		}
		seen[u.Key] = r.line
		l := store.Label{LabelKey: u.Key, Human: human, Note: r.note, Labeller: r.labeller}
		l.RunID = run.ID
		if r.time != "" {
			t, err := time.Parse(time.RFC3339Nano, r.time)
			if err != nil {
				fail("time %q: write it as RFC 3339 (2026-11-28T09:30:00Z), or leave it blank for now", r.time)
				continue
			}
			l.Time = t
		}
		if l.Labeller == "" {
			if who == "" {
				if who, err = labellerName(e, as); err != nil {
					return err
				}
			}
			l.Labeller = who
		} else if err := checkLabeller(l.Labeller); err != nil {
			fail("labeller %q: %v", l.Labeller, err)
			continue
		}
		labels = append(labels, l)
	}
	if len(problems) > 0 {
		more := ""
		if len(problems) > 20 {
			more = fmt.Sprintf("\n… and %d more", len(problems)-20)
			problems = problems[:20]
		}
		return &exitError{code: exitFailed, bare: true, err: fmt.Errorf("%s%s\nno labels were stored: fix the rows and import the file again", strings.Join(problems, "\n"), more)}
	}
	if len(labels) == 0 {
		return usageErr("%s: no labelled rows (fill in human with pass or fail)", path)
	}
	if err := lb.PutLabels(ctx, labels); err != nil {
		return err
	}
	note := ""
	if skipped > 0 {
		note = fmt.Sprintf(" (%d rows without a verdict skipped)", skipped)
	}
	fmt.Fprintf(e.stdout, "stored %d labels for run %s%s\n", len(labels), run.ID, note)
	return nil
}

// labelFormat is a label file's format: csv or jsonl.
func labelFormat(path string, head []byte) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv":
		return "csv"
	case ".jsonl", ".json", ".ndjson":
		return "jsonl"
	}
	if t := bytes.TrimLeft(head, " \t\r\n\ufeff"); len(t) > 0 && t[0] != '{' {
		return "csv"
	}
	return "jsonl"
}

func readLabelRows(e *env, path string) ([]labelRow, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(e.stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, usageErr("%v", err)
	}
	data = bytes.TrimPrefix(data, []byte("\ufeff")) // spreadsheets write a BOM
	var rows []labelRow
	if path != "-" && labelFormat(path, data) == "csv" {
		rows, err = readLabelCSV(path, data)
	} else {
		rows, err = readLabelJSONL(path, data)
	}
	if err != nil {
		return nil, &exitError{code: exitFailed, bare: true, err: err}
	}
	return rows, nil
}

// set puts one key's value into a row; it says what is wrong with it.
func (r *labelRow) set(key, v string) error {
	switch key {
	case "run":
		r.run = v
	case "suite":
		r.row.Suite = v
	case "test_id":
		r.row.TestID = v
	case "target":
		r.row.Target = v
	case "trial":
		if strings.TrimSpace(v) == "" {
			return nil
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 {
			return fmt.Errorf("trial %q: give the trial's number (1, 2, …), or leave it out", v)
		}
		r.row.Trial = n
	case "score":
		r.row.Score = v
	case "criterion":
		r.row.Criterion = v
	case "human":
		r.human = v
	case "note":
		r.note = v
	case "labeller":
		r.labeller = v
	case "time":
		r.time = v
	default:
		return unknownKey("key", key)
	}
	return nil
}

// unknownKey is the error of a key (JSONL) or column (CSV) that a label
// row does not have.
func unknownKey(what, key string) error {
	hint := ""
	if c := suggest.Closest(key, labelColumns); c != "" {
		hint = fmt.Sprintf("; did you mean %q?", c)
	}
	return fmt.Errorf("unknown %s %q%s (the %ss are %s)", what, key, hint, what, strings.Join(labelColumns, ", "))
}

// check says which required key a labelled row lacks.
func (r *labelRow) check() error {
	if strings.TrimSpace(r.human) == "" {
		return nil
	}
	var missing []string
	for k, v := range map[string]string{"test_id": r.row.TestID, "score": r.row.Score, "criterion": r.row.Criterion} {
		if v == "" {
			missing = append(missing, k)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		return fmt.Errorf("no %s: a label names its test_id, score and criterion", strings.Join(missing, ", "))
	}
	return nil
}

func readLabelJSONL(path string, data []byte) ([]labelRow, error) {
	var rows []labelRow
	var problems []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		var m map[string]any
		dec := json.NewDecoder(bytes.NewReader(text))
		dec.UseNumber()
		if err := dec.Decode(&m); err != nil {
			problems = append(problems, fmt.Sprintf("%s:%d: not a JSON object: %v", path, line, err))
			continue
		}
		r := labelRow{line: line}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		ok := true
		for _, k := range keys {
			var v string
			switch x := m[k].(type) {
			case string:
				v = x
			case json.Number:
				v = x.String()
			case nil:
			default:
				problems = append(problems, fmt.Sprintf("%s:%d: %s: give a string", path, line, k))
				ok = false
				continue
			}
			if err := r.set(k, v); err != nil {
				problems = append(problems, fmt.Sprintf("%s:%d: %v", path, line, err))
				ok = false
			}
		}
		if err := r.check(); ok && err != nil {
			problems = append(problems, fmt.Sprintf("%s:%d: %v", path, line, err))
			ok = false
		}
		if ok {
			rows = append(rows, r)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(problems) > 0 {
		return nil, errors.New(strings.Join(problems, "\n"))
	}
	return rows, nil
}

func readLabelCSV(path string, data []byte) ([]labelRow, error) {
	cr := csv.NewReader(bytes.NewReader(data))
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%s: empty; the first row names the columns (%s)", path, strings.Join(labelColumns, ", "))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var problems []string
	for i, h := range header {
		header[i] = strings.ToLower(strings.TrimSpace(h))
		if !slices.Contains(labelColumns, header[i]) {
			line, col := cr.FieldPos(i)
			problems = append(problems, fmt.Sprintf("%s:%d:%d: %v", path, line, col, unknownKey("column", header[i])))
		}
	}
	if len(problems) > 0 {
		return nil, errors.New(strings.Join(problems, "\n"))
	}
	var rows []labelRow
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		line, _ := cr.FieldPos(0)
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		if len(rec) > len(header) {
			problems = append(problems, fmt.Sprintf("%s:%d: %d fields, but the header names %d columns", path, line, len(rec), len(header)))
			continue
		}
		r := labelRow{line: line}
		ok := true
		for i, v := range rec {
			if err := r.set(header[i], v); err != nil {
				_, col := cr.FieldPos(i)
				problems = append(problems, fmt.Sprintf("%s:%d:%d: %v", path, line, col, err))
				ok = false
			}
		}
		if err := r.check(); ok && err != nil {
			problems = append(problems, fmt.Sprintf("%s:%d: %v", path, line, err))
			ok = false
		}
		if ok {
			rows = append(rows, r)
		}
	}
	if len(problems) > 0 {
		return nil, errors.New(strings.Join(problems, "\n"))
	}
	return rows, nil
}

func exportLabels(ctx context.Context, e *env, ref, format, output string, all bool) error {
	if format == "" {
		format = "jsonl"
		if strings.EqualFold(filepath.Ext(output), ".csv") {
			format = "csv"
		}
	}
	format = strings.ToLower(format)
	if format != "jsonl" && format != "csv" {
		return usageErr("unknown --format %q; use jsonl or csv", format)
	}
	h := newHistory(e, true)
	defer h.close()
	db, run, err := storedRun(ctx, h, ref)
	if err != nil {
		return err
	}
	lb, err := store.LabelsOf(db)
	if err != nil {
		return err
	}
	labels, err := lb.RunLabels(ctx, run.ID)
	if err != nil {
		return err
	}
	if all {
		have := map[store.LabelKey]bool{}
		for _, l := range labels {
			k := l.LabelKey
			k.RunID = ""
			have[k] = true
		}
		err := db.Results(ctx, run.ID, 0, func(_ int64, r *agenteval.Result) error {
			for _, u := range calibrate.Units(r) {
				if !have[u.Key] {
					have[u.Key] = true
					l := store.Label{LabelKey: u.Key}
					l.RunID = run.ID
					labels = append(labels, l)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		sortLabels(labels)
	}
	w, closeOut, err := writeTo(e, output)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	if format == "csv" {
		err = writeLabelsCSV(bw, labels)
	} else {
		err = writeLabelsJSONL(bw, labels)
	}
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if cerr := closeOut(); err == nil {
		err = cerr
	}
	return err
}

func sortLabels(ls []store.Label) {
	sort.SliceStable(ls, func(i, j int) bool {
		a, b := ls[i].LabelKey, ls[j].LabelKey
		switch {
		case a.Suite != b.Suite:
			return a.Suite < b.Suite
		case a.TestID != b.TestID:
			return a.TestID < b.TestID
		case a.Target != b.Target:
			return a.Target < b.Target
		case a.Trial != b.Trial:
			return a.Trial < b.Trial
		case a.Score != b.Score:
			return a.Score < b.Score
		}
		return a.Criterion < b.Criterion
	})
}

// labelFields is a label as a row's values, in labelColumns' order.
func labelFields(l store.Label) []string {
	trial, at := "", ""
	if l.Trial > 0 {
		trial = strconv.Itoa(l.Trial)
	}
	if !l.Time.IsZero() {
		at = l.Time.UTC().Format(time.RFC3339Nano)
	}
	return []string{l.RunID, l.Suite, l.TestID, l.Target, trial, l.Score, l.Criterion, string(l.Human), l.Note, l.Labeller, at}
}

func writeLabelsCSV(w io.Writer, ls []store.Label) error {
	cw := csv.NewWriter(w)
	cw.Write(labelColumns)
	for _, l := range ls {
		cw.Write(labelFields(l))
	}
	cw.Flush()
	return cw.Error()
}

func writeLabelsJSONL(w io.Writer, ls []store.Label) error {
	for _, l := range ls {
		var b bytes.Buffer
		b.WriteByte('{')
		n := 0
		for i, v := range labelFields(l) {
			k := labelColumns[i]
			// The keys a row needs are always written; the others when set.
			if v == "" && k != "target" && k != "human" {
				continue
			}
			if n > 0 {
				b.WriteByte(',')
			}
			n++
			kb, _ := json.Marshal(k)
			b.Write(kb)
			b.WriteByte(':')
			if k == "trial" {
				b.WriteString(v)
				continue
			}
			vb, err := json.Marshal(v)
			if err != nil {
				return err
			}
			b.Write(vb)
		}
		b.WriteString("}\n")
		if _, err := w.Write(b.Bytes()); err != nil {
			return err
		}
	}
	return nil
}

// labellerName is who labels: as (--as) when given, else git config
// user.name (gitUserName, which the viewer asks too), else the user's
// login name. Under --no-exec git is not run.
func labellerName(e *env, as string) (string, error) {
	if name := strings.TrimSpace(as); name != "" {
		if err := checkLabeller(name); err != nil {
			return "", usageErr("--as %q: %v", as, err)
		}
		return name, nil
	}
	if !e.noExec {
		if name := gitUserName(e.root); name != "" && checkLabeller(name) == nil {
			return name, nil
		}
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username, nil
	}
	for _, k := range []string{"USER", "USERNAME"} {
		if v := os.Getenv(k); v != "" {
			return v, nil
		}
	}
	return "unknown", nil
}
