package agenteval_test

// The layering of agenteval is written twice: in words, in each package's
// doc comment ("It may import the root package, report and the standard
// library."), and below, as the rules table that TestDeps checks the code
// against, in the manner of the Go tree's go/build deps_test.go. The two
// change together: a package that needs a new import gets the import named
// in its doc and in its row, in the same commit, and a new package comes
// with its row. TestDepsDocs checks, where that is cheap, that the table
// and the docs still say the same.
//
// Only what a package's own non-test files import is checked, and only its
// direct imports: a doc's rule is about the code its package owns, and
// test files may reach for whatever helps them test.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

const modulePath = "github.com/agenteval/agenteval"

// A rule says what one package of the module may import. The standard
// library is always allowed.
type rule struct {
	// may lists the packages of this module it may import, by their path
	// below the module root; "." is the root package. A pattern "x/..."
	// stands for x and every package below it, "public" for every package
	// outside internal/, and "all" for every package. Patterns never match
	// a package of forTests: only naming it exactly allows it.
	may []string
	// ext lists the third-party packages it may import, by import path; a
	// pattern "p/..." stands for p and every package below it, and "..."
	// for any. An empty ext means no third-party module at all.
	ext []string
	// leaving lists imports the code still has but its doc no longer
	// names, because a change under way elsewhere removes them. They are
	// allowed until then; delete them from here once they are gone.
	leaving []string
}

// rules is the import rule of every package of the module, keyed by its
// path below the module root. Each row says what the package's doc says.
// A row whose package does not exist (yet, or any more) is harmless.
var rules = map[string]rule{
	// The vocabulary everything else shares; it depends on nothing.
	".": {},

	// Helpers. The internal packages that need the standard library only.
	"internal/bytesize":         {},
	"internal/dotenv":           {},
	"internal/jsonpos":          {},
	"internal/jsonvalue":        {},
	"internal/loadsuite":        {},
	"internal/proc":             {},
	"internal/redact":           {},
	"internal/shellwords":       {},
	"internal/strictjson":       {},
	"internal/suggest":          {},
	"internal/words":            {},
	"internal/nunjucks":         {},
	"internal/tools/gensamples": {},
	// The one decoder of chat messages that dataset, trace and suite share.
	"internal/messages": {may: []string{".", "internal/jsonpos", "internal/strictjson"}},
	// Internal packages built over one third-party library.
	"internal/fakellm":     {ext: []string{"go.yaml.in/yaml/v4"}},
	"internal/schemacheck": {ext: []string{"github.com/google/jsonschema-go/..."}},
	// Internal packages for tests (see forTests).
	"internal/attack":  {may: []string{"."}},
	"internal/browser": {ext: []string{"github.com/chromedp/chromedp/...", "github.com/chromedp/cdproto/..."}},
	"internal/golden":  {ext: []string{"github.com/google/go-cmp/..."}},
	"internal/pgtest":  {ext: []string{"github.com/jackc/pgx/v5/..."}},

	// Readers and writers of conversations and results.
	"dataset":      {may: []string{".", "internal/..."}},
	"trace":        {may: []string{".", "dataset", "internal/..."}, ext: []string{"go.opentelemetry.io/proto/otlp/...", "google.golang.org/protobuf/..."}},
	"report":       {may: []string{".", "results"}},
	"results":      {may: []string{".", "internal/redact", "internal/jsonvalue"}},
	"compare":      {may: []string{".", "report", "results"}},
	"shard":        {may: []string{".", "results"}},
	"otelexport":   {may: []string{".", "results", "internal/redact"}, ext: []string{"go.opentelemetry.io/otel", "go.opentelemetry.io/otel/attribute", "go.opentelemetry.io/otel/codes", "go.opentelemetry.io/otel/exporters/otlp/otlptrace", "go.opentelemetry.io/otel/sdk/...", "go.opentelemetry.io/otel/semconv/...", "go.opentelemetry.io/otel/trace", "go.opentelemetry.io/proto/otlp/trace/v1", "google.golang.org/protobuf/proto", "google.golang.org/protobuf/encoding/protowire"}},
	"otlpreceiver": {may: []string{".", "trace"}, ext: []string{"go.opentelemetry.io/proto/otlp/...", "google.golang.org/protobuf/..."}},

	// Models: the reliable wrapper, its adapters, and the cache.
	"provider":           {may: []string{".", "internal/redact", "internal/jsonpos"}, ext: []string{"github.com/cenkalti/backoff/v5", "golang.org/x/time/rate"}},
	"provider/anthropic": {may: []string{".", "provider"}, ext: []string{"github.com/anthropics/anthropic-sdk-go/..."}},
	"provider/gemini":    {may: []string{".", "provider"}},
	"provider/openai":    {may: []string{".", "provider"}, ext: []string{"github.com/openai/openai-go/v3/..."}},
	"cache":              {may: []string{".", "internal/redact"}},

	// Grading and running.
	"judge":      {may: []string{".", "cache", "internal/schemacheck", "internal/strictjson"}},
	"simulate":   {may: []string{".", "cache", "judge"}},
	"grade":      {may: []string{".", "judge", "internal/..."}},
	"suite":      {may: []string{".", "grade", "internal/..."}, ext: []string{"go.yaml.in/yaml/v4"}},
	"project":    {may: []string{"suite", "internal/proc"}},
	"agent":      {may: []string{"."}, ext: []string{"github.com/google/jsonschema-go/..."}},
	"target":     {may: []string{".", "agent", "mcptools", "suite", "dataset", "provider", "results", "internal/..."}},
	"run":        {may: []string{".", "suite", "dataset", "grade", "judge", "simulate", "internal/redact"}},
	"experiment": {may: []string{"."}, ext: []string{"golang.org/x/term"}},
	// Judge–human agreement: labels set beside the judge's verdicts.
	"calibrate": {may: []string{".", "store", "internal/suggest"}},

	// The tools of MCP servers as agent tools, over the official SDK.
	"mcptools": {may: []string{"agent", "internal/proc"}, ext: []string{"github.com/modelcontextprotocol/go-sdk/..."}},

	// The run store and its backends.
	"store":           {may: []string{".", "results"}},
	"store/sqlstore":  {may: []string{".", "results", "store"}},
	"store/sqlite":    {may: []string{".", "results", "store", "store/sqlstore"}, ext: []string{"modernc.org/sqlite/..."}},
	"store/postgres":  {may: []string{".", "results", "store", "store/sqlstore", "internal/redact"}, ext: []string{"github.com/jackc/pgx/v5/..."}},
	"store/storetest": {may: []string{".", "results", "store"}},
	"view":            {may: []string{".", "report", "results", "compare", "store"}},

	// Orchestration: a run session, and what drives one.
	"session": {
		// Not the provider SDKs, the store backends or the OpenTelemetry
		// SDK: a program (a go test binary via evaltest) compiles in only
		// the ones it imports itself.
		may: []string{".", "suite", "project", "dataset", "run", "grade", "judge", "target", "provider", "cache",
			"store", "report", "results", "shard", "internal/..."},
		// To tell an eval file from other YAML by its top-level keys.
		ext: []string{"go.yaml.in/yaml/v4"},
	},
	"evaltest":      {may: []string{".", "grade", "judge", "report", "results", "session"}},
	"cmd/agenteval": {may: []string{"all"}, ext: []string{"..."}},
	// The on-demand comparison with AgentV (scripts/agentv-diff/run.sh).
	"scripts/agentv-diff": {may: []string{"internal/fakellm"}},

	// Examples show the public API, as a user's program would use it.
	"examples/inspect/agent":    {may: []string{"public"}},
	"examples/mathagent":        {may: []string{"public"}},
	"examples/quickstart/agent": {may: []string{"public"}},
}

// forTests are the packages for test files only. No pattern of a rule
// matches them, so non-test code imports one only if its row names it.
var forTests = map[string]bool{
	"evaltest":         true,
	"internal/attack":  true,
	"internal/browser": true,
	"internal/golden":  true,
	"internal/pgtest":  true,
	"store/storetest":  true,
}

// docsPending are packages whose docs do not yet state their row, with why
// the doc waits; TestDepsDocs skips them. Their imports are still checked.
var docsPending = map[string]string{}

// allowsModule reports whether r lets a package import the module's
// package dep (a path below the module root).
func (r rule) allowsModule(dep string) bool {
	for _, p := range r.may {
		if p == dep {
			return true
		}
		if forTests[dep] {
			continue
		}
		switch {
		case p == "all":
			return true
		case p == "public":
			if dep != "internal" && !strings.HasPrefix(dep, "internal/") {
				return true
			}
		case strings.HasSuffix(p, "/..."):
			base := strings.TrimSuffix(p, "/...")
			if dep == base || strings.HasPrefix(dep, base+"/") {
				return true
			}
		}
	}
	return slices.Contains(r.leaving, dep)
}

// allowsExt reports whether r lets a package import the third-party
// package path.
func (r rule) allowsExt(path string) bool {
	for _, p := range r.ext {
		if p == "..." || p == path {
			return true
		}
		if base, ok := strings.CutSuffix(p, "/..."); ok && (path == base || strings.HasPrefix(path, base+"/")) {
			return true
		}
	}
	return false
}

// String says r in words, for failure messages.
func (r rule) String() string {
	var may []string
	for _, p := range r.may {
		switch p {
		case ".":
			may = append(may, "the root package")
		case "all":
			may = append(may, "any package of the module")
		case "public":
			may = append(may, "any package outside internal/")
		default:
			may = append(may, p)
		}
	}
	may = append(may, "the standard library")
	ext := "no third-party package"
	if len(r.ext) > 0 {
		ext = "third-party " + strings.Join(r.ext, ", ")
	}
	s := strings.Join(may, ", ") + "; " + ext
	if len(r.leaving) > 0 {
		s += "; for now also " + strings.Join(r.leaving, ", ")
	}
	return s
}

// name is how messages name the module's package rel.
func name(rel string) string {
	if rel == "." {
		return "agenteval (the root package)"
	}
	return rel
}

// relPath is the path of the module's package path below the module root,
// and whether path is in the module at all.
func relPath(path string) (string, bool) {
	if path == modulePath {
		return ".", true
	}
	rel, ok := strings.CutPrefix(path, modulePath+"/")
	return rel, ok
}

// isStd reports whether path is in the standard library: as the go
// command has it, a path whose first element has no dot.
func isStd(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// listedPackage is what go list says of a package, plus what this file
// reads from its sources.
type listedPackage struct {
	ImportPath     string
	Name           string
	Dir            string
	GoFiles        []string
	CgoFiles       []string
	IgnoredGoFiles []string
	Imports        []string
	Error          *struct{ Err string }

	doc string // the package's doc comments, all files' together
}

var ignoreTag = regexp.MustCompile(`^//go:build.*\bignore\b`)

// loadPackages lists the module's packages with go list, and reads their
// doc comments and the imports of files this platform's build leaves out.
var loadPackages = sync.OnceValues(func() ([]*listedPackage, error) {
	cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Name,Dir,GoFiles,CgoFiles,IgnoredGoFiles,Imports,Error", "./...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %v\n%s", err, stderr.Bytes())
	}
	var pkgs []*listedPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		p := new(listedPackage)
		if err := dec.Decode(p); err != nil {
			return nil, fmt.Errorf("reading go list's output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	fset := token.NewFileSet()
	for _, p := range pkgs {
		var docs []string
		for _, f := range slices.Concat(p.GoFiles, p.CgoFiles) {
			af, err := parser.ParseFile(fset, filepath.Join(p.Dir, f), nil, parser.PackageClauseOnly|parser.ParseComments)
			if err != nil {
				return nil, err
			}
			if af.Doc != nil {
				docs = append(docs, af.Doc.Text())
			}
		}
		p.doc = strings.Join(docs, "\n")
		// A file built only on other systems (proc_other.go) is still the
		// package's code; a file kept out of every build (//go:build
		// ignore, such as a generator) is not.
		for _, f := range p.IgnoredGoFiles {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			af, err := parser.ParseFile(fset, filepath.Join(p.Dir, f), nil, parser.ImportsOnly|parser.ParseComments)
			if err != nil || af.Name.Name != p.Name || ignored(af) {
				continue
			}
			for _, is := range af.Imports {
				if path, err := strconv.Unquote(is.Path.Value); err == nil && !slices.Contains(p.Imports, path) {
					p.Imports = append(p.Imports, path)
				}
			}
		}
	}
	return pkgs, nil
})

// ignored reports whether f's build constraint keeps it out of every
// build.
func ignored(f *ast.File) bool {
	for _, g := range f.Comments {
		if g.Pos() > f.Package {
			break
		}
		for _, c := range g.List {
			if ignoreTag.MatchString(c.Text) {
				return true
			}
		}
	}
	return false
}

func packages(t *testing.T) []*listedPackage {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to list the packages with")
	}
	pkgs, err := loadPackages()
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) == 0 {
		t.Fatal("go list ./... found no packages")
	}
	return pkgs
}

const fixHint = "To fix it, change the import, or, if the dependency is right, change the import sentence of the package's doc and its row in the rules table of deps_test.go together."

// TestDeps checks every package's imports against its rule, and that every
// package has one.
func TestDeps(t *testing.T) {
	for _, p := range packages(t) {
		rel, ok := relPath(p.ImportPath)
		if !ok {
			t.Errorf("go list ./... listed %s, which is not in module %s", p.ImportPath, modulePath)
			continue
		}
		if p.Error != nil {
			t.Errorf("cannot check the imports of %s: %s", name(rel), p.Error.Err)
			continue
		}
		r, ok := rules[rel]
		if !ok {
			t.Errorf("package %s has no rule: add a row for %q to the rules table of deps_test.go that lists what the package's doc says it may import (and if the doc says nothing about imports, give it a sentence that does)", name(rel), rel)
			continue
		}
		for _, imp := range p.Imports {
			if dep, ok := relPath(imp); ok {
				if r.allowsModule(dep) {
					continue
				}
				why := ""
				if forTests[dep] {
					why = fmt.Sprintf(" (%s is for test files)", dep)
				}
				t.Errorf("package %s imports %s, which its rule does not allow%s.\n\trule of %s: %s.\n\t%s",
					name(rel), name(dep), why, name(rel), r, fixHint)
				continue
			}
			if isStd(imp) || r.allowsExt(imp) {
				continue
			}
			t.Errorf("package %s imports the third-party package %s, which its rule does not allow.\n\trule of %s: %s.\n\t%s",
				name(rel), imp, name(rel), r, fixHint)
		}
	}
}

var (
	sentenceEnd = regexp.MustCompile(`\.\s+`)
	docWord     = regexp.MustCompile(`[a-z0-9_]+(/[a-z0-9_]+)*`)
)

// importSentences is the sentences of doc that speak of imports, in lower
// case.
func importSentences(doc string) []string {
	var out []string
	for _, s := range sentenceEnd.Split(strings.Join(strings.Fields(doc), " "), -1) {
		if s = strings.ToLower(s); strings.Contains(s, "import") {
			out = append(out, s)
		}
	}
	return out
}

// names reports whether the import sentences ss name the rule pattern p.
func names(ss []string, p string) bool {
	text := strings.Join(ss, " ")
	switch p {
	case ".":
		return strings.Contains(text, "root package")
	case "all":
		return strings.Contains(text, "every package") || strings.Contains(text, "any package")
	case "public":
		return strings.Contains(text, "public package")
	case "internal/...":
		if strings.Contains(text, "internal helpers") || strings.Contains(text, "internal packages") {
			return true
		}
	}
	base, tree := strings.CutSuffix(p, "/...")
	for _, w := range docWord.FindAllString(text, -1) {
		if w == base || tree && strings.HasPrefix(w, base+"/") {
			return true
		}
	}
	return false
}

var stdOnly = regexp.MustCompile(`only the standard library|standard library only`)

// TestDepsDocs checks that each package's doc states a rule of imports,
// and that it names every package of the module its row allows.
func TestDepsDocs(t *testing.T) {
	for _, p := range packages(t) {
		rel, ok := relPath(p.ImportPath)
		if !ok || p.Error != nil {
			continue // TestDeps reports these
		}
		r, ok := rules[rel]
		if !ok {
			continue // TestDeps reports it
		}
		if why, ok := docsPending[rel]; ok {
			t.Logf("skipping the doc of %s: %s", name(rel), why)
			continue
		}
		if strings.TrimSpace(p.doc) == "" {
			t.Errorf("package %s has no doc comment; give it one, with a sentence saying what it may import (its row in deps_test.go: %s)", name(rel), r)
			continue
		}
		ss := importSentences(p.doc)
		if len(ss) == 0 {
			t.Errorf("the doc of package %s says nothing about imports; add a sentence such as \"It may import the root package, report and the standard library.\" that says what its row in deps_test.go says: %s", name(rel), r)
			continue
		}
		for _, m := range r.may {
			if !names(ss, m) {
				t.Errorf("the rule of package %s allows %s, but no sentence about imports in its doc names it.\n\tname it in the doc, or take it out of the row in deps_test.go: %s", name(rel), name(m), r)
			}
		}
		if len(r.may) == 0 && len(r.ext) == 0 && len(r.leaving) == 0 && !stdOnly.MatchString(strings.Join(ss, " ")) {
			t.Errorf("the rule of package %s is the standard library only, but its doc does not say so; say \"It imports only the standard library.\", or widen the row in deps_test.go", name(rel))
		}
	}
}

// TestDepsRules checks the table itself: each pattern is one the rules
// understand, in the field it belongs to.
func TestDepsRules(t *testing.T) {
	for rel, r := range rules {
		for _, p := range slices.Concat(r.may, r.leaving) {
			if p == "..." || strings.HasPrefix(p, "/") || strings.HasPrefix(p, modulePath) || strings.Contains(strings.TrimSuffix(p, "/..."), "...") {
				t.Errorf("row %q: %q is not a pattern of this module's packages (write \".\", a path below the module root, \"x/...\", \"public\" or \"all\")", rel, p)
			}
		}
		for _, p := range r.ext {
			if _, in := relPath(strings.TrimSuffix(p, "/...")); in {
				t.Errorf("row %q: ext holds %q, which is in this module; write it in may, below the module root", rel, p)
			} else if isStd(p) && p != "..." {
				t.Errorf("row %q: ext holds %q, a standard library path; the standard library is always allowed", rel, p)
			}
		}
	}
	for rel := range docsPending {
		if _, ok := rules[rel]; !ok {
			t.Errorf("docsPending names %q, which has no row", rel)
		}
	}
}
