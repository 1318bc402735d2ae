package grade

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
)

// call builds a tool call from a name and JSON arguments, decoded as the
// dataset reader decodes them (numbers as json.Number, the written order
// of nested objects' keys kept).
func call(name, args string) agenteval.ToolCall {
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(args))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		panic(err)
	}
	return agenteval.ToolCall{Name: name, Args: m, KeyOrder: agenteval.KeyOrderOf([]byte(args))}
}

// convo builds a conversation whose assistant makes the given calls, one
// message per group (a group is a set of parallel calls), each answered.
func convo(groups ...[]agenteval.ToolCall) agenteval.Conversation {
	c := agenteval.Conversation{{Role: agenteval.RoleUser, Content: "please"}}
	for _, g := range groups {
		c = append(c, agenteval.Message{Role: agenteval.RoleAssistant, ToolCalls: g})
		for range g {
			c = append(c, agenteval.Message{Role: agenteval.RoleTool, Content: "ok"})
		}
	}
	return append(c, agenteval.Message{Role: agenteval.RoleAssistant, Content: "done"})
}

func seq(calls ...agenteval.ToolCall) [][]agenteval.ToolCall {
	out := make([][]agenteval.ToolCall, len(calls))
	for i, c := range calls {
		out[i] = []agenteval.ToolCall{c}
	}
	return out
}

func mustGrader(t *testing.T, typ string, params map[string]any) agenteval.Grader {
	t.Helper()
	g, err := New(Spec{Type: typ, Options: params})
	if err != nil {
		t.Fatalf("New(%s): %v", typ, err)
	}
	return g
}

func gradeConv(t *testing.T, g agenteval.Grader, conv agenteval.Conversation, ref []agenteval.ToolCall) agenteval.Score {
	t.Helper()
	s, err := g.Grade(context.Background(), &agenteval.GradeInput{Transcript: conv, Output: conv, ReferenceToolCalls: ref})
	if err != nil {
		t.Fatalf("Grade: %v", err)
	}
	return s
}

func near(a, b float64) bool { d := a - b; return d < 1e-9 && d > -1e-9 }

// quotedRE matches text quoted in a judge prompt's block named tag, under
// any nonce; prefix is what must come right before the block.
func quotedRE(prefix, tag, text string) *regexp.Regexp {
	return regexp.MustCompile(regexp.QuoteMeta(prefix) + `<` + tag + ` id="[0-9a-f]{12}">\n?` + regexp.QuoteMeta(text))
}

// criterionRE finds the criteria of a judge prompt: key and text.
var criterionRE = regexp.MustCompile(`(?m)^<criterion key="(c\d+)" id="[0-9a-f]+">(.*)</criterion id="[0-9a-f]+">$`)
