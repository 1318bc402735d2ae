package suite

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/bytesize"
	"go.yaml.in/yaml/v4"
)

// Suite is a loaded eval file.
type Suite struct {
	File string
	// Schema names what the file was read as: SchemaYAML,
	// SchemaInspectSample or SchemaInspectDataset.
	Schema      string
	Name        string
	Description string
	Tests       []agenteval.Test
	Targets     []TargetSpec
	// DefaultTarget names the target from execution.target, if given.
	DefaultTarget string
	Judge         *JudgeSpec
	Tools         []ToolMock
	// Threshold is execution.threshold or threshold; nil means 0.8.
	Threshold *float64
}

// TargetSpec is one entry of the suite's targets list. Exactly one of
// Model, HTTP, Command and Replay is set.
type TargetSpec struct {
	Name string
	// Model is provider:model; the model itself is the agent.
	Model       string
	MaxSteps    int
	Temperature *float64
	MaxTokens   int
	HTTP        *HTTPTarget
	// Command is the argv of an agent process speaking JSON lines.
	Command []string
	Env     map[string]string
	Dir     string
	// Replay is a results or conversations file to replay.
	Replay  string
	Timeout time.Duration
	// BaseDir is where the target's relative paths start; "" means the
	// eval file's directory. A project file's targets start at its own.
	BaseDir string
	Pos     agenteval.Pos
}

// HTTPTarget is an agent behind an HTTP endpoint.
type HTTPTarget struct {
	URL     string
	Headers map[string]string
}

// JudgeSpec configures the suite's judge.
type JudgeSpec struct {
	Model   string
	Samples int
	Pos     agenteval.Pos
}

// ToolMock is a function the model target may call, answered with a mock
// result: Result by default, or the first Cases entry whose When arguments
// all match the call's.
type ToolMock struct {
	Name        string
	Description string
	Parameters  map[string]any
	Result      any
	Cases       []MockCase
	Pos         agenteval.Pos
}

// MockCase is a conditional mock result.
type MockCase struct {
	When   map[string]any
	Result any
}

// Options adjust loading.
type Options struct {
	// JudgeAvailable says a judge comes from outside the file (--judge or
	// AGENTEVAL_JUDGE), so judged assertions are allowed without judge:.
	JudgeAvailable bool
	// SimulatorAvailable says a model for simulated users comes from
	// outside the file (--simulator).
	SimulatorAvailable bool
	// Env looks up environment variables; nil means the process environment.
	Env func(string) (string, bool)
	// NoExec refuses what would run a program: script graders and command
	// targets (--no-exec).
	NoExec bool
	// MaxFileBytes bounds the eval file, which is read whole; 0 means
	// DefaultMaxFileBytes, a negative number no limit.
	MaxFileBytes int64
}

// DefaultMaxFileBytes bounds an eval file: it is parsed whole, and its
// node tree is several times its size.
const DefaultMaxFileBytes = 64 << 20

// Load reads and validates an eval file: YAML, or agent_inspect JSON. The
// error, when not nil, joins every problem found, each a *agenteval.PosError.
func Load(path string, opt Options) (*Suite, error) {
	limit := opt.MaxFileBytes
	if limit == 0 {
		limit = DefaultMaxFileBytes
	}
	if st, err := os.Stat(path); err == nil && limit > 0 && st.Size() > limit {
		return nil, &agenteval.PosError{File: path, Msg: fmt.Sprintf("the eval file is %s, over the %s limit for one file; raise it with --max-file-size, or split it into several files", bytesize.Format(st.Size()), bytesize.Format(limit))}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read eval file: %w", err)
	}
	return Parse(path, data, opt)
}

// Parse is Load on bytes already read; path is used in messages.
func Parse(path string, data []byte, opt Options) (*Suite, error) {
	env := opt.Env
	if env == nil {
		env = osEnv
	}
	d := &decoder{file: path, env: env}
	var s *Suite
	schema := ""
	if ext := strings.ToLower(filepath.Ext(path)); ext != ".yaml" && ext != ".yml" {
		schema = InspectSchema(data)
	}
	switch schema {
	case SchemaInspectSample:
		s = d.inspect(data)
	case SchemaInspectDataset:
		s = d.inspectDataset(data)
	default:
		s = d.yamlSuite(data)
	}
	if s != nil {
		d.validate(s, opt)
	}
	if len(d.errs) > 0 {
		sortErrors(d.errs)
		return s, errors.Join(d.errs...)
	}
	return s, nil
}

// parse reads data (YAML, or JSON, which is YAML) into a node tree; a
// syntax error is recorded at its position, as not valid <lang>.
func (d *decoder) parse(data []byte, lang string) (*yaml.Node, bool) {
	if !d.checkText(data) {
		return nil, false
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	err := dec.Decode(&doc)
	if errors.Is(err, io.EOF) {
		err = nil // an empty file, said below
	}
	if err == nil {
		// A second document would be ignored; say so instead.
		var next yaml.Node
		if e2 := dec.Decode(&next); e2 == nil {
			d.errs = append(d.errs, &agenteval.PosError{File: d.file, Line: next.Line, Col: next.Column,
				Msg: "a second YAML document (after ---); an eval file is one document: put all its tests under one tests:, or split it into files"})
			return nil, false
		} else if !errors.Is(e2, io.EOF) {
			err = e2
		}
	}
	if err != nil {
		var le *yaml.LoadError
		if errors.As(err, &le) {
			msg := le.Message
			if strings.Contains(msg, "exceeded max depth") {
				msg = "it nests deeper than 10,000 levels; no eval file needs that many, so this one is probably generated wrong"
			}
			d.errs = append(d.errs, &agenteval.PosError{File: d.file, Line: le.Mark.Line, Col: le.Mark.Column, Msg: "not valid " + lang + ": " + msg})
		} else {
			d.errs = append(d.errs, &agenteval.PosError{File: d.file, Msg: "not valid " + lang + ": " + err.Error()})
		}
		return nil, false
	}
	if doc.Kind == 0 {
		return nil, true // an empty file, or only comments
	}
	if !d.checkAliases(&doc) {
		return nil, false
	}
	return resolve(&doc), true
}

// checkText reports, at its line and column, the first byte that cannot be
// in a text file: invalid UTF-8, or a control character.
func (d *decoder) checkText(data []byte) bool {
	line, col := 1, 1
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			d.errs = append(d.errs, &agenteval.PosError{File: d.file, Line: line, Col: col,
				Msg: fmt.Sprintf("byte 0x%02X is not valid UTF-8; save the eval file as UTF-8", data[i])})
			return false
		case r < 0x20 && r != '\n' && r != '\r' && r != '\t', r == 0x7F:
			d.errs = append(d.errs, &agenteval.PosError{File: d.file, Line: line, Col: col,
				Msg: fmt.Sprintf("control character 0x%02X; an eval file is text (is this a binary file?)", r)})
			return false
		case r == '\n':
			line, col = line+1, 1
		case i == 0 && r == '\uFEFF': // a byte-order mark
		default:
			col++
		}
		i += n
	}
	return true
}

func (d *decoder) yamlSuite(data []byte) *Suite {
	lang := "YAML"
	if strings.EqualFold(filepath.Ext(d.file), ".json") {
		lang = "JSON"
	}
	root, ok := d.parse(data, lang)
	if !ok {
		return nil
	}
	if root == nil || isNull(root) {
		d.errs = append(d.errs, &agenteval.PosError{File: d.file, Line: 1, Col: 1, Msg: "the eval file is empty; it needs at least tests:"})
		return nil
	}
	s := &Suite{File: d.file, Schema: SchemaYAML}
	var testsNode *yaml.Node
	var suiteInput agenteval.Conversation
	for _, f := range d.fields(root, "the eval file", suiteKeys) {
		switch f.key {
		case "name":
			s.Name = d.str(f.value, "name")
		case "description":
			s.Description = d.str(f.value, "description")
		case "input":
			suiteInput = d.messages(f.value, "input")
		case "tests":
			testsNode = f.value
		case "execution":
			for _, e := range d.fields(f.value, "execution", []string{"threshold", "target"}) {
				switch e.key {
				case "threshold":
					s.Threshold = d.threshold(e.value)
				case "target":
					s.DefaultTarget = d.str(e.value, "execution.target")
				}
			}
		case "threshold":
			s.Threshold = d.threshold(f.value)
		case "targets":
			s.Targets = d.targets(f.value)
		case "judge":
			s.Judge = d.judge(f.value)
		case "tools":
			s.Tools = d.tools(f.value)
		case "metadata", "vars":
			// Suite-level metadata is kept by tests that do not set their own.
		}
	}
	if testsNode == nil {
		d.fail(root, "the eval file has no tests:; add a list of tests, each with an id and an input")
		return s
	}
	tn := resolve(testsNode)
	if tn == nil || tn.Kind != yaml.SequenceNode {
		d.fail(testsNode, "tests must be a list, not %s", kindName(testsNode))
		return s
	}
	if len(tn.Content) == 0 {
		d.fail(tn, "tests is empty; add at least one test")
	}
	for i, item := range tn.Content {
		t := d.test(item, i)
		if t == nil {
			continue
		}
		if len(t.Input) == 0 && len(suiteInput) > 0 {
			t.Input = append(agenteval.Conversation(nil), suiteInput...)
		}
		t.Suite = s.Name
		if t.Suite == "" {
			t.Suite = strings.TrimSuffix(filepath.Base(d.file), filepath.Ext(d.file))
		}
		s.Tests = append(s.Tests, *t)
	}
	return s
}

var suiteKeys = []string{"name", "description", "input", "tests", "execution", "threshold", "targets", "judge", "tools", "metadata", "vars"}

func (d *decoder) threshold(n *yaml.Node) *float64 {
	v, ok := d.number(n, "threshold")
	if !ok {
		return nil
	}
	if !(v >= 0 && v <= 1) {
		d.fail(n, "threshold %v is outside [0, 1]", v)
		return nil
	}
	return &v
}

var targetKeys = []string{"name", "model", "provider", "max_steps", "temperature", "max_tokens", "http", "url", "headers", "command", "env", "dir", "replay", "timeout"}

func (d *decoder) targets(n *yaml.Node) []TargetSpec {
	n = resolve(n)
	if n == nil || n.Kind != yaml.SequenceNode {
		d.fail(n, "targets must be a list of targets, not %s", kindName(n))
		return nil
	}
	var out []TargetSpec
	names := map[string]int{}
	for _, item := range n.Content {
		t := TargetSpec{Pos: d.pos(item)}
		var provider, model string
		kinds := 0
		for _, f := range d.fields(item, "a target", targetKeys) {
			switch f.key {
			case "name":
				t.Name = d.str(f.value, "name")
			case "model":
				model = d.str(f.value, "model")
			case "provider":
				provider = d.str(f.value, "provider")
			case "max_steps":
				t.MaxSteps, _ = d.integer(f.value, "max_steps")
			case "temperature":
				if v, ok := d.number(f.value, "temperature"); ok {
					t.Temperature = &v
				}
			case "max_tokens":
				t.MaxTokens, _ = d.integer(f.value, "max_tokens")
			case "http":
				kinds++
				t.HTTP = &HTTPTarget{}
				hn := resolve(f.value)
				if hn != nil && hn.Kind == yaml.ScalarNode {
					t.HTTP.URL = d.str(hn, "http")
					continue
				}
				for _, h := range d.fields(f.value, "http", []string{"url", "headers"}) {
					switch h.key {
					case "url":
						t.HTTP.URL = d.str(h.value, "http.url")
					case "headers":
						t.HTTP.Headers = d.strMap(h.value, "http.headers")
					}
				}
			case "url":
				kinds++
				t.HTTP = &HTTPTarget{URL: d.str(f.value, "url")}
			case "headers":
				if t.HTTP == nil {
					t.HTTP = &HTTPTarget{}
				}
				t.HTTP.Headers = d.strMap(f.value, "headers")
			case "command":
				kinds++
				t.Command = d.strList(f.value, "command")
				if len(t.Command) == 0 || t.Command[0] == "" {
					d.fail(f.value, "command needs the program and its arguments as a list, e.g. [python3, agent.py]")
				}
			case "env":
				t.Env = d.strMap(f.value, "env")
			case "dir":
				t.Dir = d.str(f.value, "dir")
			case "replay":
				kinds++
				t.Replay = d.str(f.value, "replay")
			case "timeout":
				t.Timeout, _ = d.duration(f.value, "timeout")
			}
		}
		if model != "" || provider != "" {
			kinds++
			t.Model = model
			if provider != "" && !strings.Contains(model, ":") {
				t.Model = provider + ":" + model
			}
			if !strings.Contains(t.Model, ":") {
				d.fail(item, "target %q: model must be provider:model, such as openai:gpt-4o-mini", t.Name)
			}
		}
		switch {
		case t.Name == "":
			d.fail(item, "a target needs a name, so that --target can pick it")
		case names[t.Name] > 0:
			d.fail(item, "target name %q is used twice (first on line %d)", t.Name, names[t.Name])
		default:
			names[t.Name] = item.Line
		}
		if kinds == 0 {
			d.fail(item, "target %q needs one of model, http, command or replay", t.Name)
		} else if kinds > 1 {
			d.fail(item, "target %q has more than one of model, http, command and replay; keep one", t.Name)
		}
		if t.HTTP != nil && t.HTTP.URL == "" {
			d.fail(item, "target %q: http needs a url", t.Name)
		}
		out = append(out, t)
	}
	return out
}

func (d *decoder) strMap(n *yaml.Node, what string) map[string]string {
	out := map[string]string{}
	for _, f := range d.fields(n, what, nil) {
		out[f.key] = d.str(f.value, what+"."+f.key)
	}
	return out
}

func (d *decoder) judge(n *yaml.Node) *JudgeSpec {
	j := &JudgeSpec{Pos: d.pos(n)}
	if rn := resolve(n); rn != nil && rn.Kind == yaml.ScalarNode {
		j.Model = d.str(rn, "judge")
	} else {
		var provider string
		for _, f := range d.fields(n, "judge", []string{"model", "provider", "samples"}) {
			switch f.key {
			case "model":
				j.Model = d.str(f.value, "judge.model")
			case "provider":
				provider = d.str(f.value, "judge.provider")
			case "samples":
				j.Samples, _ = d.integer(f.value, "judge.samples")
				if j.Samples < 1 || j.Samples%2 == 0 {
					d.fail(f.value, "judge.samples must be a positive odd number, for a clear majority")
				}
			}
		}
		if provider != "" && !strings.Contains(j.Model, ":") {
			j.Model = provider + ":" + j.Model
		}
	}
	if !strings.Contains(j.Model, ":") {
		d.fail(n, "judge must be provider:model, such as openai:gpt-4o-mini")
	}
	return j
}

func (d *decoder) tools(n *yaml.Node) []ToolMock {
	n = resolve(n)
	if n == nil || n.Kind != yaml.SequenceNode {
		d.fail(n, "tools must be a list of tools, not %s", kindName(n))
		return nil
	}
	var out []ToolMock
	for _, item := range n.Content {
		t := ToolMock{Pos: d.pos(item)}
		for _, f := range d.fields(item, "a tool", []string{"name", "description", "parameters", "result", "results"}) {
			switch f.key {
			case "name":
				t.Name = d.str(f.value, "tool name")
			case "description":
				t.Description = d.str(f.value, "tool description")
			case "parameters":
				if m, ok := d.value(f.value).(map[string]any); ok {
					t.Parameters = m
				} else {
					d.fail(f.value, "parameters must be a JSON Schema object")
				}
			case "result":
				t.Result = d.value(f.value)
			case "results":
				rn := resolve(f.value)
				if rn == nil || rn.Kind != yaml.SequenceNode {
					d.fail(f.value, "results must be a list of {when: {...}, result: ...}")
					continue
				}
				for _, c := range rn.Content {
					mc := MockCase{}
					for _, cf := range d.fields(c, "a tool result case", []string{"when", "result"}) {
						switch cf.key {
						case "when":
							if m, ok := d.value(cf.value).(map[string]any); ok {
								mc.When = m
							} else {
								d.fail(cf.value, "when must map argument names to values")
							}
						case "result":
							mc.Result = d.value(cf.value)
						}
					}
					t.Cases = append(t.Cases, mc)
				}
			}
		}
		if t.Name == "" {
			d.fail(item, "a tool needs a name")
		}
		if t.Parameters == nil {
			t.Parameters = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		out = append(out, t)
	}
	return out
}

// IsInspect reports whether JSON data is agent_inspect samples (either
// schema) rather than a dataset.
func IsInspect(data []byte) bool { return InspectSchema(data) != "" }
