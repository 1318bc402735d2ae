//go:build ignore

// Command action-run runs the steps of a composite GitHub Action on this
// machine, the way the Actions runner does, for scripts/action-test.sh:
// `act` needs a docker engine and images from the network, and neither is
// here.
//
//	go run scripts/action-run.go [-with NAME=VALUE]... [-outputs FILE] [-release-server DIR] action.yml
//
// What it does as the runner does: the inputs' defaults, the ${{ }}
// expressions of the contexts an action sees (inputs, steps.ID.outputs,
// github, runner, env) with ==, !=, &&, ||, ! and the status functions,
// each step's if: (success() when it names no status function),
// working-directory and env:, run: scripts under bash --noprofile
// --norc -eo pipefail, and the files GITHUB_OUTPUT, GITHUB_ENV and
// GITHUB_PATH. GITHUB_STEP_SUMMARY, RUNNER_TEMP, RUNNER_OS, RUNNER_ARCH
// and GITHUB_WORKSPACE are taken from the environment (or made up).
//
// What it does not: uses: steps are not run but listed with their
// evaluated with: (and whether their if: holds), and only the bash shell
// runs. An expression or a key it does not know is an error, not a guess,
// and so is an input or a step output the action never declares.
//
// -release-server DIR serves DIR over HTTP on 127.0.0.1 as GitHub serves
// releases (OWNER/REPO/releases/download/TAG/FILE, and releases/latest
// redirecting to the newest tag), and sets GITHUB_SERVER_URL to it.
//
// It exits with the status of the step that failed the action, else 0.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v4"
)

type input struct {
	Description        string `yaml:"description"`
	Required           bool   `yaml:"required"`
	Default            string `yaml:"default"`
	DeprecationMessage string `yaml:"deprecationMessage"`
}

type output struct {
	Description string `yaml:"description"`
	Value       string `yaml:"value"`
}

type step struct {
	Name             string            `yaml:"name"`
	ID               string            `yaml:"id"`
	If               string            `yaml:"if"`
	Shell            string            `yaml:"shell"`
	Run              string            `yaml:"run"`
	Uses             string            `yaml:"uses"`
	With             map[string]string `yaml:"with"`
	Env              map[string]string `yaml:"env"`
	WorkingDirectory string            `yaml:"working-directory"`
	ContinueOnError  bool              `yaml:"continue-on-error"`
}

type action struct {
	Name        string            `yaml:"name"`
	Description string            `yaml:"description"`
	Author      string            `yaml:"author"`
	Branding    map[string]string `yaml:"branding"`
	Inputs      map[string]input  `yaml:"inputs"`
	Outputs     map[string]output `yaml:"outputs"`
	Runs        struct {
		Using string `yaml:"using"`
		Steps []step `yaml:"steps"`
	} `yaml:"runs"`
}

func main() {
	var with multiFlag
	outputsFile := flag.String("outputs", "", "write the action's outputs here, NAME=VALUE a line")
	releases := flag.String("release-server", "", "serve this folder as GitHub releases on 127.0.0.1 and point GITHUB_SERVER_URL at it")
	timeout := flag.Duration("step-timeout", 15*time.Minute, "stop a step that runs longer")
	flag.Var(&with, "with", "an input, NAME=VALUE (repeatable)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: go run scripts/action-run.go [-with NAME=VALUE]... [-outputs FILE] [-release-server DIR] action.yml")
		os.Exit(2)
	}
	code, err := runAction(flag.Arg(0), with, *outputsFile, *releases, *timeout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "action-run:", err)
		os.Exit(2)
	}
	os.Exit(code)
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(s string) error { *m = append(*m, s); return nil }

func load(path string) (*action, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var a action
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&a); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if a.Runs.Using != "composite" {
		return nil, fmt.Errorf("%s: runs.using is %q; this runs composite actions only", path, a.Runs.Using)
	}
	ids := map[string]bool{}
	for i, s := range a.Runs.Steps {
		where := fmt.Sprintf("%s: step %d (%s)", path, i+1, s.Name)
		switch {
		case (s.Run == "") == (s.Uses == ""):
			return nil, fmt.Errorf("%s: a step has run: or uses:, exactly one", where)
		case s.Run != "" && s.Shell == "":
			return nil, fmt.Errorf("%s: a composite action's run: step needs shell:", where)
		case s.Run != "" && s.Shell != "bash":
			return nil, fmt.Errorf("%s: shell %q; only bash runs here", where, s.Shell)
		case s.Uses != "" && (s.Env != nil || s.WorkingDirectory != ""):
			return nil, fmt.Errorf("%s: a uses: step takes with:, not env: or working-directory:", where)
		}
		if s.ID != "" {
			if ids[s.ID] {
				return nil, fmt.Errorf("%s: id %q is used twice", where, s.ID)
			}
			ids[s.ID] = true
		}
	}
	return &a, nil
}

// env holds what the expressions read.
type exprEnv struct {
	a        *action
	inputs   map[string]string
	steps    map[string]map[string]string // outputs of the steps run so far
	seen     map[string]bool              // ids of the steps before this one
	github   map[string]string
	runner   map[string]string
	env      map[string]string
	failed   bool
	stepName string
}

func runAction(path string, with []string, outputsFile, releases string, timeout time.Duration) (int, error) {
	a, err := load(path)
	if err != nil {
		return 0, err
	}
	actionDir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return 0, err
	}
	inputs := map[string]string{}
	for name, in := range a.Inputs {
		inputs[name] = in.Default
	}
	given := map[string]bool{}
	for _, w := range with {
		name, value, ok := strings.Cut(w, "=")
		if !ok {
			return 0, fmt.Errorf("-with %q: write NAME=VALUE", w)
		}
		if _, ok := a.Inputs[name]; !ok {
			return 0, fmt.Errorf("-with %s: the action has no input %q", name, name)
		}
		inputs[name] = value
		given[name] = true
	}
	for name, in := range a.Inputs {
		if in.Required && !given[name] && in.Default == "" {
			return 0, fmt.Errorf("input %q is required", name)
		}
	}

	base := map[string]string{}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		base[k] = v
	}
	if base["RUNNER_TEMP"] == "" {
		d, err := os.MkdirTemp("", "action-run-")
		if err != nil {
			return 0, err
		}
		base["RUNNER_TEMP"] = d
	}
	if base["GITHUB_STEP_SUMMARY"] == "" {
		base["GITHUB_STEP_SUMMARY"] = filepath.Join(base["RUNNER_TEMP"], "step-summary.md")
	}
	if base["GITHUB_WORKSPACE"] == "" {
		base["GITHUB_WORKSPACE"], _ = os.Getwd()
	}
	if base["RUNNER_OS"] == "" {
		base["RUNNER_OS"] = map[string]string{"linux": "Linux", "darwin": "macOS", "windows": "Windows"}[runtime.GOOS]
	}
	if base["RUNNER_ARCH"] == "" {
		base["RUNNER_ARCH"] = map[string]string{"amd64": "X64", "arm64": "ARM64"}[runtime.GOARCH]
	}
	base["GITHUB_ACTION_PATH"] = actionDir
	base["GITHUB_ACTIONS"] = "true"
	if releases != "" {
		url, stop, err := serveReleases(releases)
		if err != nil {
			return 0, err
		}
		defer stop()
		base["GITHUB_SERVER_URL"] = url
		fmt.Printf("action-run: releases from %s at %s\n", releases, url)
	}
	fmt.Printf("action-run: job summary in %s\n", base["GITHUB_STEP_SUMMARY"])

	x := &exprEnv{
		a: a, inputs: inputs, steps: map[string]map[string]string{}, seen: map[string]bool{},
		github: map[string]string{"action_path": actionDir, "workspace": base["GITHUB_WORKSPACE"], "server_url": base["GITHUB_SERVER_URL"]},
		runner: map[string]string{"os": base["RUNNER_OS"], "arch": base["RUNNER_ARCH"], "temp": base["RUNNER_TEMP"]},
		env:    map[string]string{},
	}
	var extraPath []string
	code := 0
	for i, s := range a.Runs.Steps {
		x.stepName = fmt.Sprintf("step %d (%s)", i+1, s.Name)
		cond := s.If
		if cond == "" {
			cond = "success()"
		}
		ok, err := x.condition(cond)
		if err != nil {
			return 0, fmt.Errorf("%s: if: %v", x.stepName, err)
		}
		if s.Uses != "" {
			keys := make([]string, 0, len(s.With))
			for k := range s.With {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			var ws []string
			for _, k := range keys {
				v, err := x.interpolate(s.With[k])
				if err != nil {
					return 0, fmt.Errorf("%s: with.%s: %v", x.stepName, k, err)
				}
				ws = append(ws, k+"="+v)
			}
			state := "would run"
			if !ok {
				state = "would be skipped"
			}
			fmt.Printf("== %s: uses %s, not run here (%s) with %s\n", x.stepName, s.Uses, state, strings.Join(ws, " "))
			x.mark(s.ID, nil)
			continue
		}
		if !ok {
			fmt.Printf("== %s: skipped (if: %s)\n", x.stepName, s.If)
			x.mark(s.ID, nil)
			continue
		}
		fmt.Printf("== %s\n", x.stepName)
		env := map[string]string{}
		for k, v := range base {
			env[k] = v
		}
		for k, v := range x.env {
			env[k] = v
		}
		for k, v := range s.Env {
			ev, err := x.interpolate(v)
			if err != nil {
				return 0, fmt.Errorf("%s: env.%s: %v", x.stepName, k, err)
			}
			env[k] = ev
		}
		if len(extraPath) > 0 {
			env["PATH"] = strings.Join(extraPath, string(os.PathListSeparator)) + string(os.PathListSeparator) + env["PATH"]
		}
		dir := base["GITHUB_WORKSPACE"]
		if s.WorkingDirectory != "" {
			wd, err := x.interpolate(s.WorkingDirectory)
			if err != nil {
				return 0, fmt.Errorf("%s: working-directory: %v", x.stepName, err)
			}
			if !filepath.IsAbs(wd) {
				wd = filepath.Join(dir, wd)
			}
			dir = wd
		}
		files := map[string]string{}
		for _, f := range []string{"GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_PATH"} {
			p := filepath.Join(base["RUNNER_TEMP"], fmt.Sprintf("%s_%d", strings.ToLower(f), i+1))
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				return 0, err
			}
			files[f], env[f] = p, p
		}
		script := filepath.Join(base["RUNNER_TEMP"], fmt.Sprintf("step_%d.sh", i+1))
		if err := os.WriteFile(script, []byte(s.Run), 0o644); err != nil {
			return 0, err
		}
		began := time.Now()
		status := runStep(script, dir, env, timeout)
		fmt.Printf("== %s: exit %d in %.1fs\n", x.stepName, status, time.Since(began).Seconds())
		outs, err := readKV(files["GITHUB_OUTPUT"])
		if err != nil {
			return 0, fmt.Errorf("%s: GITHUB_OUTPUT: %v", x.stepName, err)
		}
		x.mark(s.ID, outs)
		envs, err := readKV(files["GITHUB_ENV"])
		if err != nil {
			return 0, fmt.Errorf("%s: GITHUB_ENV: %v", x.stepName, err)
		}
		for k, v := range envs {
			x.env[k] = v
		}
		if b, err := os.ReadFile(files["GITHUB_PATH"]); err == nil {
			for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				if l = strings.TrimSpace(l); l != "" {
					extraPath = append([]string{l}, extraPath...)
				}
			}
		}
		if status != 0 {
			if !s.ContinueOnError && !x.failed {
				x.failed, code = true, status
			}
		}
	}

	x.stepName = "outputs"
	names := make([]string, 0, len(a.Outputs))
	for n := range a.Outputs {
		names = append(names, n)
	}
	sort.Strings(names)
	var lines []string
	for _, n := range names {
		v, err := x.interpolate(a.Outputs[n].Value)
		if err != nil {
			return 0, fmt.Errorf("outputs.%s: %v", n, err)
		}
		lines = append(lines, n+"="+v)
	}
	if outputsFile != "" {
		if err := os.WriteFile(outputsFile, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			return 0, err
		}
	}
	fmt.Printf("action-run: exit %d; outputs: %s\n", code, strings.Join(lines, " "))
	return code, nil
}

func (x *exprEnv) mark(id string, outs map[string]string) {
	if id == "" {
		return
	}
	x.seen[id] = true
	if outs == nil {
		outs = map[string]string{}
	}
	x.steps[id] = outs
}

func runStep(script, dir string, env map[string]string, timeout time.Duration) int {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	// The runner's command line for shell: bash.
	cmd := exec.CommandContext(ctx, "bash", "--noprofile", "--norc", "-eo", "pipefail", script)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case ctx.Err() != nil:
		fmt.Fprintf(os.Stderr, "action-run: the step ran past %v and was stopped\n", timeout)
		return 124
	case errors.As(err, &ee) && ee.ExitCode() > 0:
		return ee.ExitCode()
	default:
		fmt.Fprintf(os.Stderr, "action-run: %v\n", err)
		return 1
	}
}

// readKV reads a GITHUB_OUTPUT or GITHUB_ENV file: NAME=VALUE lines, and
// NAME<<DELIMITER blocks.
func readKV(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		if l == "" {
			continue
		}
		if name, delim, ok := strings.Cut(l, "<<"); ok && !strings.Contains(name, "=") {
			var val []string
			closed := false
			for sc.Scan() {
				n++
				if sc.Text() == delim {
					closed = true
					break
				}
				val = append(val, sc.Text())
			}
			if !closed {
				return nil, fmt.Errorf("line %d: %s<<%s is never closed", n, name, delim)
			}
			out[name] = strings.Join(val, "\n")
			continue
		}
		name, val, ok := strings.Cut(l, "=")
		if !ok {
			return nil, fmt.Errorf("line %d: %q is not NAME=VALUE", n, l)
		}
		out[name] = val
	}
	return out, sc.Err()
}

// ---- expressions

var statusFunc = regexp.MustCompile(`\b(always|success|failure|cancelled)\s*\(`)

// condition evaluates an if:, with ${{ }} or without; success() && is
// implied when it calls no status function, as on GitHub.
func (x *exprEnv) condition(s string) (bool, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "${{") && strings.HasSuffix(s, "}}") && strings.Count(s, "${{") == 1 {
		s = strings.TrimSpace(s[3 : len(s)-2])
	}
	if !statusFunc.MatchString(s) {
		s = "success() && (" + s + ")"
	}
	v, err := x.eval(s)
	if err != nil {
		return false, err
	}
	return v.truthy(), nil
}

// interpolate replaces each ${{ expr }} in s.
func (x *exprEnv) interpolate(s string) (string, error) {
	var b strings.Builder
	for {
		i := strings.Index(s, "${{")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		j := strings.Index(s[i:], "}}")
		if j < 0 {
			return "", fmt.Errorf("%q: ${{ without }}", s)
		}
		v, err := x.eval(s[i+3 : i+j])
		if err != nil {
			return "", err
		}
		b.WriteString(s[:i])
		b.WriteString(v.String())
		s = s[i+j+2:]
	}
}

type value struct {
	isBool bool
	b      bool
	s      string
}

func (v value) truthy() bool {
	if v.isBool {
		return v.b
	}
	return v.s != ""
}

func (v value) String() string {
	if v.isBool {
		return strconv.FormatBool(v.b)
	}
	return v.s
}

type parser struct {
	x    *exprEnv
	src  string
	toks []string
	i    int
}

var tokenRE = regexp.MustCompile(`\s*('(?:[^']|'')*'|==|!=|&&|\|\||[!()]|[A-Za-z_][A-Za-z0-9_.-]*)`)

func (x *exprEnv) eval(src string) (value, error) {
	p := &parser{x: x, src: strings.TrimSpace(src)}
	rest := p.src
	for strings.TrimSpace(rest) != "" {
		m := tokenRE.FindStringSubmatchIndex(rest)
		if m == nil || m[0] != 0 {
			return value{}, fmt.Errorf("%q: cannot read %q", p.src, strings.TrimSpace(rest))
		}
		p.toks = append(p.toks, rest[m[2]:m[3]])
		rest = rest[m[1]:]
	}
	v, err := p.or()
	if err != nil {
		return value{}, err
	}
	if p.i != len(p.toks) {
		return value{}, fmt.Errorf("%q: unexpected %q", p.src, p.toks[p.i])
	}
	return v, nil
}

func (p *parser) peek() string {
	if p.i < len(p.toks) {
		return p.toks[p.i]
	}
	return ""
}

func (p *parser) or() (value, error) {
	l, err := p.and()
	for err == nil && p.peek() == "||" {
		p.i++
		var r value
		if r, err = p.and(); err == nil && !l.truthy() {
			l = r
		}
	}
	return l, err
}

func (p *parser) and() (value, error) {
	l, err := p.unary()
	for err == nil && p.peek() == "&&" {
		p.i++
		var r value
		if r, err = p.unary(); err == nil && l.truthy() {
			l = r
		}
	}
	return l, err
}

func (p *parser) unary() (value, error) {
	if p.peek() == "!" {
		p.i++
		v, err := p.unary()
		return value{isBool: true, b: !v.truthy()}, err
	}
	l, err := p.primary()
	if err != nil {
		return l, err
	}
	if op := p.peek(); op == "==" || op == "!=" {
		p.i++
		r, err := p.primary()
		if err != nil {
			return l, err
		}
		if l.isBool != r.isBool {
			return l, fmt.Errorf("%q: compares a boolean with a string", p.src)
		}
		eq := l.b == r.b
		if !l.isBool {
			eq = strings.EqualFold(l.s, r.s) // GitHub compares strings ignoring case
		}
		return value{isBool: true, b: eq == (op == "==")}, nil
	}
	return l, nil
}

func (p *parser) primary() (value, error) {
	t := p.peek()
	p.i++
	switch {
	case t == "":
		return value{}, fmt.Errorf("%q ends too early", p.src)
	case t == "(":
		v, err := p.or()
		if err == nil && p.peek() != ")" {
			err = fmt.Errorf("%q: missing )", p.src)
		}
		p.i++
		return v, err
	case strings.HasPrefix(t, "'"):
		return value{s: strings.ReplaceAll(t[1:len(t)-1], "''", "'")}, nil
	case t == "true" || t == "false":
		return value{isBool: true, b: t == "true"}, nil
	}
	if p.peek() == "(" {
		p.i++
		if p.peek() != ")" {
			return value{}, fmt.Errorf("%q: %s takes no arguments here", p.src, t)
		}
		p.i++
		switch t {
		case "always":
			return value{isBool: true, b: true}, nil
		case "success":
			return value{isBool: true, b: !p.x.failed}, nil
		case "failure":
			return value{isBool: true, b: p.x.failed}, nil
		case "cancelled":
			return value{isBool: true, b: false}, nil
		}
		return value{}, fmt.Errorf("%q: function %s() is not known here", p.src, t)
	}
	return p.x.ref(t)
}

// ref looks a context's property up. A name that cannot exist is an
// error: on GitHub it would be an empty string, silently.
func (x *exprEnv) ref(path string) (value, error) {
	parts := strings.Split(path, ".")
	get := func(m map[string]string, key string) (value, error) {
		v, ok := m[key]
		if !ok {
			return value{}, fmt.Errorf("%s is not known here", path)
		}
		return value{s: v}, nil
	}
	switch {
	case parts[0] == "inputs" && len(parts) == 2:
		if _, ok := x.a.Inputs[parts[1]]; !ok {
			return value{}, fmt.Errorf("%s: the action declares no input %q", path, parts[1])
		}
		return value{s: x.inputs[parts[1]]}, nil
	case parts[0] == "steps" && len(parts) == 4 && parts[2] == "outputs":
		if !x.seen[parts[1]] {
			return value{}, fmt.Errorf("%s: no step with id %q runs before %s", path, parts[1], x.stepName)
		}
		return value{s: x.steps[parts[1]][parts[3]]}, nil
	case parts[0] == "github" && len(parts) == 2:
		return get(x.github, parts[1])
	case parts[0] == "runner" && len(parts) == 2:
		return get(x.runner, parts[1])
	case parts[0] == "env" && len(parts) == 2:
		return value{s: x.env[parts[1]]}, nil
	}
	return value{}, fmt.Errorf("%s is not a context this runs", path)
}

// ---- releases

// serveReleases serves dir as GitHub's release downloads.
func serveReleases(dir string) (url string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	files := http.FileServer(http.Dir(dir))
	latest := regexp.MustCompile(`^/([^/]+)/([^/]+)/releases/latest$`)
	tag := regexp.MustCompile(`^/[^/]+/[^/]+/releases/tag/[^/]+$`)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m := latest.FindStringSubmatch(r.URL.Path); m != nil {
			ents, _ := os.ReadDir(filepath.Join(dir, m[1], m[2], "releases", "download"))
			var tags []string
			for _, e := range ents {
				tags = append(tags, e.Name())
			}
			if len(tags) == 0 {
				http.Redirect(w, r, "/"+m[1]+"/"+m[2]+"/releases", http.StatusFound)
				return
			}
			sort.Slice(tags, func(i, j int) bool { return versionLess(tags[i], tags[j]) })
			http.Redirect(w, r, "/"+m[1]+"/"+m[2]+"/releases/tag/"+tags[len(tags)-1], http.StatusFound)
			return
		}
		if tag.MatchString(r.URL.Path) || strings.HasSuffix(r.URL.Path, "/releases") {
			fmt.Fprintln(w, "a release page")
			return
		}
		files.ServeHTTP(w, r)
	})
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), func() { srv.Close() }, nil
}

// versionLess orders v1.2.10 after v1.2.9.
func versionLess(a, b string) bool {
	pa := strings.Split(strings.TrimPrefix(a, "v"), ".")
	pb := strings.Split(strings.TrimPrefix(b, "v"), ".")
	for i := 0; i < len(pa) && i < len(pb); i++ {
		na, ea := strconv.Atoi(pa[i])
		nb, eb := strconv.Atoi(pb[i])
		if ea != nil || eb != nil {
			if pa[i] != pb[i] {
				return pa[i] < pb[i]
			}
			continue
		}
		if na != nb {
			return na < nb
		}
	}
	return len(pa) < len(pb)
}
