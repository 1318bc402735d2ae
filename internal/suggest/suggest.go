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
	norm := func(s string) string { return strings.ReplaceAll(strings.ToLower(s), "-", "_") }
	w := norm(word)
	best, bestD := "", 1<<30
	for _, c := range candidates {
		d := Levenshtein(w, norm(c))
		if d < bestD {
			best, bestD = c, d
		}
	}
	limit := 2
	switch n := utf8.RuneCountInString(word); {
	case n <= 2:
		limit = 0
	case n <= 4:
		limit = 1
	}
	if bestD <= limit || (best != "" && strings.Contains(norm(best), w) && len(w) >= 4) {
		return best
	}
	return ""
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
