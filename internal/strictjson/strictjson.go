// Package strictjson decodes one JSON value strictly: numbers stay json.Number
// (so 2 and 2.0 remain distinguishable), and anything after the value but
// white space is an error. encoding/json's Decoder.More misses a stray '}'
// or ']', which would let `{"a":1}}` pass as valid. It imports only the
// standard library.
package strictjson

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// TrailingError reports text after the JSON value, at byte Offset.
type TrailingError struct {
	Offset int64
}

func (e *TrailingError) Error() string {
	return fmt.Sprintf("unexpected text after the JSON value at offset %d", e.Offset)
}

// Decode decodes data into v, keeping numbers as json.Number and rejecting
// trailing text.
func Decode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	off := dec.InputOffset()
	if rest := bytes.TrimSpace(data[off:]); len(rest) > 0 {
		lead := len(data[off:]) - len(bytes.TrimLeft(data[off:], " \t\r\n"))
		return &TrailingError{Offset: off + int64(lead)}
	}
	return nil
}
