package grade

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/agenteval/agenteval"
)

// The Ragas tool-call metrics, exactly as Ragas computes them.
var (
	ToolCallAccuracy = deterministic(Definition{Name: "tool_call_accuracy",
		Doc: "Ragas ToolCallAccuracy: argument accuracy of aligned calls, 0 when the name sequences differ (strict_order: true|false)"},
		newToolCallAccuracy)
	ToolCallF1 = deterministic(Definition{Name: "tool_call_f1",
		Doc: "Ragas ToolCallF1: F1 of the sets of (name, args) called and expected; order and repeats ignored"},
		newToolCallF1)
)

// ToolCallAccuracyOptions is the options of tool_call_accuracy.
type ToolCallAccuracyOptions struct {
	// StrictOrder nil means true, as in Ragas.
	StrictOrder *bool `json:"strict_order" doc:"compare the calls in order (default true); false sorts both lists first"`
	// ArgComparisonMetric is Ragas's arg_comparison_metric.
	ArgComparisonMetric string `json:"arg_comparison_metric" doc:"how each argument's str() is compared, as Ragas's arg_comparison_metric: exact_match (default), non_llm_string_similarity (1 - normalised string distance), string_presence; Ragas's class names work too, as in NonLLMStringSimilarity(distance_measure=DistanceMeasure.JARO)"`
	DistanceMeasure     string `json:"distance_measure" enum:"levenshtein,hamming,jaro,jaro_winkler" doc:"with non_llm_string_similarity: the distance (default levenshtein, as in Ragas)"`
	// ArgThreshold is ours; Ragas has no such setting.
	ArgThreshold *float64 `json:"arg_threshold" doc:"our addition, not Ragas's: an argument whose similarity reaches this counts 1, below it 0 (default: the similarity itself, as in Ragas)"`
	// KeyOrder says whether nested objects' key order matters.
	KeyOrder string `json:"key_order" enum:"insertion,ignore" doc:"nested objects print their keys in written order, as Python's str() does (insertion, the default), or sorted so that order never matters (ignore)"`
}

func referenceCalls(grader string, in *agenteval.GradeInput) ([]agenteval.ToolCall, error) {
	if in.ReferenceToolCalls == nil {
		return nil, &agenteval.MissingFieldError{Grader: grader, Field: "reference_tool_calls"}
	}
	return in.ReferenceToolCalls, nil
}

func argsOf(c agenteval.ToolCall) map[string]any {
	if c.Args == nil {
		return map[string]any{}
	}
	return c.Args
}

// ragasAccuracy is tool_call_accuracy's settings.
type ragasAccuracy struct {
	strict bool
	cmp    argComparison
	// ordered prints nested objects' keys in written order.
	ordered bool
}

func newToolCallAccuracy(o ToolCallAccuracyOptions, _ Env) (Func, error) {
	cmp, err := parseArgComparison(o.ArgComparisonMetric, o.DistanceMeasure, o.ArgThreshold)
	if err != nil {
		return nil, err
	}
	ra := ragasAccuracy{strict: o.StrictOrder == nil || *o.StrictOrder, cmp: cmp}
	switch o.KeyOrder {
	case "", "insertion":
		ra.ordered = true
	case "ignore":
	default:
		return nil, fmt.Errorf("key_order %q is not one of insertion, ignore", o.KeyOrder)
	}
	return func(_ context.Context, in *agenteval.GradeInput) (Outcome, error) {
		ref, err := referenceCalls("tool_call_accuracy", in)
		if err != nil {
			return Outcome{}, err
		}
		return ra.score(in.Output.ToolCalls(), ref), nil
	}, nil
}

// str is Python's str() of argument name of call c.
func (ra ragasAccuracy) str(c agenteval.ToolCall, name string) string {
	if !ra.ordered {
		return pyStr(argsOf(c)[name])
	}
	return pyStrOrdered(argsOf(c)[name], c.KeyOrder, agenteval.ChildPointer("", name))
}

// score follows Ragas's ToolCallAccuracy step by step
// (ragas/metrics/_tool_call_accuracy.py, _multi_turn_ascore). Argument
// values compare by Python's str(), with the arg_comparison_metric.
func (ra ragasAccuracy) score(pred, ref []agenteval.ToolCall) Outcome {
	strict := ra.strict
	switch {
	case len(pred) == 0 && len(ref) == 0:
		return Outcome{Score: 1, Reason: "no tool calls expected and none made"}
	case len(pred) == 0:
		return Outcome{Score: 0, Reason: fmt.Sprintf("no tool calls made; %d expected", len(ref))}
	case len(ref) == 0:
		return Outcome{Score: 0, Reason: fmt.Sprintf("%d tool calls made; the reference expects none", len(pred))}
	}
	if !strict {
		pred = ra.sorted(pred)
		ref = ra.sorted(ref)
	}
	pn, rn := names(pred), names(ref)
	aligned := equalStrings(pn, rn)
	if !strict {
		aligned = equalStrings(sortedCopy(pn), sortedCopy(rn))
	}
	var o Outcome
	total := 0.0
	for i := 0; i < len(ref) && i < len(pred); i++ {
		r, p := ref[i], pred[i]
		a := agenteval.Assertion{Text: fmt.Sprintf("call %d is %s", i+1, r.String())}
		if r.Name != p.Name {
			a.Evidence = fmt.Sprintf("called %s instead", p.Name)
			o.Assertions = append(o.Assertions, a)
			continue
		}
		s, ev := ra.argScore(p, r)
		total += s
		a.Passed = s == 1
		a.Evidence = ev
		o.Assertions = append(o.Assertions, a)
	}
	for i := len(pred); i < len(ref); i++ {
		o.Assertions = append(o.Assertions, agenteval.Assertion{Text: fmt.Sprintf("call %d is %s", i+1, ref[i].String()), Evidence: "not called"})
	}
	for i := len(ref); i < len(pred); i++ {
		o.Assertions = append(o.Assertions, agenteval.Assertion{Text: fmt.Sprintf("no call %d", i+1), Evidence: "extra call " + pred[i].String()})
	}
	score := total / float64(len(ref))
	if n := min(len(pred), len(ref)); n < len(ref) {
		score *= float64(n) / float64(len(ref))
	}
	order := "in order"
	if !strict {
		order = "in any order"
	}
	if !aligned {
		o.Score = 0
		o.Reason = fmt.Sprintf("tool names do not match %s: called [%s], expected [%s]; Ragas scores any mismatch 0", order, strings.Join(pn, ", "), strings.Join(rn, ", "))
		return o
	}
	o.Score = score
	o.Reason = fmt.Sprintf("tool names match %s; mean argument accuracy %s", order, strconv.FormatFloat(score, 'f', -1, 64))
	return o
}

// argScore is Ragas's _get_arg_score: the mean, over the reference's
// arguments, of the comparison of their str() with the prediction's (a
// missing argument scores 0). Extra predicted arguments are ignored.
func (ra ragasAccuracy) argScore(predCall, refCall agenteval.ToolCall) (float64, string) {
	pred, ref := argsOf(predCall), argsOf(refCall)
	if len(ref) == 0 && len(pred) == 0 {
		return 1, "no arguments on either side"
	}
	if len(ref) == 0 {
		return 0, "the reference has no arguments but the call has some; Ragas scores this 0"
	}
	keys := sortedKeys(ref)
	total := 0.0
	var bad []string
	for _, k := range keys {
		if _, ok := pred[k]; !ok {
			bad = append(bad, fmt.Sprintf("%s missing", k))
			continue
		}
		want, got := ra.str(refCall, k), ra.str(predCall, k)
		s := ra.cmp.score(want, got)
		total += s
		switch {
		case s == 1:
		case ra.cmp.metric == ArgExactMatch:
			bad = append(bad, fmt.Sprintf("%s: want %s, got %s", k, want, got))
		default:
			bad = append(bad, fmt.Sprintf("%s: want %s, got %s (%s %s)", k, want, got, ra.cmp, strconv.FormatFloat(s, 'f', 4, 64)))
		}
	}
	var ev string
	if ra.cmp.metric == ArgExactMatch {
		ev = fmt.Sprintf("%d/%d arguments match", len(keys)-len(bad), len(keys))
	} else {
		ev = fmt.Sprintf("argument score %s over %d arguments (%s)", strconv.FormatFloat(total/float64(len(keys)), 'f', -1, 64), len(keys), ra.cmp)
	}
	if len(bad) > 0 {
		ev += " (" + strings.Join(bad, "; ") + ")"
	}
	return total / float64(len(keys)), ev
}

// sorted sorts calls by Ragas's key (_sorted_key_for_tool_call): the name,
// then each argument name followed by str() of its value, with argument
// names sorted.
func (ra ragasAccuracy) sorted(calls []agenteval.ToolCall) []agenteval.ToolCall {
	type keyed struct {
		key  []string
		call agenteval.ToolCall
	}
	ks := make([]keyed, len(calls))
	for i, c := range calls {
		k := []string{c.Name}
		for _, name := range sortedKeys(argsOf(c)) {
			k = append(k, name, ra.str(c, name))
		}
		ks[i] = keyed{k, c}
	}
	sort.SliceStable(ks, func(i, j int) bool { return lessTuple(ks[i].key, ks[j].key) })
	out := make([]agenteval.ToolCall, len(ks))
	for i, k := range ks {
		out[i] = k.call
	}
	return out
}

// lessTuple compares like Python tuples of strings. Go compares strings by
// UTF-8 bytes, which orders them by code point, as Python does.
func lessTuple(a, b []string) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return len(a) < len(b)
}

func newToolCallF1(NoOptions, Env) (Func, error) {
	return func(_ context.Context, in *agenteval.GradeInput) (Outcome, error) {
		ref, err := referenceCalls("tool_call_f1", in)
		if err != nil {
			return Outcome{}, err
		}
		return toolCallF1(in.Output.ToolCalls(), ref), nil
	}, nil
}

// toolCallF1 follows Ragas's ToolCallF1: sets of (name, hashable args), with
// Python's equality (2 == 2.0, True == 1), rounded to 4 decimals.
func toolCallF1(pred, ref []agenteval.ToolCall) Outcome {
	expected := callSet(ref)
	actual := callSet(pred)
	tp, fp, fn := 0, 0, 0
	var o Outcome
	for _, k := range sortedKeys(actual) {
		if _, ok := expected[k]; ok {
			tp++
			o.Assertions = append(o.Assertions, agenteval.Assertion{Text: "expected " + actual[k], Passed: true, Evidence: "called"})
		} else {
			fp++
			o.Assertions = append(o.Assertions, agenteval.Assertion{Text: "call " + actual[k] + " is expected", Evidence: "not in reference_tool_calls"})
		}
	}
	for _, k := range sortedKeys(expected) {
		if _, ok := actual[k]; !ok {
			fn++
			o.Assertions = append(o.Assertions, agenteval.Assertion{Text: "expected " + expected[k], Evidence: "never called with these arguments"})
		}
	}
	var p, r, f1 float64
	if tp+fp > 0 {
		p = float64(tp) / float64(tp+fp)
	}
	if tp+fn > 0 {
		r = float64(tp) / float64(tp+fn)
	}
	if p+r > 0 {
		f1 = 2 * p * r / (p + r)
	}
	o.Score = roundPy(f1, 4)
	o.Reason = fmt.Sprintf("TP=%d FP=%d FN=%d precision=%s recall=%s", tp, fp, fn, fmtNum(p), fmtNum(r))
	if len(pred) == 0 && len(ref) == 0 {
		o.Reason += "; Ragas scores two empty sides 0"
	}
	o.Details = map[string]any{"tp": tp, "fp": fp, "fn": fn, "precision": p, "recall": r}
	return o
}

// callSet maps each distinct call's canonical key to a readable form.
func callSet(calls []agenteval.ToolCall) map[string]string {
	set := make(map[string]string, len(calls))
	for _, c := range calls {
		var b strings.Builder
		b.WriteString(strconv.Quote(c.Name))
		if c.Args == nil && c.RawArgs != "" {
			// Undecodable arguments equal nothing but themselves.
			b.WriteString("raw:" + c.RawArgs)
		} else {
			pyHashKey(&b, argsOf(c))
		}
		set[b.String()] = c.String()
	}
	return set
}

// roundPy rounds like Python's round(x, n): correctly rounded from the
// exact binary value, ties to even.
func roundPy(x float64, n int) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'f', n, 64), 64)
	return f
}

func fmtNum(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

func names(calls []agenteval.ToolCall) []string {
	out := make([]string, len(calls))
	for i, c := range calls {
		out[i] = c.Name
	}
	return out
}

func sortedCopy(s []string) []string {
	c := append([]string(nil), s...)
	sort.Strings(c)
	return c
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
