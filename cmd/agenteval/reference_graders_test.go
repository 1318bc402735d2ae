package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/dataset"
	"github.com/agenteval/agenteval/grade"
	"github.com/agenteval/agenteval/judge"
	"github.com/agenteval/agenteval/suite"
	"go.yaml.in/yaml/v4"
)

// graderDoc is what grade/docs.yaml says of one grader, beside its
// definition: the parts of its page that are not in the code.
type graderDoc struct {
	// Example is the keys of one test of an eval file that uses the
	// grader; it must load without a warning.
	Example string `yaml:"example"`
	// Metric is a --metric value of agenteval score that uses it.
	Metric string `yaml:"metric"`
	// Sample is a dataset row (JSON) the metric scores; a grader that
	// needs no judge is run on it, and the page shows its score.
	Sample string `yaml:"sample"`
	// Judge says when a grader that calls the judge for some settings
	// only calls it.
	Judge string `yaml:"judge"`
	// Defaults are the settings' defaults, as text. A setting whose doc
	// speaks of a default must have one.
	Defaults map[string]string `yaml:"defaults"`
	// Notes are more about what it checks and how it scores (markdown).
	Notes string `yaml:"notes"`
}

// mentionsDefault finds a setting's doc that gives its default: "(default
// 5)", "exact_match (default)", "(insertion, the default)".
var mentionsDefault = regexp.MustCompile(`\(default\b|\bdefault\)`)

// graderDocsPath is grade/docs.yaml from this package's folder.
const graderDocsPath = "../../grade/docs.yaml"

func loadGraderDocs() (map[string]graderDoc, error) {
	b, err := os.ReadFile(graderDocsPath)
	if err != nil {
		return nil, err
	}
	var docs map[string]graderDoc
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&docs); err != nil {
		return nil, fmt.Errorf("grade/docs.yaml: %w", err)
	}
	return docs, nil
}

// graderGroups reads the groups All lists its graders in, from the
// comments of grade/all.go: "// Tool calls." above ToolCalls, ... It
// returns each grader's group, by position in All.
func graderGroups(n int) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "../../grade/all.go", nil, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	var lit *ast.CompositeLit
	ast.Inspect(f, func(x ast.Node) bool {
		if fd, ok := x.(*ast.FuncDecl); ok && fd.Name.Name != "All" {
			return false
		}
		if cl, ok := x.(*ast.CompositeLit); ok && lit == nil {
			lit = cl
		}
		return lit == nil
	})
	if lit == nil || len(lit.Elts) != n {
		return nil, fmt.Errorf("grade/all.go: All's list does not hold the %d graders All returns", n)
	}
	groups := make([]string, n)
	group := ""
	ci := 0
	for i, e := range lit.Elts {
		for ci < len(f.Comments) && f.Comments[ci].End() < e.Pos() {
			if f.Comments[ci].Pos() > lit.Lbrace {
				group = strings.TrimSuffix(strings.TrimSpace(f.Comments[ci].Text()), ".")
			}
			ci++
		}
		if group == "" {
			return nil, fmt.Errorf("grade/all.go: %s is in no group: put a comment such as // Tool calls. above it", fset.Position(e.Pos()))
		}
		groups[i] = group
	}
	return groups, nil
}

// foreignTypes reads the maps of suite/assertions.go that say which
// AgentV and promptfoo assertion types the loader reads into which of our
// graders (typeNames), and which it cannot run, with why (unrunnable).
func foreignTypes() (names, unrunnable map[string]string, err error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "../../suite/assertions.go", nil, 0)
	if err != nil {
		return nil, nil, err
	}
	maps := map[string]map[string]string{}
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.VAR {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, id := range vs.Names {
				if (id.Name != "typeNames" && id.Name != "unrunnable") || i >= len(vs.Values) {
					continue
				}
				cl, ok := vs.Values[i].(*ast.CompositeLit)
				if !ok {
					continue
				}
				m := map[string]string{}
				for _, e := range cl.Elts {
					kv, ok := e.(*ast.KeyValueExpr)
					if !ok {
						continue
					}
					k, kerr := refStringLit(kv.Key)
					v, verr := refStringLit(kv.Value)
					if kerr != nil || verr != nil {
						return nil, nil, fmt.Errorf("suite/assertions.go: %s: an entry of %s is not two string literals", fset.Position(kv.Pos()), id.Name)
					}
					m[k] = v
				}
				maps[id.Name] = m
			}
		}
	}
	if maps["typeNames"] == nil || maps["unrunnable"] == nil {
		return nil, nil, fmt.Errorf("suite/assertions.go: the maps typeNames and unrunnable were not found; update foreignTypes in cmd/agenteval/reference_graders_test.go")
	}
	return maps["typeNames"], maps["unrunnable"], nil
}

func refStringLit(e ast.Expr) (string, error) {
	bl, ok := e.(*ast.BasicLit)
	if !ok || bl.Kind != token.STRING {
		return "", fmt.Errorf("not a string literal")
	}
	return strconv.Unquote(bl.Value)
}

// refSchemaProps finds the properties the eval file's JSON Schema gives the
// assertion branch titled name.
func refSchemaProps(schema any, name string) map[string]any {
	switch v := schema.(type) {
	case map[string]any:
		if v["title"] == name {
			if p, ok := v["properties"].(map[string]any); ok {
				return p
			}
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if p := refSchemaProps(v[k], name); p != nil {
				return p
			}
		}
	case []any:
		for _, x := range v {
			if p := refSchemaProps(x, name); p != nil {
				return p
			}
		}
	}
	return nil
}

// refTypeText names JSON types for people.
func refTypeText(types []string, enum []string) string {
	if len(enum) > 0 {
		return "one of " + strings.Join(refCodeAll(enum), ", ")
	}
	if len(types) == 0 {
		return "any"
	}
	out := make([]string, len(types))
	for i, t := range types {
		switch t {
		case "array":
			out[i] = "list"
		default:
			out[i] = t
		}
	}
	return strings.Join(out, " or ")
}

// refSentence makes a doc line a sentence: a capital, unless the line opens
// with a name (contains_any, agent_inspect), and a full stop.
func refSentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return s
	}
	first, _, _ := strings.Cut(s, " ")
	first = strings.TrimRight(first, ",:;")
	if strings.IndexFunc(first, func(r rune) bool { return !unicode.IsLower(r) }) < 0 {
		r := []rune(s)
		r[0] = unicode.ToUpper(r[0])
		s = string(r)
	}
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}

// refJudgeText says whether a grader calls the judge: never, always, or only
// for some settings (what grade/docs.yaml says).
func refJudgeText(d *grade.Definition, doc graderDoc) (string, error) {
	switch {
	case d.NeedsJudge == nil:
		if doc.Judge != "" {
			return "", fmt.Errorf("judge: %s never calls the judge; remove judge from grade/docs.yaml", d.Name)
		}
		return "no", nil
	case d.NeedsJudge(nil):
		if doc.Judge != "" {
			return "", fmt.Errorf("judge: %s always calls the judge; remove judge from grade/docs.yaml", d.Name)
		}
		return "yes", nil
	case doc.Judge == "":
		return "", fmt.Errorf("%s calls the judge for some settings only: say which in judge: in grade/docs.yaml", d.Name)
	}
	return "only " + strings.TrimSuffix(doc.Judge, "."), nil
}

// refOtherNames are the names a grader is also known by: its aliases, and the
// AgentV and promptfoo types the loader reads into it. A name that differs
// from one shown only in - and _ is not repeated: both spellings work.
func refOtherNames(d *grade.Definition, foreign map[string]string) []string {
	seen := map[string]bool{d.Name: true}
	var out []string
	add := func(n string) {
		key := strings.ReplaceAll(n, "-", "_")
		if seen[key] {
			return
		}
		seen[key] = true
		out = append(out, n)
	}
	var fs []string
	for k, v := range foreign {
		if v == d.Name {
			fs = append(fs, k)
		}
	}
	// Kebab-case first: it is how AgentV and promptfoo write them.
	sort.Slice(fs, func(i, j int) bool {
		ki, kj := strings.Contains(fs[i], "-"), strings.Contains(fs[j], "-")
		if ki != kj {
			return ki
		}
		return fs[i] < fs[j]
	})
	for _, a := range d.Aliases {
		if i := slices.Index(fs, strings.ReplaceAll(a, "_", "-")); i >= 0 {
			continue // shown in its kebab form
		}
		add(a)
	}
	for _, f := range fs {
		add(f)
	}
	return out
}

// refCheckExample loads an example as one test of an eval file: it must load
// with no problem and no warning, and use the grader.
func refCheckExample(d *grade.Definition, example string) error {
	var keys map[string]any
	if err := yaml.Unmarshal([]byte(example), &keys); err != nil {
		return fmt.Errorf("example: %w", err)
	}
	var b strings.Builder
	b.WriteString("tests:\n  - id: example\n")
	_, input := keys["input"]
	_, user := keys["user"]
	_, turns := keys["turns"]
	if !input && !user && !turns {
		b.WriteString("    input: Hello\n")
	}
	for _, l := range strings.Split(strings.TrimRight(example, "\n"), "\n") {
		b.WriteString("    " + l + "\n")
	}
	dir, err := os.MkdirTemp("", "agenteval-docs-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "evals.yaml")
	s, err := suite.Parse(path, []byte(b.String()), suite.Options{JudgeAvailable: true, SimulatorAvailable: true, Strict: true, Env: func(string) (string, bool) { return "", false }})
	if err != nil {
		return fmt.Errorf("example does not load:\n%s\n%v", b.String(), err)
	}
	for _, tc := range s.Tests {
		// A test's subgoals and expected calls are graded by the graders
		// of those names.
		if d.Name == "subgoals" && len(tc.Subgoals) > 0 || d.Name == "expected_tool_calls" && len(tc.ExpectedToolCalls) > 0 {
			return nil
		}
		for _, a := range refAllAssertions(tc) {
			if dd, _, ok := grade.Find(grade.All(), a.Type); ok && dd.Name == d.Name {
				return nil
			}
		}
	}
	return fmt.Errorf("example uses no %s assertion:\n%s", d.Name, example)
}

func refAllAssertions(tc agenteval.Test) []agenteval.AssertionSpec {
	out := slices.Clone(tc.Assertions)
	for _, t := range tc.Turns {
		out = append(out, t.Assertions...)
	}
	return out
}

// refScoreMetric checks a --metric value, and scores the sample with it when
// the metric needs no judge: the page shows the result.
func refScoreMetric(d *grade.Definition, metric, sample string) (*agenteval.Score, error) {
	specs, err := parseMetricFlags([]string{metric})
	if err != nil {
		return nil, err
	}
	if len(specs) != 1 {
		return nil, fmt.Errorf("metric %q names %d metrics, not one", metric, len(specs))
	}
	spec := specs[0]
	if dd, _, ok := grade.Find(grade.All(), spec.Type); !ok || dd.Name != d.Name {
		return nil, fmt.Errorf("metric %q is not %s", metric, d.Name)
	}
	judged := spec.NeedsJudge()
	if judged {
		spec.Judge = &judge.Judge{} // never called: the grader is only built
	}
	g, err := grade.New(spec)
	if err != nil {
		return nil, fmt.Errorf("metric %q: %w", metric, err)
	}
	if sample == "" {
		return nil, nil
	}
	s, problems := dataset.DecodeSample([]byte(sample))
	for _, p := range problems {
		return nil, fmt.Errorf("sample: %s: %s", p.Path, p.Msg)
	}
	if s == nil {
		return nil, fmt.Errorf("sample is not a JSON object")
	}
	if judged {
		return nil, nil
	}
	sc, err := g.Grade(context.Background(), agenteval.InputFromSample(s))
	if err != nil {
		return nil, fmt.Errorf("metric %q on the sample: %w", metric, err)
	}
	return &sc, nil
}

// renderGraders writes docs/reference/graders.md.
func renderGraders() ([]byte, error) {
	defs := grade.All()
	docs, err := loadGraderDocs()
	if err != nil {
		return nil, err
	}
	groups, err := graderGroups(len(defs))
	if err != nil {
		return nil, err
	}
	foreign, unrunnable, err := foreignTypes()
	if err != nil {
		return nil, err
	}
	var schema any
	if err := json.Unmarshal(suite.JSONSchema(), &schema); err != nil {
		return nil, fmt.Errorf("the eval file schema: %w", err)
	}
	var problems []string
	for name := range docs {
		if _, _, ok := grade.Find(defs, name); !ok {
			problems = append(problems, fmt.Sprintf("grade/docs.yaml describes %s, which is no grader of grade.All: remove it", name))
		}
	}

	var b bytes.Buffer
	b.WriteString(generatedNote)
	b.WriteString(`# Graders and metrics

A grader scores a reply, a turn or a whole conversation from 0 to 1, and
passes when the score reaches its threshold (0.8 unless set). An eval
file names graders in a test's or a turn's ` + "`assertions:`" + ` list, each by its
` + "`type`" + ` and with its settings beside it; ` + "`agenteval score FILE --metric NAME(key=value, ...)`" + `
runs the same graders, called metrics there, over recorded conversations.

- A name may be written in snake_case or kebab-case (` + "`contains_any`, `contains-any`" + `),
  and a ` + "`not_`" + ` or ` + "`not-`" + ` prefix inverts the score (1 − score), as ` + "`negate: true`" + ` does.
- A plain string in an ` + "`assertions:`" + ` list is a criterion of the
  [` + "`rubrics`" + `](#rubrics) grader.
- A grader that calls the judge (Judge: yes) needs a judge model: ` + "`--judge`" + `,
  ` + "`judge:`" + ` in the eval file, or ` + "`AGENTEVAL_JUDGE`" + `.
- AgentV's and promptfoo's names for a grader work too; each grader
  lists them. The types agenteval does not run are [at the end](#types-that-do-not-run).
- A setting's value in ` + "`--metric`" + ` is JSON when it parses as JSON, else text:
  ` + "`contains_any(value=[\"booked\", \"reserved\"])`" + `.

`)
	// The index.
	b.WriteString("| Grader | What it checks | Judge |\n|---|---|---|\n")
	judges := make([]string, len(defs))
	for i, d := range defs {
		j, err := refJudgeText(d, docs[d.Name])
		if err != nil {
			problems = append(problems, err.Error())
		}
		judges[i] = j
		fmt.Fprintf(&b, "| [`%s`](#%s) | %s | %s |\n", d.Name, mdAnchor(d.Name), mdEscape(refSentence(d.Doc)), mdEscape(j))
	}

	// The settings every grader takes, as the eval file schema has them.
	b.WriteString("\n## Settings every grader takes\n\n")
	var flagKeys []string
	for _, p := range grade.Common {
		if p.Name != "type" {
			flagKeys = append(flagKeys, "`"+p.Name+"`")
		}
	}
	fmt.Fprintf(&b, "Beside its own settings, every grader takes these. With `--metric`, the name comes first and %s go in its parentheses with its own settings; the others are AgentV's, for eval files.\n\n",
		strings.Join(flagKeys, ", "))
	b.WriteString("| Setting | Type | Meaning |\n|---|---|---|\n")
	common := refSchemaProps(schema, "is_json")
	if common == nil {
		problems = append(problems, "the eval file schema has no branch for is_json, whose properties are the common settings")
	}
	var names []string
	for _, p := range grade.Common {
		names = append(names, p.Name)
	}
	var extra []string
	for k := range common {
		if !slices.Contains(names, k) {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	for _, k := range append(names, extra...) {
		p, _ := common[k].(map[string]any)
		desc, _ := p["description"].(string)
		var types []string
		switch t := p["type"].(type) {
		case string:
			types = []string{t}
		case []any:
			for _, x := range t {
				types = append(types, fmt.Sprint(x))
			}
		}
		var enum []string
		if k == "type" {
			types, desc = []string{"string"}, "the grader: one of the names below"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", k, refTypeText(types, enum), mdEscape(refSentence(desc)))
	}

	// The row most examples score is shown once.
	shared := refSharedSample(docs)
	if shared != "" {
		fmt.Fprintf(&b, "\n## The sample row\n\nThe `agenteval score` examples below that name `row.jsonl` score this row, a recorded conversation in the form of Ragas's `MultiTurnSample` (on one line in the file):\n\n```json\n%s\n```\n", strings.TrimSpace(shared))
	}

	group := ""
	for i, d := range defs {
		doc := docs[d.Name]
		if groups[i] != group {
			group = groups[i]
			fmt.Fprintf(&b, "\n## %s\n", group)
		}
		fmt.Fprintf(&b, "\n### %s\n\n%s\n\n", d.Name, refSentence(d.Doc))
		if n := strings.TrimSpace(doc.Notes); n != "" {
			b.WriteString(n + "\n\n")
		}
		if others := refOtherNames(d, foreign); len(others) > 0 {
			fmt.Fprintf(&b, "Also called: %s.\n\n", strings.Join(refCodeAll(others), ", "))
		}
		fmt.Fprintf(&b, "Judge: %s.\n\n", judges[i])

		// Its settings.
		var withDefault []string
		for _, p := range d.Params {
			if mentionsDefault.MatchString(p.Doc) {
				withDefault = append(withDefault, p.Name)
			}
		}
		for k := range doc.Defaults {
			if !slices.ContainsFunc(d.Params, func(p grade.Param) bool { return p.Name == k }) {
				problems = append(problems, fmt.Sprintf("grade/docs.yaml: %s: defaults names %s, which %s does not take", d.Name, k, d.Name))
			}
		}
		for _, k := range withDefault {
			if _, ok := doc.Defaults[k]; !ok {
				problems = append(problems, fmt.Sprintf("grade/docs.yaml: %s: the setting %s has a default (its doc says so): add it to defaults", d.Name, k))
			}
		}
		if len(d.Params) > 0 {
			b.WriteString("| Setting | Type | Default | Meaning |\n|---|---|---|---|\n")
			for _, p := range d.Params {
				name := "`" + p.Name + "`"
				if len(p.Aliases) > 0 {
					name += " (also " + strings.Join(refCodeAll(p.Aliases), ", ") + ")"
				}
				def := ""
				if v, ok := doc.Defaults[p.Name]; ok {
					def = mdEscape(v)
				}
				fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", name, refTypeText(p.Types, p.Enum), def, mdEscape(refSentence(p.Doc)))
			}
			b.WriteString("\n")
		} else {
			b.WriteString("It has no settings of its own.\n\n")
		}

		// How to use it.
		if doc.Example == "" && doc.Metric == "" {
			problems = append(problems, fmt.Sprintf("grade/docs.yaml: %s has neither an example (a test of an eval file) nor a metric (for agenteval score): add one", d.Name))
		}
		if doc.Example != "" {
			if err := refCheckExample(d, doc.Example); err != nil {
				problems = append(problems, fmt.Sprintf("grade/docs.yaml: %s: %v", d.Name, err))
			}
			fmt.Fprintf(&b, "In an eval file:\n\n```yaml\n%s\n```\n\n", strings.TrimRight(doc.Example, "\n"))
		}
		if doc.Sample != "" && doc.Metric == "" {
			problems = append(problems, fmt.Sprintf("grade/docs.yaml: %s: a sample needs a metric to score it", d.Name))
		}
		if doc.Metric != "" {
			sc, err := refScoreMetric(d, doc.Metric, doc.Sample)
			if err != nil {
				problems = append(problems, fmt.Sprintf("grade/docs.yaml: %s: %v", d.Name, err))
			}
			file := "data.jsonl"
			if doc.Sample != "" {
				file = "row.jsonl"
			}
			fmt.Fprintf(&b, "With `agenteval score`:\n\n```sh\nagenteval score %s --metric %s\n```\n\n", file, refShellQuote(doc.Metric))
			switch {
			case doc.Sample == "":
			case doc.Sample == shared && sc != nil:
				b.WriteString("On [the sample row](#the-sample-row) it ")
			case doc.Sample == shared:
				b.WriteString("The judge scores [the sample row](#the-sample-row).\n\n")
			default:
				fmt.Fprintf(&b, "where `row.jsonl` holds (on one line)\n\n```json\n%s\n```\n\n", strings.TrimSpace(doc.Sample))
				if sc != nil {
					b.WriteString("It ")
				}
			}
			if sc != nil {
				fmt.Fprintf(&b, "scores %s (%s)", strconv.FormatFloat(sc.Score, 'g', 4, 64), sc.Verdict)
				if sc.Reason != "" {
					fmt.Fprintf(&b, ": %s", mdEscape(strings.TrimSuffix(sc.Reason, ".")))
				}
				b.WriteString(".\n\n")
			}
		}
		b.Truncate(len(bytes.TrimRight(b.Bytes(), "\n")))
		b.WriteString("\n")
	}

	// The types the loader skips.
	b.WriteString("\n## Types that do not run\n\n")
	b.WriteString("These AgentV and promptfoo assertion types need what agenteval does not have. A test that uses one is skipped, and the run says why; `agenteval validate --explain` lists the skipped tests.\n\n")
	b.WriteString("| Type | What it is |\n|---|---|\n")
	var skipped []string
	for k := range unrunnable {
		skipped = append(skipped, k)
	}
	sort.Strings(skipped)
	for _, k := range skipped {
		fmt.Fprintf(&b, "| `%s` | %s |\n", k, mdEscape(unrunnable[k]))
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return nil, fmt.Errorf("%s", strings.Join(problems, "\n"))
	}
	return b.Bytes(), nil
}

// refSharedSample is the sample most graders' examples score, when several
// do.
func refSharedSample(docs map[string]graderDoc) string {
	n := map[string]int{}
	best := ""
	for _, d := range docs {
		if d.Sample == "" {
			continue
		}
		n[d.Sample]++
		if n[d.Sample] > n[best] || n[d.Sample] == n[best] && d.Sample < best {
			best = d.Sample
		}
	}
	if n[best] < 2 {
		return ""
	}
	return best
}

// refShellQuote quotes a --metric value for a POSIX shell when it needs it.
func refShellQuote(s string) string {
	if !strings.ContainsAny(s, " ()[]{}\"'$*?&;|<>\\`#~!") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
