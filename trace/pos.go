package trace

import (
	"bytes"
	"io"
	"sort"
)

// Pos is a place in an input file; both fields are 1-based.
type Pos struct {
	Line, Col int
}

// problem is something a reader found at a place in its file.
type problem struct {
	pos     Pos
	msg     string
	warning bool
}

func warnAt(pos Pos, msg string) problem { return problem{pos: pos, msg: msg, warning: true} }

func errAt(pos Pos, msg string) problem { return problem{pos: pos, msg: msg} }

// lineReader passes reads through and remembers where the newlines are,
// so byte offsets can be turned into lines and columns. Offsets are
// looked up in increasing order, so the newlines before the last lookup
// are dropped as it goes and memory stays small however long the file.
type lineReader struct {
	r     io.Reader
	read  int64   // bytes read so far
	nl    []int64 // offsets of the newlines kept
	lines int     // newlines dropped from nl
}

func newLineReader(r io.Reader) *lineReader { return &lineReader{r: r} }

func (l *lineReader) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	chunk := p[:n]
	for {
		i := bytes.IndexByte(chunk, '\n')
		if i < 0 {
			break
		}
		l.nl = append(l.nl, l.read+int64(n-len(chunk)+i))
		chunk = chunk[i+1:]
	}
	l.read += int64(n)
	return n, err
}

// pos returns the line and column (in bytes) of offset off.
func (l *lineReader) pos(off int64) Pos {
	i := sort.Search(len(l.nl), func(i int) bool { return l.nl[i] >= off })
	line := l.lines + i + 1
	lineStart := int64(0)
	if i > 0 {
		lineStart = l.nl[i-1] + 1
	} else if l.lines > 0 && len(l.nl) > 0 {
		lineStart = -1 // unknown: the newline before was dropped
	}
	col := int(off-lineStart) + 1
	if lineStart < 0 {
		col = 0
	}
	// Keep the newline just before off, for the column of later lookups
	// on the same line.
	if i > 1 {
		drop := i - 1
		l.lines += drop
		l.nl = append(l.nl[:0], l.nl[drop:]...)
	}
	return Pos{Line: line, Col: col}
}
