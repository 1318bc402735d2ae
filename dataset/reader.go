package dataset

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"unicode/utf8"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/bytesize"
	"github.com/agenteval/agenteval/internal/jsonpos"
)

// RawRow is one undecoded row and where it starts in its file.
type RawRow struct {
	File string
	// N is the 1-based row number, counting rows rather than lines.
	N int
	// Line and Col are where the row starts, both 1-based.
	Line int
	Col  int
	Data []byte
	// Oversize, when not 0, is the size of a row over the reader's
	// MaxRowBytes; Data is then empty, and the row decodes to an error.
	Oversize int64
	// limit is the MaxRowBytes that an oversize row broke.
	limit int64
	// Decoded is set by readers of other formats (traces, session logs),
	// which build the sample as they read; Decode then returns it as is.
	Decoded *Row
}

// DefaultMaxRowBytes bounds one row: a conversation of this size is
// several times larger once decoded.
const DefaultMaxRowBytes = 32 << 20

// Row is a decoded row. Sample is nil when the row was not a JSON object;
// otherwise it holds whatever could be decoded, even when Errors is not
// empty.
type Row struct {
	RawRow
	Sample   *agenteval.Sample
	Errors   []*agenteval.PosError
	Warnings []*agenteval.PosError
}

// TestID names the row in results: its id, or row-N when it has none.
func (r *Row) TestID() string {
	if r.Sample != nil && r.Sample.ID != "" {
		return r.Sample.ID
	}
	return "row-" + strconv.Itoa(r.N)
}

// Err joins the row's errors, or returns nil when it is valid.
func (r *Row) Err() error {
	errs := make([]error, len(r.Errors))
	for i, e := range r.Errors {
		errs[i] = e
	}
	return errors.Join(errs...)
}

// Decode decodes and validates the row.
func (rr RawRow) Decode() *Row {
	if rr.Decoded != nil {
		return rr.Decoded
	}
	row := &Row{RawRow: rr}
	if rr.Oversize > 0 {
		row.Errors = append(row.Errors, &agenteval.PosError{File: rr.File, Line: rr.Line, Col: rr.Col,
			Msg: fmt.Sprintf("the row is %s, over the %s limit for one row; raise it with --max-row-size, or split the conversation", bytesize.Format(rr.Oversize), bytesize.Format(rr.limit))})
		return row
	}
	if !utf8.Valid(rr.Data) {
		bad := 0
		for bad < len(rr.Data) {
			r, n := utf8.DecodeRune(rr.Data[bad:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			bad += n
		}
		line, col := rr.position(bad)
		row.Errors = append(row.Errors, &agenteval.PosError{File: rr.File, Line: line, Col: col,
			Msg: fmt.Sprintf("byte 0x%02X is not valid UTF-8; save the file as UTF-8 (the row is not read)", rr.Data[bad])})
		return row
	}
	s, problems := DecodeSample(rr.Data)
	row = rr.positioned(problems)
	row.Sample = s
	return row
}

// positioned turns problems found inside the row into positioned errors
// and warnings, in the order they appear in the row.
func (rr RawRow) positioned(problems []Problem) *Row {
	row := &Row{RawRow: rr}
	sortProblems(rr.Data, problems)
	for _, p := range problems {
		line, col := rr.position(problemOffset(rr.Data, p.Path))
		msg := p.Msg
		if ps := p.Path.String(); ps != "" {
			msg = ps + ": " + msg
		}
		pe := &agenteval.PosError{File: rr.File, Line: line, Col: col, Msg: msg}
		if p.Warning {
			row.Warnings = append(row.Warnings, pe)
		} else {
			row.Errors = append(row.Errors, pe)
		}
	}
	return row
}

func (rr RawRow) position(off int) (line, col int) {
	l, c := jsonpos.LineCol(rr.Data, off)
	if l == 1 {
		return rr.Line, rr.Col + c - 1
	}
	return rr.Line + l - 1, c
}

// Reader streams rows from a JSONL file, or from a file holding one JSON
// array of rows. It holds one row in memory at a time.
type Reader struct {
	name   string
	br     *bufio.Reader
	closer io.Closer

	line, col int // position of the next unread byte, 1-based
	rows      int
	mode      int // 0 unknown, 1 JSONL, 2 JSON array
	done      bool
	// afterValue is set in a JSON array between a row and its comma.
	afterValue bool

	// MaxRowBytes bounds one row: a longer one is skipped, without being
	// held in memory, and becomes a row with an error. 0 means
	// DefaultMaxRowBytes; a negative number, no limit.
	MaxRowBytes int64
}

func (r *Reader) maxRow() int64 {
	switch {
	case r.MaxRowBytes == 0:
		return DefaultMaxRowBytes
	case r.MaxRowBytes < 0:
		return 1<<63 - 1
	}
	return r.MaxRowBytes
}

const (
	modeUnknown = iota
	modeLines
	modeArray
)

// Open opens a dataset file for reading. The name "-" reads standard input.
func Open(path string) (*Reader, error) {
	if path == "-" {
		return NewReader(os.Stdin, "<stdin>"), nil
	}
	if err := RegularFile(path); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open dataset: %w", err)
	}
	st, err := f.Stat()
	if err == nil && st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("open dataset %s: it is a directory; give a .jsonl file", path)
	}
	r := NewReader(f, path)
	r.closer = f
	return r, nil
}

// RegularFile refuses an input file that is not a regular file: opening
// a named pipe waits for a writer that may never come, and a device or a
// socket may never end, and neither can be interrupted. "-" (standard
// input), a folder and a missing file pass: their open says what is wrong.
func RegularFile(path string) error {
	if path == "-" {
		return nil
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().IsRegular() || st.IsDir() {
		return nil
	}
	what := "not a regular file"
	switch m := st.Mode(); {
	case m&os.ModeNamedPipe != 0:
		what = "a named pipe"
	case m&os.ModeSocket != 0:
		what = "a socket"
	case m&os.ModeDevice != 0:
		what = "a device"
	}
	return fmt.Errorf("%s is %s; give a regular file, or - for standard input", path, what)
}

// NewReader reads rows from r; name is used in error messages.
func NewReader(r io.Reader, name string) *Reader {
	return &Reader{name: name, br: bufio.NewReaderSize(r, 64<<10), line: 1, col: 1}
}

// Name is the file name used in error messages.
func (r *Reader) Name() string { return r.name }

// Close closes the underlying file, if the Reader opened it.
func (r *Reader) Close() error {
	if r.closer != nil {
		return r.closer.Close()
	}
	return nil
}

// Next reads and decodes the next row. It returns io.EOF after the last row.
// Problems with a row are in the Row; the error is for I/O failures and for
// a JSON array that is cut short.
func (r *Reader) Next() (*Row, error) {
	raw, err := r.NextRaw()
	if err != nil {
		return nil, err
	}
	return raw.Decode(), nil
}

// NextRaw reads the next row without decoding it, so that callers can decode
// rows in parallel. It returns io.EOF after the last row.
func (r *Reader) NextRaw() (RawRow, error) {
	if r.done {
		return RawRow{}, io.EOF
	}
	if r.mode == modeUnknown {
		if err := r.detect(); err != nil {
			r.done = true
			return RawRow{}, err
		}
	}
	var raw RawRow
	var err error
	if r.mode == modeArray {
		raw, err = r.nextElement()
	} else {
		raw, err = r.nextLine()
	}
	if err != nil {
		r.done = true
		return RawRow{}, err
	}
	r.rows++
	raw.N = r.rows
	raw.File = r.name
	return raw, nil
}

// detect skips a byte-order mark and leading blank space and decides between
// JSONL and a JSON array by the first significant byte.
func (r *Reader) detect() error {
	if b, err := r.br.Peek(3); err == nil && bytes.Equal(b, []byte{0xEF, 0xBB, 0xBF}) {
		r.br.Discard(3)
	}
	r.mode = modeLines
	for {
		b, err := r.br.Peek(1)
		if err != nil {
			if err == io.EOF {
				return io.EOF
			}
			return fmt.Errorf("read %s: %w", r.name, err)
		}
		switch b[0] {
		case ' ', '\t', '\r', '\n':
			r.advance(b[0])
			r.br.Discard(1)
			continue
		case '[':
			r.mode = modeArray
			r.advance('[')
			r.br.Discard(1)
		}
		return nil
	}
}

func (r *Reader) advance(c byte) {
	if c == '\n' {
		r.line++
		r.col = 1
	} else if c < 0x80 || c >= 0xC0 { // count characters, not UTF-8 continuation bytes
		r.col++
	}
}

func (r *Reader) nextLine() (RawRow, error) {
	limit := r.maxRow()
	for {
		// detect may have consumed leading spaces of this line already.
		startCol := r.col
		data, size, err := r.readLine(limit)
		if size > limit {
			line := r.line
			r.line++
			r.col = 1
			return RawRow{Line: line, Col: startCol, Oversize: size, limit: limit}, nil
		}
		if len(data) == 0 && err != nil {
			if err == io.EOF {
				return RawRow{}, io.EOF
			}
			return RawRow{}, fmt.Errorf("read %s: %w", r.name, err)
		}
		line := r.line
		r.line++
		r.col = 1
		trimmed := bytes.TrimRight(data, "\r\n")
		lead := len(trimmed) - len(bytes.TrimLeft(trimmed, " \t"))
		body := bytes.TrimSpace(trimmed)
		if len(body) == 0 {
			if err == io.EOF {
				return RawRow{}, io.EOF
			}
			continue
		}
		return RawRow{Line: line, Col: startCol + lead, Data: body}, nil
	}
}

// readLine reads through the next newline, keeping at most limit bytes of
// content: past that it only counts, so an oversize row costs no memory.
// size is the line's length without its "\n" or "\r\n", which the limit
// does not count: a row of exactly limit bytes is read whatever ends it.
func (r *Reader) readLine(limit int64) (data []byte, size int64, err error) {
	var last [2]byte // the line's last two bytes, to measure its terminator
	for {
		chunk, err := r.br.ReadSlice('\n')
		size += int64(len(chunk))
		switch len(chunk) {
		case 0:
		case 1:
			last = [2]byte{last[1], chunk[0]}
		default:
			last = [2]byte{chunk[len(chunk)-2], chunk[len(chunk)-1]}
		}
		// The terminator's two bytes may come after limit bytes of content.
		if size-2 <= limit {
			data = append(data, chunk...)
		} else {
			data = nil
		}
		if err != bufio.ErrBufferFull {
			return data, size - terminator(last, size), err
		}
	}
}

// terminator is how many of a line's last bytes end it: "\n" or "\r\n".
func terminator(last [2]byte, size int64) int64 {
	switch {
	case size == 0 || last[1] != '\n':
		return 0
	case size >= 2 && last[0] == '\r':
		return 2
	}
	return 1
}

// nextElement reads one element of a top-level JSON array, byte by byte, so
// that it can track lines without holding more than the element. It checks
// the array's punctuation as it goes: a missing or doubled comma, or text
// after the closing bracket, stops the read with an error, since the rows
// after it cannot be told apart reliably.
func (r *Reader) nextElement() (RawRow, error) {
	for {
		b, err := r.br.ReadByte()
		if err != nil {
			return RawRow{}, r.arrayEOF(err)
		}
		switch b {
		case ' ', '\t', '\r', '\n':
			r.advance(b)
			continue
		case ',':
			if !r.afterValue {
				return RawRow{}, r.posErr("unexpected ',' where a row should be; remove the extra comma")
			}
			r.afterValue = false
			r.advance(b)
			continue
		case ']':
			if !r.afterValue && r.rows > 0 {
				return RawRow{}, r.posErr("unexpected ']' after a ','; remove the trailing comma")
			}
			r.advance(b)
			r.done = true
			return RawRow{}, r.checkTail()
		}
		if r.afterValue {
			return RawRow{}, r.posErr("expected ',' or ']' after the previous row; rows in a JSON array are separated by commas")
		}
		r.br.UnreadByte()
		break
	}
	row := RawRow{Line: r.line, Col: r.col}
	var buf bytes.Buffer
	limit, size := r.maxRow(), int64(0)
	// done ends the element; one over the limit keeps only its size.
	done := func() (RawRow, error) {
		if size > limit {
			row.Oversize, row.limit = size, limit
		} else {
			row.Data = buf.Bytes()
		}
		r.afterValue = true
		return row, nil
	}
	depth, inString, escaped := 0, false, false
	for {
		b, err := r.br.ReadByte()
		if err != nil {
			if size > 0 && depth == 0 && !inString {
				return done()
			}
			return RawRow{}, r.arrayEOF(err)
		}
		if depth == 0 && !inString && (b == ',' || b == ']' || b == ' ' || b == '\n' || b == '\t' || b == '\r') {
			r.br.UnreadByte()
			return done()
		}
		r.advance(b)
		size++
		if size <= limit {
			buf.WriteByte(b)
		} else if buf.Cap() > 0 {
			buf = bytes.Buffer{}
		}
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
		case b == '"':
			inString = true
		case b == '{' || b == '[':
			depth++
		case b == '}' || b == ']':
			depth--
			if depth == 0 {
				return done()
			}
		}
	}
}

// checkTail makes sure nothing but white space follows the closing bracket.
func (r *Reader) checkTail() error {
	for {
		b, err := r.br.ReadByte()
		if err != nil {
			return io.EOF
		}
		switch b {
		case ' ', '\t', '\r', '\n':
			r.advance(b)
			continue
		}
		return r.posErr("unexpected text after the closing ']' of the JSON array; a file holds either one array or one row per line")
	}
}

func (r *Reader) posErr(msg string) error {
	return &agenteval.PosError{File: r.name, Line: r.line, Col: r.col, Msg: msg}
}

func (r *Reader) arrayEOF(err error) error {
	if err == io.EOF {
		return r.posErr("the JSON array is not closed; the file is cut short or has an unbalanced bracket")
	}
	return fmt.Errorf("read %s: %w", r.name, err)
}

// ReadAll reads every row of a file. It is for small files and tests; large
// files should be streamed with Next.
func ReadAll(path string) ([]*Row, error) {
	r, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var rows []*Row
	for {
		row, err := r.Next()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return rows, err
		}
		rows = append(rows, row)
	}
}

// FormatName reports which form a file holds, for messages: "JSONL" or
// "JSON array".
func (r *Reader) FormatName() string {
	if r.mode == modeArray {
		return "JSON array"
	}
	return "JSONL"
}
