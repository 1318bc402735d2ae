package fakellm

import (
	"regexp"
	"strings"
)

// Text verdicts. A judge that does not use structured output (AgentV's
// llm-grader among them) describes the JSON object it wants in its prompt
// and parses the reply's text. TextVerdict answers such a prompt with a
// passing verdict in the shape the prompt names, so that a client that
// parses plain-text verdicts gets one it accepts, as deterministically as
// the schema-generated answers of structured requests:
//
//   - a prompt naming "checks" and "satisfied": every listed item is
//     satisfied;
//   - a prompt naming "checks" and "score": every listed item scores 10
//     (the top of a 0-10 range);
//   - a prompt naming "score": a score of 1 with one passed assertion.
//
// Items are found as prompt lines "- [ID] ..." or "### Criterion: ID", or
// as "id": "ID" in items written as JSON. An ID the client did not list is
// ignored by it, so a line that only looks like an item costs nothing.

var (
	listedItem   = regexp.MustCompile(`(?m)^\s*-\s*\[([^\]\n]+)\]`)
	criterionRow = regexp.MustCompile(`(?m)^#+\s*Criterion:\s*(\S+)`)
	jsonItemID   = regexp.MustCompile(`"id"\s*:\s*"([^"\n]+)"`)
)

// TextVerdict is the reply to a plain-text judge request: JSON in the shape
// its prompt asks for, or the default answer when the prompt names no
// verdict fields.
func TextVerdict(req *Request) Reply {
	text := req.Text()
	has := func(key string) bool { return strings.Contains(text, `"`+key+`"`) }
	switch {
	case has("checks") && (has("satisfied") || has("score")):
		satisfied := has("satisfied")
		var checks []map[string]any
		seen := map[string]bool{}
		// The items, from the prompt's material: not from a system
		// message, where the shape's own example ids are.
		var items strings.Builder
		for _, m := range req.Messages {
			if m.Role != "system" {
				items.WriteString(m.Text())
				items.WriteByte('\n')
			}
		}
		for _, re := range []*regexp.Regexp{listedItem, criterionRow, jsonItemID} {
			for _, m := range re.FindAllStringSubmatch(items.String(), -1) {
				id := strings.TrimSpace(m[1])
				if id == "" || seen[id] {
					continue
				}
				seen[id] = true
				c := map[string]any{"id": id, "reasoning": "The fake judge passes every item."}
				if satisfied {
					c["satisfied"] = true
				} else {
					c["score"] = 10
				}
				checks = append(checks, c)
			}
		}
		if checks == nil {
			checks = []map[string]any{}
		}
		return Reply{JSON: map[string]any{"checks": checks, "overall_reasoning": "The fake judge passes every item."}}
	case has("score"):
		return Reply{JSON: map[string]any{"score": 1, "assertions": []any{map[string]any{"text": "fake check", "passed": true, "evidence": "The fake judge passes every check."}}}}
	}
	return Reply{}
}

// PassingVerdict answers a judge request: a structured one with JSON from
// its schema that passes (GeneratePassing), a plain-text one with
// TextVerdict.
func PassingVerdict(req *Request) Reply {
	if rf := req.ResponseFormat; rf != nil {
		if rf.Type == "json_schema" && rf.JSONSchema != nil {
			return Reply{JSON: GeneratePassing(rf.JSONSchema.Schema)}
		}
		return Reply{}
	}
	return TextVerdict(req)
}

// IsModel matches requests for one of models.
func IsModel(models ...string) func(*Request) bool {
	return func(r *Request) bool {
		for _, m := range models {
			if r.Model == m {
				return true
			}
		}
		return false
	}
}

// IsTextJudge matches a request for one of models that asks for no
// structured output: a judge that reads its verdict from plain text.
func IsTextJudge(models ...string) func(*Request) bool {
	return func(r *Request) bool {
		if r.ResponseFormat != nil {
			return false
		}
		for _, m := range models {
			if r.Model == m {
				return true
			}
		}
		return false
	}
}
