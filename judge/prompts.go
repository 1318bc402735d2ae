package judge

import (
	"embed"
	"fmt"
	"strings"
	"sync"
	"text/template"
)

//go:embed prompts/*.txt
var promptFS embed.FS

// Prompt is a rendered system and user message.
type Prompt struct {
	System string
	User   string
}

// userMarker separates a prompt file's system part from its user part.
const userMarker = "\n=== user ===\n"

var (
	tmplOnce sync.Once
	tmpls    map[string][2]*template.Template
	tmplErr  error
)

func loadTemplates() {
	tmpls = map[string][2]*template.Template{}
	entries, err := promptFS.ReadDir("prompts")
	if err != nil {
		tmplErr = err
		return
	}
	for _, e := range entries {
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
		var pair [2]*template.Template
		for i, text := range []string{sys, user} {
			t, err := template.New(name).Option("missingkey=error").Parse(strings.TrimSpace(text))
			if err != nil {
				tmplErr = fmt.Errorf("prompt %s: %w", name, err)
				return
			}
			pair[i] = t
		}
		tmpls[name] = pair
	}
}

// Render fills the named prompt with data.
func Render(name string, data any) (Prompt, error) {
	tmplOnce.Do(loadTemplates)
	if tmplErr != nil {
		return Prompt{}, tmplErr
	}
	pair, ok := tmpls[name]
	if !ok {
		return Prompt{}, fmt.Errorf("no prompt named %q", name)
	}
	var out [2]strings.Builder
	for i, t := range pair {
		if err := t.Execute(&out[i], data); err != nil {
			return Prompt{}, fmt.Errorf("prompt %s: %w", name, err)
		}
	}
	return Prompt{System: out[0].String(), User: out[1].String()}, nil
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
