package suite

import (
	"bytes"

	"go.yaml.in/yaml/v4"
)

// A YAML file is parsed into a node tree several times its size (about
// 50 MB for a 4 MB file of 10,000 conversations), and the tree of the
// whole file was the peak of a large run's memory. So the common shape of
// an eval file, a top-level block sequence under tests:, is read a few
// tests at a time: the file is split at its items' "- " lines, the rest of
// the file (with those lines left blank, so positions hold) is parsed as
// the suite, and each chunk of chunkItems tests is parsed when its first
// test is read. Anything the split cannot be sure of falls back to parsing
// the file whole, which then says what is wrong: a split that cut a quoted
// or flow scalar leaves a chunk that does not parse, an alias to an anchor
// in another chunk is unknown in its own, and the rest of the file must
// show tests: where the split found it, with nothing under it.

// chunked turns the split off, for tests that compare both ways.
var chunked = true

// chunk is the text of some items of the tests sequence (chunkItems of
// them, or the rest), and the line of the file it starts on. A parser per
// item cost more in its buffers than the tree of the item.
type chunk struct {
	text  []byte
	line  int
	count int
	// nodes are the items, once parsed; each is let go as it is read.
	nodes []*yaml.Node
}

// chunkItems is how many tests a chunk holds.
const chunkItems = 64

// splitTests finds a "tests:" line at the left margin whose value is a
// block sequence, and returns the file with the sequence's lines blanked,
// the line of tests:, and the items. ok is false for any file whose shape
// it is not sure of: directives, document markers, tabs in indentation, no
// tests: line or more than one.
func splitTests(data []byte) (head []byte, testsLine int, chunks []chunk, ok bool) {
	// A first look, without allocating: most files that will not split
	// (no tests: line, anchors above it) are told at once.
	testsAt := -1
	for i, rest := 0, data; len(rest) > 0; i++ {
		l := rest
		if k := bytes.IndexByte(rest, '\n'); k >= 0 {
			l = rest[:k+1]
		}
		rest = rest[len(l):]
		if len(l) > 0 && (l[0] == '%' || bytes.HasPrefix(l, []byte("---")) || bytes.HasPrefix(l, []byte("..."))) {
			return nil, 0, nil, false
		}
		if indentOf(l) < 0 || testsAt < 0 && hasAnchor(l) {
			return nil, 0, nil, false
		}
		if isTestsKey(l) {
			if testsAt >= 0 {
				return nil, 0, nil, false
			}
			testsAt = i
		}
	}
	if testsAt < 0 {
		return nil, 0, nil, false
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	// The sequence: its first item sets the indentation n; it goes on
	// through blank lines, comments, lines indented deeper than n, and
	// further items at n.
	n := -1
	end := len(lines)
	var starts []int
	for i := testsAt + 1; i < len(lines); i++ {
		l := lines[i]
		if isBlankOrComment(l) {
			continue
		}
		ind := indentOf(l)
		if n < 0 {
			if !isItem(l, ind) {
				return nil, 0, nil, false // not a block sequence
			}
			n = ind
		}
		if ind == n && isItem(l, ind) {
			starts = append(starts, i)
			continue
		}
		if ind > n {
			continue
		}
		end = i
		break
	}
	if len(starts) == 0 {
		return nil, 0, nil, false
	}
	// Anchors outside the tests (shared defaults, merge keys) are used by
	// the tests, and a chunk on its own would not know them: parse whole
	// at once rather than find out chunk by chunk.
	for _, l := range lines[end:] {
		if hasAnchor(l) {
			return nil, 0, nil, false
		}
	}
	var h bytes.Buffer
	h.Grow(len(data))
	for i, l := range lines {
		if i >= starts[0] && i < end {
			if bytes.HasSuffix(l, []byte("\r\n")) {
				h.WriteString("\r\n")
			} else if bytes.HasSuffix(l, []byte("\n")) {
				h.WriteByte('\n')
			}
			continue
		}
		h.Write(l)
	}
	for k := 0; k < len(starts); k += chunkItems {
		e, count := end, min(chunkItems, len(starts)-k)
		if k+count < len(starts) {
			e = starts[k+count]
		}
		chunks = append(chunks, chunk{text: bytes.Join(lines[starts[k]:e], nil), line: starts[k] + 1, count: count})
	}
	return h.Bytes(), testsAt + 1, chunks, true
}

// hasAnchor reports what may be an anchor on a line: "&" opening a token,
// and a name after it. Text such as "R&D" or "Tom & Jerry" is not one; a
// false alarm only costs the split.
func hasAnchor(l []byte) bool {
	for i := bytes.IndexByte(l, '&'); i >= 0; {
		if (i == 0 || bytes.IndexByte([]byte(" \t[{,:-"), l[i-1]) >= 0) && i+1 < len(l) && bytes.IndexByte([]byte(" \t\r\n"), l[i+1]) < 0 {
			return true
		}
		j := bytes.IndexByte(l[i+1:], '&')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}

// indentOf is how many spaces open a line, or -1 when a tab is among them.
func indentOf(l []byte) int {
	for i, c := range l {
		switch c {
		case ' ':
			continue
		case '\t':
			return -1
		}
		return i
	}
	return len(l)
}

func isBlankOrComment(l []byte) bool {
	t := bytes.TrimLeft(l, " ")
	t = bytes.TrimRight(t, "\r\n")
	return len(t) == 0 || t[0] == '#'
}

// isItem reports a block sequence entry: "-" then a space or the line's end.
func isItem(l []byte, ind int) bool {
	t := bytes.TrimRight(l[ind:], "\r\n")
	return len(t) > 0 && t[0] == '-' && (len(t) == 1 || t[1] == ' ')
}

// isTestsKey reports the line "tests:", at the left margin, with nothing
// after it but spaces and a comment.
func isTestsKey(l []byte) bool {
	rest, ok := bytes.CutPrefix(l, []byte("tests:"))
	if !ok {
		return false
	}
	rest = bytes.TrimLeft(bytes.TrimRight(rest, "\r\n"), " ")
	return len(rest) == 0 || rest[0] == '#'
}

// chunkedItems checks that the suite's root, parsed from the split's head,
// has tests: where the split found it and nothing under it, and returns the
// tests as items that parse when read.
func (d *decoder) chunkedItems(root, testsNode *yaml.Node, testsLine int, chunks []chunk) ([]testItem, bool) {
	if root == nil || root.Kind != yaml.MappingNode || testsNode == nil || !isNull(testsNode) {
		return nil, false
	}
	found := false
	for i := 0; i+1 < len(root.Content); i += 2 {
		if k := root.Content[i]; k.Value == "tests" && k.Line == testsLine && k.Column == 1 && root.Content[i+1] == testsNode {
			found = true
		}
	}
	if !found {
		return nil, false
	}
	var items []testItem
	for i := range chunks {
		for k := range chunks[i].count {
			items = append(items, testItem{d: d, chunk: &chunks[i], index: k})
		}
	}
	return items, true
}

// itemNode parses an item's chunk when its first item is read, with the
// file's positions, and hands over the item's node. It fails, leaving the
// whole file to be parsed, when the chunk is not its items on their own,
// or when an item names files of tests.
func (d *decoder) itemNode(it testItem) (*yaml.Node, bool) {
	c := it.chunk
	if c.nodes == nil {
		scratch := &decoder{file: d.file, problems: &problems{}, env: d.env}
		root, ok := scratch.parse(c.text, "YAML")
		if !ok || len(scratch.errs) > 0 || root == nil || root.Kind != yaml.SequenceNode || len(root.Content) != c.count || root.Line != 1 {
			return nil, false
		}
		for _, item := range root.Content {
			if it := resolve(item); it == nil || it.Kind == yaml.ScalarNode {
				return nil, false // a path of test files: testItems reads those
			}
		}
		shiftLines(root, c.line-1)
		c.nodes, c.text = root.Content, nil
	}
	n := c.nodes[it.index]
	c.nodes[it.index] = nil
	return n, true
}

// shiftLines moves every node of a tree down by k lines. Aliases are not
// followed: their anchors are nodes of the same tree.
func shiftLines(n *yaml.Node, k int) {
	n.Line += k
	for _, c := range n.Content {
		shiftLines(c, k)
	}
}
