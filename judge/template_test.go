package judge

import (
	"strings"
	"testing"
)

// A template whose output cannot depend on its data is rendered once and
// then only gets each call's nonce; any use of the data keeps it dynamic.
func TestTemplateStatic(t *testing.T) {
	for _, tc := range []struct {
		text   string
		static bool
	}{
		{`Rules. Blocks carry id="{{nonce}}".` + "\n" + `{{template "quoting" .}}`, true},
		{`{{template "criteria" "the assistant"}}`, true},
		{`Hello {{.Name}}`, false},
		{`{{if .}}data{{end}}`, false},
		{`{{with .}}data{{else}}none{{end}}`, false},
		{`{{printf "%v" .}}`, false},
		{`{{printf "%T" .}}`, false},
		{`{{quote "reply" .Output}}`, false},
		{`{{template "x" .}}{{define "x"}}{{.Name}}{{end}}`, false},
		{`{{"   "}}`, false}, // empty once trimmed: nothing worth keeping
	} {
		tmpl, err := ParseTemplate("t", tc.text)
		if err != nil {
			t.Fatalf("%q: %v", tc.text, err)
		}
		if got := tmpl.static != ""; got != tc.static {
			t.Errorf("%q: static = %v, want %v", tc.text, got, tc.static)
		}
	}
}

// A static template's renderings carry their own nonces, and equal what
// running the template renders.
func TestTemplateStaticNonce(t *testing.T) {
	tmpl, err := ParseTemplate("t", `Blocks carry id="{{nonce}}".`+"\n"+`{{template "quoting" .}}`)
	if err != nil {
		t.Fatal(err)
	}
	if tmpl.static == "" {
		t.Fatal("not static")
	}
	a, err := tmpl.Execute("aaaaaaaaaaaa", map[string]any{"Transcript": "ignored"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := tmpl.Execute("bbbbbbbbbbbb", nil)
	if !strings.Contains(a, `id="aaaaaaaaaaaa"`) || strings.Contains(a, "bbbb") || strings.Contains(a, "\x00") {
		t.Errorf("rendering a: %q", a)
	}
	if strings.ReplaceAll(a, "aaaaaaaaaaaa", "bbbbbbbbbbbb") != b {
		t.Errorf("renderings differ beyond the nonce:\n%s\n%s", a, b)
	}
	tmpl.static = ""
	c, err := tmpl.Execute("aaaaaaaaaaaa", nil)
	if err != nil || c != a {
		t.Errorf("running the template gives %q (%v), the static text %q", c, err, a)
	}
}
