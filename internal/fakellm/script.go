package fakellm

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v4"
)

// A script makes the fake play an agent: a list of steps, each saying what
// to answer when the conversation's last user message matches a pattern.
//
//   - when: "table for (\w+)"          # a regular expression, any case
//     tool_calls:                     # first call these tools...
//   - {name: book_table, arguments: {party: 2, time: 7pm}}
//     reply: Booked a table for $1.    # ...then, after their results, say this
//   - when: thanks
//     reply: You're welcome!
//
// A step without tool_calls answers with its reply at once. $1, $2, ... in
// a reply are the pattern's groups. Requests no step matches (a judge's
// structured request, a user the step does not cover) get the fake's
// default answers.
type scriptStep struct {
	When      string `yaml:"when"`
	ToolCalls []struct {
		Name      string         `yaml:"name"`
		Arguments map[string]any `yaml:"arguments"`
	} `yaml:"tool_calls"`
	Reply string `yaml:"reply"`
}

// LoadScript reads a script file into rules, in order; problems are
// reported as file:line:col.
func LoadScript(path string) ([]*Rule, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read script: %w", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: not valid YAML: %v", path, err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("%s:1:1: a script is a list of steps, each {when, tool_calls, reply}", path)
	}
	var rules []*Rule
	var errs []string
	for _, n := range doc.Content[0].Content {
		fail := func(msg string) { errs = append(errs, fmt.Sprintf("%s:%d:%d: %s", path, n.Line, n.Column, msg)) }
		var st scriptStep
		if err := n.Decode(&st); err != nil {
			fail(fmt.Sprintf("a step is {when, tool_calls, reply}: %v", err))
			continue
		}
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				switch k := n.Content[i].Value; k {
				case "when", "tool_calls", "reply":
				default:
					fail(fmt.Sprintf("unknown key %q in a step; use when, tool_calls, reply", k))
				}
			}
		}
		re, err := regexp.Compile("(?is)" + st.When)
		if err != nil {
			fail(fmt.Sprintf("when is not a regular expression: %v", err))
			continue
		}
		if st.Reply == "" && len(st.ToolCalls) == 0 {
			fail("a step needs reply, tool_calls or both")
			continue
		}
		var calls []ToolCall
		for _, c := range st.ToolCalls {
			if c.Name == "" {
				fail("a tool call needs a name")
				continue
			}
			args, _ := json.Marshal(c.Arguments)
			if c.Arguments == nil {
				args = []byte("{}")
			}
			calls = append(calls, ToolCall{Name: c.Name, Arguments: string(args)})
		}
		rules = append(rules, scriptRule(re, calls, st.Reply))
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return rules, nil
}

// scriptRule answers a matching request with the step's tool calls, or,
// once their results are in (the last message is a tool's), with its reply.
func scriptRule(re *regexp.Regexp, calls []ToolCall, reply string) *Rule {
	return &Rule{
		Match: func(r *Request) bool {
			return r.SchemaName() == "" && re.MatchString(r.LastUser())
		},
		Reply: Reply{Func: func(r *Request) Reply {
			last := r.Messages[len(r.Messages)-1].Role
			if len(calls) > 0 && last != "tool" && len(r.Tools) > 0 {
				return Reply{ToolCalls: calls}
			}
			text := reply
			if m := re.FindStringSubmatchIndex(r.LastUser()); m != nil && text != "" {
				text = string(re.ExpandString(nil, reply, r.LastUser(), m))
			}
			if text == "" {
				text = "Done."
			}
			return Reply{Content: text}
		}},
	}
}
