package jsonvalue_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/jsonvalue"
)

// The order Orders finds by the decoded map is the order KeyOrderOf finds
// in the text, for arguments at any depth of a larger document.
func TestOrdersKeyOrderMatchesText(t *testing.T) {
	argsTexts := []string{
		`{"todos":[{"content":"Run tests","status":"pending","activeForm":"Running tests"},{"status":"done","content":"x"}]}`,
		`{"q":{"z":1,"a":{"y":[1,{"k2":1,"k1":2}],"b":2}},"p":"x"}`,
		`{"a/b":{"~x":1,"b":2},"é":{"ü":1,"a":2}}`,
		`{"esc\"aped":{"\u00e9":1,"a\nb":2}}`,
		`{"flat":1,"other":"x"}`,
		`{}`,
	}
	for _, at := range argsTexts {
		doc := `{"type":"assistant","message":{"content":[{"type":"tool_use","input":` + at + `}]}}`
		var o jsonvalue.Orders
		v, err := o.DecodeString(doc)
		if err != nil {
			t.Fatalf("%s: %v", at, err)
		}
		args := v.(map[string]any)["message"].(map[string]any)["content"].([]any)[0].(map[string]any)["input"].(map[string]any)
		got := o.KeyOrder(args)
		want := agenteval.KeyOrderOf([]byte(at))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %v\nwant %v", at, got, want)
		}
	}
}

// A key written twice keeps its first place, as in a Python dict (and its
// last value, as encoding/json and Python both do).
func TestOrdersDuplicateKey(t *testing.T) {
	var o jsonvalue.Orders
	v, err := o.DecodeString(`{"dup":{"b":1,"a":2,"b":3}}`)
	if err != nil {
		t.Fatal(err)
	}
	got := o.KeyOrder(v.(map[string]any))
	if want := map[string][]string{"/dup": {"b", "a"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("KeyOrder = %v, want %v", got, want)
	}
}

func TestOrdersText(t *testing.T) {
	var o jsonvalue.Orders
	v, err := o.DecodeString(`{"z":"<b>&","a":[1.50,{"y":true,"x":null}],"m":{"k":1}}`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := o.Text(v), `{"z":"<b>&","a":[1.50,{"y":true,"x":null}],"m":{"k":1}}`; got != want {
		t.Errorf("Text = %s, want %s", got, want)
	}
	// A map Orders did not decode is written with sorted keys.
	if got, want := o.Text(map[string]any{"b": 1, "a": "s"}), `{"a":"s","b":1}`; got != want {
		t.Errorf("Text = %s, want %s", got, want)
	}
	o.Reset()
	if got := o.KeyOrder(map[string]any{"x": v}); got != nil {
		t.Errorf("after Reset, KeyOrder = %v", got)
	}
}

func TestOrdersDecodeErrors(t *testing.T) {
	var o jsonvalue.Orders
	for _, in := range []string{`{"a":1}}`, `{"a":`, `[1,2] x`, ``} {
		if _, err := o.DecodeString(in); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
	for _, in := range []string{` {"a":1} `, `"s"`, `12`, `[{"b":1,"a":2}]`} {
		if _, err := o.DecodeString(in); err != nil && !strings.Contains(in, "x") {
			t.Errorf("%q: %v", in, err)
		}
	}
}

func TestOrdersNote(t *testing.T) {
	var o jsonvalue.Orders
	inner := map[string]any{"z": 1, "a": 2}
	args := map[string]any{"q": inner}
	o.Note(inner, []string{"z", "a"})
	if got, want := o.KeyOrder(args), map[string][]string{"/q": {"z", "a"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("KeyOrder = %v, want %v", got, want)
	}
	o.Note(inner, []string{"z", "z"}) // not m's keys: ignored
	if got := o.Keys(inner); !reflect.DeepEqual(got, []string{"z", "a"}) {
		t.Errorf("Keys = %v", got)
	}
}
