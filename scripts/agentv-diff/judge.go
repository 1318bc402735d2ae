package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/agenteval/agenteval/internal/fakellm"
)

// The judges' prompts are each tool's own text, so they are not compared.
// What is compared is the material that must reach the judge: the test's
// question, the reply, the reference answer, the criteria and rubric
// items. Each tool's prompt is cut into its pieces of material, and each
// piece is looked for, line by line, in everything the other tool sent to
// its judge for the same test.
//
// AgentV marks its pieces with section headers, "[[ ## criteria ## ]]" and
// the like; a grader with its own prompt template has none, and then its
// whole prompt is the piece. agenteval quotes its pieces in blocks whose
// tags carry a nonce, <criterion key="c1" id="NONCE">...</criterion
// id="NONCE">, the conversation's messages each in a block of its own.

// piece is one piece of material in a judge prompt.
type piece struct {
	name string // AgentV's section, or agenteval's block
	text string
}

var (
	sectionHeader = regexp.MustCompile(`(?m)^\[\[ ## ([a-z_]+) ## \]\]\s*$`)
	nonceAttr     = regexp.MustCompile(`<[a-z_]+(?: [a-z_]+="[^"]*")* id="([0-9a-f]{8,})">`)
	nameAttr      = regexp.MustCompile(` name="([^"]*)"`)
	// fileName is a line that is only a file's name or path.
	fileName = regexp.MustCompile(`^[\w./-]+\.(md|txt|ts|js|py|yaml|json)$`)
	// roleMarker is how AgentV labels the messages of a question, and
	// rolePrefix how it labels a transcript's lines.
	roleMarker = regexp.MustCompile(`^@\[[A-Za-z_ ]+\]:$`)
	rolePrefix = regexp.MustCompile(`^(system|user|assistant|tool): `)
	// AgentV's labels of rubric items and score ranges, and its lines
	// that only frame them.
	itemLabel  = regexp.MustCompile(`^(- \[[^\]]+\](?: \([^)]*\))*: |Description: |- Score [0-9-]+: )`)
	itemHeader = regexp.MustCompile(`^(### Criterion: .*|Score ranges:|Operator: .*)$`)
	// jsonMember is a line of an object written as JSON: material in
	// another form than the file's YAML, not a tool's own words.
	jsonMember = regexp.MustCompile(`^"[^"]+":\s*(.*?),?$`)
)

// agentvPieces cuts AgentV's judge prompts into pieces: the sections of
// the user prompt, or the whole prompt when it has none.
func agentvPieces(reqs []fakellm.LogEntry) []piece {
	var out []piece
	for _, r := range reqs {
		text := userText(r)
		locs := sectionHeader.FindAllStringSubmatchIndex(text, -1)
		if len(locs) == 0 {
			out = append(out, piece{"prompt", text})
			continue
		}
		for i, l := range locs {
			end := len(text)
			if i+1 < len(locs) {
				end = locs[i+1][0]
			}
			body := strings.TrimSpace(text[l[1]:end])
			if body != "" {
				out = append(out, piece{text[l[2]:l[3]], body})
			}
		}
	}
	return out
}

// agenteval's blocks, by the nonce of each request.
func agentevalPieces(reqs []fakellm.LogEntry) []piece {
	var out []piece
	for _, r := range reqs {
		text := userText(r)
		m := nonceAttr.FindStringSubmatch(text)
		if m == nil {
			out = append(out, piece{"prompt", text})
			continue
		}
		out = append(out, blocks(text, m[1])...)
	}
	return out
}

// blocks finds the blocks under nonce, outermost first; a conversation
// block is given as its messages' blocks.
func blocks(text, nonce string) []piece {
	open := regexp.MustCompile(`<([a-z_]+)((?: [a-z_]+="[^"]*")*) id="` + regexp.QuoteMeta(nonce) + `">`)
	var out []piece
	for len(text) > 0 {
		loc := open.FindStringSubmatchIndex(text)
		if loc == nil {
			break
		}
		name := text[loc[2]:loc[3]]
		closeTag := "</" + name + ` id="` + nonce + `">`
		label := name
		if m := nameAttr.FindStringSubmatch(text[loc[4]:loc[5]]); m != nil {
			// A template variable's block: <var name="rubric" ...>.
			label = name + " " + m[1]
		}
		end := strings.Index(text[loc[1]:], closeTag)
		if end < 0 {
			break
		}
		body := text[loc[1] : loc[1]+end]
		text = text[loc[1]+end+len(closeTag):]
		// A block of blocks (a conversation, a reply, a quoted input) is
		// given as the blocks it holds.
		if inner := blocks(body, nonce); len(inner) > 0 {
			for i := range inner {
				inner[i].name = label + "/" + inner[i].name
			}
			out = append(out, inner...)
			continue
		}
		if b := strings.TrimSpace(body); b != "" {
			out = append(out, piece{label, b})
		}
	}
	return out
}

func userText(r fakellm.LogEntry) string {
	var parts []string
	for _, m := range r.Messages {
		if m.Role != "system" {
			parts = append(parts, m.Content)
		}
	}
	return strings.Join(parts, "\n")
}

// normalize makes texts comparable across the two prompt formats: tag
// imitations unescaped, and white space left out, so that the same JSON
// indented otherwise, or a text wrapped otherwise, is the same material.
func normalize(s string) string {
	s = strings.ReplaceAll(s, "&lt;", "<")
	return strings.Join(strings.Fields(s), "")
}

// normalizeLine is normalize for one line looked for: without a trailing
// comma either, so that a JSON member is found whatever its place.
func normalizeLine(s string) string {
	return strings.TrimSuffix(normalize(s), ",")
}

// missingLines are the lines of p that the haystack (normalized) does not
// hold, and how many lines were looked for. Role markers, and lines of
// punctuation only, are not material.
func missingLines(p piece, haystack string) (missing []string, total int) {
	for _, line := range strings.Split(p.text, "\n") {
		line = rolePrefix.ReplaceAllString(strings.TrimSpace(line), "")
		line = itemLabel.ReplaceAllString(line, "")
		if roleMarker.MatchString(line) || itemHeader.MatchString(line) {
			continue
		}
		if m := jsonMember.FindStringSubmatch(line); m != nil {
			// A member of an object written as JSON: its text is the
			// material, looked for as it is and as text. Ids, weights,
			// flags and short values each tool shows its own way, or not
			// at all.
			var v string
			if json.Unmarshal([]byte(m[1]), &v) != nil || len(v) < 12 {
				continue
			}
			if strings.Contains(haystack, normalizeLine(m[1])) {
				total++
				continue
			}
			line = v
		}
		n := normalizeLine(line)
		if n == "" || strings.Trim(n, "[]{}(),:;`'\"-*#=.|") == "" {
			continue
		}
		total++
		if !strings.Contains(haystack, n) {
			missing = append(missing, line)
		}
	}
	return missing, total
}

// compareJudge checks that the material each tool sent its judge reached
// the other's judge too.
// sources are the normalized texts material comes from (the examples'
// files, the agent's replies): material found in neither the other tool's
// prompts nor the sources is the tool's own text, not the test's.
func compareJudge(tc *TestComparison, av, ae []fakellm.LogEntry, src sources, skipped string) {
	switch {
	case len(av) == 0 && len(ae) == 0:
		return
	case skipped != "" && (len(av) == 0 || len(ae) == 0):
		tc.add(aspectJudge, skipped+" (see Scores), before or without calling a judge", "")
		return
	case len(ae) == 0:
		tc.add(aspectJudge, "only AgentV calls a judge", fmt.Sprintf("AgentV %d judge calls", len(av)))
		return
	case len(av) == 0:
		tc.add(aspectJudge, "only agenteval calls a judge", fmt.Sprintf("agenteval %d judge calls", len(ae)))
		return
	}
	haystack := func(rs []fakellm.LogEntry) string {
		var b strings.Builder
		for _, r := range rs {
			b.WriteString(normalize(userText(r)))
			b.WriteByte('\n')
		}
		return b.String()
	}
	avAll, aeAll := haystack(av), haystack(ae)
	check := func(from, to string, pieces []piece, other string) {
		seen := map[string]bool{}
		for _, p := range pieces {
			missing, total := missingLines(p, other)
			if len(missing) < total {
				// The piece is material that reached the other judge;
				// lines of it in neither the other's prompt nor the
				// examples are its tool's own wording around it.
				missing = slices.DeleteFunc(missing, func(l string) bool { return !src.has(l) })
			}
			if len(missing) == 0 {
				continue
			}
			how := "part of"
			if len(missing) == total {
				how = "all of"
			}
			c := fmt.Sprintf("%s's judge sees %s the %s, %s's does not", from, how, p.name, to)
			if !slices.ContainsFunc(missing, func(l string) bool { return !fileName.MatchString(l) }) {
				c = fmt.Sprintf("%s's judge sees a file's name as the %s, %s's does not", from, p.name, to)
			}
			if !slices.ContainsFunc(missing, src.has) && !jsonMember.MatchString(missing[0]) {
				// Not the test's material as it stands: material with the
				// tool's words added, or the tool's own text, told apart by
				// its first words.
				if n := normalizeLine(missing[0]); len(n) >= 30 && src.has(n[:30]) {
					c = fmt.Sprintf("%s's judge sees the %s with words of its own added", from, p.name)
				} else {
					c = fmt.Sprintf("%s's judge sees text of its own in the %s: %s", from, p.name, quote(firstWords(missing[0], 6)))
				}
			}
			if seen[c] {
				continue
			}
			seen[c] = true
			tc.add(aspectJudge, c, fmt.Sprintf("%d of %d lines missing, such as %s", len(missing), total, quote(missing[0])))
		}
	}
	check("AgentV", "agenteval", agentvPieces(av), aeAll)
	check("agenteval", "AgentV", agentevalPieces(ae), avAll)
}

// sources are normalized texts that material comes from.
type sources []string

// has says whether a line is in one of the texts.
func (s sources) has(line string) bool {
	n := normalizeLine(line)
	for _, t := range s {
		if strings.Contains(t, n) {
			return true
		}
	}
	return false
}

// firstWords is the first n words of s.
func firstWords(s string, n int) string {
	w := strings.Fields(s)
	if len(w) > n {
		w = append(w[:n], "…")
	}
	return strings.Join(w, " ")
}
