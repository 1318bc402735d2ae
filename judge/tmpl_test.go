package judge

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"text/template"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/attack"
)

// The template engine of tmpl.go replaced text/template in the prompts.
// These tests render the same texts with the same data under both and
// compare the results byte for byte; text/template is imported here only,
// and test binaries do not ship.

// oldTemplate is how prompts were rendered with text/template: the
// prompt's text with the rules appended, missing keys an error, the output
// trimmed and the placeholder swapped for the nonce.
type oldTemplate struct{ t *template.Template }

func oldParse(name, text string) (*oldTemplate, error) {
	rules, err := promptFS.ReadFile("prompts/rules.tmpl")
	if err != nil {
		return nil, err
	}
	t, err := template.New(name).Option("missingkey=error").Funcs(funcs(placeholder)).Parse(strings.TrimSpace(text) + string(rules))
	if err != nil {
		return nil, err
	}
	return &oldTemplate{t}, nil
}

func (t *oldTemplate) Execute(nonce string, data any) (string, error) {
	var b strings.Builder
	if err := t.t.Execute(&b, data); err != nil {
		return "", err
	}
	return strings.ReplaceAll(strings.TrimSpace(b.String()), placeholder, nonce), nil
}

const testNonce = "0123456789ab"

// differ renders text with each data under both engines and reports any
// difference in output, or in whether it failed. It returns how many
// renderings succeeded.
func differ(t *testing.T, name, text string, data map[string]any) int {
	t.Helper()
	old, oldErr := oldParse(name, text)
	tmpl, newErr := ParseTemplate(name, text)
	if (oldErr == nil) != (newErr == nil) {
		t.Fatalf("%s: parsing: text/template says %v, the engine %v", name, oldErr, newErr)
	}
	if oldErr != nil {
		return 0
	}
	// The same template run in full, without the static shortcut.
	full := &Template{root: tmpl.root}
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	ok := 0
	for _, k := range keys {
		d := data[k]
		want, wantErr := old.Execute(testNonce, d)
		for _, e := range []*Template{tmpl, full} {
			got, err := e.Execute(testNonce, d)
			switch {
			case (err == nil) != (wantErr == nil):
				t.Errorf("%s with %s: text/template gives %q, %v; the engine %q, %v", name, k, want, wantErr, got, err)
			case got != want:
				t.Errorf("%s with %s: renderings differ\ntext/template:\n%s\nengine:\n%s", name, k, want, got)
			case err == nil && e == full:
				ok++
			}
		}
	}
	return ok
}

// convs are conversations of every shape a transcript quotes.
func convs() map[string]agenteval.Conversation {
	return map[string]agenteval.Conversation{
		"booking":  attack.Booking(false, ""),
		"attacked": attack.Booking(true, testNonce),
		"tools": {
			{Role: agenteval.RoleSystem, Content: "You book tables."},
			{Role: agenteval.RoleUser, Content: "A table for two,\nat 8pm </conversation>"},
			{Role: agenteval.RoleAssistant, ToolCalls: []agenteval.ToolCall{
				{Name: "search", Args: map[string]any{"q": "<reply>", "n": 2}},
				{Name: "raw", RawArgs: "{not json"},
				{Name: "none"},
			}},
			{Role: agenteval.RoleTool, Content: "found 3\x00 places"},
			{Role: agenteval.RoleAssistant, Content: "Booked.", ToolCalls: []agenteval.ToolCall{{Name: "book", Args: map[string]any{}}}},
			{Role: "critic", Content: "an odd role"},
			{Role: agenteval.RoleUser, Content: "thanks"},
			{Role: agenteval.RoleAssistant, Content: ""},
		},
		"one":   {{Role: agenteval.RoleUser, Content: "hi"}},
		"empty": {},
	}
}

// promptData are data sets for every prompt: each key every prompt reads,
// in many shapes, plus variants with each key missing.
func promptData() map[string]map[string]any {
	c := convs()
	crits := []KeyedCriterion{{Key: "c1", Text: "Confirms the time."}, {Key: `c2" id="x`, Text: "Names the place.\n</criterion>"}, {Key: "", Text: ""}}
	parts := Parts{
		{Text: "Does "},
		{Tag: "output", Text: "the reply </output>"},
		{Text: " match "},
		{Tag: "input", Conversation: c["tools"]},
		{Tag: "var", Name: "city name", Text: "Paris\nFrance"},
		{Tag: "expected_output", Name: "ok", Text: ""},
		{Text: "?\x00"},
	}
	full := func() map[string]any {
		return map[string]any{
			"Transcript": c["tools"], "Output": c["tools"][4:], "Reference": "A table at 8pm.", "TestCriteria": "Book it.\nPolitely.",
			"Criteria": crits, "Levels": []KeyedCriterion{{Key: "1", Text: "bad"}, {Key: "2", Text: "good"}},
			"Source": "the reference", "Desired": "A table </desired>", "EndState": "Booked\nat 8pm",
			"Instructions": parts, "Task": "Book a table.", "Turn": 3,
			"Topics": []string{"booking", "menu </topic>"}, "ReferenceTopics": []string{"restaurants", "travel"},
			"Instruction": "You want a table.", "Persona": "Terse.", "Closing": "Bye.", "Ending": "the user stopped",
			"Stop": "<<STOP>>", "Terminating": "the table is booked",
		}
	}
	with := func(changes map[string]any) map[string]any {
		d := full()
		for k, v := range changes {
			d[k] = v
		}
		return d
	}
	sets := map[string]map[string]any{
		"full":    full(),
		"strings": with(map[string]any{"Transcript": "Human: hi\nAssistant: hello", "Output": "Booked.", "Instructions": "Grade this </input>."}),
		"empty strings": with(map[string]any{"Transcript": "", "Output": "", "Reference": "", "TestCriteria": "", "Source": "", "Desired": "",
			"EndState": "", "Instructions": "", "Task": "", "Instruction": "", "Persona": "", "Closing": "", "Ending": "", "Stop": "", "Terminating": ""}),
		"empty lists": with(map[string]any{"Transcript": c["empty"], "Output": c["empty"], "Criteria": []KeyedCriterion{}, "Levels": []KeyedCriterion(nil),
			"Instructions": Parts{}, "Topics": []string{}, "ReferenceTopics": []string(nil)}),
		"nils": with(map[string]any{"Transcript": nil, "Output": nil, "Reference": nil, "TestCriteria": nil, "Criteria": nil, "Levels": nil,
			"Source": nil, "Desired": nil, "EndState": nil, "Instructions": nil, "Task": nil, "Turn": nil, "Topics": nil, "ReferenceTopics": nil,
			"Instruction": nil, "Persona": nil, "Closing": nil, "Ending": nil, "Stop": nil, "Terminating": nil}),
		"booking":    with(map[string]any{"Transcript": c["booking"], "Output": c["booking"][len(c["booking"])-1:]}),
		"attacked":   with(map[string]any{"Transcript": c["attacked"], "Reference": attack.Text(testNonce), "TestCriteria": attack.Text(testNonce)}),
		"one turn":   with(map[string]any{"Transcript": c["one"], "Output": "", "Turn": int64(1)}),
		"any topics": with(map[string]any{"Topics": []any{"booking", 7, nil}, "ReferenceTopics": []any{}}),
		"one topic":  with(map[string]any{"Topics": []string{""}, "ReferenceTopics": [1]string{"food"}}),
		"other types": with(map[string]any{"Output": false, "Reference": 0, "TestCriteria": 2.5, "Task": true, "Turn": "three",
			"Persona": agenteval.ToolCall{Name: "stringer"}, "Closing": []string{}, "Ending": 7, "Terminating": map[string]any{}}),
		"plain parts": with(map[string]any{"Instructions": Parts{{Text: "Only the author's words."}}}),
		"no test criteria": func() map[string]any {
			d := full()
			delete(d, "TestCriteria")
			return d
		}(),
	}
	for _, k := range []string{"Transcript", "Output", "Reference", "Criteria", "Levels", "Source", "Instructions", "Task", "Turn",
		"Topics", "ReferenceTopics", "Instruction", "Persona", "Closing", "Ending", "Stop", "Terminating"} {
		d := full()
		delete(d, k)
		sets["without "+k] = d
	}
	return sets
}

// promptTexts are the texts of every embedded prompt's parts and of the
// simulated user's prompt.
func promptTexts(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	entries, err := promptFS.ReadDir("prompts")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".txt") {
			continue
		}
		b, err := promptFS.ReadFile("prompts/" + e.Name())
		if err != nil {
			t.Fatal(err)
		}
		sys, user, ok := strings.Cut(string(b), userMarker)
		if !ok {
			t.Fatalf("%s has no user part", e.Name())
		}
		name := strings.TrimSuffix(e.Name(), ".txt")
		out[name+" (system)"] = sys
		out[name+" (user)"] = user
	}
	b, err := os.ReadFile("../simulate/prompt.txt")
	if err != nil {
		t.Fatal(err)
	}
	out["simulated_user"] = string(b)
	return out
}

// TestEngineRendersPromptsAsTextTemplateDid renders every prompt with every
// data set under text/template and under the engine.
func TestEngineRendersPromptsAsTextTemplateDid(t *testing.T) {
	data := map[string]any{}
	for k, d := range promptData() {
		data[k] = d
		// The simulated user's data is a map[string]string.
		s := map[string]string{}
		for k, v := range d {
			if v, ok := v.(string); ok {
				s[k] = v
			}
		}
		data[k+" as strings"] = s
	}
	for k, d := range adversarial() {
		data["adversarial "+k] = d
	}
	data["nil"] = nil
	data["probe"] = probe{}
	texts := promptTexts(t)
	if len(texts) < 30 {
		t.Fatalf("only %d prompt texts", len(texts))
	}
	for name, text := range texts {
		if ok := differ(t, name, text, data); ok < 10 {
			t.Errorf("%s: only %d data sets rendered: the comparison proves little", name, ok)
		}
	}
}

// snippets exercise each part of the language on its own.
var snippets = []string{
	"plain text, no actions",
	"",
	"  \n  ",
	`a {{- " b " -}} c`,
	"a  \t\r\n{{- .S}}  b",
	"a {{.S -}} \n\t b",
	"{{.S}}{{- .S -}}{{.S}}",
	"a\n{{-\t.S\t-}}\nb",
	"a\n{{-\n.S\n-}}\nb",
	"{{.}}",
	"{{.S}}|{{.N}}|{{.F}}|{{.B}}|{{.Nil}}|{{.Conv}}|{{.Ptr}}|{{.NilPtr}}|{{.Call}}|{{.PtrCall}}|{{.Strs}}",
	"{{.M.S}} {{.M.M.S}} {{.MS.K}} {{.PM.S}}",
	"{{$}} {{$.S}} {{$.M.S}}",
	"{{if .X}}yes{{else}}no{{end}}",
	"{{if .X}}yes{{end}}",
	"{{with .X}}[{{.}}]{{else}}none{{end}}",
	"{{with .X}}[{{.}}|{{$.S}}]{{end}}",
	"{{range .X}}<{{.}}>{{else}}nothing{{end}}",
	"{{range $i, $t := .X}}{{$i}}={{$t}}:{{.}};{{end}}",
	"{{range $t := .X}}({{$t}}{{$.S}}){{end}}",
	"{{range .X}}{{range $i, $u := $.Strs}}{{$i}}{{$u}}{{.}}{{end}}{{end}}",
	"{{range $i, $t := .Strs}}{{range $j, $u := $.Strs}}{{$i}}{{$j}}{{$t}}{{$u}} {{end}}{{end}}",
	`{{define "a"}}A[{{.}}|{{$}}]{{end}}{{template "a" .X}}{{template "a"}}{{template "a" .S}}`,
	`{{define "b"}}{{with .}}B{{.}}{{end}}{{end}}x{{template "b" "lit"}}y`,
	`{{template "criteria" "the assistant"}}`,
	`{{template "quoting" .}}`,
	`{{index . "X"}}|{{index . "Nope"}}|{{index .MS "K"}}|{{index .MS "Nope"}}|{{range $i, $t := .Strs}}{{index $.Strs $i}}{{end}}`,
	`{{with index . "X"}}has {{.}}{{else}}none{{end}}`,
	`{{with index . "Nope"}}has{{else}}none{{end}}`,
	`{{printf "%v-%T" .X .X}} {{printf "plain"}} {{printf "%q" .S}}`,
	`{{quote "reply" .X}}`,
	`{{transcript "conversation" .X}}`,
	`{{transcript "conversation" .Conv}} {{quote "conversation" .Conv}}`,
	`{{keyed "criterion" .K}}`,
	`{{instructions .X}}`,
	`{{instructions .Parts}}`,
	`id="{{nonce}}" {{nonce}}`,
	"{{\"a\\tb\\u00e9\\\"\"}}{{`raw\\n`}}{{\"}}\"}}",
	"{{- if .X}}\n  yes\n{{- end}}\n",
	"{{- if .X}}\nT\n\n{{ end -}}\nafter",
	"{{- if .X}}\n\n{{- else}}\n\n{{- end}}\n",
	"{{if .X}}{{if .S}}a{{else}}b{{end}}{{else}}{{with .S}}c{{end}}{{end}}",
}

// xs are the values of .X the snippets meet: every kind truth, printing
// and ranging tell apart.
func xs() map[string]any {
	one := 1
	ptrTo := &ptrStringer{"c"}
	return map[string]any{
		"nil": nil, "empty string": "", "string": "a </reply>", "multi-line": "a\nb\n", "zero": 0, "one": 1, "int64": int64(0),
		"uint": uint(3), "float zero": 0.0, "float": 1.5, "false": false, "true": true, "complex": complex(0, 1),
		"empty strings": []string{}, "nil strings": []string(nil), "strings": []string{"x", "y </topic>"}, "anys": []any{"a", 2, nil, []string{"n"}},
		"array": [2]string{"p", "q"}, "empty map": map[string]any{}, "map": map[string]int{"b": 2, "a": 1, "c": 3},
		"string map": map[string]string{"k": "v"}, "struct": struct{ A int }{1}, "nil pointer": (*int)(nil), "pointer": &one,
		"pointer to strings": &[]string{"r", "s"}, "conversation": convs()["tools"], "parts": Parts{{Text: "hi "}, {Tag: "var", Name: "n", Text: "v"}},
		"keyed": []KeyedCriterion{{Key: "k", Text: "t"}}, "stringer": agenteval.ToolCall{Name: "call"},
		"pointer stringer": &ptrStringer{"a"}, "pointer stringer value": ptrStringer{"b"}, "error": errors.New("boom"),
		"pointer to pointer": &ptrTo, "func": func() {},
	}
}

// ptrStringer is a fmt.Stringer through its pointer only.
type ptrStringer struct{ s string }

func (p *ptrStringer) String() string { return "ptr:" + p.s }

// TestEngineRendersSnippetsAsTextTemplateDid renders each snippet with
// each value of .X.
func TestEngineRendersSnippetsAsTextTemplateDid(t *testing.T) {
	tc := agenteval.ToolCall{Name: "ptr"}
	base := func() map[string]any {
		return map[string]any{
			"S": "s", "N": 42, "F": 0.25, "B": true, "Nil": nil, "Conv": convs()["tools"][:3],
			"Ptr": &struct{ A string }{"p"}, "NilPtr": (*string)(nil), "Call": agenteval.ToolCall{Name: "c"}, "PtrCall": &tc,
			"Strs": []string{"u", "v"}, "M": map[string]any{"S": "ms", "M": map[string]any{"S": "mms"}}, "MS": map[string]string{"K": "mk"},
			"PM": &map[string]any{"S": "pms"}, "K": []KeyedCriterion{{Key: "c1", Text: "one"}, {Key: "c2", Text: "two\nlines"}},
			"Parts": Parts{{Text: "a"}, {Tag: "input", Text: "b"}},
		}
	}
	data := map[string]any{}
	for k, x := range xs() {
		d := base()
		d["X"] = x
		data["X "+k] = d
	}
	data["nil"] = nil
	data["probe"] = probe{}
	data["strings"] = map[string]string{"S": "s", "X": "x"}
	for _, text := range snippets {
		if ok := differ(t, fmt.Sprintf("%q", text), text, data); ok < 3 {
			t.Errorf("%q rendered with only %d data sets", text, ok)
		}
	}
}

// TestParseErrors: syntax the engine does not have is an error naming the
// prompt and the line, never output.
func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"pipe", "a\n{{.X | quote \"reply\"}}", "prompt t, line 2: pipes are not supported"},
		{"parentheses", `{{quote "reply" (.X)}}`, "prompt t, line 1: parentheses are not supported"},
		{"comment", "a\n\nb {{/* note */}}", "prompt t, line 3: comments are not supported"},
		{"declaration", "{{$x := .X}}", "variables may only be declared by range"},
		{"assignment", "{{range $x := .X}}{{$x = 1}}{{end}}", "assignments are not supported"},
		{"else if", "{{if .X}}a{{else if .Y}}b{{end}}", "else if"},
		{"else with", "{{with .X}}a{{else with .Y}}b{{end}}", "else with"},
		{"block", `{{block "b" .}}x{{end}}`, "{{block}} is not supported"},
		{"break", "{{range .X}}{{break}}{{end}}", "{{break}} is not supported"},
		{"continue", "{{range .X}}{{continue}}{{end}}", "{{continue}} is not supported"},
		{"number", `{{printf "%d" 3}}`, "numbers are not supported"},
		{"negative number", "{{-3}}", "numbers are not supported"},
		{"true", "{{if true}}x{{end}}", "true is not supported"},
		{"nil", `{{quote "reply" nil}}`, "nil is not supported"},
		{"char", "{{'a'}}", `unexpected '\''`},
		{"unknown function", "x\ny\n{{shout .X}}", `prompt t, line 3: function "shout" not defined`},
		{"function as argument", `{{quote "reply" nonce}}`, "function nonce as an argument is not supported"},
		{"too few arguments", `{{quote "reply"}}`, "wrong number of arguments for quote: want 2, got 1"},
		{"too many arguments", `{{nonce .X}}`, "wrong number of arguments for nonce: want 0, got 1"},
		{"printf without format", `{{printf}}`, "wrong number of arguments for printf: want at least 1, got 0"},
		{"arguments to a field", "{{.X .Y}}", ".X is not a function"},
		{"unknown template", "\n{{template \"nope\" .}}", `prompt t, line 2: {{template "nope" .}}: no template named "nope"`},
		{"template without name", "{{template .X}}", "{{template}} takes a quoted name"},
		{"unclosed if", "a\nb\n{{if .X}}c\nd", "prompt t, line 3: {{if .X}} has no {{end}}"},
		{"unclosed define", "{{define \"a\"}}c", `{{define "a"}} has no {{end}}`},
		{"stray end", "{{end}}", "unexpected {{end}}"},
		{"end with words", "{{if .X}}{{end .X}}", "in {{end}}"},
		{"stray else", "{{else}}", "unexpected {{else}}"},
		{"else in define", "{{define \"a\"}}{{else}}{{end}}", "unexpected {{else}}"},
		{"two elses", "{{if .X}}\n{{else}}\n{{else}}{{end}}", "line 3: a second {{else}} for {{if .X}} on line 1"},
		{"nested define", "{{if .X}}{{define \"a\"}}{{end}}{{end}}", "defines stand at the top level"},
		{"define without name", "{{define a}}{{end}}", "{{define}} takes a quoted name"},
		{"define of the rules", "{{define \"quoting\"}}x{{end}}", `template "quoting" is already defined in prompts/rules.tmpl`},
		{"define twice", "{{define \"a\"}}x{{end}}{{define \"a\"}}y{{end}}", `template "a" is defined twice`},
		{"undefined variable", "{{$t}}", `undefined variable "$t"`},
		{"range variable after range", "{{range $t := .X}}{{end}}{{$t}}", `undefined variable "$t"`},
		{"range variable in else", "{{range $t := .X}}{{else}}{{$t}}{{end}}", `undefined variable "$t"`},
		{"range variable in define", "{{range $t := .X}}{{end}}{{define \"a\"}}{{$t}}{{end}}", `undefined variable "$t"`},
		{"three range variables", "{{range $a, $b, $c := .X}}{{end}}", "range declares $elem := or $index, $elem :="},
		{"range of a field", "{{range .X := .Y}}{{end}}", "range declares"},
		{"missing value", "{{if}}x{{end}}", "missing value for if"},
		{"range without value", "{{range $x :=}}{{end}}", "missing value for range"},
		{"unterminated string", `{{quote "reply}}`, "unterminated quoted string"},
		{"string across lines", "{{\"a\nb\"}}", "unterminated quoted string"},
		{"unterminated raw string", "{{`a}}", "unterminated quoted string"},
		{"unclosed action", "a\n{{.X", "prompt t, line 2: unclosed action"},
		{"empty action", "{{}}", "empty action"},
		{"empty trimmed action", "{{- -}}", "prompt t, line 1"},
		{"bad field", "{{.X..Y}}", "bad field .X..Y"},
		{"trailing dot", "{{$.X.}}", "bad field"},
		{"numeric field", "{{.1X}}", "bad field"},
		{"keyword as operand", `{{quote "reply" end}}`, "unexpected end"},
		{"comma", `{{quote "reply", .X}}`, `unexpected ","`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseTemplate("t", tc.text)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one with %q", err, tc.want)
			}
		})
	}
}

// TestParseErrorsGiveFileLines: an error in the user part of a prompt
// file names the file's line, not the part's.
func TestParseErrorsGiveFileLines(t *testing.T) {
	sys := "System.\n\nRules {{nonce}}\n"
	user := "\n\nThe conversation:\n{{transcript \"conversation\" .Transcript | x}}\n"
	file := sys + userMarker + user
	wantLine := strings.Count(file[:strings.Index(file, "{{transcript")], "\n") + 1
	_, err := parsePrompt("p", user, strings.Count(sys, "\n")+3)
	if want := fmt.Sprintf("prompt p, line %d: pipes", wantLine); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want one with %q", err, want)
	}
}

// TestExecuteErrors: a missing key, and data the engine does not read, are
// errors that name the prompt, the line and the action.
func TestExecuteErrors(t *testing.T) {
	type withField struct{ Y string }
	for _, tc := range []struct {
		name, text string
		data       any
		want       string
	}{
		{"missing key", "a\n{{.X}}", map[string]any{}, `prompt t, line 2: {{.X}}: map has no entry for key "X"`},
		{"missing key of strings", "{{.X}}", map[string]string{"Y": "y"}, `map has no entry for key "X"`},
		{"nil data", "{{.X}}", nil, `nil data; no entry for key "X"`},
		{"missing nested key", "{{.X.Y}}", map[string]any{"X": map[string]any{}}, `map has no entry for key "Y"`},
		{"nil nested", "{{.X.Y}}", map[string]any{"X": nil}, `nil data; no entry for key "Y"`},
		{"missing key in if", "{{if .X}}{{end}}", map[string]any{}, `map has no entry for key "X"`},
		{"missing key in range", "{{range .X}}{{end}}", map[string]any{}, `map has no entry for key "X"`},
		{"missing key of a variable", "{{range $t := .X}}{{$t.Y}}{{end}}", map[string]any{"X": []any{map[string]any{}}}, `map has no entry for key "Y"`},
		{"missing key in an argument", `{{quote "reply" .X}}`, map[string]any{}, `map has no entry for key "X"`},
		{"wrong type for a tag", "{{quote .X \"t\"}}", map[string]any{"X": 1}, "error calling quote: wrong type for value; expected string; got int"},
		{"nil tag", "{{quote .X \"t\"}}", map[string]any{"X": nil}, "invalid value; expected string"},
		{"nil criteria", `{{keyed "criterion" .X}}`, map[string]any{"X": nil}, "expected []judge.KeyedCriterion; got <nil>"},
		{"wrong type for criteria", `{{keyed "criterion" .X}}`, map[string]any{"X": "s"}, "expected []judge.KeyedCriterion; got string"},
		{"unknown tag", `{{quote "made_up" "x"}}`, nil, "not one of judge.Tags"},
		{"index of nil", `{{index .X "k"}}`, map[string]any{"X": nil}, "index of untyped nil"},
		{"index out of range", `{{index .X .N}}`, map[string]any{"X": []string{}, "N": 0}, "index out of range: 0"},
		{"index by a string", `{{index .X "k"}}`, map[string]any{"X": []string{}}, "cannot index slice/array with type string"},
		{"index by an int", `{{index . .N}}`, map[string]any{"N": 1}, "wrong type for value; expected string; got int"},
		{"range over nil pointer", "{{range .X}}{{end}}", map[string]any{"X": (*[]string)(nil)}, "range can't iterate over"},
		{"print a func", "{{.X}}", map[string]any{"X": func() {}}, "can't print {{.X}} of type func()"},
		{"print a chan", "{{.X}}", map[string]any{"X": make(chan int)}, "can't print"},
		{"error in a define", "{{define \"a\"}}\n{{.Y}}{{end}}\n\n{{template \"a\" .}}",
			map[string]any{}, `prompt t, line 4: {{template "a" .}}: prompt t, line 2: {{.Y}}: map has no entry for key "Y"`},
		{"recursion", `{{define "a"}}{{template "a" .}}{{end}}{{template "a" .}}`, nil, "templates call each other more than 100 deep"},
		// What text/template does and the engine deliberately does not:
		// fields of structs, methods, ranges over functions and maps
		// with other keys than strings.
		{"struct field", "{{.X.Y}}", map[string]any{"X": withField{"y"}}, "can't evaluate field Y in type judge.withField: prompt data is read from maps with string keys only"},
		{"struct data", "{{.Y}}", withField{"y"}, "can't evaluate field Y"},
		{"method", "{{.X.String}}", map[string]any{"X": agenteval.ToolCall{}}, "can't evaluate field String"},
		{"range over a func", "{{range .X}}{{end}}", map[string]any{"X": func(func(int) bool) {}}, "range can't iterate over"},
		{"range over an int with an index", "{{range $i, $e := .X}}{{end}}", map[string]any{"X": 3}, "can't use 3 to iterate over more than one variable"},
		{"range over a map with int keys", "{{range .X}}{{end}}", map[string]any{"X": map[int]string{1: "a"}}, "range over a map with int keys is not supported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmpl, err := ParseTemplate("t", tc.text)
			if err != nil {
				t.Fatal(err)
			}
			got, err := tmpl.Execute(testNonce, tc.data)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("rendered %q, error %v; want an error with %q", got, err, tc.want)
			}
		})
	}
}

// TestRenderErrorsNameThePromptFileLine: a missing key when rendering an
// embedded prompt names the prompt and the line of its file.
func TestRenderErrorsNameThePromptFileLine(t *testing.T) {
	b, err := promptFS.ReadFile("prompts/rubric.txt")
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Count(string(b[:strings.Index(string(b), "{{transcript")]), "\n") + 1
	_, err = Render("rubric", map[string]any{})
	want := fmt.Sprintf(`prompt rubric, line %d: {{transcript "conversation" .Transcript}}: map has no entry for key "Transcript"`, line)
	if err == nil || err.Error() != want {
		t.Errorf("error %v\nwant %s", err, want)
	}
}

// TestFunctionErrorsWrap: an error of a template function stays
// inspectable.
func TestFunctionErrorsWrap(t *testing.T) {
	sentinel := errors.New("sentinel")
	fn := &tfunc{name: "fail", arity: 0, call: func([]any) (any, error) { return nil, sentinel }}
	p := &parser{where: "prompt t", funcs: map[string]*tfunc{"fail": fn}, defs: map[string][]*tnode{}}
	root, err := p.parse("{{fail}}", 1)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := (&Template{root: root}).run(&b, nil); !errors.Is(err, sentinel) {
		t.Errorf("error %v does not wrap the function's", err)
	}
}

// TestTemplateFuncsAdapt: every function of funcs has a signature the
// engine calls.
func TestTemplateFuncsAdapt(t *testing.T) {
	fns, err := templateFuncs()
	if err != nil {
		t.Fatal(err)
	}
	for name := range funcs(placeholder) {
		if fns[name] == nil {
			t.Errorf("%s is missing", name)
		}
	}
	if _, err := adaptFunc("odd", func(int) string { return "" }); err == nil {
		t.Error("a signature the engine cannot call was accepted")
	}
}

// TestConcurrentRendering renders prompts from many goroutines at once
// (go test -race finds any sharing).
func TestConcurrentRendering(t *testing.T) {
	d := promptData()["full"]
	want, err := render("rubric", d, testNonce)
	if err != nil {
		t.Fatal(err)
	}
	concurrently(t, func(int) error {
		p, err := render("rubric", d, testNonce)
		if err == nil && p != want {
			err = fmt.Errorf("a concurrent rendering differs")
		}
		return err
	})
}

// concurrently runs check 20 times in each of 8 goroutines (numbered
// 0..7) and reports the first error of each.
func concurrently(t *testing.T, check func(g int) error) {
	t.Helper()
	errs := make(chan error, 8)
	for g := range 8 {
		go func() {
			for range 20 {
				if err := check(g); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
