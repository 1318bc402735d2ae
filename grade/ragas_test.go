package grade

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
)

var (
	search = call("restaurant_search", `{"cuisine": "Chinese", "time": "8pm"}`)
	book   = call("restaurant_book", `{"name": "Golden Dragon", "time": "8pm"}`)
)

func TestToolCallAccuracy(t *testing.T) {
	tests := []struct {
		name   string
		pred   [][]agenteval.ToolCall
		ref    []agenteval.ToolCall
		strict *bool
		want   float64
	}{
		{"both empty", nil, []agenteval.ToolCall{}, nil, 1},
		{"no predictions", nil, []agenteval.ToolCall{search}, nil, 0},
		{"empty reference with predictions", seq(search), []agenteval.ToolCall{}, nil, 0},
		{"perfect", seq(search, book), []agenteval.ToolCall{search, book}, nil, 1},
		{"one wrong argument of two", seq(search, call("restaurant_book", `{"name": "Golden Dragon", "time": "9pm"}`)), []agenteval.ToolCall{search, book}, nil, 0.75},
		{"missing argument", seq(search, call("restaurant_book", `{"name": "Golden Dragon"}`)), []agenteval.ToolCall{search, book}, nil, 0.75},
		{"extra predicted argument is not penalised", seq(call("restaurant_search", `{"cuisine": "Chinese", "time": "8pm", "city": "SF"}`)), []agenteval.ToolCall{search}, nil, 1},
		{"wrong order, strict", seq(book, search), []agenteval.ToolCall{search, book}, nil, 0},
		{"wrong order, unordered", seq(book, search), []agenteval.ToolCall{search, book}, ptr(false), 1},
		{"retried call: length mismatch zeroes", seq(search, search, book), []agenteval.ToolCall{search, book}, nil, 0},
		{"missing call: length mismatch zeroes", seq(search), []agenteval.ToolCall{search, book}, nil, 0},
		{"parallel calls in one message count in order", [][]agenteval.ToolCall{{search, book}}, []agenteval.ToolCall{search, book}, nil, 1},
		{"both argument maps empty", seq(call("now", `{}`)), []agenteval.ToolCall{call("now", `{}`)}, nil, 1},
		{"reference args empty, call has some", seq(call("now", `{"tz": "UTC"}`)), []agenteval.ToolCall{call("now", `{}`)}, nil, 0},
		{"2 vs 2.0 differ under str()", seq(call("f", `{"n": 2}`)), []agenteval.ToolCall{call("f", `{"n": 2.0}`)}, nil, 0},
		{"string 2 equals number 2 under str()", seq(call("f", `{"n": "2"}`)), []agenteval.ToolCall{call("f", `{"n": 2}`)}, nil, 1},
		{"true equals the string True under str()", seq(call("f", `{"b": "True"}`)), []agenteval.ToolCall{call("f", `{"b": true}`)}, nil, 1},
		{"nested arguments equal", seq(call("f", `{"q": {"a": [1, {"b": null}]}}`)), []agenteval.ToolCall{call("f", `{"q": {"a": [1, {"b": null}]}}`)}, nil, 1},
		{"nested arguments differ", seq(call("f", `{"q": {"a": [1, 2]}, "r": 1}`)), []agenteval.ToolCall{call("f", `{"q": {"a": [2, 1]}, "r": 1}`)}, nil, 0.5},
		{"same tool twice, args swapped, strict", seq(call("f", `{"a": 2}`), call("f", `{"a": 1}`)), []agenteval.ToolCall{call("f", `{"a": 1}`), call("f", `{"a": 2}`)}, nil, 0},
		{"same tool twice, args swapped, unordered", seq(call("f", `{"a": 2}`), call("f", `{"a": 1}`)), []agenteval.ToolCall{call("f", `{"a": 1}`), call("f", `{"a": 2}`)}, ptr(false), 1},
		{"unordered still zero on name mismatch", seq(search, search), []agenteval.ToolCall{search, book}, ptr(false), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			params := map[string]any{}
			if tt.strict != nil {
				params["strict_order"] = *tt.strict
			}
			g := mustGrader(t, "tool_call_accuracy", params)
			s := gradeConv(t, g, convo(tt.pred...), tt.ref)
			if !near(s.Score, tt.want) {
				t.Errorf("score = %v, want %v (%s)", s.Score, tt.want, s.Reason)
			}
			if want := agenteval.VerdictFor(tt.want, 0.8); s.Verdict != want {
				t.Errorf("verdict = %s, want %s", s.Verdict, want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestToolCallAccuracyArgComparison: Ragas's arg_comparison_metric and the
// key order of nested dicts. Each case's want in
// testdata/ragas_arg_comparison.jsonl was computed by Ragas's algorithm in
// Python, transcribed step by step from vibrantlabsai/ragas
// src/ragas/metrics/_tool_call_accuracy.py (_get_arg_score, lines 65-83:
// the mean over the reference's arguments of
// arg_comparison_metric(response=str(pred[arg]), reference=str(ref[arg]));
// _sorted_key_for_tool_call, 85-99; _multi_turn_ascore, 110-178) and
// src/ragas/metrics/_string.py (ExactMatch, 29-32; StringPresence, 48-55;
// NonLLMStringSimilarity, 87-96: 1 - rapidfuzz <measure>.normalized_distance
// (reference, response)), run with rapidfuzz's own pure-Python distances
// (rapidfuzz/distance/{Levenshtein,Hamming,Jaro,JaroWinkler}_py.py) on
// arguments from json.loads, so that str() prints nested dicts in the order
// their keys were written. key_order=ignore is ours: its want is Ragas's
// value on the same calls with every nested dict's keys sorted.
func TestToolCallAccuracyArgComparison(t *testing.T) {
	data, err := os.ReadFile("testdata/ragas_arg_comparison.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	type rawCall struct {
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	}
	calls := func(raw []rawCall) []agenteval.ToolCall {
		out := make([]agenteval.ToolCall, len(raw))
		for i, c := range raw {
			out[i] = call(c.Name, string(c.Args))
		}
		return out
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var c struct {
			Name     string    `json:"name"`
			Metric   string    `json:"metric"`
			Measure  string    `json:"measure"`
			KeyOrder string    `json:"key_order"`
			Strict   *bool     `json:"strict"`
			Pred     []rawCall `json:"pred"`
			Ref      []rawCall `json:"ref"`
			Want     float64   `json:"want"`
		}
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatal(err)
		}
		n++
		t.Run(c.Name, func(t *testing.T) {
			params := map[string]any{}
			if c.Metric != "" {
				params["arg_comparison_metric"] = c.Metric
			}
			if c.Measure != "" {
				params["distance_measure"] = c.Measure
			}
			if c.KeyOrder != "" {
				params["key_order"] = c.KeyOrder
			}
			if c.Strict != nil {
				params["strict_order"] = *c.Strict
			}
			var groups [][]agenteval.ToolCall
			for _, p := range calls(c.Pred) {
				groups = append(groups, []agenteval.ToolCall{p})
			}
			s := gradeConv(t, mustGrader(t, "tool_call_accuracy", params), convo(groups...), calls(c.Ref))
			if math.Abs(s.Score-c.Want) > 1e-9 {
				t.Errorf("score = %.17g, Ragas gives %.17g (%s; %v)", s.Score, c.Want, s.Reason, s.Assertions)
			}
		})
	}
	if n < 20 {
		t.Errorf("only %d cases read", n)
	}
}

// TestArgComparisonSpellings: our names, Ragas's class names and its
// constructor form all read; bad ones say what to write.
func TestArgComparisonSpellings(t *testing.T) {
	for _, tt := range []struct {
		metric, measure string
		want            string
		err             string
	}{
		{"", "", "exact_match", ""},
		{"ExactMatch()", "", "exact_match", ""},
		{"non_llm_string_similarity", "", "non_llm_string_similarity(levenshtein)", ""},
		{"NonLLMStringSimilarity(distance_measure=DistanceMeasure.JARO_WINKLER)", "", "non_llm_string_similarity(jaro_winkler)", ""},
		{"NonLLMStringSimilarity()", "hamming", "non_llm_string_similarity(hamming)", ""},
		{"StringPresence", "", "string_presence", ""},
		{"bleu_score", "", "", `arg_comparison_metric "bleu_score" is not one of exact_match, non_llm_string_similarity, string_presence`},
		{"non_llm_string_similarity", "cosine", "", `distance_measure "cosine" is not one of levenshtein, hamming, jaro, jaro_winkler`},
		{"exact_match", "jaro", "", "distance_measure applies to arg_comparison_metric=non_llm_string_similarity, not exact_match"},
		{"NonLLMStringSimilarity(distance_measure=DistanceMeasure.JARO)", "hamming", "", "distance_measure is jaro in arg_comparison_metric and hamming in distance_measure; give it once"},
	} {
		c, err := parseArgComparison(tt.metric, tt.measure, nil)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%q/%q: err = %v, want %q", tt.metric, tt.measure, err, tt.err)
		case tt.err == "" && (err != nil || c.String() != tt.want):
			t.Errorf("%q/%q = %s (%v), want %s", tt.metric, tt.measure, c, err, tt.want)
		}
	}
	// arg_threshold (ours) turns a similarity into 1 or 0.
	th := 0.7
	c, _ := parseArgComparison("non_llm_string_similarity", "", &th)
	if c.score("New York", "new york") != 1 || c.score("New York", "Boston") != 0 {
		t.Errorf("threshold 0.7: %v %v, want 1 (similarity 0.75) and 0", c.score("New York", "new york"), c.score("New York", "Boston"))
	}
}

func TestToolCallF1(t *testing.T) {
	a, b, c, d := call("a", `{"x": 1}`), call("b", `{}`), call("c", `{"y": "z"}`), call("d", `{}`)
	tests := []struct {
		name string
		pred [][]agenteval.ToolCall
		ref  []agenteval.ToolCall
		want float64
	}{
		{"both empty scores 0 (Ragas quirk)", nil, []agenteval.ToolCall{}, 0},
		{"no predictions", nil, []agenteval.ToolCall{a}, 0},
		{"empty reference", seq(a), []agenteval.ToolCall{}, 0},
		{"identical", seq(a, b), []agenteval.ToolCall{a, b}, 1},
		{"order ignored", seq(b, a), []agenteval.ToolCall{a, b}, 1},
		{"duplicates collapse", seq(a, a, b), []agenteval.ToolCall{a, b}, 1},
		{"two of three", seq(a, b, c), []agenteval.ToolCall{a, b, d}, 0.6667},
		{"one of two expected, nothing extra", seq(a), []agenteval.ToolCall{a, b}, 0.6667},
		{"2 equals 2.0 under Python equality", seq(call("f", `{"n": 2}`)), []agenteval.ToolCall{call("f", `{"n": 2.0}`)}, 1},
		{"true equals 1 under Python equality", seq(call("f", `{"n": true}`)), []agenteval.ToolCall{call("f", `{"n": 1}`)}, 1},
		{"string 2 differs from number 2", seq(call("f", `{"n": "2"}`)), []agenteval.ToolCall{call("f", `{"n": 2}`)}, 0},
		{"nested args, key order ignored", seq(call("f", `{"q": {"a": 1, "b": [1, 2]}}`)), []agenteval.ToolCall{call("f", `{"q": {"b": [1, 2], "a": 1}}`)}, 1},
		{"nested list order matters", seq(call("f", `{"q": [1, 2]}`)), []agenteval.ToolCall{call("f", `{"q": [2, 1]}`)}, 0},
		{"parallel calls", [][]agenteval.ToolCall{{a, b}}, []agenteval.ToolCall{a, b}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := gradeConv(t, mustGrader(t, "tool_call_f1", nil), convo(tt.pred...), tt.ref)
			if !near(s.Score, tt.want) {
				t.Errorf("score = %v, want %v (%s)", s.Score, tt.want, s.Reason)
			}
		})
	}
}

func TestRagasMetricsNeedReference(t *testing.T) {
	for _, name := range []string{"tool_call_accuracy", "tool_call_f1", "tool_calls"} {
		g := mustGrader(t, name, nil)
		conv := convo(seq(search)...)
		_, err := g.Grade(context.Background(), &agenteval.GradeInput{Transcript: conv, Output: conv})
		var mf *agenteval.MissingFieldError
		if !errors.As(err, &mf) {
			t.Errorf("%s without reference_tool_calls: err = %v, want a MissingFieldError", name, err)
		}
	}
}

func TestPyStr(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{`2`, "2"},
		{`-0`, "0"},
		{`2.0`, "2.0"},
		{`2.50`, "2.5"},
		{`1e3`, "1000.0"},
		{`1e16`, "1e+16"},
		{`1e15`, "1000000000000000.0"},
		{`0.0001`, "0.0001"},
		{`0.00001`, "1e-05"},
		{`123456789012345678901234567890`, "123456789012345678901234567890"},
		{`true`, "True"},
		{`null`, "None"},
		{`"plain"`, "plain"},
		{`["a", 1, 2.0, null, false]`, "['a', 1, 2.0, None, False]"},
		{`{"b": "it's", "a": {"x": "q\"x'"}}`, `{'a': {'x': 'q"x\''}, 'b': "it's"}`},
		{`["tab\tnew\nline\u0001é"]`, `['tab\tnew\nline\x01é']`},
	}
	for _, tt := range tests {
		v, err := parseJSON(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := pyStr(v); got != tt.want {
			t.Errorf("pyStr(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
	if got := pyStr(float64(2)); got != "2.0" {
		t.Errorf("pyStr(float64(2)) = %s, want 2.0 (a Go float is a Python float)", got)
	}
	if got := pyStr(2); got != "2" {
		t.Errorf("pyStr(int 2) = %s, want 2", got)
	}
}

func TestRoundPy(t *testing.T) {
	for _, tt := range []struct{ in, want float64 }{{2.0 / 3, 0.6667}, {0.5, 0.5}, {0.12345, 0.1235}, {1, 1}} {
		if got := roundPy(tt.in, 4); got != tt.want {
			t.Errorf("roundPy(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
