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
	"github.com/agenteval/agenteval/grade"
	"github.com/agenteval/agenteval/internal/bytesize"
	"go.yaml.in/yaml/v4"
)

// Suite is a loaded eval file.
type Suite struct {
	File string
	// Schema names what the file was read as: SchemaYAML, SchemaAgentV5,
	// SchemaAgentVJSONL, SchemaInspectSample or SchemaInspectDataset.
	Schema      string
	Name        string
	Description string
	// Tests are the suite's tests, in file order; empty when they were
	// left in the file (Options.Stream, Streamed), where NumTests, Info,
	// EachTest and a TestReader find them.
	Tests   []agenteval.Test
	Targets []TargetSpec
	// DefaultTarget names the target from execution.target, if given.
	DefaultTarget string
	// Matrix lists the targets the suite runs against, one run each
	// (AgentV's execution.targets, or providers); empty means one run
	// against DefaultTarget.
	Matrix []string
	Judge  *JudgeSpec
	Tools  []ToolMock
	// MCPServers are MCP servers whose tools every model target of the
	// file uses, beside its own.
	MCPServers []MCPServer
	// Threshold is execution.threshold or threshold; nil means 0.8.
	Threshold *float64
	// Workers is how many tests run at once when the command line does
	// not say (execution.workers, evaluate_options.max_concurrency).
	Workers int
	// Tags and Version are the file's metadata; run --tag selects by tag.
	Tags    []string
	Version string
	// Warnings are problems that do not stop the file: unknown keys,
	// unset environment variables, features that are ignored here, each
	// at its position. Options.Strict makes them errors.
	Warnings []*agenteval.PosError
	// Differences are the places this file runs with another meaning
	// than AgentV (or agent_inspect, or promptfoo) gives it, one per kind
	// with its first position. A run says them once at its start.
	Differences []Difference

	// stream, when set, holds the tests, which are left in the file
	// (Options.Stream; stream.go).
	stream *stream
}

// TargetSpec is one entry of the suite's targets list. Exactly one of
// Model, HTTP, Command and Replay is set, or Unsupported says why the
// target cannot run here.
type TargetSpec struct {
	Name string
	// Model is provider:model; the model itself is the agent.
	Model       string
	MaxSteps    int
	Temperature *float64
	MaxTokens   int
	// SystemPrompt, when set, is what a model target sends as the system
	// message of a conversation that has none ("" sends none, on purpose);
	// nil leaves it to the project file's system_prompt.
	SystemPrompt *string
	// BaseURL and APIKey, when set, override the provider's environment
	// (an AgentV targets.yaml gives them per target).
	BaseURL string
	APIKey  string
	HTTP    *HTTPTarget
	// A2A is an agent that speaks the A2A protocol (agent card, JSON-RPC).
	A2A *ProtocolTarget
	// AGUI is an agent that speaks AG-UI (RunAgentInput in, SSE events out).
	AGUI *ProtocolTarget
	// API is the wire API a model target speaks: "chat" (Chat Completions,
	// the default when "") or "responses" (OpenAI's Responses API).
	API string
	// Store is the Responses API's store flag: nil or true threads a
	// conversation by previous_response_id, false sends the whole input
	// every call. Only with API "responses".
	Store *bool
	// MCPServers give a model target real tools: each server's tools are
	// offered to the model, and its calls run on the server.
	MCPServers []MCPServer
	// Command is the argv of an agent process speaking JSON lines.
	Command []string
	Env     map[string]string
	Dir     string
	// Replay is a results or conversations file to replay.
	Replay  string
	Timeout time.Duration
	// Template is AgentV's cli provider: a command template with
	// {PROMPT}, {PROMPT_FILE}, {OUTPUT_FILE}, {FILES}, {EVAL_ID} and
	// {ATTEMPT}; the agent writes its reply to {OUTPUT_FILE}. It is the
	// command as written, for messages; TemplateArgv is what runs: its
	// arguments, split before anything was filled in, the environment's
	// values in and the placeholders as written, each filled in within
	// its own argument every turn.
	Template     string
	TemplateArgv []string
	// FilesFormat formats each input file in {FILES} ({path},
	// {basename}); default {path}.
	FilesFormat string
	// Unsupported, when set, says why this target cannot run here (an
	// AgentV coding agent such as codex or claude); choosing it is an
	// error for this target only.
	Unsupported string
	// BaseDir is where the target's relative paths start; "" means the
	// eval file's directory. A project file's targets start at its own.
	BaseDir string
	Pos     agenteval.Pos
	// alias names the target this one stands for (use_target).
	alias string
}

// ProtocolTarget is an agent reached over a standard agent protocol (A2A,
// AG-UI) at URL, with extra request headers (auth).
type ProtocolTarget struct {
	URL     string
	Headers map[string]string
}

// MCPServer is an MCP server whose tools a model target uses: a program
// speaking MCP on its stdin and stdout (Command, with Env and Dir), or a
// Streamable HTTP endpoint (URL, with Headers).
type MCPServer struct {
	// Name labels the server in messages; default its command or URL.
	Name    string
	Command []string
	Env     map[string]string
	Dir     string
	URL     string
	Headers map[string]string
	// Tools, when set, offers only these of the server's tools.
	Tools []string
	// BaseDir is where a relative Command or Dir starts: the file that
	// declared the server.
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
	Model string
	// API is the wire API the judge speaks: "chat" (default) or
	// "responses".
	API     string
	Samples int
	Pos     agenteval.Pos
	// FromAgentV says AgentV's configuration chose it (grader_target,
	// defaults.grader): a judge in agenteval.yaml, agenteval's own
	// project file, wins over it.
	FromAgentV bool
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
	// NoJudgeNeeded makes a missing judge a warning, not an error:
	// validate checks the file, and only run needs the judge.
	NoJudgeNeeded bool
	// Strict makes every warning an error.
	Strict bool
	// Env looks up environment variables; nil means the process environment.
	Env func(string) (string, bool)
	// NoExec refuses what would run a program: script graders and command
	// targets, of an eval file or a project file (--no-exec).
	NoExec bool
	// MaxFileBytes bounds the eval file, which is read whole; 0 means
	// DefaultMaxFileBytes, a negative number no limit.
	MaxFileBytes int64
	// Graders are the grader definitions an assertion's type is looked up
	// in, and its settings checked against: the caller's choice, such as
	// grade.All() with graders of its own appended. Nil means
	// grade.All(). Pass the same list to run.Options.Graders.
	Graders []*grade.Definition
	// Stream leaves the tests of a large eval file in the file: Load reads
	// and checks every test as usual, keeps only what planning a run
	// needs of each (TestInfo), and leaves Tests empty; NumTests, Info,
	// EachTest and a TestReader read them again a chunk at a time, and
	// LoadTests brings them into memory. It applies to YAML whose tests:
	// is one block sequence in the file itself, the common shape; any
	// other file is read into memory as without it (Suite.Streamed says
	// which). The file must not change until its tests are read.
	Stream bool
	// Visit, when set, is called with each test of the suite as Load
	// reads it, in file order: what a caller wants to know of every test
	// (counts, say) without reading a streamed suite's tests again.
	Visit func(t *agenteval.Test)
}

// DefaultMaxFileBytes bounds an eval file: it is parsed whole, and its
// node tree is several times its size.
const DefaultMaxFileBytes = 64 << 20

// Load reads and validates an eval file: YAML (AgentV's v4 and v5 keys,
// and ours), AgentV's JSONL (one test per line, with an optional sidecar
// YAML), or agent_inspect JSON. The error, when not nil, joins every
// problem found, each a *agenteval.PosError.
func Load(path string, opt Options) (*Suite, error) {
	limit := opt.MaxFileBytes
	if limit == 0 {
		limit = DefaultMaxFileBytes
	}
	if st, err := os.Stat(path); err == nil && limit > 0 && st.Size() > limit {
		return nil, &agenteval.PosError{File: path, Msg: fmt.Sprintf("the eval file is %s, over the %s limit for one file; raise it with --max-file-size, or split it into several files", bytesize.Format(st.Size()), bytesize.Format(limit))}
	}
	if opt.Stream && chunked {
		if ext := strings.ToLower(filepath.Ext(path)); ext == ".yaml" || ext == ".yml" {
			if s, ok, err := loadStreamed(path, opt); ok {
				return s, err
			}
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read eval file: %w", err)
	}
	return Parse(path, data, opt)
}

// Parse is Load on bytes already read; path is used in messages and to
// find the files the eval file names. A list of graders in opt that does
// not pass grade.Validate is the one error, and no suite is returned.
// The suite is always in memory: Options.Stream is for Load.
func Parse(path string, data []byte, opt Options) (*Suite, error) {
	d, err := newDecoder(path, opt)
	if err != nil {
		return nil, err
	}
	var s *Suite
	schema := ""
	ext := strings.ToLower(filepath.Ext(path))
	if ext != ".yaml" && ext != ".yml" && ext != ".jsonl" {
		schema = InspectSchema(data)
	}
	switch {
	case schema == SchemaInspectSample:
		s = d.inspect(data)
	case schema == SchemaInspectDataset:
		s = d.inspectDataset(data)
	case ext == ".jsonl":
		d.lenient = true
		s = d.jsonlSuite(data)
	default:
		d.lenient = true
		s = d.yamlSuite(data)
	}
	return d.finish(s, opt)
}

// newDecoder is the decoder of an eval file loaded with opt.
func newDecoder(path string, opt Options) (*decoder, error) {
	env := opt.Env
	if env == nil {
		env = osEnv
	}
	graders := opt.Graders
	if graders == nil {
		graders = grade.All()
	} else if err := grade.Validate(graders); err != nil {
		return nil, err
	}
	return &decoder{file: path, env: env, problems: &problems{}, graders: graders, ownGraders: opt.Graders != nil}, nil
}

// finish checks what spans the suite's tests, and gives it its warnings
// and the error that joins every problem found.
func (d *decoder) finish(s *Suite, opt Options) (*Suite, error) {
	if s != nil {
		if d.check != nil {
			d.check.finish(s)
		} else {
			d.validate(s, opt)
			if opt.Visit != nil {
				for i := range s.Tests {
					opt.Visit(&s.Tests[i])
				}
			}
		}
	}
	sortErrors(d.errs)
	warns := append([]*agenteval.PosError(nil), d.warns...)
	sortPos(warns)
	if opt.Strict {
		for _, w := range warns {
			d.errs = append(d.errs, w)
		}
		warns = nil
		sortErrors(d.errs)
	}
	if s != nil {
		s.Warnings = warns
		s.Differences = sortedDifferences(d.diffs)
	}
	if len(d.errs) > 0 {
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
			if strings.Contains(msg, "cannot start any token") && tabIndents(data, le.Mark.Line, le.Mark.Column) {
				// The parser's words do not say that the character is a
				// tab, which an editor shows as spaces.
				msg = "a tab indents this line; YAML indents with spaces"
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

// tabIndents says whether the given line of data (counted from 1) has a
// tab at col, or in its indentation up to col.
func tabIndents(data []byte, line, col int) bool {
	for i := 1; i < line; i++ {
		nl := bytes.IndexByte(data, '\n')
		if nl < 0 {
			return false
		}
		data = data[nl+1:]
	}
	if nl := bytes.IndexByte(data, '\n'); nl >= 0 {
		data = data[:nl]
	}
	runes := []rune(string(data))
	if col >= 1 && col <= len(runes) && runes[col-1] == '\t' {
		return true
	}
	for _, r := range runes[:min(max(col, 0), len(runes))] {
		if r == '\t' {
			return true
		}
		if r != ' ' {
			return false
		}
	}
	return false
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

// IsInspect reports whether JSON data is agent_inspect samples (either
// schema) rather than a dataset.
func IsInspect(data []byte) bool { return InspectSchema(data) != "" }
