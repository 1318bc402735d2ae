package trace

import (
	"encoding/json"
	"strings"

	"github.com/agenteval/agenteval/internal/jsonvalue"
)

// argDecoder is the one way a reader decodes a record and the tool-call
// arguments in it, so that arguments keep the written order of their
// nested objects' keys: Ragas's exact tool_call_accuracy compares
// str() of nested dicts, which Python prints in written order, and a
// reference copied from the same log must score 1.
//
// A reader keeps one per file, and for each record (a log line, a list
// element, a span):
//
//   - calls record(raw) to decode it (or decode(text) for more JSON text
//     of the same record, such as an attribute holding messages), which
//     forgets the orders of the record before;
//   - hands a call's arguments, as an object or as JSON text, to args;
//   - passes the msgs that package messages decoded (openAIMessages,
//     openAIMessage, toolCalls, genAIMessages) through order, which adds
//     the key orders to their calls.
//
// Arguments written as JSON text are ordered by package messages from the
// text itself; objects are ordered by the argDecoder that decoded them. An
// object built in code (from an OTLP kvlist, say) is ordered by noting its
// keys with note.
type argDecoder struct {
	ko jsonvalue.Orders
}

// record decodes one record of the file as a JSON object, forgetting the
// orders of the record before; nil when it is not an object.
func (a *argDecoder) record(raw json.RawMessage) (map[string]any, error) {
	a.ko.Reset()
	v, err := a.ko.Decode(raw)
	if err != nil {
		return nil, err
	}
	return obj(v), nil
}

// decode decodes more JSON text of the current record.
func (a *argDecoder) decode(text string) (any, error) { return a.ko.DecodeString(text) }

// note records the key order of an object built in code.
func (a *argDecoder) note(m map[string]any, keys []string) { a.ko.Note(m, keys) }

// args decodes a call's arguments (see parseArgs), with their key order.
func (a *argDecoder) args(v any, pos Pos, where string, probs *[]problem) call {
	c := parseArgs(v, pos, where, probs)
	if c.keyOrder == nil && c.args != nil {
		c.keyOrder = a.ko.KeyOrder(c.args)
	}
	return c
}

// calls adds the key order of each call's arguments, where package
// messages could not know it.
func (a *argDecoder) calls(cs []call) []call {
	for i := range cs {
		if cs[i].keyOrder == nil && cs[i].args != nil {
			cs[i].keyOrder = a.ko.KeyOrder(cs[i].args)
		}
	}
	return cs
}

// order adds the key order of the calls of messages decoded by package
// messages.
func (a *argDecoder) order(ms []msg) []msg {
	for i := range ms {
		a.calls(ms[i].calls)
	}
	return ms
}

// text renders a value as message text, as text does, but with objects'
// keys in written order.
func (a *argDecoder) text(v any) string { return a.ko.Text(v) }

// structured is structured (a JSON string holding an object or a list is
// decoded), keeping the key order of what it decodes.
func (a *argDecoder) structured(v any) any {
	if s, ok := v.(string); ok {
		t := strings.TrimSpace(s)
		if strings.HasPrefix(t, "[") || strings.HasPrefix(t, "{") {
			if d, err := a.decode(t); err == nil {
				return d
			}
		}
	}
	return v
}
