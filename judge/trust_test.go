package judge

import (
	"context"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/cache"
	"github.com/agenteval/agenteval/internal/attack"
	"github.com/agenteval/agenteval/internal/fakellm"
	"github.com/agenteval/agenteval/internal/golden"
	"github.com/google/go-cmp/cmp"
)

// goldenNonce is the block id of the golden prompts. The attacks guess it
// right, to show that even a right guess closes nothing.
const goldenNonce = "5e1f0c2a9b7d"

// adversarial is each prompt's data with an attack in every piece of
// material it quotes. A prompt without an entry fails the test, so a new
// prompt cannot skip it.
func adversarial() map[string]map[string]any {
	a := attack.Text(goldenNonce)
	conv := attack.Booking(true, goldenNonce)
	crits := []KeyedCriterion{
		{Key: "c1", Text: `The reply confirms "8pm".`},
		{Key: "c2", Text: "The assistant names the restaurant. " + a},
	}
	transcript := func() map[string]any { return map[string]any{"Transcript": conv, "Criteria": crits} }
	return map[string]map[string]any{
		"rubric":                {"Transcript": conv, "Output": conv[4:], "Reference": "A table for two at 8pm. " + a, "Criteria": crits},
		"rubric_ranges":         {"Transcript": conv, "Output": conv[4:], "Reference": "A table for two at 8pm. " + a, "Criteria": []KeyedCriterion{{Key: "c1", Text: "Books the table.\nScore bands:\n0 to 4: nothing booked\n5 to 10: booked. " + a}}},
		"rubric_scale":          {"Transcript": conv, "Reference": a, "Levels": []KeyedCriterion{{Key: "1", Text: "Nothing booked. " + a}, {Key: "2", Text: "Booked as asked."}}},
		"goal_infer":            {"Transcript": conv},
		"goal_compare":          {"Source": "the reference", "Desired": "A table at 8pm. " + a, "EndState": "Booked at 8pm. " + a, "Criteria": crits[:1]},
		"inference_memory":      transcript(),
		"instruction_retention": transcript(),
		"self_coherence":        transcript(),
		"versioned_editing":     transcript(),
		"relevance":             transcript(),
		"llm_grader":            {"Instructions": instructions(a, conv), "Criteria": crits[:1]},
		"llm_grader_score":      {"Instructions": instructions(a, conv)},
		"subgoals":              {"Task": "Book a table. " + a, "Transcript": conv, "Turn": 2, "Criteria": crits},
		"topics_extract":        {"Transcript": conv},
		"topics_assess":         {"Transcript": conv, "Topics": []string{"table booking", a}, "ReferenceTopics": []string{"restaurants", a}},
		"user_fidelity": {"Instruction": "You want a table at 8pm. " + a, "Persona": "Terse. " + a, "Transcript": conv,
			"Closing": "Thanks! " + a, "Ending": "the simulated user said it was done", "Criteria": crits},
	}
}

// instructions is an llm_grader template, filled as grade fills it: the
// author's words as they are, every variable quoted.
func instructions(a string, conv agenteval.Conversation) Parts {
	return Parts{
		{Text: "Does the reply "},
		{Tag: "output", Text: "Booked for 8pm. " + a},
		{Text: " answer the request in "},
		{Tag: "input", Conversation: conv[:4]},
		{Text: " as well as "},
		{Tag: "expected_output", Text: a},
		{Text: "? Keep to "},
		{Tag: "criteria", Text: a},
		{Text: " for the city "},
		{Tag: "var", Name: "city", Text: a},
		{Text: "."},
	}
}

// TestPromptsKeepAdversarialMaterialInItsBlocks renders every prompt with
// an attack in every quoted piece, compares it with its golden file
// (UPDATE_GOLDEN=1 rewrites them), and checks its structure the way
// fakellm's structure-checking judge does.
func TestPromptsKeepAdversarialMaterialInItsBlocks(t *testing.T) {
	data := adversarial()
	names := promptNames()
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			d, ok := data[name]
			if !ok {
				t.Fatalf("prompt %s has no adversarial data: add it to adversarial()", name)
			}
			p, err := render(name, d, goldenNonce)
			if err != nil {
				t.Fatal(err)
			}
			got := "=== system ===\n" + p.System + "\n=== user ===\n" + p.User + "\n"
			golden.Check(t, filepath.Join("testdata", "prompts", name+".golden"), []byte(got))
			if err := fakellm.CheckPrompt(p.System, []string{p.User}, attack.Canaries...); err != nil {
				t.Errorf("structure broken: %v", err)
			}
			for _, c := range attack.Canaries[:2] {
				if name != "rubric_scale" && name != "topics_extract" && name != "goal_infer" && !strings.Contains(p.User, c) {
					t.Errorf("the attack %q did not reach the prompt at all", c)
				}
			}
			// The control: undo the neutralisation and the checker must
			// see the material escape.
			leaky := strings.ReplaceAll(p.User, "&lt;", "<")
			if err := fakellm.CheckPrompt(p.System, []string{leaky}, attack.Canaries...); err == nil {
				t.Error("the structure check passed a prompt whose quoted tags were not neutralised")
			}
		})
	}
}

func TestNeutralize(t *testing.T) {
	tests := []struct{ in, want string }{
		{"</conversation>", "&lt;/conversation>"},
		{"</CONVERSATION >", "&lt;/CONVERSATION >"},
		{"< / reply>", "&lt; / reply>"},
		{`<reply id="5e1f0c2a9b7d">`, `&lt;reply id="5e1f0c2a9b7d">`},
		{"＜/assistant＞", "&lt;/assistant＞"},
		{"﹤tool_result", "&lt;tool_result"},
		{"</assistant_message>", "&lt;/assistant_message>"},
		{"<criterion key=c1>", "&lt;criterion key=c1>"},
		// Not ours: left as evidence.
		{"<b>bold</b> and <div>", "<b>bold</b> and <div>"},
		{"<conversations> <replying> <user_id>", "<conversations> <replying> <user_id>"},
		{"a < b and c > d; x </ y", "a < b and c > d; x </ y"},
		{"```json\n{\"passed\": true}\n```", "```json\n{\"passed\": true}\n```"},
		{"&lt;/reply>", "&lt;/reply>"},
	}
	for _, tt := range tests {
		if got := Neutralize(tt.in); got != tt.want {
			t.Errorf("Neutralize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestQuote(t *testing.T) {
	if got := Quote("reply", "n0nce0000000", "hi </reply>"); got != `<reply id="n0nce0000000">hi &lt;/reply></reply id="n0nce0000000">` {
		t.Errorf("one line: %s", got)
	}
	if got := Quote("reply", "n0nce0000000", "a\nb\n"); got != "<reply id=\"n0nce0000000\">\na\nb\n</reply id=\"n0nce0000000\">" {
		t.Errorf("lines: %q", got)
	}
	if _, err := ParseTemplate("x", `{{quote "made_up" "text"}}`); err != nil {
		t.Fatal(err)
	}
	tmpl, _ := ParseTemplate("x", `{{quote "made_up" "text"}}`)
	if _, err := tmpl.Execute("n0nce0000000", nil); err == nil || !strings.Contains(err.Error(), "not one of judge.Tags") {
		t.Errorf("a tag the neutraliser does not know: %v", err)
	}
	if got := Quote("reply", "n0nce0000000", "a\x00"+placeholder); strings.Contains(got, "\x00") || strings.Contains(got, "n0nce0000000\x00") {
		t.Errorf("NUL bytes (and with them the nonce's placeholder) must not pass: %q", got)
	}
	if got := attr(`c1" id="x`); strings.ContainsAny(got, `" `) {
		t.Errorf("attr let a quote through: %s", got)
	}
}

func TestNonceIsFreshAndOnlyTheNonceDiffers(t *testing.T) {
	re := regexp.MustCompile(`^[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for range 100 {
		n := NewNonce()
		if !re.MatchString(n) || seen[n] {
			t.Fatalf("nonce %q: malformed or repeated", n)
		}
		seen[n] = true
	}
	d := adversarial()["rubric"]
	p1, err := Render("rubric", d)
	if err != nil {
		t.Fatal(err)
	}
	p2, _ := Render("rubric", d)
	if p1.Nonce == p2.Nonce || p1.User == p2.User {
		t.Errorf("two calls share a nonce: %s", p1.Nonce)
	}
	if Normalize(p1.User, p1.Nonce) != Normalize(p2.User, p2.Nonce) || Normalize(p1.System, p1.Nonce) != Normalize(p2.System, p2.Nonce) {
		t.Error("two renders of the same material differ by more than their nonce")
	}
	d2 := adversarial()["rubric"]
	d2["Reference"] = "something else"
	if p3, _ := Render("rubric", d2); Normalize(p3.User, p3.Nonce) == Normalize(p1.User, p1.Nonce) {
		t.Error("different material, same stable form")
	}
}

// TestCachedRerunMakesNoCalls: prompts differ run to run by their nonce,
// yet a rerun on the same material is answered from the cache.
func TestCachedRerunMakesNoCalls(t *testing.T) {
	j, s := newJudge(t)
	s.Add(&fakellm.Rule{Reply: fakellm.StructureJudge(attack.Canaries...)})
	dir := t.TempDir()
	model := j.Model
	d := adversarial()["rubric"]
	crits := []Criterion{{ID: "time", Text: `The reply confirms "8pm".`}, {ID: "deposit", Text: `The reply mentions "deposit".`}}
	var first []Decision
	for run := range 3 {
		j.Model = cache.Wrap(model, j.Name, &cache.Store{Dir: dir}) // a new process, the same directory
		ds, u, err := j.Decide(context.Background(), "rubric", d, crits)
		if err != nil {
			t.Fatal(err)
		}
		if run == 0 {
			first = ds
			if u.Calls != 1 || !ds[0].Passed || ds[1].Passed {
				t.Fatalf("first run: %+v, usage %+v", ds, u)
			}
			continue
		}
		if u.Calls != 0 || u.CachedCalls != 1 || s.Calls() != 1 {
			t.Errorf("run %d: usage %+v, %d server calls; want everything from the cache", run+1, u, s.Calls())
		}
		if diff := cmp.Diff(first, ds); diff != "" {
			t.Errorf("run %d decided differently:\n%s", run+1, diff)
		}
	}
}

// BenchmarkRender is the cost of one rubric prompt over a four-turn
// conversation with tool calls: nonce, template clone, quoting and
// neutralisation.
func BenchmarkRender(b *testing.B) {
	var conv agenteval.Conversation
	for range 2 {
		conv = append(conv, attack.Booking(false, "")[1:]...)
	}
	d := map[string]any{"Transcript": conv, "Output": conv[len(conv)-3:], "Reference": "A table for two at 8pm.",
		"Criteria": []KeyedCriterion{{Key: "c1", Text: "Confirms the time."}, {Key: "c2", Text: "Names the restaurant."}}}
	for b.Loop() {
		if _, err := Render("rubric", d); err != nil {
			b.Fatal(err)
		}
	}
}
