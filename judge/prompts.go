package judge

import (
	"embed"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
)

//go:embed prompts/*.txt prompts/rules.tmpl
var promptFS embed.FS

// Prompt is a rendered system and user message.
type Prompt struct {
	System string
	User   string
	// Nonce is the block id the prompt was rendered with; every call draws
	// a new one. Calls pass it to the cache (cache.WithNonce), whose keys
	// leave it out.
	Nonce string
}

// userMarker separates a prompt file's system part from its user part.
const userMarker = "\n=== user ===\n"

// Template is prompt text that quotes material through the functions of
// funcs, rendered under a fresh nonce each time. The shared rules
// (prompts/rules.tmpl) are available to it as {{template "quoting" .}} and
// {{template "criteria" "the assistant"}}. Its language is the part of
// text/template's that our prompts use (tmpl.go); it renders what
// text/template would.
//
// It is parsed once with a placeholder for the nonce, a secret of the
// process that quoted text cannot know (and from which NUL bytes are
// stripped); each rendering swaps the placeholder for its nonce. So a
// rendering costs no template copy, and templates are safe for concurrent
// use. A template whose text does not depend on its data (the system part
// of most prompts: rules and quoting instructions) is run once, at parse
// time, and each rendering only swaps in its nonce.
type Template struct {
	root []*tnode
	// static is the output, placeholder included, of a template that does
	// not read its data; "" when it does.
	static string
	// size is the length of the last rendering, to size the next one's
	// buffer: growing it piece by piece was most of a rendering's cost.
	size atomic.Int64
}

// placeholder stands for the nonce while a template runs.
var placeholder = "\x00" + NewNonce() + "\x00"

// ParseTemplate parses prompt text. Missing keys are errors, so a prompt
// never silently drops what it was meant to show; so is syntax the
// template language does not have, with the line it is on.
func ParseTemplate(name, text string) (*Template, error) {
	return parsePrompt(name, text, 1)
}

// parsePrompt is ParseTemplate for text whose first line is line firstLine
// of its file, so that errors give the file's line.
func parsePrompt(name, text string, firstLine int) (*Template, error) {
	t, err := parseTemplate(name, text, firstLine)
	if err != nil {
		return nil, err
	}
	t.static = t.staticText()
	return t, nil
}

// probe is data with no fields whose printed form is a secret of the
// process: a template that reads a field of it fails, and one that prints
// it shows the secret.
type probe struct{}

var probeText = "\x00probe" + NewNonce() + "\x00"

func (probe) String() string { return probeText }

// staticText runs the template without data and with a probe. When both
// succeed, agree, and show nothing of the probe, the template's output
// cannot depend on its data (it reads no field of it and neither prints
// nor tests it), and that output is returned.
func (t *Template) staticText() string {
	var a, b strings.Builder
	if t.run(&a, nil) != nil || t.run(&b, probe{}) != nil {
		return ""
	}
	if a.String() != b.String() || strings.Contains(a.String(), probeText) || a.Len() == 0 {
		return ""
	}
	return strings.TrimSpace(a.String())
}

// Execute renders the template with data under nonce. Errors name the
// prompt and the line.
func (t *Template) Execute(nonce string, data any) (string, error) {
	if t.static != "" {
		return strings.ReplaceAll(t.static, placeholder, nonce), nil
	}
	var b strings.Builder
	b.Grow(int(t.size.Load()))
	if err := t.run(&b, data); err != nil {
		return "", err
	}
	t.size.Store(int64(b.Len()))
	return strings.ReplaceAll(strings.TrimSpace(b.String()), placeholder, nonce), nil
}

var (
	tmplOnce sync.Once
	tmpls    map[string][2]*Template
	tmplErr  error
)

func loadTemplates() {
	tmpls = map[string][2]*Template{}
	entries, err := promptFS.ReadDir("prompts")
	if err != nil {
		tmplErr = err
		return
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".txt") {
			continue
		}
		b, err := promptFS.ReadFile("prompts/" + e.Name())
		if err != nil {
			tmplErr = err
			return
		}
		name := strings.TrimSuffix(e.Name(), ".txt")
		sys, user, ok := strings.Cut(string(b), userMarker)
		if !ok {
			tmplErr = fmt.Errorf("prompt %s has no %q line", name, strings.TrimSpace(userMarker))
			return
		}
		var pair [2]*Template
		// The user part starts on the line after the marker.
		first := [2]int{1, strings.Count(sys, "\n") + 3}
		for i, text := range []string{sys, user} {
			t, err := parsePrompt(name, text, first[i])
			if err != nil {
				tmplErr = err
				return
			}
			pair[i] = t
		}
		tmpls[name] = pair
	}
}

// Render fills the named prompt with data, under a fresh nonce.
func Render(name string, data any) (Prompt, error) {
	return render(name, data, NewNonce())
}

func render(name string, data any, nonce string) (Prompt, error) {
	tmplOnce.Do(loadTemplates)
	if tmplErr != nil {
		return Prompt{}, tmplErr
	}
	pair, ok := tmpls[name]
	if !ok {
		return Prompt{}, fmt.Errorf("no prompt named %q", name)
	}
	var out [2]string
	for i, t := range pair {
		s, err := t.Execute(nonce, data)
		if err != nil {
			return Prompt{}, err // it names the prompt
		}
		out[i] = s
	}
	return Prompt{System: out[0], User: out[1], Nonce: nonce}, nil
}

// promptNames lists the embedded prompts.
func promptNames() []string {
	tmplOnce.Do(loadTemplates)
	out := make([]string, 0, len(tmpls))
	for n := range tmpls {
		out = append(out, n)
	}
	return out
}

// repairPrompt asks again after invalid output. It repeats the schema, for
// servers that ignored the structured-output setting.
func repairPrompt(err error, schemaJSON []byte) string {
	return "That reply could not be used: it " + err.Error() + ". Answer again with one JSON object and nothing else, following this JSON Schema exactly (every required field present, no extra fields, booleans as true or false):\n" + string(schemaJSON)
}
