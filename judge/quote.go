package judge

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/agenteval/agenteval"
)

// Untrusted text (what the agent wrote, tool arguments and results, user
// messages, references, criteria, a test's vars) reaches a model only inside
// a block whose tags carry a nonce drawn afresh for each call:
//
//	<reply id="3f9a0c1d7b2e">…</reply id="3f9a0c1d7b2e">
//
// The text cannot know the nonce, so it cannot close its block; and any tag
// of ours it imitates, open or closing, with any id or none, has its "<"
// written as "&lt;", so that even a lucky guess closes nothing. The prompts
// tell the model both facts. The nonce changes every call, so cache keys
// hash the prompt with the nonce masked (cache.WithNonce).

// Tags are the block names the prompts may use. Quoting into a block of
// any other name is an error: the neutraliser must know every tag that
// could be imitated.
var Tags = []string{
	// judge prompts
	"conversation", "reply", "reference", "criterion", "level", "desired", "end_state",
	"task", "instruction", "persona", "closing", "topic", "reference_topic",
	// the messages of a transcript
	"user", "assistant", "system", "tool_call", "tool_result", "message",
	// llm_grader template variables
	"input", "output", "criteria", "expected_output", "var",
	// the simulated user's view of the agent, and its stop rule
	"assistant_message", "terminating_condition",
}

var (
	tagSet = func() map[string]bool {
		m := map[string]bool{}
		for _, t := range Tags {
			m[t] = true
		}
		return m
	}()
	// tagLike finds the start of anything a model could read as one of our
	// tags: "<", or a full-width or small look-alike, then an optional "/",
	// then one of the names as a whole word, in any case.
	tagLike = func() *regexp.Regexp {
		names := append([]string(nil), Tags...)
		// Longer names first, so that "assistant_message" is not read as
		// "assistant".
		sort.Slice(names, func(i, j int) bool { return len(names[i]) > len(names[j]) })
		return regexp.MustCompile(`(?i)(?:<|＜|﹤)\s*/?\s*(?:` + strings.Join(names, "|") + `)\b`)
	}()
	safeAttr = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)
)

// NewNonce draws a block id: 12 hex digits from crypto/rand, 48 bits that
// the quoted text would have to guess in one try.
func NewNonce() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Neutralize breaks every imitation of one of our tags in s, open or
// closing, by writing its "<" as "&lt;". Everything else is left as it was:
// HTML, Markdown fences and JSON in a reply are evidence and stay readable.
func Neutralize(s string) string {
	if !strings.ContainsAny(s, "<＜﹤") {
		return s
	}
	return tagLike.ReplaceAllStringFunc(s, func(m string) string {
		for i, r := range m {
			if r == '<' || r == '＜' || r == '﹤' {
				return m[:i] + "&lt;" + m[i+len(string(r)):]
			}
		}
		return m
	})
}

// Quote renders text in a block named tag under nonce, neutralised. Short
// text stays on one line; text with line breaks starts on its own line.
func Quote(tag, nonce, text string) string {
	var b strings.Builder
	writeBlock(&b, tag, "", nonce, text)
	return b.String()
}

func writeBlock(b *strings.Builder, tag, attrs, nonce, text string) {
	text = Neutralize(noNUL(text))
	b.WriteString("<" + tag + attrs + ` id="` + nonce + `">`)
	if strings.Contains(text, "\n") {
		b.WriteString("\n" + strings.Trim(text, "\n") + "\n")
	} else {
		b.WriteString(text)
	}
	b.WriteString("</" + tag + ` id="` + nonce + `">`)
}

// writeMessages renders each message as a block of its own, so that no
// message can pass for another speaker: the user's words, the assistant's
// words, each tool call with its arguments, each tool result.
func writeMessages(b *strings.Builder, nonce string, conv agenteval.Conversation) {
	first := true
	line := func() {
		if !first {
			b.WriteByte('\n')
		}
		first = false
	}
	for _, m := range conv {
		switch m.Role {
		case agenteval.RoleUser, agenteval.RoleSystem:
			line()
			writeBlock(b, string(m.Role), "", nonce, m.Content)
		case agenteval.RoleTool:
			line()
			writeBlock(b, "tool_result", "", nonce, m.Content)
		case agenteval.RoleAssistant:
			if m.Content != "" || len(m.ToolCalls) == 0 {
				line()
				writeBlock(b, "assistant", "", nonce, m.Content)
			}
			for _, c := range m.ToolCalls {
				line()
				writeBlock(b, "tool_call", "", nonce, c.Name+" "+c.ArgsText())
			}
		default:
			line()
			writeBlock(b, "message", "", nonce, string(m.Role)+": "+m.Content)
		}
	}
}

// writeMessagesBlock renders a conversation's messages, without turn
// headers, inside a block named tag.
func writeMessagesBlock(b *strings.Builder, tag, attrs, nonce string, conv agenteval.Conversation) {
	b.WriteString("<" + tag + attrs + ` id="` + nonce + `">` + "\n")
	writeMessages(b, nonce, conv)
	b.WriteString("\n</" + tag + ` id="` + nonce + `">`)
}

// writeTranscript renders a conversation turn by turn, each turn headed
// "[Turn N]" so that verdicts can cite turns, inside a block named tag.
func writeTranscript(b *strings.Builder, tag, nonce string, conv agenteval.Conversation) {
	b.WriteString("<" + tag + ` id="` + nonce + `">` + "\n")
	for i, t := range conv.Turns() {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(b, "[Turn %d]\n", i+1)
		writeMessages(b, nonce, t)
		b.WriteByte('\n')
	}
	b.WriteString("</" + tag + ` id="` + nonce + `">`)
}

// Part is a piece of prompt text assembled from an evaluation author's
// words and quoted material, such as an llm_grader template with its
// variables filled in.
type Part struct {
	// Tag names the block the part is quoted in; empty means Text is the
	// author's own words, passed to the judge as written.
	Tag string
	// Name, when set, is the block's name attribute (a test var's name).
	Name string
	Text string
	// Conversation, when set, is quoted as a transcript instead of Text.
	Conversation agenteval.Conversation
}

// Parts is a prompt text made of parts.
type Parts []Part

func checkTag(tag string) error {
	if !tagSet[tag] {
		return fmt.Errorf("block tag %q is not one of judge.Tags, so imitations of it would not be neutralised", tag)
	}
	return nil
}

// funcs are the template functions of a prompt rendered under nonce:
//
//	{{nonce}}                       the call's block id
//	{{quote "reference" .Reference}} a string (or a conversation's messages) in a block
//	{{transcript "conversation" .Transcript}} a conversation, turn by turn, in a block
//	{{keyed "criterion" .Criteria}} one block per KeyedCriterion, with its key
//	{{instructions .Instructions}}  Parts: the author's words and quoted variables
//	                                (a plain string is the author's words)
func funcs(nonce string) map[string]any {
	return map[string]any{
		"nonce": func() string { return nonce },
		"quote": func(tag string, v any) (string, error) {
			if err := checkTag(tag); err != nil {
				return "", err
			}
			var b strings.Builder
			switch v := v.(type) {
			case agenteval.Conversation:
				writeMessagesBlock(&b, tag, "", nonce, v)
			default:
				writeBlock(&b, tag, "", nonce, text(v))
			}
			return b.String(), nil
		},
		"transcript": func(tag string, v any) (string, error) {
			if err := checkTag(tag); err != nil {
				return "", err
			}
			var b strings.Builder
			if conv, ok := v.(agenteval.Conversation); ok {
				writeTranscript(&b, tag, nonce, conv)
			} else {
				writeBlock(&b, tag, "", nonce, text(v))
			}
			return b.String(), nil
		},
		"keyed": func(tag string, items []KeyedCriterion) (string, error) {
			if err := checkTag(tag); err != nil {
				return "", err
			}
			var b strings.Builder
			for i, it := range items {
				if i > 0 {
					b.WriteByte('\n')
				}
				writeBlock(&b, tag, ` key="`+attr(it.Key)+`"`, nonce, it.Text)
			}
			return b.String(), nil
		},
		"instructions": func(v any) (string, error) {
			ps, ok := v.(Parts)
			if !ok {
				ps = Parts{{Text: text(v)}}
			}
			var b strings.Builder
			for _, p := range ps {
				if p.Tag == "" {
					b.WriteString(noNUL(p.Text))
					continue
				}
				if err := checkTag(p.Tag); err != nil {
					return "", err
				}
				attrs := ""
				if p.Name != "" {
					attrs = ` name="` + attr(p.Name) + `"`
				}
				if p.Conversation != nil {
					writeMessagesBlock(&b, p.Tag, attrs, nonce, p.Conversation)
					continue
				}
				writeBlock(&b, p.Tag, attrs, nonce, p.Text)
			}
			return b.String(), nil
		},
	}
}

// noNUL replaces NUL bytes, which no prompt needs, so that no text can
// carry the placeholder a template stands in for the nonce.
func noNUL(s string) string {
	if strings.IndexByte(s, 0) < 0 {
		return s
	}
	return strings.ReplaceAll(s, "\x00", "\uFFFD")
}

// attr makes a value safe inside a tag's double quotes: keys and var names
// are ours or identifiers, but a bad one must not open a hole.
func attr(s string) string {
	if safeAttr.MatchString(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if r < 128 && (r == '_' || r == '-' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
		if b.Len() >= 64 {
			break
		}
	}
	return b.String()
}

func text(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case fmt.Stringer:
		return v.String()
	}
	return fmt.Sprint(v)
}

// nonceMark stands for the nonce in cache keys.
const nonceMark = "{nonce}"

// Normalize replaces nonce in s by a fixed mark, so that two renderings of
// the same material compare equal (the cache masks it the same way).
func Normalize(s, nonce string) string {
	if nonce == "" {
		return s
	}
	return strings.ReplaceAll(s, nonce, nonceMark)
}
