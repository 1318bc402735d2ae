package grade

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/jsonvalue"
)

// FieldAccuracy compares fields of a JSON reply with the test's expected
// output (AgentV's field-accuracy): exactly, as numbers within a
// tolerance, or as dates.
var FieldAccuracy = deterministic(Definition{Name: "field_accuracy",
	Doc: "fields of a JSON reply against expected_output: match exact, numeric_tolerance or date; aggregation weighted_average or all_or_nothing"}, newFieldAccuracy)

// FieldAccuracyOptions is the options of field_accuracy.
type FieldAccuracyOptions struct {
	Fields      []FieldCheck `json:"fields" doc:"the fields to compare: {path, match: exact|numeric_tolerance|date, required, weight, tolerance, relative, formats}"`
	Aggregation string       `json:"aggregation" enum:"weighted_average,all_or_nothing" doc:"weighted_average of the fields (default), or 1 only when every field matches"`
}

// FieldCheck is one field to compare.
type FieldCheck struct {
	Path  string `json:"path"`
	Match string `json:"match"`
	// Required (the default) makes a field missing from the reply count as
	// a miss; an optional one missing is left out.
	Required  *bool    `json:"required"`
	Weight    *float64 `json:"weight"`
	Tolerance float64  `json:"tolerance"`
	Relative  bool     `json:"relative"`
	Formats   []string `json:"formats"`
}

func newFieldAccuracy(o FieldAccuracyOptions, _ Env) (Func, error) {
	if len(o.Fields) == 0 {
		return nil, fmt.Errorf("needs fields: the fields to compare, each {path, match}")
	}
	for i, f := range o.Fields {
		if f.Path == "" {
			return nil, fmt.Errorf("fields[%d] needs path (such as invoice.total or items[0].name)", i)
		}
		switch f.Match {
		case "exact", "numeric_tolerance", "date":
		default:
			return nil, fmt.Errorf("fields[%d].match %q is not exact, numeric_tolerance or date", i, f.Match)
		}
	}
	switch o.Aggregation {
	case "", "weighted_average", "all_or_nothing":
	default:
		return nil, fmt.Errorf("aggregation %q is not weighted_average or all_or_nothing", o.Aggregation)
	}
	return func(_ context.Context, in *agenteval.GradeInput) (Outcome, error) {
		got, ok := jsonIn(in.Output.LastAssistant())
		if !ok {
			return Outcome{Reason: "the reply is not JSON", Assertions: []agenteval.Assertion{{Text: "the reply is a JSON object", Evidence: quoteShort(in.Output.LastAssistant())}}}, nil
		}
		want, ok := jsonIn(in.Reference)
		if !ok {
			return Outcome{}, &agenteval.MissingFieldError{Grader: "field_accuracy", Field: "expected_output as a JSON object"}
		}
		var o2 Outcome
		var sum, total float64
		all := true
		for _, f := range o.Fields {
			w := 1.0
			if f.Weight != nil {
				w = *f.Weight
			}
			ev, eok := pathValue(want, f.Path)
			cv, cok := pathValue(got, f.Path)
			a := agenteval.Assertion{Text: fmt.Sprintf("%s matches (%s)", f.Path, f.Match)}
			switch {
			case !eok:
				a.Passed, a.Evidence = true, "no expected value"
			case !cok && (f.Required == nil || *f.Required):
				a.Evidence = "missing from the reply"
			case !cok:
				a.Passed, a.Evidence, w = true, "optional, missing", 0
			default:
				a.Passed, a.Evidence = compareField(f, ev, cv)
			}
			total += w
			if a.Passed {
				sum += w
			} else {
				all = false
			}
			o2.Assertions = append(o2.Assertions, a)
		}
		o2.Score = 1
		if total > 0 {
			o2.Score = sum / total
		}
		if o.Aggregation == "all_or_nothing" {
			o2.Score = map[bool]float64{true: 1, false: 0}[all]
		}
		passed := 0
		for _, a := range o2.Assertions {
			if a.Passed {
				passed++
			}
		}
		o2.Reason = fmt.Sprintf("%d of %d fields match", passed, len(o.Fields))
		return o2, nil
	}, nil
}

var fence = regexp.MustCompile("(?s)```(?:json)?\\s*(.*?)```")

// jsonIn reads the JSON a text holds: the whole text, a fenced block, or
// the outermost {...}.
func jsonIn(s string) (any, bool) {
	s = strings.TrimSpace(s)
	var v any
	if json.Unmarshal([]byte(s), &v) == nil {
		return v, true
	}
	if m := fence.FindStringSubmatch(s); m != nil && json.Unmarshal([]byte(strings.TrimSpace(m[1])), &v) == nil {
		return v, true
	}
	if i, j := strings.Index(s, "{"), strings.LastIndex(s, "}"); i >= 0 && j > i && json.Unmarshal([]byte(s[i:j+1]), &v) == nil {
		return v, true
	}
	return nil, false
}

var pathPart = regexp.MustCompile(`([^.\[\]]+)|\[(\d+)\]`)

// pathValue finds a.b[0].c in decoded JSON.
func pathValue(v any, path string) (any, bool) {
	cur := v
	for _, m := range pathPart.FindAllStringSubmatch(path, -1) {
		if m[2] != "" {
			i, _ := strconv.Atoi(m[2])
			list, ok := cur.([]any)
			if !ok || i >= len(list) {
				return nil, false
			}
			cur = list[i]
			continue
		}
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = obj[m[1]]; !ok {
			return nil, false
		}
	}
	return cur, cur != nil
}

func compareField(f FieldCheck, want, got any) (bool, string) {
	switch f.Match {
	case "numeric_tolerance":
		w, ok1 := num(want)
		g, ok2 := num(got)
		if !ok1 || !ok2 {
			return false, fmt.Sprintf("want the number %s, got %s", show(want), show(got))
		}
		diff := math.Abs(w - g)
		if f.Relative && w != 0 {
			diff /= math.Abs(w)
		}
		return diff <= f.Tolerance+1e-12, fmt.Sprintf("want %s, got %s (tolerance %s%s)", fmtNum(w), fmtNum(g), fmtNum(f.Tolerance), map[bool]string{true: ", relative", false: ""}[f.Relative])
	case "date":
		w, ok1 := parseDate(pyStrJSON(want), f.Formats)
		g, ok2 := parseDate(pyStrJSON(got), f.Formats)
		if !ok1 || !ok2 {
			return false, fmt.Sprintf("want the date %s, got %s (a date in none of the formats)", show(want), show(got))
		}
		return w.Equal(g), fmt.Sprintf("want %s, got %s", w.Format("2006-01-02"), g.Format("2006-01-02"))
	}
	if jsonvalue.Equal(want, got) {
		return true, "equal"
	}
	return false, fmt.Sprintf("want %s, got %s", show(want), show(got))
}

func num(v any) (float64, bool) {
	if s, ok := v.(string); ok {
		f, err := strconv.ParseFloat(strings.ReplaceAll(strings.TrimSpace(s), ",", ""), 64)
		return f, err == nil
	}
	return number(v)
}

// dateLayouts turns AgentV's date formats into Go layouts.
var dateLayouts = strings.NewReplacer("YYYY", "2006", "MMM", "Jan", "MM", "01", "DD", "02", "HH", "15", "mm", "04", "ss", "05", "Z", "Z07:00")

var defaultDateFormats = []string{"YYYY-MM-DDTHH:mm:ssZ", "YYYY-MM-DDTHH:mm:ss", "YYYY-MM-DD", "DD-MMM-YYYY", "MM/DD/YYYY", "DD/MM/YYYY", "MM-DD-YYYY", "DD-MM-YYYY"}

func parseDate(s string, formats []string) (time.Time, bool) {
	if len(formats) == 0 {
		formats = defaultDateFormats
	}
	s = strings.TrimSpace(s)
	for _, f := range formats {
		layout := dateLayouts.Replace(f)
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
		// Month names in any case: 15-JAN-2025.
		if strings.Contains(layout, "Jan") {
			if t, err := time.Parse(layout, titleMonth(s)); err == nil {
				return t, true
			}
		}
	}
	return time.Time{}, false
}

func titleMonth(s string) string {
	return regexp.MustCompile(`[A-Za-z]{3}`).ReplaceAllStringFunc(s, func(m string) string {
		return strings.ToUpper(m[:1]) + strings.ToLower(m[1:])
	})
}

func readText(p string) (string, error) {
	b, err := os.ReadFile(p)
	return string(b), err
}
