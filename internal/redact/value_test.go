package redact

import (
	"encoding/json"
	"strings"
	"testing"
)

type flag struct {
	Part    string `json:"part"`
	Excerpt string `json:"excerpt"`
	hidden  string
}

type kind string

type selfEncoding struct{ text string }

func (s selfEncoding) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]string{"said": s.text})
}

type record struct {
	Text    string
	Kind    kind
	Ptr     *string
	Details map[string]any
	Flags   []flag
	Keyed   map[string]string
	Fixed   [1]string
	Deeper  []*record
}

// TestValue: every string a value holds, however deep and whatever the
// type of the details that hold it, has its secrets hidden in place.
func TestValue(t *testing.T) {
	const secret = "sk-value-0123456789"
	t.Setenv("VALUE_TEST_API_KEY", secret)
	Reload()
	s := "ptr " + secret
	r := &record{
		Text: "text " + secret,
		Kind: kind(secret),
		Ptr:  &s,
		Details: map[string]any{
			"flags":   []flag{{Part: "reply", Excerpt: "…ignore previous instructions " + secret + "…"}},
			"one":     flag{Excerpt: secret},
			"ptr":     &flag{Excerpt: secret},
			"nested":  map[string]any{"list": []any{secret, 1.0, true, nil}},
			"strings": []string{secret},
			"self":    selfEncoding{text: secret},
			secret:    "a key that is a secret",
			"number":  json.Number("12"),
		},
		Flags:  []flag{{Excerpt: secret, hidden: secret}},
		Keyed:  map[string]string{"k": secret},
		Fixed:  [1]string{secret},
		Deeper: []*record{{Text: secret}, nil},
	}
	Value(r)
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	out := strings.ReplaceAll(string(b), `"Kind":"`+secret+`"`, "")
	if strings.Contains(out, secret) {
		t.Errorf("a secret is left:\n%s", b)
	}
	if r.Kind != kind(secret) {
		t.Errorf("Kind = %q: a string type of its own is an enumeration, left alone", r.Kind)
	}
	if r.Flags[0].hidden != secret {
		t.Error("an unexported field was changed")
	}
	if _, ok := r.Details["flags"].([]flag); !ok {
		t.Errorf("details flags are %T now; a value whose type is walked keeps its type", r.Details["flags"])
	}
	if r.Details["number"] != json.Number("12") {
		t.Errorf("number = %#v", r.Details["number"])
	}
	if got := r.Details["self"]; !strings.Contains(string(must(json.Marshal(got))), `{"said":"`+Mask+`"}`) {
		t.Errorf("self-encoding value = %#v", got)
	}
	if r.Details[Mask] != "a key that is a secret" {
		t.Errorf("details = %v", r.Details)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// TestValueLeavesCleanValuesAlone: every writer of a result redacts it
// again, while others may be reading it (go test -race finds no race): a
// value that holds no secret, details of struct types included, is not
// written to.
func TestValueLeavesCleanValuesAlone(t *testing.T) {
	t.Setenv("CLEAN_TEST_API_KEY", "sk-clean-0123456789")
	Reload()
	r := &record{Text: "nothing secret", Details: map[string]any{"one": flag{Excerpt: "plain"}, "flags": []flag{{Part: "reply"}}},
		Keyed: map[string]string{"k": "v"}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 100 {
			json.Marshal(r)
		}
	}()
	for range 100 {
		Value(r)
	}
	<-done
}
