package suite

import (
	"errors"
	"regexp"
	"strings"

	"github.com/agenteval/agenteval/internal/shellwords"
	"go.yaml.in/yaml/v4"
)

// The programs an eval file names (a script grader's command, an
// llm_grader's prompt_command, a code aggregator, an AgentV cli target)
// get their arguments from text the file's author wrote and values filled
// in at load: the environment's ${VAR}, a test's {{ var }}. Filling values
// into a command line first and splitting it afterwards (or handing it to
// sh -c) would let a value that holds ; or $(...) run as code. So a
// command line is split into arguments as written, with its placeholders
// opaque, and only then filled in: each value stays inside the one
// argument its placeholder is in. A command line that needs a shell
// (pipes, redirects, $VAR, globs) is refused where it is written: the
// author writes a list, or asks for a shell, [sh, -c, "..."]. The script
// of a shell never has values pasted into it: ${VAR} there is left for the
// shell to read from its environment, and a test's {{ var }} is refused
// (it goes after the script, as "$1").

// commandRef finds what load fills into a command: the environment's
// placeholders (envRef, $$ included) and a test's {{ var }}.
var commandRef = regexp.MustCompile(envRef.String() + `|` + templateRef.String())

// CLIPlaceholders are what an AgentV cli target's command may hold, filled
// in each turn (target.TemplateAgent).
var CLIPlaceholders = regexp.MustCompile(`\{(?:PROMPT|PROMPT_FILE|OUTPUT_FILE|FILES|EVAL_ID|ATTEMPT)\}`)

// cliRef finds what an AgentV cli target's command holds: the
// environment's placeholders, filled in at load, and the target's own,
// kept as written for each turn.
var cliRef = regexp.MustCompile(envRef.String() + `|` + CLIPlaceholders.String())

// command reads the command of a program an assertion runs: a list of
// arguments, or one string split into arguments as a shell would. vars,
// when set, fill in a test's {{ var }} (the assertions of a file whose
// assertions see the test's variables). It returns the arguments (see
// gradeArgs), or refused after reporting a problem.
func (d *decoder) command(n *yaml.Node, vars *substitution, what string) any {
	rn := resolve(n)
	if rn == nil || isNull(rn) {
		return nil
	}
	raw := vars.original(rn)
	if raw.Kind == yaml.ScalarNode && rn.Kind == yaml.SequenceNode {
		// A whole {{ var }} holding a list: each item is an argument.
		return gradeArgs(d.value(rn).([]any))
	}
	fill := func(ref string) string { return d.fillRef(raw, ref, vars) }
	words, ok := d.commandWords(raw, what, commandRef, vars)
	if !ok {
		return refused
	}
	out := make([]any, 0, len(words))
	for i, w := range d.scripted(words, raw, what, vars) {
		if w == nil {
			out = append(out, words[i].Fill(fill))
		} else {
			out = append(out, *w)
		}
	}
	return gradeArgs(out)
}

// gradeArgs is a command's arguments as grade's options take them. A list
// of one is read there as a command line and split, so a lone argument
// goes as a command line that splits back into just itself.
func gradeArgs(args []any) any {
	if len(args) == 1 {
		if s, ok := args[0].(string); ok {
			return shellwords.Quote(s)
		}
	}
	return args
}

// refused stands in for a command refused where it is written: the file
// does not load, so it never runs, and the grader built from it while the
// file is checked has a command, so the one error is the refusal's.
var refused = []any{"(refused)", "(see the error at the command)"}

// commandWords reads a command's words, their placeholders (those ref
// finds) not filled in yet: a list's items one argument each, a string
// split as a shell would. A string that needs a shell is refused.
func (d *decoder) commandWords(raw *yaml.Node, what string, ref *regexp.Regexp, vars *substitution) ([]shellwords.Word, bool) {
	if d.literal {
		ref = nil
	}
	switch raw.Kind {
	case yaml.ScalarNode:
		line := strings.TrimSpace(raw.Value)
		words, err := shellwords.SplitRefs(line, ref)
		var ne *shellwords.NeedsShellError
		switch {
		case errors.As(err, &ne):
			d.fail(raw, "%s %q uses the shell's syntax (%s), and a command line never runs through a shell: write it as a list, [program, arg, ...], or run a shell yourself, [sh, -c, \"...\"], giving it values after the script (\"$1\") or in its environment (\"$VAR\")", what, line, ne.What)
			return nil, false
		case err != nil:
			d.fail(raw, "%s %q: %v", what, line, err)
			return nil, false
		}
		return words, true
	case yaml.SequenceNode:
		words := make([]shellwords.Word, 0, len(raw.Content))
		for _, it := range raw.Content {
			it = resolve(it)
			if it == nil || it.Kind != yaml.ScalarNode {
				d.fail(it, "%s must be a list of text arguments, not a list holding %s", what, kindName(it))
				return nil, false
			}
			words = append(words, refParts(vars.original(it).Value, ref))
		}
		return words, true
	}
	d.fail(raw, "%s must be a list of arguments, [program, arg, ...], or a command line, not %s", what, kindName(raw))
	return nil, false
}

// refParts cuts one argument into its text and its placeholders.
func refParts(s string, ref *regexp.Regexp) shellwords.Word {
	var w shellwords.Word
	last := 0
	if ref != nil {
		for _, m := range ref.FindAllStringIndex(s, -1) {
			if m[0] > last {
				w = append(w, shellwords.Part{Text: s[last:m[0]]})
			}
			w = append(w, shellwords.Part{Text: s[m[0]:m[1]], Ref: true})
			last = m[1]
		}
	}
	if last < len(s) || len(w) == 0 {
		w = append(w, shellwords.Part{Text: s[last:]})
	}
	return w
}

// scripted finds the script of a shell (sh -c SCRIPT) among words and
// returns its text, with nothing pasted in, at its index; the other
// indexes are nil. The environment's placeholders become the shell's own
// ${VAR}, which it reads from the environment it inherits; a test's
// variable or a cli target's placeholder in it is refused.
func (d *decoder) scripted(words []shellwords.Word, at *yaml.Node, what string, vars *substitution) []*string {
	out := make([]*string, len(words))
	argv := make([]string, len(words))
	for i, w := range words {
		argv[i], _ = w.Literal()
	}
	script := shellwords.ShellScript(argv)
	if script < 0 {
		return out
	}
	shell := argv[0]
	var b strings.Builder
	for _, p := range words[script] {
		if !p.Ref {
			b.WriteString(p.Text)
			continue
		}
		if sub := envRef.FindStringSubmatch(p.Text); sub != nil && sub[0] == p.Text {
			if p.Text == "$$" {
				b.WriteString("$")
				continue
			}
			d.interpolate(at, p.Text) // warns when it is not set
			b.WriteString("${" + sub[1] + sub[2] + sub[3] + "}")
			continue
		}
		if CLIPlaceholders.MatchString(p.Text) {
			d.fail(at, "%s puts %s into the script of %s -c, where it would be read as shell code: pass it after the script, [%s, -c, 'agent \"$1\"', %s, %q]", what, p.Text, shell, shell, shell, p.Text)
			continue
		}
		if m := templateRef.FindStringSubmatch(p.Text); m != nil && vars != nil {
			if _, ok := vars.lookup(m[1]); ok {
				d.fail(at, "%s puts the test's variable %s into the script of %s -c, where it would be read as shell code: pass it after the script, [%s, -c, 'grade \"$1\"', %s, %q]", what, p.Text, shell, shell, shell, p.Text)
				continue
			}
		}
		b.WriteString(p.Text)
	}
	s := b.String()
	out[script] = &s
	return out
}

// fillRef is the value of one placeholder of a command: the
// environment's, a test's variable, or the text as written when it is
// neither (a grader's {{ output }}, a variable the test does not have).
func (d *decoder) fillRef(at *yaml.Node, ref string, vars *substitution) string {
	if m := envRef.FindString(ref); m == ref {
		return d.interpolate(at, ref)
	}
	if m := templateRef.FindStringSubmatch(ref); m != nil && vars != nil {
		if v, ok := vars.lookup(m[1]); ok {
			return varString(v)
		}
	}
	return ref
}

// cliCommand reads an AgentV cli target's command: its arguments, with
// the environment filled in and the target's placeholders ({PROMPT},
// {OUTPUT_FILE}, ...) kept as written for each turn, and the command as
// text for messages.
func (d *decoder) cliCommand(n *yaml.Node) (argv []string, text string, ok bool) {
	rn := resolve(n)
	if rn == nil || isNull(rn) {
		return nil, "", false
	}
	const what = "the cli target's command"
	words, ok := d.commandWords(rn, what, cliRef, nil)
	if !ok {
		return nil, "", false
	}
	errs := len(d.errs)
	scripts := d.scripted(words, rn, what, nil)
	for i, w := range words {
		if scripts[i] != nil {
			argv = append(argv, *scripts[i])
			continue
		}
		argv = append(argv, w.Fill(func(ref string) string {
			if CLIPlaceholders.MatchString(ref) {
				return ref
			}
			return d.interpolate(rn, ref)
		}))
	}
	if rn.Kind == yaml.ScalarNode {
		text = strings.TrimSpace(rn.Value)
	} else {
		text = strings.Join(argv, " ")
	}
	return argv, text, len(d.errs) == errs && len(argv) > 0
}

// param reads one setting of an assertion of type typ: the commands it
// runs split as written before anything is filled in (command), the
// others as values.
func (d *decoder) param(typ, key string, v *yaml.Node, c *testCtx) any {
	var vars *substitution
	if c != nil && c.s != nil && c.s.promptfoo {
		vars = c.assertVars // the file's assertions see the test's variables
	}
	switch {
	case typ == "script" && (key == "command" || key == "script"),
		typ == "llm_grader" && key == "prompt_command":
		return d.command(v, vars, key)
	case typ == "llm_grader" && key == "prompt":
		// AgentV's prompt: {command: ...} (or script:).
		return d.commandsIn(v, vars, func(string) bool { return true }, "command", "script")
	case typ == "composite" && key == "aggregator":
		// A code aggregator's command (or path).
		code := func(t string) bool {
			switch strings.ReplaceAll(strings.ToLower(t), "-", "_") {
			case "code_grader", "code_judge", "script":
				return true
			}
			return false
		}
		return d.commandsIn(v, vars, code, "command", "path")
	}
	return d.value(v)
}

// commandsIn reads a mapping whose keys hold commands when its type is
// one that runs them (isCode).
func (d *decoder) commandsIn(v *yaml.Node, vars *substitution, isCode func(typ string) bool, keys ...string) any {
	val := d.value(v)
	m, ok := val.(map[string]any)
	if !ok {
		return val
	}
	typ, _ := m["type"].(string)
	if !isCode(typ) {
		return val
	}
	for _, f := range d.fields(v, "this mapping", nil) {
		for _, k := range keys {
			if f.key == k {
				m[k] = d.command(f.value, vars, k)
			}
		}
	}
	return m
}

// argv reads a command target's argv: a list, each item one argument, the
// environment filled in, except in a shell's script (sh -c SCRIPT), where
// ${VAR} is left for the shell to read from its environment. One string
// is the program alone, as it always was.
func (d *decoder) argv(n *yaml.Node, what string) []string {
	rn := resolve(n)
	if rn == nil || rn.Kind != yaml.SequenceNode {
		return d.strList(n, what)
	}
	words, ok := d.commandWords(rn, what, envRef, nil)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(words))
	for i, w := range d.scripted(words, rn, what, nil) {
		if w != nil {
			out = append(out, *w)
			continue
		}
		out = append(out, words[i].Fill(func(ref string) string { return d.interpolate(rn, ref) }))
	}
	return out
}
