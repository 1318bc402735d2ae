package suite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/agenteval/agenteval"
	"go.yaml.in/yaml/v4"
)

// The schemas a file is read in; Suite.Schema names the one used.
const (
	SchemaYAML           = "agenteval YAML suite"
	SchemaInspectSample  = "agent_inspect EvaluationSample JSON"
	SchemaInspectDataset = "agent_inspect dataset JSON (input, metadata)"
)

// InspectSchema says, from its content, which agent_inspect schema JSON
// data is written in: SchemaInspectDataset for the dataset schema of its
// README (samples with input and metadata), SchemaInspectSample for
// EvaluationSample JSON (sub_goals, user_instruction, conversation,
// expected_tool_calls, as dataclasses.asdict writes it), or "" for anything
// else (a Ragas or OpenAI-messages dataset, YAML). It looks at the keys of
// the first sample.
func InspectSchema(data []byte) string {
	keys, ok := firstObjectKeys(data)
	if !ok {
		// Not valid JSON: decide by the text, so that the reader can say
		// where the syntax error is.
		switch {
		case bytes.Contains(data, []byte(`"metadata"`)) && bytes.Contains(data, []byte(`"input"`)):
			return SchemaInspectDataset
		case bytes.Contains(data, []byte(`"sub_goals"`)) || bytes.Contains(data, []byte(`"user_instruction"`)):
			return SchemaInspectSample
		}
		return ""
	}
	if keys["user_input"] || keys["messages"] {
		return "" // Ragas or OpenAI messages
	}
	if keys["input"] && keys["metadata"] {
		return SchemaInspectDataset
	}
	for _, k := range inspectKeys {
		if k != "id" && keys[k] {
			return SchemaInspectSample
		}
	}
	return ""
}

// firstObjectKeys returns the keys of data's top-level object, or of the
// first element of its top-level array.
func firstObjectKeys(data []byte) (map[string]bool, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, false
	}
	var obj map[string]json.RawMessage
	switch tok {
	case json.Delim('['):
		if !dec.More() {
			return nil, false
		}
		if dec.Decode(&obj) != nil {
			return nil, false
		}
	case json.Delim('{'):
		if json.Unmarshal(data, &obj) != nil {
			return nil, false
		}
	default:
		return nil, false
	}
	keys := make(map[string]bool, len(obj))
	for k := range obj {
		keys[k] = true
	}
	return keys, true
}

// inspect reads agent_inspect EvaluationSample JSON: one sample or a list.
// JSON is YAML, so the YAML parser gives every value its line and column.
//
//   - conversation[] becomes turns (message -> input, expected_response ->
//     expected_output), run as written;
//   - without a conversation, user_instruction becomes a simulated user
//     (with both, the scripted conversation runs and the instruction only
//     describes the test);
//   - sub_goals become the subgoals grader, and expected_tool_calls the
//     expected_tool_calls grader with agent_inspect's semantics. A turn is
//     0-based, as agent_inspect's metrics count it (turn == index of the
//     turn), so turn 0 is the first turn.
func (d *decoder) inspect(data []byte) *Suite {
	return d.inspectItems(data, SchemaInspectSample, d.inspectSample)
}

// inspectItems reads a JSON document of one sample or a list of them, each
// with read.
func (d *decoder) inspectItems(data []byte, schema string, read func(*yaml.Node, int) *agenteval.Test) *Suite {
	d.literal = true
	root, ok := d.parse(data, "JSON")
	if !ok {
		return nil
	}
	s := &Suite{File: d.file, Name: strings.TrimSuffix(filepath.Base(d.file), filepath.Ext(d.file)), Schema: schema}
	items := []*yaml.Node{root}
	if root != nil && root.Kind == yaml.SequenceNode {
		items = root.Content
	}
	if len(items) == 0 || (len(items) == 1 && isNull(items[0])) {
		d.errs = append(d.errs, &agenteval.PosError{File: d.file, Line: 1, Col: 1, Msg: "the file holds no samples; give a JSON list of samples"})
		return s
	}
	for i, item := range items {
		if t := read(item, i); t != nil {
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
	t := &agenteval.Test{Pos: d.pos(rn), ID: fmt.Sprintf("sample-%d", index+1), Semantics: agenteval.SemanticsAgentInspect}
	var calls []*yaml.Node
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
			t.Subgoals = d.inspectSubgoals(f.value)
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
				for _, cf := range d.fields(item, "a conversation entry", []string{"turn_id", "message", "expected_response"}) {
					switch cf.key {
					case "turn_id":
						// agent_inspect's metrics go by the entry's place in
						// the list, not by its turn_id.
					case "message":
						tr.Input = agenteval.Conversation{{Role: agenteval.RoleUser, Content: d.str(cf.value, "message")}}
					case "expected_response":
						tr.ExpectedOutput = d.str(cf.value, "expected_response")
					}
				}
				if !hasContent(tr.Input) {
					d.fail(item, "conversation entry %d has no message", i+1)
				}
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
	d.inspectMode(t)
	if len(t.Turns) == 0 && t.User == nil {
		d.fail(rn, "sample %q has neither conversation nor user_instruction; give one of them", t.ID)
	}
	for _, c := range calls {
		if call, ok := d.expectedCall(c, true); ok {
			t.ExpectedToolCalls = append(t.ExpectedToolCalls, call)
			d.exactValueDifferences(c)
		}
	}
	if t.User != nil {
		d.checkSimulated(t, at)
		d.simulatedLimitDifference(at["user"])
	}
	return t
}

// inspectMode makes a sample a conversation: its scripted turns run as
// written, and the user instruction then only describes the test (the
// subgoal judge is told it, as agent_inspect's is); without turns, the
// instruction drives a simulated user.
func (d *decoder) inspectMode(t *agenteval.Test) {
	switch {
	case len(t.Turns) > 0:
		t.Mode = agenteval.ModeConversation
		if t.User != nil {
			if t.Description == "" {
				t.Description = t.User.Instruction
			}
			if t.Metadata == nil {
				t.Metadata = map[string]any{}
			}
			t.Metadata["user_instruction"] = t.User.Instruction
		}
		t.User = nil
	case t.User != nil:
		t.Mode = agenteval.ModeConversation
	}
}

// inspectSubgoals reads agent_inspect subgoals, whose turn is 0-based.
// A subgoal's turn does not mean there what it means here: see
// subgoalTurnDifferences.
func (d *decoder) inspectSubgoals(n *yaml.Node) []agenteval.Subgoal {
	out := d.subgoalList(n, true)
	d.subgoalTurnDifferences(n)
	return out
}

// subgoalTurnDifferences records each subgoal of an agent_inspect file
// that names a turn. agent_inspect's ProgressScoresThroughTurns, which its
// AUC and PPT (and its paper's runner) are computed from, asks about every
// subgoal not yet achieved after every turn and never reads a subgoal's
// turn; the subgoals grader here judges a subgoal with a turn once, on the
// conversation through that turn, as agent_inspect's single-score
// ProgressScore does. The paper's datasets all write "all".
func (d *decoder) subgoalTurnDifferences(n *yaml.Node) {
	rn := resolve(n)
	if rn == nil || rn.Kind != yaml.SequenceNode {
		return
	}
	for _, item := range rn.Content {
		it := resolve(item)
		if it == nil || it.Kind != yaml.MappingNode {
			continue
		}
		for i := 0; i+1 < len(it.Content); i += 2 {
			k, v := it.Content[i], resolve(it.Content[i+1])
			if k.Value != "turn" || v == nil || isNull(v) || v.Kind != yaml.ScalarNode || anyTurn(v.Value) {
				continue
			}
			d.differFrom("agent_inspect", v, "subgoal-turn",
				"a subgoal's turn: agent_inspect's progress through turns, behind its AUC and PPT, judges every open subgoal after every turn and ignores turn; "+
					"here a subgoal with a turn is judged once, on the conversation through that turn, so a milestone reached later is not counted. "+
					"Write \"turn\": \"all\" (or leave it out) for agent_inspect's meaning")
		}
	}
}

// exactValueDifferences records each exact value of an expected call (an
// expected parameter's or output's value): agent_inspect compares it with
// the call's with Python's ==, where the text "348" and the number 348
// differ; here an argument's value compares as text, and an output's as
// text or as JSON, so a value of another type can be met.
func (d *decoder) exactValueDifferences(call *yaml.Node) {
	valueOf := func(n *yaml.Node) *yaml.Node {
		rn := resolve(n)
		if rn == nil || rn.Kind != yaml.MappingNode {
			return nil
		}
		for i := 0; i+1 < len(rn.Content); i += 2 {
			if v := resolve(rn.Content[i+1]); rn.Content[i].Value == "value" && v != nil && !isNull(v) {
				return v
			}
		}
		return nil
	}
	var values []*yaml.Node
	rn := resolve(call)
	if rn == nil || rn.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(rn.Content); i += 2 {
		v := resolve(rn.Content[i+1])
		switch rn.Content[i].Value {
		case "expected_parameters":
			if v != nil && v.Kind == yaml.SequenceNode {
				for _, p := range v.Content {
					if vn := valueOf(p); vn != nil {
						values = append(values, vn)
					}
				}
			}
		case "expected_output":
			if vn := valueOf(v); vn != nil {
				values = append(values, vn)
			}
		}
	}
	for _, v := range values {
		d.differFrom("agent_inspect", v, "exact-value",
			"an expected value: agent_inspect compares it with Python's ==, so the text \"348\" does not meet the number 348; "+
				"here an argument's value is compared as text and an output's as text or JSON, so it does. A call agent_inspect fails on a type alone passes here")
	}
}

// simulatedLimitDifference records that an agent_inspect sample with a
// simulated user runs under agenteval's turn limit: the file has no place
// for one, and agent_inspect's paper runner takes it from its command line
// (--max_turns, 15 for τ²-bench and 8 for ToolSandbox when not given) and
// gives the same number to AUC and PPT.
func (d *decoder) simulatedLimitDifference(n *yaml.Node) {
	d.differFrom("agent_inspect", n, "simulated-max-turns",
		"the simulated conversation's turn limit: agent_inspect's runner stops after its --max_turns (15 for τ²-bench, 8 for ToolSandbox when not given) and computes AUC and PPT over that many turns; "+
			"this file cannot set a limit, so here the simulated user stops after %d turns and AUC and PPT use %d. "+
			"To choose the limit, write the test in an agenteval suite with user.max_turns", agenteval.DefaultMaxTurns, agenteval.DefaultMaxTurns)
}
