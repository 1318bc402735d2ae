package nunjucks

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// TestCases renders testdata/cases.json: AgentV v5's example and test
// templates with their variables, and a case for each piece of the
// language, filter and test. Each "want" is what Nunjucks 3.2 renders
// (scripts/nunjucks-check.mjs checks the file against it); each "error"
// is a fragment of our message where Nunjucks fails too, or, with
// agenteval_only, where agenteval stops on purpose (the limits, tags that
// would read files).
func TestCases(t *testing.T) {
	b, err := os.ReadFile("testdata/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Name     string          `json:"name"`
		Template string          `json:"template"`
		Vars     json.RawMessage `json:"vars"`
		Want     *string         `json:"want"`
		Error    *string         `json:"error"`
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			vars := NewObject()
			if len(c.Vars) > 0 {
				v, err := parseJSON(string(c.Vars)) // keeps the written key order
				if err != nil {
					t.Fatal(err)
				}
				vars = v.(*Object)
			}
			// Both {{ name }} and {{ vars.name }}, as AgentV has it.
			ctx := NewObject()
			for _, k := range vars.Keys() {
				ctx.set(k, vars.vals[k])
			}
			ctx.set("vars", vars)
			got, err := renderString(c.Template, ctx, Options{MaxSteps: 100_000, MaxOutput: 64 << 10})
			switch {
			case c.Error != nil && err == nil:
				t.Errorf("rendered %q, want an error with %q", got, *c.Error)
			case c.Error != nil && !strings.Contains(err.Error(), *c.Error):
				t.Errorf("error %q, want one with %q", err, *c.Error)
			case c.Error == nil && err != nil:
				t.Errorf("error %v, want %q", err, *c.Want)
			case c.Want != nil && got != *c.Want:
				t.Errorf("got  %q\nwant %q", got, *c.Want)
			}
		})
	}
}

func renderString(src string, vars *Object, opts Options) (string, error) {
	tpl, err := Parse(src)
	if err != nil {
		return "", err
	}
	return tpl.RenderObject(vars, opts)
}

// TestErrorPositions: an error names the line and column of the template
// where it is, counting characters.
func TestErrorPositions(t *testing.T) {
	tests := []struct {
		src, want string
	}{
		{"Hello\n{{ name | frob }}", "2:11: unknown filter"},
		{"a\nb {% if x %}\nc", "2:6: this {% if %} has no {% endif %}"},
		{"é {{ x + }}", "1:10: unexpected \"}}\""},
		{"{{ 1 in 2 }}", "1:6: \"in\" looks in a list"},
		{"line\n  {% include 'x' %}", "2:6: the {% include %} tag is not supported"},
	}
	for _, tt := range tests {
		_, err := renderString(tt.src, NewObject(), Options{})
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want %q...", tt.src, err, tt.want)
		}
	}
}

// TestUndefinedReported: printing a variable that is not set is reported
// with its path and place; a default or a test is not printing it.
func TestUndefinedReported(t *testing.T) {
	vars := NewObject()
	vars.Set("user", map[string]any{"name": "Ada"})
	var got []string
	opts := Options{Undefined: func(path string, line, col int) {
		got = append(got, fmt.Sprintf("%d:%d %s", line, col, path))
	}}
	out, err := renderString("Hi {{ user.name }} {{ name }}\n{{ user.age }}{{ x | default('') }}{% if y %}{% endif %}{{ z is defined }}", vars, opts)
	if err != nil {
		t.Fatal(err)
	}
	if out != "Hi Ada \nfalse" {
		t.Errorf("out = %q", out)
	}
	want := []string{"1:20 name", "2:1 user.age"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("undefined = %q, want %q", got, want)
	}
}

// TestDefaultLimits: with the default limits a runaway template stops
// quickly, with an error, whatever it asks for.
func TestDefaultLimits(t *testing.T) {
	for _, src := range []string{
		"{% for i in range(1000000000) %}{% endfor %}",
		"{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}",
		"{% set s = 'xxxxxxxx' %}{% for i in range(40) %}{% set s = s ~ s %}{% endfor %}",
		"{{ 'x' | center(1000000000) }}",
		"{% set s = 'x' %}{% for i in range(30) %}{% set s = s | replace('x', 'xx') %}{% endfor %}",
	} {
		start := time.Now()
		_, err := renderString(src, NewObject(), Options{})
		if err == nil {
			t.Errorf("%q rendered, want a limit error", src)
		}
		t.Logf("%q: %v", src, time.Since(start))
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%q took %v", src, d)
		}
	}
}

// FuzzRender: no template, however malformed, panics, runs past its
// bounds or writes more than MaxOutput.
func FuzzRender(f *testing.F) {
	b, err := os.ReadFile("testdata/cases.json")
	if err != nil {
		f.Fatal(err)
	}
	var cases []struct {
		Template string `json:"template"`
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		f.Fatal(err)
	}
	for _, c := range cases {
		f.Add(c.Template)
	}
	vars := map[string]any{"s": "text", "n": 3, "items": []any{"a", 1.5, nil, map[string]any{"k": true}}, "obj": map[string]any{"a": []any{1}}}
	f.Fuzz(func(t *testing.T, src string) {
		tpl, err := Parse(src)
		if err != nil {
			if strings.Contains(err.Error(), "cannot read the template") {
				t.Errorf("a panic in the parser: %v", err)
			}
			return
		}
		out, err := tpl.Render(vars, Options{MaxSteps: 20_000, MaxOutput: 1 << 16})
		if err != nil && strings.Contains(err.Error(), "cannot render the template") {
			t.Errorf("a panic in the renderer: %v", err)
		}
		if err == nil && len(out) > 1<<16 {
			t.Errorf("output of %d bytes", len(out))
		}
	})
}
