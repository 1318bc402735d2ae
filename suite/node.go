package suite

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/grade"
	"github.com/agenteval/agenteval/internal/suggest"
	"go.yaml.in/yaml/v4"
)

// decoder walks a YAML document and collects every problem it finds.
// The decoders of one eval file (the file itself, its external test files,
// sidecars) share their problems.
type decoder struct {
	file string
	*problems
	// env looks up environment variables; os.LookupEnv outside tests.
	env func(string) (string, bool)
	// literal turns interpolation off: agent_inspect files are data, and
	// a "$" in a task description is just a dollar sign.
	literal bool
	// root is the eval file, where relative paths start, when this
	// decoder reads another file for it.
	root string
	// parents are the files of tests that led to this one, which it
	// must not read again.
	parents []string
	// lenient makes unknown keys warnings, as AgentV has them: the key is
	// ignored and the file loads. agent_inspect JSON stays strict.
	lenient bool
	// split, when set, is the eval file's tests read a test at a time
	// (chunks.go); splitFailed says the file must be parsed whole.
	split       *splitTestsInfo
	splitFailed bool
	// readInChunks records that the split held, for tests.
	readInChunks bool
	// graders are the definitions assertion types are looked up in
	// (Options.Graders, or grade.All()); ownGraders says the caller gave
	// them.
	graders    []*grade.Definition
	ownGraders bool
	// stream, when set, takes the tests as they are read, instead of the
	// suite (Options.Stream); check then checks each as it is read.
	stream *stream
	check  *validator
}

// splitTestsInfo is where splitTests found the tests, and their text;
// read, when set, reads a chunk's text from the file.
type splitTestsInfo struct {
	line   int
	chunks []chunk
	read   func(*chunk) ([]byte, error)
}

// problems are what loading found: errors stop the file, warnings do not
// (unless Options.Strict).
type problems struct {
	errs  []error
	warns []*agenteval.PosError
	// unset are the unset environment variables already warned about, so
	// a variable used in many places gets one warning per file.
	unset map[string]bool
	// diffs are the places the file runs with another meaning than a
	// peer tool gives it (differences.go).
	diffs []*Difference
}

// sub is a decoder for another file (an external test file, a sidecar)
// that reports into the same problems.
func (d *decoder) sub(file string) *decoder {
	c := *d
	if c.root == "" {
		c.root = d.file
	}
	c.file = file
	return &c
}

// warn records a problem that does not stop the file, at n.
func (d *decoder) warn(n *yaml.Node, format string, a ...any) {
	d.warns = append(d.warns, d.pos(n).Errorf(fmt.Sprintf(format, a...)))
}

func (d *decoder) pos(n *yaml.Node) agenteval.Pos {
	if n == nil {
		return agenteval.Pos{File: d.file}
	}
	return agenteval.Pos{File: d.file, Line: n.Line, Col: n.Column}
}

func (d *decoder) fail(n *yaml.Node, format string, a ...any) {
	d.errs = append(d.errs, d.pos(n).Errorf(fmt.Sprintf(format, a...)))
}

// resolve follows aliases and unwraps documents.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil {
		switch n.Kind {
		case yaml.AliasNode:
			n = n.Alias
		case yaml.DocumentNode:
			if len(n.Content) == 0 {
				return nil
			}
			n = n.Content[0]
		default:
			return n
		}
	}
	return nil
}

func kindName(n *yaml.Node) string {
	n = resolve(n)
	if n == nil {
		return "nothing"
	}
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return "null"
		case "!!bool":
			return "a boolean"
		case "!!int", "!!float":
			return "a number"
		}
		return "text"
	}
	return "something else"
}

func isNull(n *yaml.Node) bool {
	n = resolve(n)
	return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

// field is one key of a mapping and its value.
type field struct {
	key   string
	keyN  *yaml.Node
	value *yaml.Node
}

// fields returns a mapping's keys in order, reporting unknown keys (with a
// did-you-mean hint) and duplicates. known nil accepts any key.
func (d *decoder) fields(n *yaml.Node, what string, known []string) []field {
	n = resolve(n)
	if n == nil {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		d.fail(n, "%s must be a mapping of keys to values, not %s", what, kindName(n))
		return nil
	}
	seen := map[string]int{}
	var own, merged []field
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Value == "<<" && k.Tag != "!!str" {
			merged = append(merged, d.merge(v, what, known)...)
			continue
		}
		key := k.Value
		if line, dup := seen[key]; dup {
			d.fail(k, "%s: key %q appears twice (first on line %d); keep one", what, key, line)
			continue
		}
		seen[key] = k.Line
		if known != nil && strings.HasPrefix(key, "x-") {
			// An extension key, as in Docker Compose: a place to keep
			// anchors (x-defaults: &defaults) that tests merge with <<.
			continue
		}
		if known != nil && !contains(known, key) {
			d.unknownKey(k, key, what, known)
			continue
		}
		own = append(own, field{key: key, keyN: k, value: v})
	}
	// YAML's merge rule: the mapping's own keys win over merged ones, and
	// an earlier merged mapping wins over a later one.
	var out []field
	for _, f := range merged {
		if _, ok := seen[f.key]; !ok {
			seen[f.key] = f.keyN.Line
			out = append(out, f)
		}
	}
	return append(out, own...)
}

// unknownKey reports a key that what does not take. In a file with
// AgentV's leniency an unknown key is ignored with a warning, so that
// another tool's keys do not stop the file; but a key a letter or two
// away from a known one is that key misspelt, and ignoring it would
// silently drop what it holds (asertions: leaves a test with nothing to
// check, and it passes), so that is an error, with the key meant.
func (d *decoder) unknownKey(k *yaml.Node, key, what string, known []string) {
	if typo := suggest.Typo(key, known); typo != "" {
		d.fail(k, "unknown key %q in %s; did you mean %q?", key, what, typo)
		return
	}
	hint := ""
	if near := suggest.Closest(key, known); near != "" {
		hint = fmt.Sprintf("; did you mean %q?", near)
	} else if !d.lenient {
		hint = "; known keys: " + strings.Join(known, ", ")
	}
	if d.lenient {
		d.warn(k, "unknown key %q in %s is ignored%s", key, what, hint)
	} else {
		d.fail(k, "unknown key %q in %s%s", key, what, hint)
	}
}

// merge reads the value of a merge key: one mapping, or a list of them.
func (d *decoder) merge(v *yaml.Node, what string, known []string) []field {
	rv := resolve(v)
	if rv != nil && rv.Kind == yaml.SequenceNode {
		var out []field
		for _, item := range rv.Content {
			if it := resolve(item); it == nil || it.Kind != yaml.MappingNode {
				d.fail(item, "a merge key (<<) lists mappings to merge, not %s", kindName(item))
				continue
			}
			out = append(out, d.fields(item, what, known)...)
		}
		return out
	}
	if rv == nil || rv.Kind != yaml.MappingNode {
		d.fail(v, "a merge key (<<) takes a mapping (usually an alias like *defaults) or a list of them, not %s", kindName(v))
		return nil
	}
	return d.fields(rv, what, known)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

var envRef = regexp.MustCompile(`\$\$|\$\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}|\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\{\{\s*env\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}`)

// interpolate replaces ${VAR}, ${{ VAR }} and (AgentV v5's) {{ env.VAR }}
// with environment values; $$ is a literal $. An unset variable becomes "" with a warning at the node, as
// AgentV has it (an error under Options.Strict), so that validating a file
// never needs its secrets.
func (d *decoder) interpolate(n *yaml.Node, s string) string {
	if d.literal || !strings.Contains(s, "$") && !strings.Contains(s, "env.") {
		return s
	}
	return envRef.ReplaceAllStringFunc(s, func(m string) string {
		if m == "$$" {
			return "$"
		}
		sub := envRef.FindStringSubmatch(m)
		name := sub[1] + sub[2] + sub[3]
		v, ok := d.env(name)
		if !ok {
			if d.unset == nil {
				d.unset = map[string]bool{}
			}
			if d.unset[d.file+"\x00"+name] {
				return ""
			}
			d.unset[d.file+"\x00"+name] = true
			d.warn(n, "environment variable %s is not set, so it is empty here; export it, or write $$ for a literal $", name)
			return ""
		}
		return v
	})
}

// str reads a scalar as text, interpolating the environment.
func (d *decoder) str(n *yaml.Node, what string) string {
	n = resolve(n)
	if n == nil || isNull(n) {
		return ""
	}
	if n.Kind != yaml.ScalarNode {
		d.fail(n, "%s must be text, not %s", what, kindName(n))
		return ""
	}
	return d.interpolate(n, n.Value)
}

func (d *decoder) integer(n *yaml.Node, what string) (int, bool) {
	n = resolve(n)
	if n == nil || n.Kind != yaml.ScalarNode {
		d.fail(n, "%s must be a whole number, not %s", what, kindName(n))
		return 0, false
	}
	v, err := strconv.Atoi(d.interpolate(n, n.Value))
	if err != nil {
		d.fail(n, "%s must be a whole number, not %q", what, n.Value)
		return 0, false
	}
	return v, true
}

func (d *decoder) number(n *yaml.Node, what string) (float64, bool) {
	n = resolve(n)
	if n == nil || n.Kind != yaml.ScalarNode {
		d.fail(n, "%s must be a number, not %s", what, kindName(n))
		return 0, false
	}
	v, err := strconv.ParseFloat(d.interpolate(n, n.Value), 64)
	if err != nil {
		d.fail(n, "%s must be a number, not %q", what, n.Value)
		return 0, false
	}
	return v, true
}

func (d *decoder) boolean(n *yaml.Node, what string) (bool, bool) {
	n = resolve(n)
	if n != nil && n.Kind == yaml.ScalarNode {
		switch strings.ToLower(d.interpolate(n, n.Value)) {
		case "true", "yes", "on":
			return true, true
		case "false", "no", "off":
			return false, true
		}
	}
	d.fail(n, "%s must be true or false, not %s", what, kindName(n))
	return false, false
}

func (d *decoder) duration(n *yaml.Node, what string) (time.Duration, bool) {
	s := d.str(n, what)
	if v, err := time.ParseDuration(s); err == nil {
		return v, true
	}
	if secs, err := strconv.ParseFloat(s, 64); err == nil {
		return time.Duration(secs * float64(time.Second)), true
	}
	d.fail(n, "%s must be a duration such as 30s or 1m30s, not %q", what, s)
	return 0, false
}

// strList reads a list of text, or one text as a list of one.
func (d *decoder) strList(n *yaml.Node, what string) []string {
	n = resolve(n)
	if n == nil || isNull(n) {
		return nil
	}
	if n.Kind == yaml.ScalarNode {
		return []string{d.str(n, what)}
	}
	if n.Kind != yaml.SequenceNode {
		d.fail(n, "%s must be a list of text, not %s", what, kindName(n))
		return nil
	}
	out := make([]string, 0, len(n.Content))
	for _, it := range n.Content {
		out = append(out, d.str(it, what))
	}
	return out
}

// value decodes any node into plain Go values (maps, lists, strings,
// numbers), interpolating the environment in every string.
func (d *decoder) value(n *yaml.Node) any { return d.walk(n, false) }

// walk is value, with numbers as json.Number when asJSON (see jsonValue).
func (d *decoder) walk(n *yaml.Node, asJSON bool) any {
	n = resolve(n)
	if n == nil {
		return nil
	}
	switch n.Kind {
	case yaml.MappingNode:
		m := map[string]any{}
		for _, f := range d.fields(n, "this mapping", nil) {
			m[f.key] = d.walk(f.value, asJSON)
		}
		return m
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, it := range n.Content {
			out = append(out, d.walk(it, asJSON))
		}
		return out
	case yaml.ScalarNode:
		if asJSON && (n.Tag == "!!int" || n.Tag == "!!float") {
			if json.Valid([]byte(n.Value)) {
				return json.Number(n.Value)
			}
			// 0x1F, 042, .inf: YAML numbers JSON has no literal for; their
			// text loses nothing.
			return n.Value
		}
		switch n.Tag {
		case "!!null":
			return nil
		case "!!bool":
			b, _ := d.boolean(n, "value")
			return b
		case "!!int":
			if v, err := strconv.ParseInt(n.Value, 0, 64); err == nil {
				return v
			}
		case "!!float":
			if v, err := strconv.ParseFloat(n.Value, 64); err == nil {
				return v
			}
		}
		return d.interpolate(n, n.Value)
	}
	return nil
}

func osEnv(name string) (string, bool) { return os.LookupEnv(name) }

// secondsDuration is a number of seconds as a duration.
func secondsDuration(v float64) time.Duration { return time.Duration(v * float64(time.Second)) }

func asPathError(err error, target **os.PathError) bool { return errors.As(err, target) }
