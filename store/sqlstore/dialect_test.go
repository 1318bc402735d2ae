package sqlstore

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestRebind(t *testing.T) {
	numbered := &Dialect{Numbered: true}
	plain := &Dialect{}
	for _, tc := range []struct{ in, want string }{
		{"SELECT 1", "SELECT 1"},
		{"WHERE a = ? AND b = ?", "WHERE a = $1 AND b = $2"},
		{"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"},
		{"substr(id, 1, ?) = ? -- é", "substr(id, 1, $1) = $2 -- é"},
	} {
		if got := numbered.rebind(tc.in); got != tc.want {
			t.Errorf("rebind(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := plain.rebind(tc.in); got != tc.in {
			t.Errorf("plain rebind(%q) = %q", tc.in, got)
		}
	}
}

// Every slot of every migration is filled, by each dialect's types.
func TestRenderFillsEverySlot(t *testing.T) {
	d := &Dialect{Types: map[string]string{"int": "I", "real": "R", "blob": "B", "seq": "S", "reseq": ""}}
	for i, m := range Migrations {
		if got := d.render(m); strings.Contains(got, "{{") {
			t.Errorf("v%d keeps a slot: %s", i+1, got[strings.Index(got, "{{"):][:20])
		}
	}
}

// Escaped text is valid UTF-8 without NUL, one to one, and text without
// the bytes it escapes is left alone.
func TestEscapeText(t *testing.T) {
	strict, plain := &Dialect{StrictText: true}, &Dialect{}
	ins := []string{"", "a", "é-日本", "a\x00b", "a\x01" + "0b", "a\x010b", "a\x01\x00b", "\x00", "\x01", "\x01" + "1",
		"a\xffb", "a\x01xffb", "\xc3", "\xc3\xa9", `a\0b`, `a\u0000b`}
	seen := map[string]string{}
	for _, in := range ins {
		out := strict.text(in)
		if !utf8.ValidString(out) || strings.IndexByte(out, 0) >= 0 {
			t.Errorf("text(%q) = %q: not text PostgreSQL holds", in, out)
		}
		if prev, ok := seen[out]; ok && prev != in {
			t.Errorf("text(%q) = text(%q) = %q", in, prev, out)
		}
		seen[out] = in
		if got := plain.text(in); got != in {
			t.Errorf("a dialect without StrictText changed %q to %q", in, got)
		}
	}
	for _, in := range []string{"", "a", "é-日本", `a\0b`, "tests/t.yaml#3"} {
		if got := strict.text(in); got != in {
			t.Errorf("text(%q) = %q, want it as it is", in, got)
		}
	}
}
