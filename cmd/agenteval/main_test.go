package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenteval/agenteval/internal/fakellm"
	"github.com/agenteval/agenteval/internal/pgtest"
	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	// The PostgreSQL tests share one server, stopped when the tests end.
	testscript.Main(pgtest.Main(m), map[string]func(){
		"agenteval":  func() { os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
		"otlp-agent": func() { os.Exit(otlpAgentMain()) },
	})
}

var durationRE = regexp.MustCompile(`"duration_ms":[0-9.e+-]+`)

func TestScripts(t *testing.T) {
	examples, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		UpdateScripts:       os.Getenv("UPDATE_GOLDEN") != "",
		RequireExplicitExec: true,
		// [node:NAME]: a JS agent of testdata/agents can run (nodeserver_test.go).
		Condition: nodeAgentCondition,
		Setup: func(env *testscript.Env) error {
			env.Setenv("EXAMPLES", examples)
			env.Setenv("TRACEDATA", filepath.Join(filepath.Dir(examples), "trace", "testdata"))
			// Scripts that go run an example agent share the build cache,
			// so the agent compiles once, not once per script.
			if cache, err := exec.Command("go", "env", "GOCACHE").Output(); err == nil {
				env.Setenv("GOCACHE", strings.TrimSpace(string(cache)))
			}
			if p, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
				env.Setenv("GOPATH", strings.TrimSpace(string(p)))
				env.Setenv("GOFLAGS", "-mod=mod")
			}
			// The module cache may be set apart from GOPATH; without it the
			// example agents would download their modules again.
			if mc, err := exec.Command("go", "env", "GOMODCACHE").Output(); err == nil {
				env.Setenv("GOMODCACHE", strings.TrimSpace(string(mc)))
			}
			// The judge cache's signing key is the user's, kept outside
			// the project: each script gets its own.
			env.Setenv("AGENTEVAL_CACHE_KEY_DIR", filepath.Join(env.WorkDir, "keys"))
			env.Setenv("NO_COLOR", "1")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"fakellm":  fakeLLMCmd,
			"otlpsink": otlpSinkCmd,
			// nodeserver starts an agent of testdata/agents (nodeserver_test.go).
			"nodeserver": nodeServerCmd,
			"verdicts":   verdictsCmd,
			"totals":     totalsCmd,
			// exits N prog args... runs a program and checks its exit code;
			// stdout and stderr are kept for the checks that follow.
			"exits": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) < 2 {
					ts.Fatalf("usage: exits CODE program [args...]")
				}
				want, err := strconv.Atoi(args[0])
				if err != nil {
					ts.Fatalf("exits: bad code %q", args[0])
				}
				err = ts.Exec(args[1], args[2:]...)
				got := 0
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					got = ee.ExitCode()
				} else if err != nil {
					ts.Fatalf("exits: %v", err)
				}
				if got != want {
					ts.Fatalf("exit code %d, want %d", got, want)
				}
			},
			// zero-durations FILE rewrites every duration_ms to 0, so that
			// results compare with a golden file.
			"zero-durations": func(ts *testscript.TestScript, neg bool, args []string) {
				for _, f := range args {
					data := ts.ReadFile(f)
					out := durationRE.ReplaceAllString(data, `"duration_ms":0`)
					if f == "stdout" || f == "stderr" {
						f = f + ".txt"
					}
					ts.Check(os.WriteFile(ts.MkAbs(f), []byte(out), 0o644))
				}
			},
			// normalize-results FILE OUT keeps what a rerun must repeat:
			// it drops the run header (a new id and time per run), durations, usage (a cached call costs nothing) and the
			// fake server's tool call ids (it numbers them across runs), and
			// sorts the lines (tests finish in any order).
			"normalize-results": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 2 {
					ts.Fatalf("usage: normalize-results FILE OUT")
				}
				data := durationRE.ReplaceAllString(ts.ReadFile(args[0]), `"duration_ms":0`)
				data = usageRE.ReplaceAllString(data, "")
				data = callIDRE.ReplaceAllString(data, `"call_N"`)
				var lines []string
				for _, l := range strings.Split(strings.TrimSpace(data), "\n") {
					if !strings.HasPrefix(l, `{"record":"run"`) {
						lines = append(lines, l)
					}
				}
				sort.Strings(lines)
				ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(strings.Join(lines, "\n")+"\n"), 0o644))
			},
		},
	})
}

var (
	usageRE  = regexp.MustCompile(`,?"usage":\{[^}]*\}`)
	callIDRE = regexp.MustCompile(`"call_[0-9]+"`)
)

// verdicts extracts from results JSONL what a judge decided and nothing
// the agent wrote: per test, its verdict and score, and per score (nested
// ones included) its verdict, score and the outcome of each assertion.
// totalsCmd checks that the last command's totals on stderr are the sums
// over the results file: its model calls and tokens, and its test counts.
func totalsCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: totals RESULTS")
	}
	var calls, in, out int64
	tests, passed := 0, 0
	for _, line := range strings.Split(ts.ReadFile(args[0]), "\n") {
		var r struct {
			Record  string `json:"record"`
			Verdict string `json:"verdict"`
			Usage   *struct {
				Calls  int64 `json:"calls"`
				Input  int64 `json:"input_tokens"`
				Output int64 `json:"output_tokens"`
			} `json:"usage"`
		}
		if strings.TrimSpace(line) == "" || json.Unmarshal([]byte(line), &r) != nil || r.Record != "" {
			continue
		}
		tests++
		if r.Verdict == "pass" {
			passed++
		}
		if r.Usage != nil {
			calls, in, out = calls+r.Usage.Calls, in+r.Usage.Input, out+r.Usage.Output
		}
	}
	stderr := ts.ReadFile("stderr")
	for _, want := range []string{
		fmt.Sprintf("%d/%d test", tests, tests),
		fmt.Sprintf("· %d passed", passed),
		fmt.Sprintf("%d model call", calls),
		fmt.Sprintf("%d input + %d output tokens", in, out),
	} {
		if !strings.Contains(stderr, want) {
			ts.Fatalf("the totals lack %q, the sum over %s:\n%s", want, args[0], stderr)
		}
	}
}

func verdictsCmd(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: verdicts RESULTS OUT")
	}
	type score struct {
		Name       string  `json:"name"`
		Score      float64 `json:"score"`
		Verdict    string  `json:"verdict"`
		Assertions []struct {
			Text   string `json:"text"`
			Passed bool   `json:"passed"`
		} `json:"assertions"`
		Scores []score `json:"scores"`
	}
	var b strings.Builder
	var walk func(indent string, ss []score)
	walk = func(indent string, ss []score) {
		for _, s := range ss {
			fmt.Fprintf(&b, "%s%s %s %.3f\n", indent, s.Name, s.Verdict, s.Score)
			for _, a := range s.Assertions {
				fmt.Fprintf(&b, "%s  %v %s\n", indent, a.Passed, a.Text)
			}
			walk(indent+"  ", s.Scores)
		}
	}
	var lines []string
	for _, line := range strings.Split(strings.TrimSpace(ts.ReadFile(args[0])), "\n") {
		var r struct {
			TestID  string  `json:"test_id"`
			Record  string  `json:"record"`
			Score   float64 `json:"score"`
			Verdict string  `json:"verdict"`
			Scores  []score `json:"scores"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			ts.Fatalf("verdicts: %v", err)
		}
		if r.Record != "" {
			continue
		}
		b.Reset()
		fmt.Fprintf(&b, "%s %s %.3f\n", r.TestID, r.Verdict, r.Score)
		walk("  ", r.Scores)
		lines = append(lines, b.String())
	}
	sort.Strings(lines)
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(strings.Join(lines, "")), 0o644))
}

// fakellm start|calls|reset runs an OpenAI-compatible fake server inside the
// test process for the scripts:
//
//	fakellm start [-key K] [-latency D] [-call-tools] [rules.json]   sets OPENAI_BASE_URL
//	fakellm calls N                                     asserts the request count
//	fakellm reset [rules.json]                          new rules, empty log
//
// A rules file is a JSON list of {"match": "text", "schema": "name",
// "times": N, "content": "...", "json": {...}, "fault": "429|500|503|401|
// garbage|hang", "retry_after_ms": N, "delay_ms": N}.
var (
	fakesMu sync.Mutex
	fakes   = map[*testscript.TestScript]*fakellm.Server{}
)

type ruleFile struct {
	Match string `json:"match"`
	// Agent matches only requests without structured output: the agent's,
	// not the judge's.
	Agent     bool `json:"agent"`
	ToolCalls []struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"tool_calls"`
	Schema       string `json:"schema"`
	Times        int    `json:"times"`
	Content      string `json:"content"`
	JSON         any    `json:"json"`
	Fault        string `json:"fault"`
	RetryAfterMS int    `json:"retry_after_ms"`
	DelayMS      int    `json:"delay_ms"`
	// Structure answers as fakellm.StructureJudge: a judge that passes a
	// criterion only when the quoted material holds its quoted phrase, and
	// that answers 422 when any of Evidence appears outside the prompt's
	// blocks or the blocks are broken.
	Structure bool     `json:"structure"`
	Evidence  []string `json:"evidence"`
}

func loadRules(ts *testscript.TestScript, path string) []*fakellm.Rule {
	var rf []ruleFile
	if err := json.Unmarshal([]byte(ts.ReadFile(path)), &rf); err != nil {
		ts.Fatalf("fakellm rules %s: %v", path, err)
	}
	var out []*fakellm.Rule
	for _, r := range rf {
		r := r
		rule := &fakellm.Rule{Times: r.Times, Reply: fakellm.Reply{Content: r.Content, JSON: r.JSON, Fault: fakellm.Fault(r.Fault),
			RetryAfter: time.Duration(r.RetryAfterMS) * time.Millisecond, Delay: time.Duration(r.DelayMS) * time.Millisecond}}
		for _, c := range r.ToolCalls {
			rule.Reply.ToolCalls = append(rule.Reply.ToolCalls, fakellm.ToolCall{Name: c.Name, Arguments: c.Arguments})
		}
		if r.Structure {
			rule.Reply = fakellm.StructureJudge(r.Evidence...)
		}
		rule.Match = func(req *fakellm.Request) bool {
			return (r.Match == "" || strings.Contains(req.Text(), r.Match)) && (r.Schema == "" || req.SchemaName() == r.Schema) &&
				(!r.Agent || req.SchemaName() == "")
		}
		out = append(out, rule)
	}
	return out
}

func fakeLLMCmd(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) == 0 {
		ts.Fatalf("usage: fakellm start|calls|reset ...")
	}
	fakesMu.Lock()
	srv := fakes[ts]
	fakesMu.Unlock()
	switch args[0] {
	case "start":
		fs := flag.NewFlagSet("fakellm start", flag.ContinueOnError)
		key := fs.String("key", "", "required API key")
		latency := fs.Duration("latency", 0, "added latency")
		callTools := fs.Bool("call-tools", false, "call each offered tool once (fakellm.CallNextTool)")
		if err := fs.Parse(args[1:]); err != nil {
			ts.Fatalf("%v", err)
		}
		s, err := fakellm.Start(fakellm.Options{APIKey: *key, Latency: *latency, CallTools: *callTools})
		ts.Check(err)
		if fs.NArg() > 0 {
			s.Add(loadRules(ts, fs.Arg(0))...)
		}
		ts.Defer(s.Close)
		fakesMu.Lock()
		fakes[ts] = s
		fakesMu.Unlock()
		ts.Setenv("OPENAI_BASE_URL", s.URL)
	case "calls":
		if srv == nil || len(args) != 2 {
			ts.Fatalf("usage: fakellm calls N, after fakellm start")
		}
		want, err := strconv.Atoi(args[1])
		ts.Check(err)
		if got := srv.Calls(); (got == want) == neg {
			ts.Fatalf("fakellm got %d requests, want %d", got, want)
		}
	case "requests":
		// Each request's messages, one JSON line per request.
		if srv == nil {
			ts.Fatalf("fakellm requests before fakellm start")
		}
		for _, r := range srv.Requests() {
			b, err := json.Marshal(r.Messages)
			ts.Check(err)
			fmt.Fprintf(ts.Stdout(), "%s\n", b)
		}
	case "reset":
		if srv == nil {
			ts.Fatalf("fakellm reset before fakellm start")
		}
		srv.Reset()
		if len(args) > 1 {
			srv.Add(loadRules(ts, args[1])...)
		}
	default:
		ts.Fatalf("unknown fakellm command %q", args[0])
	}
}
