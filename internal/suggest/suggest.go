// Package suggest finds the known name a user probably meant, for "did you
// mean" hints in error messages. It imports only the standard library.
package suggest

import (
	"sort"
	"strings"
	"unicode/utf8"
)

// Levenshtein returns the edit distance between a and b, counted in
// characters.
func Levenshtein(a, b string) int {
	if a == b {
		return 0
	}
	ra, rb := []rune(a), []rune(b)
	if len(ra) == 0 {
		return len(rb)
	}
	if len(rb) == 0 {
		return len(ra)
	}
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// Closest returns the candidate nearest to word when it is near enough to be
// a likely typo, and "" otherwise. Case and the difference between '-' and
// '_' are ignored.
func Closest(word string, candidates []string) string {
	w := norm(word)
	best, bestD := "", 1<<30
	for _, c := range candidates {
		d := Levenshtein(w, norm(c))
		if d < bestD {
			best, bestD = c, d
		}
	}
	if bestD <= typoLimit(word) || (best != "" && strings.Contains(norm(best), w) && len(w) >= 4) {
		return best
	}
	return ""
}

// Typo returns the candidate that word is most likely a misspelling of:
// the nearest one within a small edit distance (case and the difference
// between '-' and '_' aside), or "" when none is that near. Unlike Closest
// it does not count a word found inside a candidate, so a shorter name of
// its own (output beside expected_output) is not taken for a slip of the
// keyboard.
func Typo(word string, candidates []string) string {
	w := norm(word)
	best, bestD := "", 1<<30
	for _, c := range candidates {
		if d := Levenshtein(w, norm(c)); d < bestD {
			best, bestD = c, d
		}
	}
	if bestD <= typoLimit(word) {
		return best
	}
	return ""
}

func norm(s string) string { return strings.ReplaceAll(strings.ToLower(s), "-", "_") }

// typoLimit is how many edits still make a likely typo of a word this
// long: none for one or two letters (every short name is near another),
// one up to four, two beyond.
func typoLimit(word string) int {
	switch n := utf8.RuneCountInString(word); {
	case n <= 2:
		return 0
	case n <= 4:
		return 1
	}
	return 2
}

// Nearest returns up to n candidates closest to word, nearest first; ties
// keep the candidates' order. It suggests even when nothing is close, for
// lists such as the test ids a filter might have meant.
func Nearest(word string, candidates []string, n int) []string {
	type scored struct {
		c string
		d int
	}
	list := make([]scored, 0, len(candidates))
	lw := strings.ToLower(word)
	for _, c := range candidates {
		d := Levenshtein(lw, strings.ToLower(c))
		if strings.Contains(strings.ToLower(c), strings.Trim(lw, "*?[]")) {
			d = 0 // the filter's text is in the id
		}
		list = append(list, scored{c, d})
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].d < list[j].d })
	out := make([]string, 0, n)
	for _, s := range list[:min(n, len(list))] {
		out = append(out, s.c)
	}
	return out
}
