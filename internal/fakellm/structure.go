package fakellm

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Structure checking. agenteval quotes untrusted material (transcripts,
// references, criteria) in blocks whose tags carry a per-call nonce:
//
//	<reply id="3f9a0c1d7b2e">…</reply id="3f9a0c1d7b2e">
//
// and neutralises every imitation of its tags inside the material. The
// structure-checking mode answers like a judge only while that holds, so a
// test fails as soon as any prompt lets material out of its block.

var (
	// realTag is a tag as the prompts write them: a name, attributes in
	// double quotes, one of them the id.
	realTag = regexp.MustCompile(`<(/?)([a-z_]+)((?:\s+[a-z_]+="[^"<>]*")*)\s*>`)
	idAttr  = regexp.MustCompile(`\bid="([^"]*)"`)
	keyAttr = regexp.MustCompile(`\bkey="([^"]*)"`)
	quoted  = regexp.MustCompile(`"([^"]+)"`)
)

// span is a block's content, between its tags.
type span struct {
	name       string
	key        string
	start, end int
	depth      int // 0 for an outermost block
}

// parseBlocks finds the blocks of text under nonce: their contents, and
// the offsets where real tags start. It fails on a tag with another id and
// on blocks that do not nest or close.
func parseBlocks(text, nonce string) ([]span, map[int]bool, error) {
	var spans []span
	real := map[int]bool{}
	var stack []span
	for _, loc := range realTag.FindAllStringSubmatchIndex(text, -1) {
		attrs := text[loc[6]:loc[7]]
		id := idAttr.FindStringSubmatch(attrs)
		if id == nil {
			continue
		}
		name := text[loc[4]:loc[5]]
		if id[1] != nonce {
			return nil, nil, fmt.Errorf("the tag %q carries id %q, not the prompt's %q: quoted text that imitates a tag was not neutralised", text[loc[0]:loc[1]], id[1], nonce)
		}
		real[loc[0]] = true
		if loc[3] > loc[2] { // closing
			if len(stack) == 0 || stack[len(stack)-1].name != name {
				open := "nothing"
				if len(stack) > 0 {
					open = "<" + stack[len(stack)-1].name + ">"
				}
				return nil, nil, fmt.Errorf("the closing tag </%s> at byte %d closes %s: the blocks do not nest", name, loc[0], open)
			}
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			top.end = loc[0]
			spans = append(spans, top)
			continue
		}
		sp := span{name: name, start: loc[1], depth: len(stack)}
		if k := keyAttr.FindStringSubmatch(attrs); k != nil {
			sp.key = k[1]
		}
		stack = append(stack, sp)
	}
	if len(stack) > 0 {
		return nil, nil, fmt.Errorf("the block <%s> is never closed", stack[len(stack)-1].name)
	}
	return spans, real, nil
}

// CheckPrompt checks the structure of a prompt: its system message and
// the messages after it that the caller wrote (not the model's own
// replies). It returns nil when
//
//   - the system message declares the block id (a tag with id="…");
//   - every tag with an id uses that id, and the blocks nest and close;
//   - no text imitates one of the prompt's tag names except the real tags
//     (in any case, with or without a slash or an id);
//   - every occurrence of each evidence string lies inside a block.
func CheckPrompt(system string, others []string, evidence ...string) error {
	nonce := promptNonce(system)
	if nonce == "" {
		return fmt.Errorf("the system message declares no block id: quoted material has no delimiters the model was told about")
	}
	if len(nonce) < 8 {
		return fmt.Errorf("block id %q is too short to be unguessable", nonce)
	}
	texts := append([]string{system}, others...)
	names := map[string]bool{}
	type parsed struct {
		spans []span
		real  map[int]bool // byte offsets where real tags start
	}
	all := make([]parsed, len(texts))
	for i, text := range texts {
		spans, real, err := parseBlocks(text, nonce)
		if err != nil {
			return fmt.Errorf("message %d: %w", i+1, err)
		}
		for _, sp := range spans {
			names[sp.name] = true
		}
		all[i] = parsed{spans, real}
	}
	list := make([]string, 0, len(names))
	for n := range names {
		list = append(list, regexp.QuoteMeta(n))
	}
	sort.Slice(list, func(i, j int) bool { return len(list[i]) > len(list[j]) })
	imitation := regexp.MustCompile(`(?i)(?:<|＜|﹤)\s*/?\s*(?:` + strings.Join(list, "|") + `)\b`)
	for i, text := range texts {
		for _, loc := range imitation.FindAllStringIndex(text, -1) {
			if !all[i].real[loc[0]] {
				return fmt.Errorf("message %d: %q imitates one of the prompt's tags %s and was not neutralised", i+1, excerpt(text, loc[0], loc[1]), where(all[i].spans, loc[0]))
			}
		}
		for _, ev := range evidence {
			if ev == "" {
				continue
			}
			for off := 0; ; {
				j := strings.Index(text[off:], ev)
				if j < 0 {
					break
				}
				at := off + j
				if !inside(all[i].spans, at, at+len(ev)) {
					return fmt.Errorf("message %d: quoted material %q appears outside every block: the prompt let it out", i+1, ev)
				}
				off = at + len(ev)
			}
		}
	}
	return nil
}

// promptNonce is the id of the first tag with one in the system message:
// the block id the prompt declares.
func promptNonce(system string) string {
	for _, m := range realTag.FindAllStringSubmatch(system, -1) {
		if id := idAttr.FindStringSubmatch(m[3]); id != nil {
			return id[1]
		}
	}
	return ""
}

func inside(spans []span, from, to int) bool {
	for _, s := range spans {
		if s.start <= from && to <= s.end {
			return true
		}
	}
	return false
}

func where(spans []span, at int) string {
	best := ""
	size := -1
	for _, s := range spans {
		if s.start <= at && at < s.end && (size < 0 || s.end-s.start < size) {
			best, size = s.name, s.end-s.start
		}
	}
	if best == "" {
		return "outside every block"
	}
	return "inside <" + best + ">"
}

func excerpt(s string, from, to int) string {
	to = min(len(s), to+24)
	return s[from:to]
}

// CheckStructure applies CheckPrompt to a request: its first system
// message, and the user and system messages after it. The assistant's
// messages (a judge's earlier, invalid reply) are the model's own words.
func CheckStructure(req *Request, evidence ...string) error {
	system := ""
	var others []string
	for _, m := range req.Messages {
		switch {
		case m.Role == "system" && system == "":
			system = m.Text()
		case m.Role == "system" || m.Role == "user":
			others = append(others, m.Text())
		}
	}
	return CheckPrompt(system, others, evidence...)
}

// StructureJudge is a reply for judge requests in structure-checking mode.
// When CheckStructure fails it answers 422 with the reason, so the judge
// call fails and the test sees why. When the structure holds it answers
// like a literal-minded judge: JSON generated from the schema, where each
// criterion with a phrase in double quotes (The reply gives "8pm".) passes
// only if that phrase occurs, in any case, in the quoted material under
// review (the conversation, reply, end state, input or output blocks), and
// every other criterion passes. Text outside the blocks never changes a
// verdict, which is what the prompts promise.
func StructureJudge(evidence ...string) Reply {
	return Reply{Func: func(req *Request) Reply {
		if err := CheckStructure(req, evidence...); err != nil {
			return Reply{Status: 422, ErrorMessage: "fakellm: prompt structure broken: " + err.Error()}
		}
		rf := req.ResponseFormat
		if rf == nil || rf.JSONSchema == nil {
			return Reply{}
		}
		v := Generate(rf.JSONSchema.Schema)
		decide(req, v)
		b, _ := json.Marshal(v)
		return Reply{Content: string(b)}
	}}
}

// material names the blocks a literal-minded judge searches for a
// criterion's phrase.
var material = map[string]bool{"conversation": true, "reply": true, "end_state": true, "input": true, "output": true}

func decide(req *Request, v any) {
	obj, ok := v.(map[string]any)
	if !ok {
		return
	}
	nonce := ""
	if len(req.Messages) > 0 {
		nonce = promptNonce(req.Messages[0].Text())
	}
	type criterion struct{ key, text string }
	var criteria []criterion
	var haystack strings.Builder
	for _, m := range req.Messages {
		if m.Role != "user" {
			continue
		}
		text := m.Text()
		spans, _, _ := parseBlocks(text, nonce)
		for _, s := range spans {
			switch {
			case s.depth > 0:
			case s.name == "criterion":
				criteria = append(criteria, criterion{s.key, text[s.start:s.end]})
			case material[s.name]:
				haystack.WriteString(strings.ToLower(text[s.start:s.end]))
				haystack.WriteByte('\n')
			}
		}
	}
	for _, c := range criteria {
		item, ok := obj[c.key].(map[string]any)
		if !ok {
			continue
		}
		if _, ok := item["passed"]; !ok {
			continue
		}
		m := quoted.FindStringSubmatch(c.text)
		if m == nil {
			item["passed"], item["reason"] = true, "fakellm: no phrase to look for"
			continue
		}
		found := strings.Contains(haystack.String(), strings.ToLower(m[1]))
		item["passed"] = found
		if found {
			item["reason"] = fmt.Sprintf("fakellm: %q is in the material", m[1])
		} else {
			item["reason"] = fmt.Sprintf("fakellm: %q is not in the material", m[1])
		}
	}
}
