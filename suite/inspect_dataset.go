package suite

import (
	"fmt"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/suggest"
	"go.yaml.in/yaml/v4"
)

// The agent_inspect dataset schema, from its README ("Creating your own
// evaluation dataset") and the paper's datasets
// (paper_experiments/datasets/*.json): a list of samples
//
//	{"id", "input": [{"role": "user", "content", "terminating_condition"}],
//	 "metadata": {"subgoals": [{"type", "details", "turn": "all" | n}],
//	              "expected_tools": ["[{'tool_code': 'f(a=1)', 'output': '$AnyValue'}]", ...],
//	              "trace_type"},
//	 "target": "" | "..." | [...], "domain"}
//
// read as agent_inspect's paper_experiments/convert_to_data_sample.py reads
// it, without the conversion step:
//
//   - input[0].content is the simulated user's instruction, and
//     input[0].terminating_condition its stop rule;
//   - a non-empty target makes scripted turns instead, pairing input[i]
//     with target[i] as the converter's zip does;
//   - metadata.subgoals become the subgoals grader (turn "all" is any turn;
//     a number is 0-based);
//   - metadata.expected_tools (also expectedTools and expected_tool_calls,
//     the spellings the paper's datasets use) become the
//     expected_tool_calls grader: tool strings as the converter parses
//     them, or objects ({tool_code} or {tool, expected_parameters, turn});
//   - domain, trace_type and any other key are kept as metadata.
var (
	datasetKeys  = []string{"id", "input", "metadata", "target", "domain"}
	metadataKeys = []string{"subgoals", "expected_tools", "expectedTools", "expected_tool_calls", "trace_type"}
)

func (d *decoder) inspectDataset(data []byte) *Suite {
	return d.inspectItems(data, SchemaInspectDataset, d.datasetSample)
}

func (d *decoder) datasetSample(n *yaml.Node, index int) *agenteval.Test {
	rn := resolve(n)
	if rn == nil || rn.Kind != yaml.MappingNode {
		d.fail(n, "sample %d must be a JSON object with input and metadata (agent_inspect's dataset schema), not %s", index+1, kindName(n))
		return nil
	}
	t := &agenteval.Test{Pos: d.pos(rn), ID: fmt.Sprintf("sample-%d", index+1), Semantics: agenteval.SemanticsAgentInspectDataset, Metadata: map[string]any{}}
	var input, target, metadata *yaml.Node
	for _, f := range d.fields(rn, "a sample", nil) {
		switch f.key {
		case "id":
			if id := d.str(f.value, "id"); id != "" {
				t.ID = id
			}
		case "input":
			input = f.value
		case "target":
			target = f.value
		case "metadata":
			metadata = f.value
		case "domain":
			t.Metadata["domain"] = d.str(f.value, "domain")
		default:
			if near := suggest.Closest(f.key, datasetKeys); near != "" {
				d.fail(f.keyN, "unknown key %q in a sample; did you mean %q?", f.key, near)
				continue
			}
			t.Metadata[f.key] = d.value(f.value)
		}
	}
	if input == nil {
		d.fail(rn, "sample %q has no input; give input: [{role: user, content: <the user's task>, terminating_condition: <when it is done>}]", t.ID)
		return t
	}
	inputs := d.datasetInputs(input)
	at := map[string]*yaml.Node{"user": input}
	if metadata != nil {
		d.datasetMetadata(metadata, t, at)
	}
	if len(inputs) == 0 {
		return t
	}
	targets := d.datasetTargets(target)
	if len(targets) > 0 {
		// The converter's zip: input[i] is the user's message of turn i,
		// target[i] its reference; the shorter list sets the turns.
		for i := 0; i < len(inputs) && i < len(targets); i++ {
			t.Turns = append(t.Turns, agenteval.Turn{Input: agenteval.Conversation{{Role: agenteval.RoleUser, Content: inputs[i].content}}, ExpectedOutput: targets[i], Pos: inputs[i].pos})
		}
	}
	t.User = &agenteval.SimulatedUser{Instruction: inputs[0].content, TerminatingCondition: inputs[0].terminating}
	d.inspectMode(t)
	if t.User != nil {
		d.checkSimulated(t, at)
		d.simulatedLimitDifference(input)
	}
	return t
}

type datasetInput struct {
	content, terminating string
	pos                  agenteval.Pos
}

// datasetInputs reads input: a list of {role, content, terminating_condition}.
func (d *decoder) datasetInputs(n *yaml.Node) []datasetInput {
	rn := resolve(n)
	if rn == nil || rn.Kind != yaml.SequenceNode || len(rn.Content) == 0 {
		d.fail(n, "input must be a non-empty list of {role, content, terminating_condition}; input[0].content is the user's task")
		return nil
	}
	var out []datasetInput
	for i, item := range rn.Content {
		in := datasetInput{pos: d.pos(resolve(item))}
		for _, f := range d.fields(item, "an input message", []string{"role", "content", "terminating_condition"}) {
			switch f.key {
			case "role":
				if r := d.str(f.value, "role"); r != "user" {
					d.fail(f.value, "input[%d] has role %q; agent_inspect's input messages are the user's (role: user)", i, r)
				}
			case "content":
				in.content = d.text(f.value, "content")
			case "terminating_condition":
				in.terminating = strings.TrimSpace(d.text(f.value, "terminating_condition"))
			}
		}
		if strings.TrimSpace(in.content) == "" {
			d.fail(item, "input[%d] has no content; it is what the simulated user wants (its instruction)", i)
			return nil
		}
		out = append(out, in)
	}
	return out
}

// datasetTargets reads target: "" or null for none, a string, or a list of
// strings (one per input message).
func (d *decoder) datasetTargets(n *yaml.Node) []string {
	rn := resolve(n)
	if rn == nil || isNull(rn) {
		return nil
	}
	switch rn.Kind {
	case yaml.ScalarNode:
		if s := d.str(rn, "target"); s != "" {
			return []string{s}
		}
		return nil
	case yaml.SequenceNode:
		var out []string
		for _, it := range rn.Content {
			out = append(out, d.str(it, "target"))
		}
		return out
	}
	d.fail(n, "target must be a string or a list of strings (the expected responses), not %s", kindName(n))
	return nil
}

func (d *decoder) datasetMetadata(n *yaml.Node, t *agenteval.Test, at map[string]*yaml.Node) {
	toolsKey := ""
	for _, f := range d.fields(n, "metadata", nil) {
		switch f.key {
		case "subgoals":
			at["subgoals"] = f.keyN
			t.Subgoals = d.inspectSubgoals(f.value)
		case "expected_tools", "expectedTools", "expected_tool_calls":
			if toolsKey != "" {
				d.fail(f.keyN, "metadata has both %s and %s; keep one list of expected tools", toolsKey, f.key)
				continue
			}
			toolsKey = f.key
			at["expected_tool_calls"] = f.keyN
			t.ExpectedToolCalls = d.datasetTools(f.value, f.key)
			if len(t.ExpectedToolCalls) > 0 {
				// agent_inspect's converter makes them expected calls
				// without a turn (and reads only expected_tools), which
				// ToolCorrectnessMetric never validates; its runner
				// scores subgoals only.
				d.differFrom("agent_inspect", f.keyN, "dataset-expected-tools",
					"metadata.%s: agent_inspect does not score them: its converter makes expected calls without a turn, which its tool correctness never validates, and its runner scores subgoals only; "+
						"here they are scored as expected_tool_calls, met in any turn, and count in the test's score. Remove them for agent_inspect's score", f.key)
			}
		default:
			if near := suggest.Closest(f.key, metadataKeys); near != "" && near != f.key {
				d.fail(f.keyN, "unknown key %q in metadata; did you mean %q?", f.key, near)
				continue
			}
			t.Metadata[f.key] = d.value(f.value)
		}
	}
}

// datasetTools reads a list of expected tools: strings as the converter
// parses them, or objects.
func (d *decoder) datasetTools(n *yaml.Node, key string) []agenteval.ExpectedCall {
	rn := resolve(n)
	if rn == nil || isNull(rn) {
		return nil
	}
	if rn.Kind != yaml.SequenceNode {
		d.fail(n, "metadata.%s must be a list of tool strings (\"[{'tool_code': 'f(a=1)'}]\") or objects", key)
		return nil
	}
	var out []agenteval.ExpectedCall
	for _, item := range rn.Content {
		it := resolve(item)
		switch {
		case it != nil && it.Kind == yaml.ScalarNode:
			if c, ok := d.toolString(it); ok {
				out = append(out, c)
			}
		case it != nil && it.Kind == yaml.SequenceNode:
			// The literal written as JSON: its first element counts, as in
			// the converter.
			if len(it.Content) == 0 {
				d.fail(it, "an expected tool is an empty list; give [{\"tool_code\": \"f(a=1)\"}]")
				continue
			}
			if c, ok := d.toolObject(it.Content[0]); ok {
				out = append(out, c)
			}
		default:
			if c, ok := d.toolObject(item); ok {
				out = append(out, c)
			}
		}
	}
	return out
}

// toolString reads one tool string as the converter does.
func (d *decoder) toolString(n *yaml.Node) (agenteval.ExpectedCall, bool) {
	tc := parseToolString(n.Value)
	if tc.unknown {
		d.fail(n, "agent_inspect cannot read this expected tool (its converter names it \"unknown\"): write it as \"[{'tool_code': 'tool_name(arg=value, ...)'}]\"")
		return agenteval.ExpectedCall{}, false
	}
	return tc.expected(d.pos(n)), true
}

// expected makes the expected call: each argument an exact value, compared
// as text, or the converter's LLM check ("No Remarks", an expression);
// "$AnyValue" accepts any value.
func (tc toolCode) expected(pos agenteval.Pos) agenteval.ExpectedCall {
	c := agenteval.ExpectedCall{Tool: tc.tool, Args: map[string]any{}, Pos: pos}
	for _, k := range tc.names {
		v := tc.args[k]
		switch {
		case v == "$AnyValue":
			c.Args[k] = map[string]any{"$any": true}
		case checkedValue(k, v):
			c.Args[k] = map[string]any{"$check": v}
		default:
			c.Args[k] = map[string]any{"$text": v}
		}
	}
	return c
}

// toolObject reads an expected tool written as an object: {tool_code,
// output, turn}, or an expected call as EvaluationSample JSON and our
// suites write it ({tool, expected_parameters | args, expected_output |
// output, turn}).
func (d *decoder) toolObject(n *yaml.Node) (agenteval.ExpectedCall, bool) {
	rn := resolve(n)
	if rn == nil || rn.Kind != yaml.MappingNode {
		d.fail(n, "an expected tool must be a tool string or an object, not %s", kindName(n))
		return agenteval.ExpectedCall{}, false
	}
	hasCode := false
	for i := 0; i+1 < len(rn.Content); i += 2 {
		if rn.Content[i].Value == "tool_code" {
			hasCode = true
		}
	}
	if !hasCode {
		return d.expectedCall(rn, true)
	}
	var c agenteval.ExpectedCall
	var output *any
	turn, ok := 0, false
	for _, f := range d.fields(rn, "an expected tool", []string{"tool_code", "output", "turn"}) {
		switch f.key {
		case "tool_code":
			code := d.str(f.value, "tool_code")
			if strings.TrimSpace(code) == "" {
				d.fail(f.value, "tool_code is empty; write tool_name(arg=value, ...)")
				continue
			}
			c = parseToolCode(code).expected(d.pos(rn))
			ok = true
		case "output":
			if v := d.value(f.value); v != nil && v != "$AnyValue" {
				output = &v
			}
		case "turn":
			if k, good := d.turn(f.value, "an expected tool's turn", true); good {
				turn = k
			}
		}
	}
	c.Output, c.Turn = output, turn
	return c, ok
}
