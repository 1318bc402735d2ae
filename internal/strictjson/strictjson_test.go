package strictjson

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestDecode(t *testing.T) {
	tests := []struct {
		in      string
		ok      bool
		trailAt int64
	}{
		{`{"a": 1}`, true, 0},
		{` {"a": 1} ` + "\n", true, 0},
		{`{"a": 1}}`, false, 8},
		{`{"a": 1} ]`, false, 9},
		{`[1] [2]`, false, 4},
		{`{"a": `, false, 0},
		{`2.0`, true, 0},
	}
	for _, tt := range tests {
		var v any
		err := Decode([]byte(tt.in), &v)
		if (err == nil) != tt.ok {
			t.Errorf("Decode(%q) err = %v, want ok=%v", tt.in, err, tt.ok)
		}
		var te *TrailingError
		if tt.trailAt > 0 && (!errors.As(err, &te) || te.Offset != tt.trailAt) {
			t.Errorf("Decode(%q) err = %v, want trailing text at %d", tt.in, err, tt.trailAt)
		}
	}
	var v any
	Decode([]byte(`2.0`), &v)
	if v != json.Number("2.0") {
		t.Errorf("number = %#v", v)
	}
}
