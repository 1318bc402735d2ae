package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// exitConst is an exit status constant of this package.
type exitConst struct {
	name    string
	code    int
	meaning string
}

// exitMeanings say what a constant means when its source has no comment.
var exitMeanings = map[string]string{
	"exitOK": "success: every test passed, every file is valid, or the command did what it was asked",
}

// exitConsts reads the exit status constants (const exitX = N) of the
// package's own files, with the comment that says what each means.
func exitConsts() ([]exitConst, error) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	var out []exitConst
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		for _, decl := range file.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, id := range vs.Names {
					if !strings.HasPrefix(id.Name, "exit") || i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.INT {
						continue
					}
					code, err := strconv.Atoi(lit.Value)
					if err != nil {
						return nil, fmt.Errorf("%s: %s: %w", f, id.Name, err)
					}
					c := exitConst{name: id.Name, code: code, meaning: refConstComment(id.Name, vs, gd)}
					if c.meaning == "" {
						c.meaning = exitMeanings[id.Name]
					}
					if c.meaning == "" {
						return nil, fmt.Errorf("%s: the exit code %s has no comment saying what it means: add one", fset.Position(id.Pos()), id.Name)
					}
					out = append(out, c)
				}
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("found no exit status constants (const exitX = N) in cmd/agenteval")
	}
	sort.Slice(out, func(i, j int) bool { return out[i].code < out[j].code })
	return out, nil
}

// refConstComment is what a constant's comment says: its line comment, else
// its doc comment, else the doc of a declaration that holds only it.
func refConstComment(name string, vs *ast.ValueSpec, gd *ast.GenDecl) string {
	var text string
	switch {
	case vs.Comment != nil:
		text = vs.Comment.Text()
	case vs.Doc != nil:
		text = vs.Doc.Text()
	case gd.Doc != nil && len(gd.Specs) == 1:
		text = gd.Doc.Text()
	}
	text = strings.Join(strings.Fields(text), " ")
	text = strings.TrimPrefix(text, name+" is ")
	text = strings.TrimSuffix(text, ".")
	if text == "" {
		return ""
	}
	r := []rune(text)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// renderExitCodes writes docs/reference/exit-codes.md.
func renderExitCodes() ([]byte, error) {
	consts, err := exitConsts()
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(generatedNote)
	b.WriteString(`# Exit codes

Scripts and CI jobs read agenteval's exit status, so the codes never
change meaning. The table is made from the constants of ` + "`cmd/agenteval`" + `;
what each command returns follows it.

| Code | Constant | Meaning |
|---|---|---|
`)
	for _, c := range consts {
		fmt.Fprintf(&b, "| %d | `%s` | %s. |\n", c.code, c.name, mdEscape(c.meaning))
	}
	b.WriteString(`
## By command

- Every command exits with 2 on a usage error: an unknown command or
  flag, a wrong number of arguments, a flag value that does not parse.
- ` + "`run`" + ` exits with 0 when every test passed, 1 when some test failed,
  and 3 when some test ended in ` + "`execution_error`" + ` (the agent or a
  grader could not run), which wins over 1. It exits with 2 on a
  configuration problem: an eval file that does not load (or changes
  while the run reads it), an unknown target or metric, a judged grader
  without a judge, a missing API key, or credentials the provider
  refuses; a run stopped by one says how many tests had finished. Interrupted (Ctrl-C, SIGTERM, SIGHUP), it exits with
  130 and keeps the finished results; ` + "`--resume`" + ` continues. A dry run
  (` + "`--dry-run`" + `) exits with 0 when its checks fail, since the fake's
  replies are canned: only execution errors say the plumbing is broken.
- ` + "`score`" + ` exits as ` + "`run`" + ` does, per sample: 0, 1, or 3 when some sample
  could not be scored or the file breaks off; 2 for a configuration
  problem or a file that holds no samples.
- ` + "`merge`" + ` exits with the merged run's status (0, 1 or 3); 2 when the shards
  cannot be merged (runs, shards or files that do not belong together), and
  3 when the merged results cannot be written.
- ` + "`validate`" + ` exits with 0 when every file is valid (warnings allowed,
  unless ` + "`--strict`" + `), 1 when some file has a problem, and 2 when a
  file cannot be read at all.
- ` + "`compare`" + ` exits with 1 when ` + "`--fail-on-regression`" + ` is given and some
  test regressed.
- ` + "`cache stats`" + ` exits with 1 when some cached reply fails its integrity
  check, or the cache holds replies and you have no key yet; ` + "`cache`" + `
  commands exit with 3 when the cache cannot be read or cleared.
- ` + "`export`" + ` exits with 1 when some rows are invalid (they are left
  out, each reported) or the file breaks off, and 3 when it cannot write.
- ` + "`import`" + ` exits with 1 when some session logs could not be read, and 3
  when it cannot write.
`)
	return b.Bytes(), nil
}
