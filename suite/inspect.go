package suite

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/agenteval/agenteval"
	"go.yaml.in/yaml/v4"
)

// inspect reads agent_inspect EvaluationSample JSON: one sample or a list.
// JSON is YAML, so the YAML parser gives every value its line and column.
//
//   - conversation[] becomes turns (message -> input, expected_response ->
//     expected_output), run as written;
//   - without a conversation, user_instruction becomes a simulated user
//     (with both, the scripted conversation runs and the instruction only
//     describes the test);
//   - sub_goals become the subgoals grader, and expected_tool_calls the
//     expected_tool_calls grader, their turn given by the turn_id of the
//     conversation entry.
func (d *decoder) inspect(data []byte) *Suite {
	root, ok := d.parse(data, "JSON")
	if !ok {
		return nil
	}
	s := &Suite{File: d.file, Name: strings.TrimSuffix(filepath.Base(d.file), filepath.Ext(d.file))}
	items := []*yaml.Node{root}
	if root != nil && root.Kind == yaml.SequenceNode {
		items = root.Content
	}
	for i, item := range items {
		if t := d.inspectSample(item, i); t != nil {
			t.Suite = s.Name
			s.Tests = append(s.Tests, *t)
		}
	}
	return s
}

var inspectKeys = []string{"id", "sub_goals", "expected_tool_calls", "conversation", "user_instruction"}

func (d *decoder) inspectSample(n *yaml.Node, index int) *agenteval.Test {
	rn := resolve(n)
	if rn == nil || rn.Kind != yaml.MappingNode {
		d.fail(n, "sample %d must be a JSON object (an agent_inspect EvaluationSample), not %s", index+1, kindName(n))
		return nil
	}
	t := &agenteval.Test{Pos: d.pos(rn), ID: fmt.Sprintf("sample-%d", index+1)}
	var calls []*yaml.Node
	turnIndex := map[string]int{}
	// The keys, under the names the shared rules use, for positions.
	at := map[string]*yaml.Node{}
	for _, f := range d.fields(rn, "an EvaluationSample", inspectKeys) {
		switch f.key {
		case "sub_goals":
			at["subgoals"] = f.keyN
		case "user_instruction":
			at["user"] = f.keyN
		case "expected_tool_calls":
			at["expected_tool_calls"] = f.keyN
		}
		switch f.key {
		case "id":
			if id := d.str(f.value, "id"); id != "" {
				t.ID = id
			}
		case "sub_goals":
			t.Subgoals = d.subgoals(f.value)
		case "user_instruction":
			if u := d.str(f.value, "user_instruction"); u != "" {
				t.User = &agenteval.SimulatedUser{Instruction: u}
			}
		case "conversation":
			cn := resolve(f.value)
			if cn == nil || isNull(cn) {
				continue
			}
			if cn.Kind != yaml.SequenceNode {
				d.fail(f.value, "conversation must be a list of {turn_id, message, expected_response}")
				continue
			}
			for i, item := range cn.Content {
				tr := agenteval.Turn{Pos: d.pos(item)}
				id := strconv.Itoa(i + 1)
				for _, cf := range d.fields(item, "a conversation entry", []string{"turn_id", "message", "expected_response"}) {
					switch cf.key {
					case "turn_id":
						id = d.str(cf.value, "turn_id")
					case "message":
						tr.Input = agenteval.Conversation{{Role: agenteval.RoleUser, Content: d.str(cf.value, "message")}}
					case "expected_response":
						tr.ExpectedOutput = d.str(cf.value, "expected_response")
					}
				}
				if !hasContent(tr.Input) {
					d.fail(item, "conversation entry %d has no message", i+1)
				}
				turnIndex[id] = len(t.Turns) + 1
				t.Turns = append(t.Turns, tr)
			}
		case "expected_tool_calls":
			if cn := resolve(f.value); cn != nil && cn.Kind == yaml.SequenceNode {
				calls = cn.Content
			} else if !isNull(f.value) {
				d.fail(f.value, "expected_tool_calls must be a list")
			}
		}
	}
	if len(t.Turns) > 0 {
		// A scripted conversation runs as it is written; the user
		// instruction then only describes it.
		t.Mode = agenteval.ModeConversation
		if t.User != nil {
			if t.Description == "" {
				t.Description = t.User.Instruction
			}
			// The subgoal judge is told the user's task, as agent_inspect's is.
			t.Metadata = map[string]any{"user_instruction": t.User.Instruction}
		}
		t.User = nil
	} else if t.User != nil {
		t.Mode = agenteval.ModeConversation
	}
	if len(t.Turns) == 0 && t.User == nil {
		d.fail(rn, "sample %q has neither conversation nor user_instruction; give one of them", t.ID)
	}
	ids := turnIndex
	if len(t.Turns) == 0 {
		ids = nil // simulated: turns are numbered 1, 2, ...
	}
	for _, c := range calls {
		if call, ok := d.expectedCall(c, ids); ok {
			t.ExpectedToolCalls = append(t.ExpectedToolCalls, call)
		}
	}
	if t.User != nil {
		d.checkSimulated(t, at)
	}
	for i := range t.Subgoals {
		turn := t.Subgoals[i].Turn
		if turn == 0 || ids == nil {
			continue
		}
		// A subgoal's turn names a turn_id.
		k, ok := ids[strconv.Itoa(turn)]
		if !ok {
			d.fail(rn, "sub_goals[%d] names turn %d, which is not a turn_id of this sample's conversation", i, turn)
			continue
		}
		t.Subgoals[i].Turn = k
	}
	return t
}
