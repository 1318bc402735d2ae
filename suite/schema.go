package suite

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/agenteval/agenteval/grade"
)

//go:embed schema_base.json
var baseSchema []byte

// JSONSchema returns a JSON Schema (draft 2020-12) of eval files, for
// editors: point the YAML language server at it to get completion and
// checks. The assertion part is made from the grader definitions, so each
// type lists exactly its own settings.
func JSONSchema() []byte { return schemaOnce() }

var schemaOnce = sync.OnceValue(func() []byte {
	var s map[string]any
	if err := json.Unmarshal(baseSchema, &s); err != nil {
		panic(fmt.Sprintf("suite: embedded schema: %v", err)) // a build-time mistake, caught by tests
	}
	defs := s["$defs"].(map[string]any)
	defs["assertions"] = assertionsSchema(grade.All())
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		panic(fmt.Sprintf("suite: schema: %v", err))
	}
	return append(b, '\n')
})

// assertionsSchema describes a list of assertions: rubric criteria as
// strings, or graders, one branch per definition.
func assertionsSchema(defs []*grade.Definition) map[string]any {
	branches := []any{map[string]any{"type": "string", "minLength": 1, "description": "A rubric criterion, judged by the LLM judge."}}
	for _, d := range defs {
		var names []any
		for _, n := range append([]string{d.Name}, d.Aliases...) {
			kebab := strings.ReplaceAll(n, "_", "-")
			names = append(names, n, "not_"+n, "not-"+kebab)
			if kebab != n {
				names = append(names, kebab)
			}
		}
		props := map[string]any{}
		for _, p := range grade.Common {
			props[p.Name] = paramSchema(p)
		}
		props["type"] = map[string]any{"enum": names, "description": d.Doc}
		for _, p := range d.Params {
			props[p.Name] = paramSchema(p)
			for _, a := range p.Aliases {
				props[a] = paramSchema(p)
			}
		}
		branches = append(branches, map[string]any{
			"type": "object", "required": []any{"type"}, "properties": props, "additionalProperties": false,
			"title": d.Name, "description": d.Doc,
		})
	}
	return map[string]any{"type": "array", "items": map[string]any{"oneOf": branches}}
}

func paramSchema(p grade.Param) map[string]any {
	s := map[string]any{"description": p.Doc}
	switch len(p.Types) {
	case 0:
	case 1:
		s["type"] = p.Types[0]
	default:
		s["type"] = p.Types
	}
	if len(p.Enum) > 0 {
		s["enum"] = p.Enum
	}
	return s
}
