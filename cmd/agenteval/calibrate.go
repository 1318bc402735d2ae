package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/agenteval/agenteval/calibrate"
	"github.com/agenteval/agenteval/store"
	"github.com/spf13/cobra"
)

func newCalibrateCmd(e *env) *cobra.Command {
	var format, output, labelsFrom string
	var failUnder float64
	opt := calibrate.Options{MinKappa: calibrate.DefaultMinKappa, MaxFalsePass: calibrate.DefaultMaxFalsePass}
	cmd := &cobra.Command{
		Use:   "calibrate RUN...",
		Short: "Measure how far the judge agrees with human labels",
		Long: `Set the verdicts the judge of each RUN gave its criteria beside the human
labels of the same criteria (agenteval labels, or the viewer), and report,
overall, per judge model, per grader type and per criterion:

  n            labelled criteria
  agreement    the share the judge and the human decided alike
  κ            Cohen's kappa: agreement beyond what chance would give with
               each side's share of passes (1 perfect, 0 chance, below 0
               worse than chance; blank where both gave one verdict only)
  confusion    judge pass/fail against human pass/fail
  false pass   judge pass and human fail, over human fail: how often the
               judge lets through what a person would stop, with its 95%
               Wilson interval

A criterion with κ below --min-kappa, or a false-pass rate above
--max-false-pass, is flagged too vague to judge, with the labels the judge
decided otherwise: rewrite it, split it, or give the judge a reference.
Where the judge voted (samples: N), self-consistency is the mean share of
its samples that voted with the majority.

A run regraded from another (agenteval regrade) without labels of its own
is compared with its source run's labels, so that calibrate OLD NEW compares
two judges on the same labels; --labels-from RUN uses RUN's labels for
every run.

--fail-under-kappa X exits 1 when the overall κ is below X, for CI.

` + runRefHelp,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErr("calibrate needs at least one run\nUsage: agenteval calibrate RUN... [--format table|json|markdown] [--fail-under-kappa X]")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			switch format {
			case "table", "json", "markdown", "md":
			default:
				return usageErr("unknown --format %q; use table, json or markdown", format)
			}
			if opt.MinKappa < -1 || opt.MinKappa > 1 {
				return usageErr("--min-kappa %v: κ lies between -1 and 1", opt.MinKappa)
			}
			if opt.MaxFalsePass < 0 || opt.MaxFalsePass > 1 {
				return usageErr("--max-false-pass %v: give a rate between 0 and 1", opt.MaxFalsePass)
			}
			rep, err := buildCalibration(cmd.Context(), e, args, labelsFrom, opt)
			if err != nil {
				return err
			}
			w, closeOut, err := writeTo(e, output)
			if err != nil {
				return err
			}
			bw := bufio.NewWriter(w)
			switch format {
			case "json":
				enc := json.NewEncoder(bw)
				enc.SetIndent("", "  ")
				err = enc.Encode(rep)
			case "markdown", "md":
				writeCalibrationMarkdown(bw, rep)
			default:
				writeCalibrationTable(bw, rep)
			}
			if ferr := bw.Flush(); err == nil {
				err = ferr
			}
			if cerr := closeOut(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("fail-under-kappa") {
				k := rep.Overall.Kappa
				switch {
				case k == nil:
					fmt.Fprintln(e.stderr, "agenteval: κ is undefined (judge and human gave one and the same verdict to every label), so --fail-under-kappa does not fail")
				case *k < failUnder-1e-12:
					fmt.Fprintf(e.stderr, "agenteval: overall κ %.3f is below --fail-under-kappa %v\n", *k, failUnder)
					return exitCode(exitFailed)
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "table", "table, json or markdown")
	cmd.Flags().StringVarP(&output, "output", "o", "", "write to this file instead of standard output")
	cmd.Flags().Float64Var(&failUnder, "fail-under-kappa", 0, "exit 1 when the overall κ is below this")
	cmd.Flags().Float64Var(&opt.MinKappa, "min-kappa", opt.MinKappa, "flag a criterion whose κ is below this")
	cmd.Flags().Float64Var(&opt.MaxFalsePass, "max-false-pass", opt.MaxFalsePass, "flag a criterion whose false-pass rate is above this")
	cmd.Flags().StringVar(&labelsFrom, "labels-from", "", "compare every run with this run's labels instead of its own")
	return cmd
}

// maxSourceHops bounds the walk from a regraded run to the run its
// labels are on.
const maxSourceHops = 8

func buildCalibration(ctx context.Context, e *env, refs []string, labelsFrom string, opt calibrate.Options) (*calibrate.Report, error) {
	h := newHistory(e, true)
	defer h.close()
	var fixed []store.Label
	fixedFrom := ""
	if labelsFrom != "" {
		db, run, err := storedRun(ctx, h, labelsFrom)
		if err != nil {
			return nil, err
		}
		if fixed, err = runLabels(ctx, db, run.ID); err != nil {
			return nil, err
		}
		if len(fixed) == 0 {
			return nil, usageErr("--labels-from %s: run %s has no labels; make them in agenteval view, or with agenteval labels import FILE", labelsFrom, run.ID)
		}
		fixedFrom = run.ID
	}
	var db store.Store
	var runs []*store.Run
	seen := map[string]bool{}
	for _, ref := range refs {
		d, run, err := storedRun(ctx, h, ref)
		if err != nil {
			return nil, err
		}
		if !seen[run.ID] {
			seen[run.ID] = true
			db, runs = d, append(runs, run)
		}
	}
	rep, err := calibrateRuns(ctx, db, runs, fixed, fixedFrom, opt)
	if err != nil {
		return nil, err
	}
	if rep.Overall.N == 0 {
		ids := make([]string, len(runs))
		for i, r := range runs {
			ids[i] = r.ID
		}
		why := "has no labels"
		if n := len(rep.Unmatched); n > 0 {
			why = fmt.Sprintf("has no labels that match its criteria (%d labels are for criteria it does not have)", n)
		}
		return nil, usageErr("run %s %s: label its judged criteria in agenteval view, or with agenteval labels export %s --all -o labels.csv, then agenteval labels import labels.csv",
			strings.Join(ids, ", "), why, runs[0].ID)
	}
	return rep, nil
}

func runLabels(ctx context.Context, db store.Store, id string) ([]store.Label, error) {
	lb, err := store.LabelsOf(db)
	if err != nil {
		return nil, err
	}
	return lb.RunLabels(ctx, id)
}

// calibrateRuns compares the judges of runs with labels: fixed (of run
// fixedFrom) when given, else each run's own, else those of the run it
// was regraded from. Its report has n = 0 when no label matches.
func calibrateRuns(ctx context.Context, db store.Store, runs []*store.Run, fixed []store.Label, fixedFrom string, opt calibrate.Options) (*calibrate.Report, error) {
	var (
		infos     []calibrate.RunInfo
		pairs     []calibrate.Pair
		unmatched []store.Label
	)
	for _, run := range runs {
		labels, from := fixed, fixedFrom
		if fixedFrom == "" {
			from = run.ID
			var err error
			if labels, err = runLabels(ctx, db, run.ID); err != nil {
				return nil, err
			}
			// A regraded run is labelled through the run it regraded.
			src := run
			for hop := 0; len(labels) == 0 && src.Header.RegradedFrom != "" && hop < maxSourceHops; hop++ {
				if src, err = db.Run(ctx, src.Header.RegradedFrom); err != nil {
					break
				}
				from = src.ID
				if labels, err = runLabels(ctx, db, src.ID); err != nil {
					return nil, err
				}
			}
		}
		x, err := runIndex(ctx, db, run.ID)
		if err != nil {
			return nil, err
		}
		judge := run.Header.Judge
		if judge == "" {
			judge = "(no judge)"
		}
		info := calibrate.RunInfo{ID: run.ID, Judge: judge}
		if from != run.ID {
			info.LabelsFrom = from
		}
		for _, l := range labels {
			u, ok := x.Unit(l.LabelKey)
			if !ok {
				unmatched = append(unmatched, l)
				continue
			}
			info.Labels++
			pairs = append(pairs, calibrate.Pair{Run: run.ID, Judge: judge, Unit: *u, Label: l})
		}
		infos = append(infos, info)
	}
	return calibrate.Build(infos, pairs, unmatched, opt), nil
}

// agreementJSON is how far a stored run's judge agreed with its labels, as
// the HTML report shows it; nil for a results file or a run without
// labels. A report is still written when this fails: it is a part of the
// page, not the page.
func agreementJSON(ctx context.Context, s *source) json.RawMessage {
	if s == nil || s.run == nil || s.db == nil {
		return nil
	}
	rep, err := calibrateRuns(ctx, s.db, []*store.Run{s.run}, nil, "", calibrate.Options{MinKappa: calibrate.DefaultMinKappa, MaxFalsePass: calibrate.DefaultMaxFalsePass})
	if err != nil || rep.Overall.N == 0 {
		return nil
	}
	b, err := json.Marshal(rep)
	if err != nil {
		return nil
	}
	return b
}

// criterionOf is what tells a criterion's row apart: its grader, and its
// judge when several judges are compared.
func criterionOf(c calibrate.Criterion) string {
	if c.Judge != "" {
		return c.Grader + ", " + c.Judge
	}
	return c.Grader
}

func fmtRate(p *float64) string {
	if p == nil {
		return "–"
	}
	return fmt.Sprintf("%.3f", *p)
}

func fmtKappa(p *float64) string {
	if p == nil || math.IsNaN(*p) {
		return "–"
	}
	return fmt.Sprintf("%.3f", *p)
}

func fmtFalsePass(f calibrate.FalsePass) string {
	if f.Rate == nil {
		return fmt.Sprintf("%d/%d", f.Count, f.HumanFail)
	}
	return fmt.Sprintf("%d/%d %.2f [%.2f, %.2f]", f.Count, f.HumanFail, *f.Rate, f.CI95[0], f.CI95[1])
}

func fmtConfusion(c calibrate.Counts) string {
	return fmt.Sprintf("%d %d %d %d", c.PassPass, c.PassFail, c.FailPass, c.FailFail)
}

func statsCells(s calibrate.Stats) []string {
	cons := "–"
	if s.SelfConsistency != nil {
		cons = fmt.Sprintf("%.2f", *s.SelfConsistency)
	}
	return []string{fmt.Sprint(s.N), fmtRate(s.Agreement), fmtKappa(s.Kappa), fmtConfusion(s.Confusion), fmtFalsePass(s.FalsePass), cons}
}

var statsHeader = []string{"N", "AGREE", "KAPPA", "PP PF FP FF", "FALSE PASS [95% CI]", "SELF-CONS"}

func runsLine(r *calibrate.Report) []string {
	var out []string
	for _, ri := range r.Runs {
		s := fmt.Sprintf("run %s, judge %s: %d labels", ri.ID, ri.Judge, ri.Labels)
		if ri.LabelsFrom != "" {
			s += " (labels of run " + ri.LabelsFrom + ")"
		}
		out = append(out, s)
	}
	return out
}

func writeCalibrationTable(w *bufio.Writer, r *calibrate.Report) {
	for _, l := range runsLine(r) {
		fmt.Fprintln(w, l)
	}
	fmt.Fprintln(w)
	right := map[int]bool{1: true, 2: true, 3: true}
	section := func(title string, rows [][]string) {
		all := append([][]string{append([]string{title}, statsHeader...)}, rows...)
		writeColumns(w, all, right)
		fmt.Fprintln(w)
	}
	section("OVERALL", [][]string{append([]string{"all"}, statsCells(r.Overall)...)})
	var rows [][]string
	for _, g := range r.ByJudge {
		rows = append(rows, append([]string{g.Name}, statsCells(g.Stats)...))
	}
	section("JUDGE", rows)
	rows = nil
	for _, g := range r.ByGrader {
		rows = append(rows, append([]string{g.Name}, statsCells(g.Stats)...))
	}
	section("GRADER", rows)
	rows = nil
	for _, c := range r.ByCriterion {
		mark := "  "
		if len(c.Flags) > 0 {
			mark = "! "
		}
		rows = append(rows, append([]string{mark + clipText(c.Criterion, 48) + " (" + criterionOf(c) + ")"}, statsCells(c.Stats)...))
	}
	section("CRITERION", rows)
	fmt.Fprintln(w, "PP PF FP FF: judge pass & human pass, judge pass & human fail (false pass), judge fail & human pass, both fail.")
	writeFlagged(w, r)
	if len(r.Unmatched) > 0 {
		fmt.Fprintf(w, "\n%d labels are for criteria the runs do not have (their tests changed), and were left out.\n", len(r.Unmatched))
	}
}

// writeFlagged lists the criteria too vague to judge and their
// disagreeing labels.
func writeFlagged(w io.Writer, r *calibrate.Report) {
	if r.Flagged == 0 {
		fmt.Fprintf(w, "\nNo criterion is flagged (κ below %.2f or false-pass rate above %.2f).\n", r.Thresholds.MinKappa, r.Thresholds.MaxFalsePass)
		return
	}
	noun := "criteria"
	if r.Flagged == 1 {
		noun = "criterion"
	}
	fmt.Fprintf(w, "\nToo vague to judge: %d %s (κ below %.2f or false-pass rate above %.2f).\n", r.Flagged, noun, r.Thresholds.MinKappa, r.Thresholds.MaxFalsePass)
	for _, c := range r.ByCriterion {
		if len(c.Flags) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%q (%s): %s\n", c.Criterion, criterionOf(c), strings.Join(c.Flags, "; "))
		for _, d := range c.Disagreements {
			where := d.TestID
			if d.Suite != "" {
				where = d.Suite + "/" + where
			}
			if d.Target != "" {
				where += " [" + d.Target + "]"
			}
			if d.Trial > 0 {
				where += fmt.Sprintf(" trial %d", d.Trial)
			}
			line := fmt.Sprintf("  - %s %s, run %s: judge %s, human %s", where, d.Score, d.Run, d.Judge, d.Human)
			if d.Note != "" {
				line += fmt.Sprintf("; note: %q", clipText(d.Note, 120))
			}
			if d.Evidence != "" {
				line += fmt.Sprintf("; judge: %q", clipText(d.Evidence, 120))
			}
			fmt.Fprintln(w, line)
		}
	}
}

func writeCalibrationMarkdown(w *bufio.Writer, r *calibrate.Report) {
	fmt.Fprintln(w, "## Judge agreement with human labels")
	fmt.Fprintln(w)
	for _, l := range runsLine(r) {
		fmt.Fprintf(w, "- %s\n", l)
	}
	cell := func(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ") }
	table := func(title string, names []string, stats []calibrate.Stats) {
		fmt.Fprintln(w)
		fmt.Fprintf(w, "| %s | n | agreement | κ | confusion (PP PF FP FF) | false pass [95%% CI] | self-consistency |\n", title)
		fmt.Fprintln(w, "|---|---:|---:|---:|---|---|---:|")
		for i, n := range names {
			c := statsCells(stats[i])
			fmt.Fprintf(w, "| %s | %s |\n", cell(n), strings.Join(c, " | "))
		}
	}
	table("overall", []string{"all"}, []calibrate.Stats{r.Overall})
	var names []string
	var stats []calibrate.Stats
	for _, g := range r.ByJudge {
		names, stats = append(names, g.Name), append(stats, g.Stats)
	}
	table("judge", names, stats)
	names, stats = nil, nil
	for _, g := range r.ByGrader {
		names, stats = append(names, g.Name), append(stats, g.Stats)
	}
	table("grader", names, stats)
	names, stats = nil, nil
	for _, c := range r.ByCriterion {
		n := c.Criterion + " (" + criterionOf(c) + ")"
		if len(c.Flags) > 0 {
			n = "**" + n + "** ⚠"
		}
		names, stats = append(names, n), append(stats, c.Stats)
	}
	table("criterion", names, stats)
	writeFlagged(w, r)
	if len(r.Unmatched) > 0 {
		fmt.Fprintf(w, "\n%d labels are for criteria the runs do not have, and were left out.\n", len(r.Unmatched))
	}
}
