package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/agenteval/agenteval"
)

// streamItems yields the JSON objects of a file one at a time, with their
// positions. A file is read as JSON lines when its first line is a whole
// JSON value: then a malformed line is reported and skipped, as a session
// log still being written often ends with one. Otherwise the file is one
// JSON document (or several in a row): each top-level array element is an
// item, a top-level object with a list under one of listKeys gives that
// list's elements, and any other top-level object is an item itself.
//
// yield returns false to stop. A malformed line is passed as an item with
// a nil value and its problem; a broken document ends the stream with a
// *agenteval.PosError.
func streamItems(r io.Reader, listKeys []string, yield itemFunc) error {
	return streamJSON(r, listKeys, true, yield)
}

// streamValues is streamItems that passes arrays on whole: a line or a
// document that is a list is one item.
func streamValues(r io.Reader, yield itemFunc) error {
	return streamJSON(r, nil, false, yield)
}

func streamJSON(r io.Reader, listKeys []string, expand bool, yield itemFunc) error {
	br := bufio.NewReaderSize(r, 1<<20)
	if b, err := br.Peek(3); err == nil && bytes.Equal(b, []byte{0xEF, 0xBB, 0xBF}) {
		br.Discard(3)
	}
	if firstLineIsValue(br) {
		return streamLines(br, listKeys, expand, yield)
	}
	return streamDocument(br, listKeys, expand, yield)
}

// firstLineIsValue peeks at the first non-blank line.
func firstLineIsValue(br *bufio.Reader) bool {
	for n := 4096; ; n *= 2 {
		b, err := br.Peek(n)
		trimmed := bytes.TrimLeft(b, " \t\r\n")
		if i := bytes.IndexByte(trimmed, '\n'); i >= 0 {
			return json.Valid(trimmed[:i])
		}
		if err != nil {
			return json.Valid(trimmed)
		}
		if n >= 64<<20 {
			return false
		}
	}
}

func streamLines(br *bufio.Reader, listKeys []string, expand bool, yield itemFunc) error {
	line := 0
	for {
		data, err := br.ReadBytes('\n')
		if len(data) == 0 && err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		line++
		trimmed := bytes.TrimRight(data, "\r\n")
		lead := len(trimmed) - len(bytes.TrimLeft(trimmed, " \t"))
		body := bytes.TrimSpace(trimmed)
		if len(body) > 0 {
			pos := Pos{Line: line, Col: lead + 1}
			if !json.Valid(body) {
				var v any
				perr := json.Unmarshal(body, &v)
				if !yield(nil, nil, pos, fmt.Errorf("malformed JSON line (%v); it is left out", perr)) {
					return nil
				}
			} else if !expand && !yield(body, nil, pos, nil) {
				return nil
			} else if expand && !yieldValue(body, pos, listKeys, yield) {
				return nil
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// yieldValue passes one value on: the elements of a batch, else itself.
func yieldValue(body []byte, pos Pos, listKeys []string, yield itemFunc) bool {
	if len(listKeys) > 0 && body[0] == '{' {
		var m map[string]json.RawMessage
		if json.Unmarshal(body, &m) == nil {
			for _, k := range listKeys {
				if l, ok := m[k]; ok && len(l) > 0 && l[0] == '[' {
					var items []json.RawMessage
					if json.Unmarshal(l, &items) == nil {
						for _, it := range items {
							if !yield(it, m, pos, nil) {
								return false
							}
						}
						return true
					}
				}
			}
		}
	}
	if body[0] == '[' {
		var items []json.RawMessage
		if json.Unmarshal(body, &items) == nil {
			for _, it := range items {
				if !yield(it, nil, pos, nil) {
					return false
				}
			}
			return true
		}
	}
	return yield(body, nil, pos, nil)
}

func streamDocument(br *bufio.Reader, listKeys []string, expand bool, yield itemFunc) error {
	lr := newLineReader(br)
	dec := json.NewDecoder(lr)
	w := &otlpWalker{dec: dec, lr: lr}
	fail := func(err error) error {
		p := lr.pos(dec.InputOffset())
		var se *json.SyntaxError
		if errors.As(err, &se) {
			p = lr.pos(se.Offset)
		}
		msg := "malformed JSON: " + err.Error()
		if errors.Is(err, io.ErrUnexpectedEOF) {
			msg = "the file ends in the middle of a JSON value"
		}
		return &agenteval.PosError{Line: p.Line, Col: p.Col, Msg: msg + "; the rest of the file was not read"}
	}
	element := func(parent map[string]json.RawMessage) (bool, error) {
		off := w.offset()
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return false, fail(err)
		}
		return yield(raw, parent, lr.pos(off), nil), nil
	}
	for {
		off := w.offset()
		t, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fail(err)
		}
		switch {
		case t == json.Delim('[') && !expand:
			var items []json.RawMessage
			for dec.More() {
				var raw json.RawMessage
				if err := dec.Decode(&raw); err != nil {
					return fail(err)
				}
				items = append(items, raw)
			}
			if _, err := dec.Token(); err != nil {
				return fail(err)
			}
			body, _ := json.Marshal(items)
			if !yield(body, nil, lr.pos(off), nil) {
				return nil
			}
		case t == json.Delim('['):
			for dec.More() {
				if ok, err := element(nil); !ok || err != nil {
					return err
				}
			}
			if _, err := dec.Token(); err != nil {
				return fail(err)
			}
		case t == json.Delim('{'):
			// Read the object key by key, streaming a batch list when
			// there is one and keeping the other fields.
			fields := map[string]json.RawMessage{}
			streamed := false
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return fail(err)
				}
				k, _ := kt.(string)
				if isListKey(k, listKeys) && !streamed {
					vt, err := dec.Token()
					if err != nil {
						return fail(err)
					}
					if vt == json.Delim('[') {
						streamed = true
						for dec.More() {
							if ok, err := element(fields); !ok || err != nil {
								return err
							}
						}
						if _, err := dec.Token(); err != nil {
							return fail(err)
						}
						continue
					}
					// Not a list after all: skip it.
					if !skipAfter(dec, vt) {
						return fail(io.ErrUnexpectedEOF)
					}
					continue
				}
				var v json.RawMessage
				if err := dec.Decode(&v); err != nil {
					return fail(err)
				}
				fields[k] = v
			}
			if _, err := dec.Token(); err != nil {
				return fail(err)
			}
			if !streamed {
				body, _ := json.Marshal(fields)
				if !yield(body, nil, lr.pos(off), nil) {
					return nil
				}
			}
		default:
			p := lr.pos(off)
			return &agenteval.PosError{Line: p.Line, Col: p.Col, Msg: "expected a JSON object or array here"}
		}
	}
}

// itemFunc receives one item: its JSON, the fields of the object whose
// list held it (those read before the list, in a document), its position,
// and, instead of a value, the reason a line could not be read.
type itemFunc func(raw json.RawMessage, parent map[string]json.RawMessage, pos Pos, bad error) bool

func isListKey(k string, keys []string) bool {
	for _, l := range keys {
		if k == l {
			return true
		}
	}
	return false
}
