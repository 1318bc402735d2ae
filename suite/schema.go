package suite

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/agenteval/agenteval/grade"
)

//go:embed schema_base.json
var baseSchema []byte

// JSONSchema returns a JSON Schema (draft 2020-12) of eval files, for
// editors: point the YAML language server at it to get completion and
// checks. The assertion part is made from the grader definitions, so each
// type lists exactly its own settings. It is JSONSchemaOf(grade.All()).
func JSONSchema() []byte { return schemaOnce() }

var schemaOnce = sync.OnceValue(func() []byte { return JSONSchemaOf(grade.All()) })

// JSONSchemaOf is JSONSchema for a list of graders of the caller's, the
// list given to Options.Graders, so an editor knows the caller's own
// assertion types and their settings. Nil means grade.All().
func JSONSchemaOf(graders []*grade.Definition) []byte {
	if graders == nil {
		graders = grade.All()
	}
	var s map[string]any
	if err := json.Unmarshal(baseSchema, &s); err != nil {
		panic(fmt.Sprintf("suite: embedded schema: %v", err)) // a build-time mistake, caught by tests
	}
	defs := s["$defs"].(map[string]any)
	defs["assertions"] = assertionsSchema(graders)
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		panic(fmt.Sprintf("suite: schema: %v", err))
	}
	return append(b, '\n')
}

// assertionsSchema describes a list of assertions: rubric criteria as
// strings, or graders, one branch per definition.
func assertionsSchema(defs []*grade.Definition) map[string]any {
	branches := []any{map[string]any{"type": "string", "minLength": 1, "description": "A rubric criterion, judged by the LLM judge."}}
	for _, d := range defs {
		if d == nil {
			continue // grade.Validate reports it
		}
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
		// AgentV's keys on any assertion: id and metric name it, min_score
		// is its pass mark, required may be that mark.
		props["id"] = map[string]any{"type": "string", "description": "the score's name (AgentV)"}
		props["metric"] = map[string]any{"type": "string", "description": "the score's name (AgentV v5)"}
		props["min_score"] = map[string]any{"type": "number", "description": "the score this grader must reach (AgentV)"}
		props["required"] = map[string]any{"type": []any{"boolean", "number"}, "description": "a failure fails the unit; a number is the score to reach"}
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
	// AgentV's and promptfoo's names that the loader reads into ours, and
	// the graders it skips; their settings are AgentV's.
	var agentv []any
	for n := range typeNames {
		if _, _, ours := grade.Find(defs, strings.ReplaceAll(n, "-", "_")); !ours {
			agentv = append(agentv, n)
		}
	}
	for n := range unrunnable {
		// A grader of the caller's may take a skipped AgentV name; its own
		// branch describes it then, and oneOf allows one match.
		if _, _, ours := grade.Find(defs, strings.ReplaceAll(n, "-", "_")); !ours {
			agentv = append(agentv, n)
		}
	}
	sort.Slice(agentv, func(i, j int) bool { return agentv[i].(string) < agentv[j].(string) })
	branches = append(branches,
		map[string]any{"type": "object", "required": []any{"type"}, "properties": map[string]any{"type": map[string]any{"enum": agentv}},
			"title": "AgentV", "description": "an AgentV or promptfoo assertion type, read into agenteval's graders (see docs/how-to/migrate-agentv.md)"},
		map[string]any{"type": "object", "required": []any{"include"}, "properties": map[string]any{"include": map[string]any{"type": "string"}},
			"additionalProperties": false, "description": "an assertion template: .agentv/templates/<name>.yaml, or a path"})
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
