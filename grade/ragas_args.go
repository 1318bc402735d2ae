package grade

import (
	"fmt"
	"regexp"
	"strings"
)

// Ragas's ToolCallAccuracy compares each argument with its
// arg_comparison_metric, a single-turn metric scored on
// SingleTurnSample(response=str(predicted), reference=str(expected))
// (ragas/metrics/_tool_call_accuracy.py, _get_arg_score). The ones Ragas
// ships that need no model (ragas/metrics/_string.py) are:
//
//   - ExactMatch, the default: float(reference == response);
//   - StringPresence: float(reference in response);
//   - NonLLMStringSimilarity(distance_measure=...): 1 -
//     rapidfuzz.distance.<measure>.normalized_distance(reference,
//     response), for levenshtein (the default), hamming, jaro and
//     jaro_winkler.

// The comparisons.
const (
	ArgExactMatch      = "exact_match"
	ArgStringPresence  = "string_presence"
	ArgStringSimilarty = "non_llm_string_similarity"
)

// The distance measures of non_llm_string_similarity.
const (
	DistanceLevenshtein = "levenshtein"
	DistanceHamming     = "hamming"
	DistanceJaro        = "jaro"
	DistanceJaroWinkler = "jaro_winkler"
)

// argComparison scores one argument: the expected value's str() against
// the call's.
type argComparison struct {
	metric, measure string
	// threshold, when set, turns a similarity into 1 (at or above it) or
	// 0: our addition, off by default.
	threshold *float64
}

// metricNames maps every accepted spelling of a comparison, Ragas's class
// names included, to ours.
var metricNames = map[string]string{
	"exactmatch": ArgExactMatch, "stringpresence": ArgStringPresence,
	"nonllmstringsimilarity": ArgStringSimilarty, "stringsimilarity": ArgStringSimilarty,
}

var measureNames = map[string]string{
	"levenshtein": DistanceLevenshtein, "hamming": DistanceHamming, "jaro": DistanceJaro, "jarowinkler": DistanceJaroWinkler,
}

// comparisonCall reads Ragas's constructor form,
// NonLLMStringSimilarity(distance_measure=DistanceMeasure.JARO).
var comparisonCall = regexp.MustCompile(`^\s*([A-Za-z_]+)\s*(?:\(\s*(?:distance_measure\s*=\s*(?:DistanceMeasure\.)?["']?([A-Za-z_]+)["']?)?\s*\))?\s*$`)

func squash(s string) string {
	return strings.ToLower(strings.NewReplacer("_", "", "-", "", " ", "").Replace(s))
}

// parseArgComparison reads arg_comparison_metric (our name or Ragas's class,
// with its distance_measure argument if any), distance_measure and
// arg_threshold.
func parseArgComparison(metric, measure string, threshold *float64) (argComparison, error) {
	c := argComparison{metric: ArgExactMatch, threshold: threshold}
	inner := ""
	if strings.TrimSpace(metric) != "" {
		m := comparisonCall.FindStringSubmatch(metric)
		name := ""
		if m != nil {
			name, inner = metricNames[squash(m[1])], m[2]
		}
		if name == "" {
			return c, fmt.Errorf("arg_comparison_metric %q is not one of exact_match, non_llm_string_similarity, string_presence (or Ragas's ExactMatch(), NonLLMStringSimilarity(distance_measure=DistanceMeasure.JARO), StringPresence())", metric)
		}
		c.metric = name
	}
	for _, given := range []string{inner, measure} {
		if strings.TrimSpace(given) == "" {
			continue
		}
		name, ok := measureNames[squash(given)]
		if !ok {
			return c, fmt.Errorf("distance_measure %q is not one of levenshtein, hamming, jaro, jaro_winkler", given)
		}
		if c.measure != "" && c.measure != name {
			return c, fmt.Errorf("distance_measure is %s in arg_comparison_metric and %s in distance_measure; give it once", c.measure, name)
		}
		c.measure = name
	}
	switch {
	case c.measure != "" && c.metric != ArgStringSimilarty:
		return c, fmt.Errorf("distance_measure applies to arg_comparison_metric=non_llm_string_similarity, not %s", c.metric)
	case c.metric == ArgStringSimilarty && c.measure == "":
		c.measure = DistanceLevenshtein
	}
	if threshold != nil && !(*threshold >= 0 && *threshold <= 1) {
		return c, fmt.Errorf("arg_threshold %v is outside [0, 1]", *threshold)
	}
	return c, nil
}

// score compares reference (the expected argument's str()) with response
// (the call's), as the Ragas metric does.
func (c argComparison) score(reference, response string) float64 {
	var s float64
	switch c.metric {
	case ArgStringPresence:
		s = boolScore(strings.Contains(response, reference))
	case ArgStringSimilarty:
		s = 1 - normalizedDistance(c.measure, []rune(reference), []rune(response))
	default:
		s = boolScore(reference == response)
	}
	if c.threshold != nil {
		s = boolScore(s >= *c.threshold)
	}
	return s
}

func (c argComparison) String() string {
	if c.metric == ArgStringSimilarty {
		return c.metric + "(" + c.measure + ")"
	}
	return c.metric
}

func boolScore(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// normalizedDistance is rapidfuzz's normalized_distance for a measure, on
// code points as Python strings are (rapidfuzz/distance/*_py.py).
func normalizedDistance(measure string, a, b []rune) float64 {
	switch measure {
	case DistanceHamming:
		// Hamming, pad=True: differing positions plus the length
		// difference, over the longer length.
		n := max(len(a), len(b))
		if n == 0 {
			return 0
		}
		d := n
		for i := range min(len(a), len(b)) {
			if a[i] == b[i] {
				d--
			}
		}
		return float64(d) / float64(n)
	case DistanceJaro:
		return 1 - jaro(a, b)
	case DistanceJaroWinkler:
		return 1 - jaroWinkler(a, b)
	}
	n := max(len(a), len(b))
	if n == 0 {
		return 0
	}
	return float64(levenshtein(a, b)) / float64(n)
}

// levenshtein is the edit distance with unit costs.
func levenshtein(a, b []rune) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// jaro is rapidfuzz's Jaro.similarity: both empty is 1, one empty is 0; the
// match window is half the longer length less one, and the part of the
// longer string that no window reaches is cut off first.
func jaro(p, t []rune) float64 {
	pl, tl := len(p), len(t)
	if pl == 0 && tl == 0 {
		return 1
	}
	if pl == 0 || tl == 0 {
		return 0
	}
	if pl == 1 && tl == 1 {
		return boolScore(p[0] == t[0])
	}
	bound := 0
	if tl > pl {
		bound = tl/2 - 1
		if tl > pl+bound {
			t = t[:pl+bound]
		}
	} else {
		bound = pl/2 - 1
		if pl > tl+bound {
			p = p[:tl+bound]
		}
	}
	pFlags := make([]bool, pl)
	tFlags := make([]bool, tl)
	common := 0
	for i, c := range p {
		lo, hi := max(0, i-bound), min(i+bound, tl-1)
		for j := lo; j <= hi; j++ {
			if !tFlags[j] && t[j] == c {
				pFlags[i], tFlags[j] = true, true
				common++
				break
			}
		}
	}
	if common == 0 {
		return 0
	}
	k, trans := 0, 0
	for i, f := range pFlags {
		if !f {
			continue
		}
		j := k
		for ; j < tl; j++ {
			if tFlags[j] {
				k = j + 1
				break
			}
		}
		if p[i] != t[j] {
			trans++
		}
	}
	trans /= 2
	m := float64(common)
	return (m/float64(pl) + m/float64(tl) + (m-float64(trans))/m) / 3
}

// jaroWinkler is rapidfuzz's JaroWinkler.similarity with its default
// prefix_weight of 0.1: a common prefix of up to 4 raises a Jaro
// similarity above 0.7.
func jaroWinkler(a, b []rune) float64 {
	prefix := 0
	for prefix < min(len(a), len(b), 4) && a[prefix] == b[prefix] {
		prefix++
	}
	sim := jaro(a, b)
	if sim > 0.7 {
		sim = min(sim+float64(prefix)*0.1*(1-sim), 1)
	}
	return sim
}
