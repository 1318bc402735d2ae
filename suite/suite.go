package suite

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agenteval/agenteval"
	"go.yaml.in/yaml/v4"
)

// Suite is a loaded eval file.
type Suite struct {
	File        string
	Name        string
	Description string
	Tests       []agenteval.Test
	Targets     []TargetSpec
	// DefaultTarget names the target from execution.target, if given.
	DefaultTarget string
	// Matrix lists the targets the suite runs against, one run each
	// (AgentV's execution.targets, or providers); empty means one run
	// against DefaultTarget.
	Matrix []string
	Judge  *JudgeSpec
	Tools  []ToolMock
	// Threshold is execution.threshold or threshold; nil means 0.8.
	Threshold *float64
	// Workers is how many tests run at once when the command line does
	// not say (execution.workers, evaluate_options.max_concurrency).
	Workers int
	// Tags and Version are the file's metadata; run --tag selects by tag.
	Tags    []string
	Version string
	// Format says what the file was read as: "agenteval" (YAML, AgentV's
	// v4 keys and ours), "promptfoo-style" (AgentV v5 keys), "agentv-jsonl",
	// or "agent_inspect".
	Format string
	// Warnings are problems that do not stop the file: unknown keys,
	// unset environment variables, features that are ignored here, each
	// at its position. Options.Strict makes them errors.
	Warnings []*agenteval.PosError
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
	// BaseURL and APIKey, when set, override the provider's environment
	// (an AgentV targets.yaml gives them per target).
	BaseURL string
	APIKey  string
	HTTP    *HTTPTarget
	// Command is the argv of an agent process speaking JSON lines.
	Command []string
	Env     map[string]string
	Dir     string
	// Replay is a results or conversations file to replay.
	Replay  string
	Timeout time.Duration
	// Template is AgentV's cli provider: a shell command template with
	// {PROMPT}, {PROMPT_FILE}, {OUTPUT_FILE}, {FILES}, {EVAL_ID} and
	// {ATTEMPT}; the agent writes its reply to {OUTPUT_FILE}.
	Template string
	// FilesFormat formats each input file in {FILES} ({path},
	// {basename}); default {path}.
	FilesFormat string
	// Unsupported, when set, says why this target cannot run here (an
	// AgentV coding agent such as codex or claude); choosing it is an
	// error for this target only.
	Unsupported string
	Pos         agenteval.Pos
	// alias names the target this one stands for (use_target).
	alias string
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
	// NoJudgeNeeded makes a missing judge a warning, not an error:
	// validate checks the file, and only run needs the judge.
	NoJudgeNeeded bool
	// Strict makes every warning an error.
	Strict bool
	// Env looks up environment variables; nil means the process environment.
	Env func(string) (string, bool)
}

// Load reads and validates an eval file: YAML (AgentV's v4 and v5 keys,
// and ours), AgentV's JSONL (one test per line, with an optional sidecar
// YAML), or agent_inspect JSON. The error, when not nil, joins every
// problem found, each a *agenteval.PosError.
func Load(path string, opt Options) (*Suite, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read eval file: %w", err)
	}
	return Parse(path, data, opt)
}

// Parse is Load on bytes already read; path is used in messages and to
// find the files the eval file names.
func Parse(path string, data []byte, opt Options) (*Suite, error) {
	env := opt.Env
	if env == nil {
		env = osEnv
	}
	d := &decoder{file: path, env: env, problems: &problems{}}
	var s *Suite
	switch ext := strings.ToLower(filepath.Ext(path)); {
	case ext == ".json" && looksLikeInspect(data):
		s = d.inspect(data)
		if s != nil {
			s.Format = "agent_inspect"
		}
	case ext == ".jsonl":
		d.lenient = true
		s = d.jsonlSuite(data)
	default:
		d.lenient = true
		s = d.yamlSuite(data)
	}
	if s != nil {
		d.validate(s, opt)
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
	}
	if len(d.errs) > 0 {
		return s, errors.Join(d.errs...)
	}
	return s, nil
}

// parse reads data (YAML, or JSON, which is YAML) into a node tree; a
// syntax error is recorded at its position, as not valid <lang>.
func (d *decoder) parse(data []byte, lang string) (*yaml.Node, bool) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		var le *yaml.LoadError
		if errors.As(err, &le) {
			d.errs = append(d.errs, &agenteval.PosError{File: d.file, Line: le.Mark.Line, Col: le.Mark.Column, Msg: "not valid " + lang + ": " + le.Message})
		} else {
			d.errs = append(d.errs, &agenteval.PosError{File: d.file, Msg: "not valid " + lang + ": " + err.Error()})
		}
		return nil, false
	}
	return resolve(&doc), true
}

// IsInspect reports whether JSON data looks like agent_inspect samples
// rather than a dataset.
func IsInspect(data []byte) bool { return looksLikeInspect(data) }

func looksLikeInspect(data []byte) bool {
	return bytes.Contains(data, []byte(`"sub_goals"`)) || bytes.Contains(data, []byte(`"conversation"`)) || bytes.Contains(data, []byte(`"user_instruction"`))
}
