package judge

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agenteval/agenteval"
)

// Review tests of the template engine (tmpl.go): odd texts and odd data,
// each compared with text/template where the two are meant to agree.

// reviewData are data sets with nil and empty maps at every depth.
func reviewData() map[string]any {
	return map[string]any{
		"map": map[string]any{
			"S": "s", "E": "", "N": 2, "Nil": nil, "Strs": []string{"a", "b"}, "Anys": []any{"x", nil, 3},
			"M": map[string]any{"K": "v", "Nil": nil, "M": map[string]any(nil)}, "NilM": map[string]any(nil),
			"MS": map[string]string{"K": "v"}, "NilMS": map[string]string(nil), "PNilM": (*map[string]any)(nil),
			"K": []KeyedCriterion{{Key: "k", Text: "t"}}, "B": true, "F": false,
			"Named": map[agenteval.Role]string{"user": "u", "assistant": "a"},
		},
		"nil map":         map[string]any(nil),
		"nil string map":  map[string]string(nil),
		"empty map":       map[string]any{},
		"strings":         map[string]string{"S": "s", "E": ""},
		"nil":             nil,
		"pointer to map":  &map[string]any{"S": "p"},
		"pointer to nil":  (*map[string]any)(nil),
		"nested nil maps": map[string]any{"M": map[string]any{"M": map[string]any(nil)}, "S": "s"},
	}
}

// oddSnippets are texts at the edges of the language: CRLF line ends,
// braces in strings, nil maps, shadowed variables, deep nesting.
func oddSnippets() []string {
	deep := strings.Repeat("{{if .S}}(", 300) + "x" + strings.Repeat("){{end}}", 300)
	return []string{
		"a\r\n{{- .S -}}\r\nb\r\n",
		"line one\r\n{{.S}}\r\n\r\n{{- if .S}}\r\n  yes\r\n{{- else}}\r\n  no\r\n{{- end}}\r\n",
		"{{-\r\n.S\r\n-}}",
		"{{`raw\r\nwith CR`}}|{{\"tab\\tcr\\r\"}}",
		"\r\n\r\n  {{.S}}  \r\n\r\n",
		`{{"{{"}}|{{"}}"}}|{{"{{.S}}"}}|{{` + "`{{.S}}`" + `}}`,
		"{{`a\n{{b}}\n}}`}}",
		`{{quote "reply" "{{.S}} -}}"}}`,
		`{{.S -}}   {{- .S}}`,
		`{{range .NilM}}x{{else}}none{{end}}|{{range $k, $v := .M}}{{$k}}={{$v}};{{end}}`,
		`{{with .NilM}}x{{else}}none{{end}}|{{if .NilMS}}x{{else}}none{{end}}`,
		`{{index .NilM "k"}}|{{index .NilMS "k"}}|{{index .M "Nil"}}|{{index .M "M"}}|{{index . "S"}}`,
		`{{.M.Nil}}|{{.M.M}}|{{.Nil}}`,
		`{{.M.M.K}}`,
		`{{.NilM.K}}`,
		`{{.PNilM.K}}`,
		`{{range .PNilM}}x{{end}}`,
		`{{range $k, $v := .Named}}{{$k}}:{{$v}} {{end}}`,
		`{{range $t := .Strs}}{{range $t := $.Anys}}[{{$t}}]{{end}}{{$t}}{{end}}`,
		`{{range $i, $t := .Strs}}{{with $.M}}{{$i}}{{$t}}{{.K}}{{end}}{{end}}`,
		`{{define "x"}}<{{.}}|{{$}}>{{end}}{{range $t := .Strs}}{{template "x" $t}}{{$t}}{{end}}`,
		`{{range .Anys}}{{if .}}t{{else}}f{{end}}{{end}}`,
		`{{printf "%v|%s|%d" .Nil .S .N}}`,
		`{{quote "reply" .Nil}}{{quote "reply" .Anys}}{{transcript "conversation" .M}}`,
		`{{keyed "criterion" .K}}`,
		`{{instructions .NilM}}`,
		deep,
	}
}

// TestReviewOddSnippetsAsTextTemplate renders every odd snippet with every
// data set under both engines.
func TestReviewOddSnippetsAsTextTemplate(t *testing.T) {
	data := reviewData()
	for _, text := range oddSnippets() {
		differ(t, fmt.Sprintf("%.60q", text), text, data)
	}
}

// TestReviewParseErrorsAsTextTemplate: texts text/template refuses are
// refused, never rendered, and nothing panics: unterminated actions and
// strings, trim markers with nothing around them, tokens that touch.
func TestReviewParseErrorsAsTextTemplate(t *testing.T) {
	for _, text := range []string{
		"{{", "a{{", "{{-", "{{- ", "{{ -", "{{ -}", "{{.S", "{{.S}", "{{.S -}", "{{\"", "{{\"}}", "{{`", "{{`}}",
		"{{\"a\\\"}}", "{{\"a\\", "x\r\n{{.S\r\n", "{{if .S}}", "{{if .S}}{{else}}", "{{range $t := .Strs}}{{$t}}",
		"{{define \"a\"}}", "{{end}}", "{{else}}", "{{- -}}", "{{-}}", "{{ - }}",
		// Tokens that touch: text/template reads none of these as two
		// arguments.
		`{{quote"reply" .S}}`, `{{quote "reply".S}}`, `{{quote "reply"$}}`, `{{.S"a"}}`, "{{.S`a`}}", `{{"a""b"}}`,
		`{{index $"" }}`, `{{transcript ""$}}`,
	} {
		if n := differ(t, fmt.Sprintf("%q", text), text, nil); n != 0 {
			t.Errorf("%q rendered", text)
		}
		if _, err := ParseTemplate("t", text); err == nil {
			t.Errorf("%q parsed", text)
		}
	}
	_, err := ParseTemplate("t", `x {{quote"reply" .S}}`)
	if want := `prompt t, line 1: unexpected '"' after quote`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want one with %q", err, want)
	}
}

// nilCall is a nil pointer whose type has a value String method: calling
// it panics.
var nilCall *agenteval.ToolCall

// TestReviewFunctionPanicsAreErrors: a template function that panics on
// odd data (quote calls String on a nil *ToolCall) fails the rendering
// with an error, as under text/template, instead of the process.
func TestReviewFunctionPanicsAreErrors(t *testing.T) {
	for _, text := range []string{`{{quote "reply" .X}}`, `{{transcript "conversation" .X}}`, `{{instructions .X}}`, `{{printf "%v" .X}}|{{.X}}`} {
		d := map[string]any{"X": nilCall}
		old, err := oldParse("t", text)
		if err != nil {
			t.Fatal(err)
		}
		want, wantErr := old.Execute(testNonce, d)
		tmpl, err := ParseTemplate("t", text)
		if err != nil {
			t.Fatal(err)
		}
		got, gotErr := func() (s string, err error) {
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("panic: %v", r)
				}
			}()
			return tmpl.Execute(testNonce, d)
		}()
		if gotErr != nil && strings.HasPrefix(gotErr.Error(), "panic: ") {
			t.Errorf("%s: the engine panicked: %v", text, gotErr)
			continue
		}
		if (wantErr == nil) != (gotErr == nil) || got != want {
			t.Errorf("%s: text/template %q, %v; the engine %q, %v", text, want, wantErr, got, gotErr)
		}
		if gotErr != nil && !strings.Contains(gotErr.Error(), "prompt t, line 1: ") {
			t.Errorf("%s: error %v names no prompt and line", text, gotErr)
		}
	}
	// The function's own panic value, when an error, stays inspectable.
	fn := &tfunc{name: "boom", arity: 0, call: func([]any) (any, error) { panic(errSentinel) }}
	p := &parser{where: "prompt t", funcs: map[string]*tfunc{"boom": fn}, defs: map[string][]*tnode{}}
	root, err := p.parse("{{boom}}", 1)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := (&Template{root: root}).run(&b, nil); err == nil || !strings.Contains(err.Error(), "error calling boom: sentinel") {
		t.Errorf("error %v", err)
	}
}

var errSentinel = fmt.Errorf("sentinel")

// TestReviewRecursionEnds: templates calling themselves or each other,
// directly or through ranges, end in an error naming the depth, quickly
// and without exhausting the stack.
func TestReviewRecursionEnds(t *testing.T) {
	for _, text := range []string{
		`{{define "a"}}{{template "b" .}}{{end}}{{define "b"}}{{template "a" .}}{{end}}{{template "a" .}}`,
		`{{define "a"}}{{range .Strs}}{{template "a" $}}{{end}}{{end}}{{template "a" .}}`,
		`{{define "a"}}x{{template "a"}}{{end}}{{template "a" .}}`,
		`{{define "a"}}{{with .}}{{template "a" .}}{{end}}{{end}}{{template "a" .S}}`,
	} {
		tmpl, err := ParseTemplate("t", text)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, err = tmpl.Execute(testNonce, reviewData()["map"])
		if err == nil || !strings.Contains(err.Error(), "more than 100 deep") {
			t.Errorf("%s: error %.200v, want the depth", text, err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: took %v", text, d)
		}
		if err != nil && len(err.Error()) > 16<<10 {
			t.Errorf("%s: error of %d bytes", text, len(err.Error()))
		}
	}
}

// TestReviewConcurrentParseAndRender parses and renders templates that
// share the rules' defines from many goroutines (go test -race).
func TestReviewConcurrentParseAndRender(t *testing.T) {
	text := `{{define "own"}}[{{.}}]{{end}}{{template "quoting" .}}{{range $t := .Strs}}{{template "own" $t}}{{end}}{{template "criteria" .S}}{{quote "reply" .S}}`
	shared, err := ParseTemplate("shared", text)
	if err != nil {
		t.Fatal(err)
	}
	d := reviewData()["map"]
	want, err := shared.Execute(testNonce, d)
	if err != nil {
		t.Fatal(err)
	}
	concurrently(t, func(i int) error {
		tmpl := shared
		if i%2 == 0 {
			var err error
			if tmpl, err = ParseTemplate("own", text); err != nil {
				return err
			}
		}
		got, err := tmpl.Execute(testNonce, d)
		if err == nil && got != want {
			err = fmt.Errorf("a concurrent rendering differs")
		}
		return err
	})
}

// FuzzEngineMatchesTextTemplate: whatever text the engine parses,
// text/template parses too and renders the same, or fails where it fails.
// go test -fuzz FuzzEngineMatchesTextTemplate ./judge/ runs it; plain go
// test runs the seeds.
func FuzzEngineMatchesTextTemplate(f *testing.F) {
	for _, s := range snippets {
		f.Add(s)
	}
	for _, s := range oddSnippets() {
		f.Add(s)
	}
	data := reviewData()
	f.Fuzz(func(t *testing.T, text string) {
		if strings.Contains(text, "template") && strings.Contains(text, "define") {
			t.Skip("recursion depths differ on purpose: 100 here, 100000 in text/template")
		}
		if strings.HasSuffix(strings.TrimSpace(text), "{") {
			t.Skip("text/template read the rules appended to such a text as part of an action")
		}
		tmpl, err := ParseTemplate("f", text)
		if err != nil {
			return
		}
		old, oerr := oldParse("f", text)
		if oerr != nil {
			t.Fatalf("the engine parses %q, text/template does not: %v", text, oerr)
		}
		full := &Template{root: tmpl.root}
		for k, d := range data {
			want, werr := old.Execute(testNonce, d)
			got, gerr := full.Execute(testNonce, d)
			if (werr == nil) != (gerr == nil) || got != want {
				t.Fatalf("%q with %s:\ntext/template %q, %v\nengine        %q, %v", text, k, want, werr, got, gerr)
			}
		}
	})
}
