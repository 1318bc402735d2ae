package suite

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenteval/agenteval/grade"
	"github.com/google/go-cmp/cmp"
)

// payloads are values that would run code if they were read by a shell.
var payloads = []string{"; touch marker", "| touch marker", "$(touch marker)", "`touch marker`", "a b 'c\"", "${HOME}"}

// TestCommandsSplitBeforeFilling: a command written as one string is
// split into arguments before the environment's and the test's values are
// put in, so each value is one argument (or part of one) whatever it
// holds; a shell's script never has a value pasted into it.
func TestCommandsSplitBeforeFilling(t *testing.T) {
	for _, p := range payloads {
		env := func(name string) (string, bool) {
			if name == "P" {
				return p, true
			}
			return "", false
		}
		s, err := parse(t, `
tests:
  - id: a
    input: hi
    assertions:
      - {type: code-grader, command: "grade.py ${P} --x=${{ P }} '{{ env.P }}'"}
      - {type: script, command: [sh, -c, 'grade "${P}" $${HOME} ${{ P }}', sh, "${P}"]}
      - {type: llm_grader, prompt_command: "prompt.py ${P}"}
      - {type: llm-grader, prompt: {command: "prompt.py ${P}"}}
      - type: composite
        assertions: [{type: script, command: "member.py ${P}"}]
        aggregator: {type: code_grader, path: "agg.py ${P}"}
      - {type: script, command: "${P}"}
      - {type: script, command: ["${P}"]}
      - {type: script, command: "'my grader.py'"}
`, Options{Env: env, JudgeAvailable: true})
		if err != nil {
			t.Fatalf("%q: %v", p, err)
		}
		as := s.Tests[0].Assertions
		want := []any{
			[]any{"grade.py", p, "--x=" + p, p},
			[]any{"sh", "-c", `grade "${P}" ${HOME} ${P}`, "sh", p},
			[]any{"prompt.py", p},
			[]any{"prompt.py", p},
		}
		got := []any{as[0].Params["command"], as[1].Params["command"], as[2].Params["prompt_command"], as[3].Params["prompt_command"]}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%q (-want +got):\n%s", p, diff)
		}
		// A lone argument reaches the grader as itself, not split again.
		for i, want := range [][]string{{p}, {p}, {"my grader.py"}} {
			if got := scriptArgv(t, as[5+i].Params); !cmp.Equal(got, want) {
				t.Errorf("%q: lone argument %d = %q, want %q", p, i, got, want)
			}
		}
		member := as[4].Params["assertions"].([]any)[0].(map[string]any)
		agg := as[4].Params["aggregator"].(map[string]any)
		if !cmp.Equal(member["command"], []any{"member.py", p}) || !cmp.Equal(agg["path"], []any{"agg.py", p}) {
			t.Errorf("%q: composite %+v", p, as[4].Params)
		}
	}
}

// scriptArgv is what a script grader with these settings runs.
func scriptArgv(t *testing.T, params map[string]any) []string {
	t.Helper()
	b, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	var o grade.ScriptOptions
	if err := json.Unmarshal(b, &o); err != nil {
		t.Fatal(err)
	}
	argv, err := o.Argv()
	if err != nil {
		t.Fatal(err)
	}
	return argv
}

// TestCommandsTestVariables: in a file whose assertions see the test's
// variables, a variable in a command line is one argument too; pasted
// into a shell's script it is refused.
func TestCommandsTestVariables(t *testing.T) {
	for _, p := range payloads {
		s, err := parse(t, `
prompts: ["{{ input }}"]
tests:
  - id: a
    vars: {input: hi, x: `+yamlQuote(p)+`, argv: [grade.py, --flag]}
    assert:
      - {type: code-grader, command: "grade.py --x {{ x }} {{ output }}"}
      - {type: code-grader, command: "{{ argv }}"}
`, Options{JudgeAvailable: true})
		if err != nil {
			t.Fatalf("%q: %v", p, err)
		}
		as := s.Tests[0].Assertions
		x := varString(s.Tests[0].Vars["x"]) // the file's ${HOME} is the environment's
		if diff := cmp.Diff([]any{[]any{"grade.py", "--x", x, "{{ output }}"}, []any{"grade.py", "--flag"}}, []any{as[0].Params["command"], as[1].Params["command"]}); diff != "" {
			t.Errorf("%q (-want +got):\n%s", p, diff)
		}
	}
	_, err := parse(t, `
prompts: ["{{ input }}"]
tests:
  - id: a
    vars: {input: hi, x: "; id"}
    assert:
      - {type: code-grader, command: [sh, -c, "grade {{ x }}"]}
`, Options{})
	if err == nil || !strings.Contains(err.Error(), `evals.yaml:6:38: command puts the test's variable {{ x }} into the script of sh -c`) {
		t.Errorf("a variable in a shell's script: %v", err)
	}
}

// yamlQuote writes s as a double-quoted YAML string.
func yamlQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// TestCommandsNeedingAShell: a command line that uses the shell's own
// syntax is refused where it is written, saying how to write it.
func TestCommandsNeedingAShell(t *testing.T) {
	for _, line := range []string{"grade.py | wc", "grade.py > out", "a && b", "grade.py $(id)", "grade.py `id`", "grade.py; id", "grade.py $HOME", "FOO=1 grade.py", "grade.py *.txt"} {
		for _, key := range []string{"type: script, command", "type: llm_grader, prompt_command"} {
			_, err := parse(t, `
tests:
  - id: a
    input: hi
    assertions:
      - {`+key+`: `+yamlQuote(line)+`}
`, Options{JudgeAvailable: true})
			if err == nil || !strings.Contains(err.Error(), "evals.yaml:5:") || !strings.Contains(err.Error(), "uses the shell's syntax") || !strings.Contains(err.Error(), "[sh, -c") {
				t.Errorf("%s %q: %v", key, line, err)
			}
		}
	}
}

// TestCLICommandSplitBeforeFilling: an AgentV cli target's command is
// split before the environment is put in; its own placeholders stay as
// written for each turn; a command line that needs a shell, or a
// placeholder in a shell's script, is refused.
func TestCLICommandSplitBeforeFilling(t *testing.T) {
	for _, p := range payloads {
		dir := writeFiles(t, map[string]string{
			"targets.yaml": `
targets:
  - {name: line, provider: cli, command: "agent --model ${P} --prompt {PROMPT} --out={OUTPUT_FILE}"}
  - {name: list, provider: cli, command: [sh, -c, 'agent "$1" --key "${P}" > "$2"', sh, "{PROMPT}", "{OUTPUT_FILE}"]}
`,
			"e.eval.yaml": `
execution: {targets: [line, list]}
tests:
  - {id: a, input: hi, assertions: [{type: contains, value: x}]}
`,
		})
		s := load(t, filepath.Join(dir, "e.eval.yaml"), Options{Env: func(n string) (string, bool) { return p, n == "P" }})
		got := map[string][]string{}
		for _, tg := range s.Targets {
			got[tg.Name] = tg.TemplateArgv
		}
		want := map[string][]string{
			"line": {"agent", "--model", p, "--prompt", "{PROMPT}", "--out={OUTPUT_FILE}"},
			"list": {"sh", "-c", `agent "$1" --key "${P}" > "$2"`, "sh", "{PROMPT}", "{OUTPUT_FILE}"},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%q (-want +got):\n%s", p, diff)
		}
	}
	for cmd, want := range map[string]string{
		`"agent {PROMPT} > {OUTPUT_FILE}"`:         "targets.yaml:2:43: the cli target's command \"agent {PROMPT} > {OUTPUT_FILE}\" uses the shell's syntax (>)",
		`[sh, -c, "agent {PROMPT} > out"]`:         "targets.yaml:2:43: the cli target's command puts {PROMPT} into the script of sh -c",
		`"sh -c 'agent {PROMPT}' > {OUTPUT_FILE}"`: "uses the shell's syntax (>)",
	} {
		dir := writeFiles(t, map[string]string{
			"targets.yaml": "targets:\n  - {name: local, provider: cli, command: " + cmd + "}\n",
			"e.eval.yaml":  "execution: {target: local}\ntests:\n  - {id: a, input: hi, assertions: [{type: contains, value: x}]}\n",
		})
		_, err := Load(filepath.Join(dir, "e.eval.yaml"), Options{Env: func(string) (string, bool) { return "", false }})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want %q", cmd, err, want)
		}
	}
}

// TestTargetShellScript: a command target's list puts each value in its
// own argument, and none into the script of a shell, which reads ${VAR}
// from its environment instead.
func TestTargetShellScript(t *testing.T) {
	for _, p := range payloads {
		s, err := parse(t, `
targets:
  - {name: a, command: [sh, -c, 'exec agent --model "${P}" "$1"', sh, "${P}"]}
  - {name: b, command: [python3, agent.py, "--model=${P}"]}
tests:
  - {id: a, input: hi, assertions: [{type: contains, value: x}]}
`, Options{Env: func(n string) (string, bool) { return p, n == "P" }})
		if err != nil {
			t.Fatal(err)
		}
		want := [][]string{{"sh", "-c", `exec agent --model "${P}" "$1"`, "sh", p}, {"python3", "agent.py", "--model=" + p}}
		if diff := cmp.Diff(want, [][]string{s.Targets[0].Command, s.Targets[1].Command}); diff != "" {
			t.Errorf("%q (-want +got):\n%s", p, diff)
		}
	}
}
