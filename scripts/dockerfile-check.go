//go:build ignore

// Command dockerfile-check checks the Dockerfile where no docker engine
// runs (.ci/run builds the image instead when one does). It reads the
// file as Docker's parser does (parser directives, comments, line
// continuations, instructions and their flags, JSON arguments) and says
// what is wrong with file:line, then checks what this project wants of
// its image: a go.mod Go version, the release build's flags, a final
// stage that runs as a non-root user with agenteval as its entrypoint.
//
//	go run scripts/dockerfile-check.go [Dockerfile]
//
// It first runs its own table of broken Dockerfiles, so a check that
// stopped catching what it names fails too. Standard library only: it
// runs offline, in a second or two.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	line  int    // where it starts
	cmd   string // upper case
	flags []string
	args  string // after the flags
}

type checker struct {
	file string
	errs []string
}

func (c *checker) errorf(line int, format string, a ...any) {
	c.errs = append(c.errs, fmt.Sprintf("%s:%d: %s", c.file, line, fmt.Sprintf(format, a...)))
}

// flagsOf lists the flags each instruction takes (Dockerfile reference,
// frontend 1.x); an instruction missing here takes none.
var flagsOf = map[string][]string{
	"FROM":        {"platform"},
	"RUN":         {"mount", "network", "security"},
	"COPY":        {"from", "chown", "chmod", "link", "parents", "exclude"},
	"ADD":         {"chown", "chmod", "link", "checksum", "keep-git-dir", "exclude", "unpack"},
	"HEALTHCHECK": {"interval", "timeout", "start-period", "start-interval", "retries"},
}

var known = map[string]bool{
	"FROM": true, "RUN": true, "CMD": true, "LABEL": true, "EXPOSE": true,
	"ENV": true, "ADD": true, "COPY": true, "ENTRYPOINT": true, "VOLUME": true,
	"USER": true, "WORKDIR": true, "ARG": true, "ONBUILD": true,
	"STOPSIGNAL": true, "HEALTHCHECK": true, "SHELL": true, "MAINTAINER": true,
}

// parse splits src into instructions. Errors are reported on c; what
// parses is returned so later checks still run.
func (c *checker) parse(src string) []instruction {
	lines := strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n")
	escape := byte('\\')
	// Parser directives: only at the very top, before any comment,
	// blank line or instruction.
	i := 0
	directive := regexp.MustCompile(`^#\s*([a-zA-Z][a-zA-Z0-9]*)\s*=\s*(.*?)\s*$`)
	for ; i < len(lines); i++ {
		m := directive.FindStringSubmatch(lines[i])
		if m == nil {
			break
		}
		switch strings.ToLower(m[1]) {
		case "escape":
			if m[2] != "\\" && m[2] != "`" {
				c.errorf(i+1, "escape directive %q: use \\ or `", m[2])
			} else {
				escape = m[2][0]
			}
		case "syntax", "check":
		default:
			// Docker takes an unknown directive for a comment.
		}
	}
	var out []instruction
	for i < len(lines) {
		raw := lines[i]
		trimmed := strings.TrimSpace(raw)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			i++
			continue
		}
		start := i + 1
		var b strings.Builder
		for {
			l := strings.TrimRight(lines[i], " \t")
			i++
			if n := len(l); n > 0 && l[n-1] == escape {
				b.WriteString(l[:n-1])
				b.WriteByte(' ')
				// Comment and blank lines inside a continued
				// instruction are dropped, as Docker does.
				for i < len(lines) {
					t := strings.TrimSpace(lines[i])
					if t != "" && !strings.HasPrefix(t, "#") {
						break
					}
					i++
				}
				if i == len(lines) {
					c.errorf(start, "the instruction's last line ends with %q: nothing continues it", string(escape))
					break
				}
				continue
			}
			b.WriteString(l)
			break
		}
		text := strings.TrimSpace(b.String())
		word, rest, _ := strings.Cut(text, " ")
		if t, r, ok := strings.Cut(word, "\t"); ok {
			word, rest = t, r+" "+rest
		}
		in := instruction{line: start, cmd: strings.ToUpper(word)}
		rest = strings.TrimSpace(rest)
		for strings.HasPrefix(rest, "--") {
			f, r, _ := strings.Cut(rest, " ")
			in.flags = append(in.flags, f)
			rest = strings.TrimSpace(r)
		}
		in.args = rest
		if strings.Contains(in.args, "<<") && regexp.MustCompile(`<<-?["']?[A-Za-z_]`).MatchString(in.args) {
			c.errorf(start, "%s uses a heredoc, which this check does not read: write it as a RUN with && or a COPY of a file", in.cmd)
		}
		out = append(out, in)
	}
	return out
}

// stage is one FROM and what follows it.
type stage struct {
	name       string
	image      string
	line       int
	user       string
	entrypoint []string
	hasEntry   bool
	runs       []instruction
}

func (c *checker) check(ins []instruction) []stage {
	var stages []stage
	globalArgs := map[string]bool{
		// Set by BuildKit for every build.
		"BUILDPLATFORM": true, "BUILDOS": true, "BUILDARCH": true, "BUILDVARIANT": true,
		"TARGETPLATFORM": true, "TARGETOS": true, "TARGETARCH": true, "TARGETVARIANT": true,
	}
	varRef := regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)`)
	for _, in := range ins {
		if !known[in.cmd] {
			c.errorf(in.line, "unknown instruction %q", in.cmd)
			continue
		}
		if len(stages) == 0 && in.cmd != "FROM" && in.cmd != "ARG" {
			c.errorf(in.line, "%s before the first FROM: only ARG may come before it", in.cmd)
			continue
		}
		allowed := flagsOf[in.cmd]
		for _, f := range in.flags {
			name, value, hasValue := strings.Cut(strings.TrimPrefix(f, "--"), "=")
			ok := false
			for _, a := range allowed {
				ok = ok || a == name
			}
			switch {
			case !ok:
				c.errorf(in.line, "%s takes no flag %s", in.cmd, "--"+name)
			case !hasValue && name != "link" && name != "parents" && name != "keep-git-dir" && name != "unpack":
				c.errorf(in.line, "%s --%s needs a value: --%s=...", in.cmd, name, name)
			case hasValue && value == "":
				c.errorf(in.line, "%s --%s= is empty", in.cmd, name)
			}
		}
		if in.args == "" {
			c.errorf(in.line, "%s has no arguments", in.cmd)
			continue
		}
		var jsonArgs []string
		isJSON := false
		if strings.HasPrefix(in.args, "[") {
			switch in.cmd {
			case "RUN", "CMD", "ENTRYPOINT", "SHELL", "VOLUME", "COPY", "ADD":
				if err := json.Unmarshal([]byte(in.args), &jsonArgs); err != nil {
					c.errorf(in.line, "%s's arguments start with [ but are not a JSON array of strings (%v); use double quotes", in.cmd, err)
					continue
				}
				isJSON = true
				if len(jsonArgs) == 0 && in.cmd != "CMD" && in.cmd != "ENTRYPOINT" {
					c.errorf(in.line, "%s has an empty argument list", in.cmd)
				}
			}
		}
		switch in.cmd {
		case "SHELL":
			if !isJSON {
				c.errorf(in.line, "SHELL takes a JSON array, like [\"/bin/sh\", \"-c\"]")
			}
		case "ARG":
			for _, a := range strings.Fields(in.args) {
				name, _, _ := strings.Cut(a, "=")
				if !regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`).MatchString(name) {
					c.errorf(in.line, "ARG %q is not a name[=default]", a)
				}
				if len(stages) == 0 {
					globalArgs[name] = true
				}
			}
		case "ENV", "LABEL":
			fields := strings.Fields(in.args)
			if !strings.Contains(fields[0], "=") {
				if in.cmd == "LABEL" || len(fields) < 2 {
					c.errorf(in.line, "%s %s: write key=value", in.cmd, in.args)
				}
				break
			}
			if strings.Count(in.args, `"`)%2 != 0 {
				c.errorf(in.line, "%s has an unclosed double quote", in.cmd)
			}
		case "FROM":
			f := strings.Fields(in.args)
			st := stage{line: in.line, image: f[0]}
			switch {
			case len(f) == 3 && strings.EqualFold(f[1], "AS"):
				st.name = strings.ToLower(f[2])
				if !regexp.MustCompile(`^[a-z][a-z0-9_.-]*$`).MatchString(st.name) {
					c.errorf(in.line, "stage name %q: use lower-case letters, digits, _ . -", f[2])
				}
				for _, s := range stages {
					if s.name == st.name {
						c.errorf(in.line, "stage %q is already named at line %d", f[2], s.line)
					}
				}
			case len(f) != 1:
				c.errorf(in.line, "FROM %s: write FROM image[:tag] [AS name]", in.args)
			}
			for _, m := range varRef.FindAllStringSubmatch(in.args+" "+strings.Join(in.flags, " "), -1) {
				if !globalArgs[m[1]] {
					c.errorf(in.line, "FROM uses $%s, which no ARG before the first FROM declares", m[1])
				}
			}
			stages = append(stages, st)
			continue
		case "COPY", "ADD":
			n := len(strings.Fields(in.args))
			if isJSON {
				n = len(jsonArgs)
			}
			if n < 2 {
				c.errorf(in.line, "%s needs a source and a destination", in.cmd)
			}
			for _, f := range in.flags {
				from, ok := strings.CutPrefix(f, "--from=")
				if !ok || strings.ContainsAny(from, "/:$") {
					continue // an image, or a variable
				}
				found := false
				for _, s := range stages[:len(stages)-1] {
					found = found || s.name == strings.ToLower(from)
				}
				if _, err := fmt.Sscanf(from, "%d", new(int)); err == nil {
					found = true
				}
				if !found {
					c.errorf(in.line, "COPY --from=%s names no earlier stage", from)
				}
			}
		case "USER":
			stages[len(stages)-1].user = in.args
		case "ENTRYPOINT":
			st := &stages[len(stages)-1]
			st.hasEntry = true
			st.entrypoint = jsonArgs
			if !isJSON {
				st.entrypoint = []string{"/bin/sh", "-c", in.args}
			}
		case "RUN":
			stages[len(stages)-1].runs = append(stages[len(stages)-1].runs, in)
		}
	}
	if len(stages) == 0 {
		c.errorf(1, "no FROM: a Dockerfile starts its first stage with FROM image")
	}
	return stages
}

// policy checks what this project asks of its image.
func (c *checker) policy(src string, stages []stage, goVersion, ldflags string) {
	if len(stages) == 0 {
		return
	}
	final := stages[len(stages)-1]
	if final.user == "" || final.user == "root" || final.user == "0" || strings.HasPrefix(final.user, "0:") || strings.HasPrefix(final.user, "root:") {
		c.errorf(final.line, "the final stage must run as a non-root user: add USER nonroot:nonroot (distroless) or a numeric uid")
	}
	if !final.hasEntry || len(final.entrypoint) == 0 || !strings.HasSuffix(final.entrypoint[0], "agenteval") {
		c.errorf(final.line, "the final stage's ENTRYPOINT must be the agenteval binary, in JSON form: ENTRYPOINT [\"/usr/local/bin/agenteval\"]")
	}
	if !strings.Contains(final.image, "distroless/static") && final.image != "scratch" {
		c.errorf(final.line, "the final stage is %s: use gcr.io/distroless/static or scratch, for a static binary alone", final.image)
	}
	if len(final.runs) > 0 {
		c.errorf(final.runs[0].line, "RUN in the final stage: it has no shell; do the work in the build stage")
	}
	if goVersion != "" {
		m := regexp.MustCompile(`(?m)^ARG GO_VERSION=(\S+)`).FindStringSubmatch(src)
		if m == nil {
			c.errorf(1, "no ARG GO_VERSION=...: the build stage's Go must be go.mod's (go %s)", goVersion)
		} else if m[1] != goVersion {
			c.errorf(1, "ARG GO_VERSION=%s, but go.mod says go %s: make them agree", m[1], goVersion)
		}
	}
	var build string
	for _, s := range stages {
		for _, r := range s.runs {
			if strings.Contains(r.args, "go build") {
				build = r.args
			}
		}
	}
	if build == "" {
		c.errorf(1, "no RUN ... go build: the image must build agenteval from this checkout")
		return
	}
	for _, want := range []string{"CGO_ENABLED=0", "-trimpath", "./cmd/agenteval"} {
		if !strings.Contains(build, want) {
			c.errorf(1, "the go build lacks %s (the release build's, see .goreleaser.yaml)", want)
		}
	}
	if ldflags != "" && !strings.Contains(build, ldflags) {
		c.errorf(1, "the go build's -ldflags lack %q, which .goreleaser.yaml passes", ldflags)
	}
}

// goModVersion is go.mod's go line.
func goModVersion(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "go "); ok {
			return strings.TrimSpace(v), nil
		}
	}
	return "", fmt.Errorf("%s has no go line", path)
}

// releaseLdflags is the part of .goreleaser.yaml's ldflags that does not
// depend on the release: "-s -w -X main.version=".
func releaseLdflags(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	m := regexp.MustCompile(`(?m)^\s*-\s*(-s -w -X main\.version=)`).FindSubmatch(b)
	if m == nil {
		return "", fmt.Errorf("%s: no ldflags line \"- -s -w -X main.version=...\" found; update this check with it", path)
	}
	return string(m[1]), nil
}

func run(name, src, goVersion, ldflags string) []string {
	c := &checker{file: name}
	stages := c.check(c.parse(src))
	c.policy(src, stages, goVersion, ldflags)
	return c.errs
}

// selfTest: each broken Dockerfile must give an error holding want.
func selfTest() error {
	good := "ARG GO_VERSION=1.0\nFROM golang:${GO_VERSION} AS build\n" +
		"RUN CGO_ENABLED=0 go build -trimpath -ldflags \"-s -w -X main.version=x\" ./cmd/agenteval\n" +
		"FROM gcr.io/distroless/static-debian12:nonroot\nCOPY --from=build /a /b\nUSER nonroot\nENTRYPOINT [\"/agenteval\"]\n"
	tests := []struct{ name, src, want string }{
		{"good", good, ""},
		{"unknown instruction", strings.Replace(good, "USER", "USR", 1), `unknown instruction "USR"`},
		{"before FROM", "RUN true\n" + good, "RUN before the first FROM"},
		{"bad JSON", strings.Replace(good, `["/agenteval"]`, `['/agenteval']`, 1), "not a JSON array"},
		{"no user", strings.Replace(good, "USER nonroot\n", "", 1), "non-root user"},
		{"root user", strings.Replace(good, "USER nonroot", "USER 0:0", 1), "non-root user"},
		{"unknown stage", strings.Replace(good, "--from=build", "--from=builder", 1), "names no earlier stage"},
		{"bad flag", strings.Replace(good, "COPY --from", "COPY --form", 1), "COPY takes no flag --form"},
		{"undeclared arg", strings.Replace(good, "ARG GO_VERSION=1.0\n", "", 1), "no ARG before the first FROM"},
		{"go version", strings.Replace(good, "1.0", "0.9", 1), "go.mod says go 1.0"},
		{"cgo", strings.Replace(good, "CGO_ENABLED=0 ", "", 1), "lacks CGO_ENABLED=0"},
		{"ldflags", strings.Replace(good, "-s -w ", "", 1), "-ldflags lack"},
		{"continuation", strings.Replace(good, "ENTRYPOINT [\"/agenteval\"]\n", "ENTRYPOINT [\"/agenteval\"] \\\n", 1), "nothing continues it"},
		{"run in final", strings.Replace(good, "USER nonroot", "RUN ls\nUSER nonroot", 1), "RUN in the final stage"},
		{"base", strings.Replace(good, "gcr.io/distroless/static-debian12:nonroot", "alpine", 1), "use gcr.io/distroless/static or scratch"},
		{"heredoc", strings.Replace(good, "USER nonroot", "RUN <<EOF\nls\nEOF\nUSER nonroot", 1), "heredoc"},
		{"continued comment", strings.Replace(good, "RUN CGO", "RUN \\\n# a note\n CGO", 1), ""},
	}
	for _, tt := range tests {
		errs := run("test", tt.src, "1.0", "-s -w -X main.version=")
		got := strings.Join(errs, "\n")
		switch {
		case tt.want == "" && len(errs) > 0:
			return fmt.Errorf("self-test %q: want no error, got:\n%s", tt.name, got)
		case tt.want != "" && !strings.Contains(got, tt.want):
			return fmt.Errorf("self-test %q: want an error with %q, got:\n%s", tt.name, tt.want, got)
		}
	}
	return nil
}

func main() {
	if err := selfTest(); err != nil {
		fmt.Fprintln(os.Stderr, "dockerfile-check:", err)
		os.Exit(1)
	}
	path := "Dockerfile"
	if len(os.Args) > 1 {
		path = os.Args[1]
	}
	src, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "dockerfile-check:", err)
		os.Exit(1)
	}
	goVersion, err := goModVersion("go.mod")
	if err == nil {
		var ld string
		if ld, err = releaseLdflags(".goreleaser.yaml"); err == nil {
			if errs := run(path, string(src), goVersion, ld); len(errs) > 0 {
				fmt.Fprintln(os.Stderr, strings.Join(errs, "\n"))
				os.Exit(1)
			}
			fmt.Printf("%s: syntax and policy OK (Go %s, static, non-root)\n", path, goVersion)
			return
		}
	}
	fmt.Fprintln(os.Stderr, "dockerfile-check:", err)
	os.Exit(1)
}
