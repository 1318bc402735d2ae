package suite

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"go.yaml.in/yaml/v4"
)

// Tests need not be written in the eval file. tests: may name a file (a
// YAML list of tests, or JSONL with one test per line) or a folder (each
// subfolder with a case.yaml is a test, named after the folder), and a
// tests list may mix inline tests with such paths (file://, globs too).
// Paths start at the eval file's folder; problems name the file and line
// where the test is written.

// testItem is a test's node and the decoder of the file it is in.
type testItem struct {
	n *yaml.Node
	d *decoder
	// chunk, when set, holds the test's text, item index of it, parsed
	// into n when the test is read (chunks.go).
	chunk *chunk
	index int
}

// testItems lists the tests of a tests: value.
func (d *decoder) testItems(n *yaml.Node, root *yaml.Node) []testItem {
	rn := resolve(n)
	if rn == nil || isNull(rn) {
		return nil
	}
	switch rn.Kind {
	case yaml.ScalarNode:
		return d.loadCases(rn, d.str(rn, "tests"))
	case yaml.SequenceNode:
		var out []testItem
		for _, item := range rn.Content {
			if it := resolve(item); it != nil && it.Kind == yaml.ScalarNode {
				out = append(out, d.loadCases(it, d.str(it, "tests"))...)
				continue
			}
			out = append(out, testItem{n: item, d: d})
		}
		return out
	}
	d.fail(n, "tests must be a list of tests, or the path of a file or folder of tests, not %s", kindName(n))
	return nil
}

// loadCases loads the tests a path names: a file, a glob, or a folder.
func (d *decoder) loadCases(n *yaml.Node, ref string) []testItem {
	path := strings.TrimPrefix(ref, "file://")
	if path == "" {
		d.fail(n, "a tests entry that is text must be the path of a file of tests")
		return nil
	}
	if i := strings.LastIndex(path, ":"); i > 1 && !strings.Contains(path[i:], "/") {
		d.warn(n, "%s is a dataset function in a JavaScript or Python file, which agenteval does not run; its tests are left out", ref)
		return nil
	}
	full := path
	if !filepath.IsAbs(full) {
		full = filepath.Join(d.base(), path)
	}
	if abs, err := filepath.Abs(full); err == nil {
		full = abs
	}
	if strings.ContainsAny(path, "*?[{") {
		matches, err := filepath.Glob(full)
		if err != nil || len(matches) == 0 {
			d.warn(n, "%s matches no files; no tests come from it", ref)
			return nil
		}
		sort.Strings(matches)
		var out []testItem
		for _, m := range matches {
			out = append(out, d.loadCaseFile(n, m)...)
		}
		return out
	}
	if st, err := os.Stat(full); err == nil && st.IsDir() {
		return d.loadCaseDir(n, full)
	}
	return d.loadCaseFile(n, full)
}

// loadCaseFile reads a file of tests: YAML (a list, or one mapping with
// tests:), JSON (a list) or JSONL (one test per line).
func (d *decoder) loadCaseFile(n *yaml.Node, path string) []testItem {
	if !filepath.IsAbs(path) {
		path = filepath.Join(d.base(), path)
	}
	if d.includes(path) {
		d.fail(n, "%s is among the files whose tests it would read; a file of tests cannot read itself", path)
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		d.fail(n, "cannot read tests from %s: %v", path, errText(err))
		return nil
	}
	fd := d.sub(path)
	fd.parents = append(d.parents[:len(d.parents):len(d.parents)], d.file)
	if len(bytes.TrimSpace(data)) == 0 {
		d.warn(n, "%s is empty; no tests come from it", path)
		return nil
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".jsonl":
		return fd.jsonlItems(data)
	case ".csv":
		return fd.csvItems(data)
	case ".yaml", ".yml", ".json":
		root, ok := fd.parse(data, "YAML")
		if !ok || root == nil {
			return nil
		}
		if root.Kind == yaml.MappingNode {
			if tn := mappingValue(root, "tests"); tn != nil {
				return fd.testItems(tn, root)
			}
			if sn := mappingValue(root, "scenarios"); sn != nil {
				// Scenario files hold scenarios; scenarioItems expands them.
				var out []testItem
				if rn := resolve(sn); rn != nil && rn.Kind == yaml.SequenceNode {
					for _, it := range rn.Content {
						out = append(out, testItem{n: it, d: fd})
					}
				}
				return out
			}
			return []testItem{{n: root, d: fd}} // one test
		}
		if root.Kind != yaml.SequenceNode {
			fd.fail(root, "a file of tests must hold a list of tests, not %s", kindName(root))
			return nil
		}
		var out []testItem
		for _, item := range root.Content {
			out = append(out, testItem{n: item, d: fd})
		}
		return out
	}
	d.fail(n, "%s is not a file of tests agenteval reads (.yaml, .yml, .json or .jsonl)", path)
	return nil
}

// includes says whether path is this decoder's file or one of the files
// that read it as tests.
func (d *decoder) includes(path string) bool {
	same := func(f string) bool {
		a, err1 := filepath.Abs(f)
		b, err2 := filepath.Abs(path)
		return err1 == nil && err2 == nil && a == b
	}
	if same(d.file) {
		return true
	}
	for _, f := range d.parents {
		if same(f) {
			return true
		}
	}
	return false
}

// loadCaseDir reads a folder of tests: each subfolder with a case.yaml (or
// case.yml) is a test, whose id defaults to the folder's name.
func (d *decoder) loadCaseDir(n *yaml.Node, dir string) []testItem {
	entries, err := os.ReadDir(dir)
	if err != nil {
		d.fail(n, "cannot read the folder of tests %s: %v", dir, errText(err))
		return nil
	}
	var out []testItem
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		var file string
		for _, name := range []string{"case.yaml", "case.yml"} {
			if p := filepath.Join(dir, e.Name(), name); fileExists(p) {
				file = p
				break
			}
		}
		if file == "" {
			d.warn(n, "folder %s has no case.yaml; it is not a test", filepath.Join(dir, e.Name()))
			continue
		}
		data, err := os.ReadFile(file)
		if err != nil {
			d.fail(n, "cannot read %s: %v", file, errText(err))
			continue
		}
		fd := d.sub(file)
		root, ok := fd.parse(data, "YAML")
		if !ok || root == nil {
			continue
		}
		if root.Kind != yaml.MappingNode {
			fd.fail(root, "case.yaml must hold one test (a mapping), not %s", kindName(root))
			continue
		}
		if mappingValue(root, "id") == nil {
			root.Content = append(root.Content,
				&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "id"},
				&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: e.Name(), Line: root.Line, Column: root.Column})
		}
		if fileExistsDir(filepath.Join(dir, e.Name(), "workspace")) && mappingValue(root, "workspace") == nil {
			root.Content = append(root.Content,
				&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "workspace"},
				&yaml.Node{Kind: yaml.MappingNode, Line: root.Line, Column: root.Column, Content: []*yaml.Node{
					{Kind: yaml.ScalarNode, Tag: "!!str", Value: "template"},
					{Kind: yaml.ScalarNode, Tag: "!!str", Value: filepath.Join(dir, e.Name(), "workspace")}}})
		}
		out = append(out, testItem{n: root, d: fd})
	}
	return out
}

// jsonlItems reads JSONL, one test per line, each keeping its line.
func (d *decoder) jsonlItems(data []byte) []testItem {
	var out []testItem
	for i, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if !json.Valid(line) {
			var v any
			err := json.Unmarshal(line, &v)
			d.errs = append(d.errs, d.pos(&yaml.Node{Line: i + 1, Column: 1}).Errorf("not valid JSON: "+errText(err)))
			continue
		}
		root, ok := d.parse(line, "JSON")
		if !ok || root == nil {
			continue
		}
		shift(root, i)
		out = append(out, testItem{n: root, d: d})
	}
	return out
}

// jsonlSuite reads AgentV's JSONL eval format: one test per line, and the
// suite's settings in a sidecar YAML beside it (dataset.jsonl with
// dataset.yaml or dataset.eval.yaml).
func (d *decoder) jsonlSuite(data []byte) *Suite {
	items := d.jsonlItems(data)
	base := strings.TrimSuffix(d.file, filepath.Ext(d.file))
	dir := filepath.Dir(d.file)
	for _, side := range []string{base + ".yaml", base + ".yml", base + ".eval.yaml", base + ".eval.yml", filepath.Join(dir, "suite.yaml"), filepath.Join(dir, "suite.yml")} {
		if !fileExists(side) {
			continue
		}
		b, err := os.ReadFile(side)
		if err != nil {
			d.warn(nil, "cannot read the sidecar %s: %v", side, errText(err))
			break
		}
		sd := d.sub(side)
		root, ok := sd.parse(b, "YAML")
		if !ok {
			return nil
		}
		s := sd.suiteFrom(root, items, true)
		s.File = d.file
		return s
	}
	s := d.suiteFrom(nil, items, true)
	if len(items) == 0 {
		d.fail(nil, "no tests: the file has no lines")
	}
	return s
}

func shift(n *yaml.Node, lines int) {
	n.Line += lines
	for _, c := range n.Content {
		shift(c, lines)
	}
}

func mappingValue(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func fileExistsDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// errText is an error without the Go prefixes of os errors.
func errText(err error) string {
	if err == nil {
		return ""
	}
	var pe *os.PathError
	if ok := asPathError(err, &pe); ok {
		return pe.Err.Error()
	}
	return err.Error()
}
