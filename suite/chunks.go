package suite

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"hash"
	"io"

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

// chunk is some items of the tests sequence (chunkItems of them, or the
// rest): where their text is in the file, and the line it starts on. A
// parser per item cost more in its buffers than the tree of the item.
type chunk struct {
	off, size int64
	line      int
	count     int
	// sum is the SHA-256 of the text, when the file is read again later
	// (a streamed suite), to tell a file changed since it was loaded.
	sum [sha256.Size]byte
	// text is the chunk's text when the file is in memory; a streamed
	// file's is read when the chunk is parsed.
	text []byte
	// nodes are the items, once parsed; each is let go as it is read.
	nodes []*yaml.Node
	// firstItem and firstTest are the index of the chunk's first item
	// among the file's items, and of its first test among the suite's;
	// tests is how many tests its items gave (a streamed suite).
	firstItem, firstTest, tests int
}

// chunkItems is how many tests a chunk holds.
const chunkItems = 64

// splitTests splits an eval file in memory (see scanTests): the chunks'
// text is the file's own bytes.
func splitTests(data []byte) (head []byte, testsLine int, chunks []chunk, ok bool) {
	sp, ok, _ := scanTests(bytes.NewReader(data), false)
	if !ok {
		return nil, 0, nil, false
	}
	for i := range sp.chunks {
		c := &sp.chunks[i]
		c.text = data[c.off : c.off+c.size]
	}
	return sp.head, sp.line, sp.chunks, true
}

// split is what scanTests found: the file with the sequence's lines
// blanked, the line of tests:, and the chunks of items.
type split struct {
	head   []byte
	line   int
	chunks []chunk
}

// scanTests reads a file once, line by line, for a "tests:" line at the
// left margin whose value is a block sequence, and returns the file with
// the sequence's lines blanked, the line of tests:, and where the chunks
// of items are (each one's SHA-256 too when sums is set). ok is false for
// any file whose shape it is not sure of: directives, document markers,
// tabs in indentation, no tests: line or more than one, anchors outside
// the sequence; err is a read error.
func scanTests(r io.Reader, sums bool) (sp *split, ok bool, err error) {
	const (
		before = iota // above tests:
		inside        // under tests:, in its sequence
		after         // below the sequence
	)
	state := before
	sp = &split{}
	var head bytes.Buffer
	br := bufio.NewReaderSize(r, 64<<10)
	var long []byte // a line longer than the reader's buffer
	var off int64
	n := -1 // the items' indentation
	var cur *chunk
	var h hash.Hash
	if sums {
		h = sha256.New()
	}
	closeChunk := func(end int64) {
		if cur == nil {
			return
		}
		cur.size = end - cur.off
		if h != nil {
			h.Sum(cur.sum[:0])
			h.Reset()
		}
		cur = nil
	}
	for lineNo := 1; ; lineNo++ {
		l, rerr := br.ReadSlice('\n')
		for rerr == bufio.ErrBufferFull {
			long = append(long[:0:0], l...)
			var more []byte
			more, rerr = br.ReadSlice('\n')
			long = append(long, more...)
			l = long
		}
		if rerr != nil && rerr != io.EOF {
			return nil, false, rerr
		}
		if len(l) == 0 && rerr == io.EOF {
			break
		}
		if l[0] == '%' || bytes.HasPrefix(l, []byte("---")) || bytes.HasPrefix(l, []byte("...")) || indentOf(l) < 0 {
			return nil, false, nil
		}
		lineOff := off
		off += int64(len(l))
		if state == inside && !isBlankOrComment(l) {
			ind := indentOf(l)
			switch {
			case n < 0 && !isItem(l, ind):
				return nil, false, nil // not a block sequence
			case n < 0 || ind == n && isItem(l, ind):
				n = ind
				if cur == nil || cur.count == chunkItems {
					closeChunk(lineOff)
					sp.chunks = append(sp.chunks, chunk{off: lineOff, line: lineNo})
					cur = &sp.chunks[len(sp.chunks)-1]
				}
				cur.count++
			case ind > n:
			default:
				closeChunk(lineOff)
				state = after
			}
		}
		switch state {
		case before:
			if hasAnchor(l) {
				return nil, false, nil
			}
			if isTestsKey(l) {
				state, sp.line = inside, lineNo
			}
			head.Write(l)
		case inside:
			if cur == nil {
				head.Write(l) // between tests: and its first item
				break
			}
			if h != nil {
				h.Write(l)
			}
			if bytes.HasSuffix(l, []byte("\r\n")) {
				head.WriteString("\r\n")
			} else if bytes.HasSuffix(l, []byte("\n")) {
				head.WriteByte('\n')
			}
		case after:
			// Anchors outside the tests (shared defaults, merge keys) are
			// used by the tests, and a chunk on its own would not know
			// them: parse whole at once rather than find out chunk by
			// chunk.
			if hasAnchor(l) || isTestsKey(l) {
				return nil, false, nil
			}
			head.Write(l)
		}
		if rerr == io.EOF {
			break
		}
	}
	closeChunk(off)
	if len(sp.chunks) == 0 {
		return nil, false, nil
	}
	sp.head = head.Bytes()
	return sp, true, nil
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

// splitHolds checks that the suite's root, parsed from the split's head,
// has tests: where the split found it and nothing under it: the tests
// are the chunks' items.
func (d *decoder) splitHolds(root, testsNode *yaml.Node, testsLine int) bool {
	if root == nil || root.Kind != yaml.MappingNode || testsNode == nil || !isNull(testsNode) {
		return false
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if k := root.Content[i]; k.Value == "tests" && k.Line == testsLine && k.Column == 1 && root.Content[i+1] == testsNode {
			return true
		}
	}
	return false
}

// itemNode parses an item's chunk when its first item is read, with the
// file's positions, and hands over the item's node. It fails, leaving the
// whole file to be parsed, when the chunk is not its items on their own,
// or when an item names files of tests.
func (d *decoder) itemNode(it testItem) (*yaml.Node, bool) {
	c := it.chunk
	if c.nodes == nil {
		text := c.text
		if text == nil && d.split != nil && d.split.read != nil {
			var err error
			if text, err = d.split.read(c); err != nil {
				return nil, false
			}
		}
		scratch := &decoder{file: d.file, problems: &problems{}, env: d.env}
		root, ok := scratch.parse(text, "YAML")
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
	if it.index == c.count-1 {
		c.nodes = nil
	}
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
