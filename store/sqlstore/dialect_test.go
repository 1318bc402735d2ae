package sqlstore

import (
	"strings"
	"testing"
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
