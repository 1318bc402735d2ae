package jsonvalue

import (
	"encoding/json"
	"testing"
)

func TestEqual(t *testing.T) {
	tests := []struct {
		a, b any
		want bool
	}{
		{json.Number("2"), 2.0, true},
		{json.Number("2"), json.Number("2.0"), true},
		{json.Number("9007199254740993"), json.Number("9007199254740992"), false},
		{json.Number("9007199254740993"), int64(9007199254740993), true},
		{"2", json.Number("2"), false},
		{true, json.Number("1"), false},
		{nil, nil, true},
		{[]any{1, "a"}, []any{json.Number("1"), "a"}, true},
		{[]any{1}, []any{1, 2}, false},
		{map[string]any{"a": 1, "b": []any{true}}, map[string]any{"b": []any{true}, "a": 1.0}, true},
		{map[string]any{"a": 1}, map[string]any{"a": 1, "b": 2}, false},
		{struct{ A int }{1}, map[string]any{"A": 1}, true}, // Go values compare by their JSON form
	}
	for _, tt := range tests {
		if got := Equal(tt.a, tt.b); got != tt.want {
			t.Errorf("Equal(%#v, %#v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
	if f, ok := Number(uint8(3)); !ok || f != 3 {
		t.Errorf("Number(uint8) = %v, %v", f, ok)
	}
	if _, ok := Number("3"); ok {
		t.Error("Number(string) succeeded")
	}
}
