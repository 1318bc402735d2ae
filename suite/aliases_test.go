package suite

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// laughs builds a billion-laughs document: ten anchors, each a list of the
// previous one ten times, under x- keys, then use(*i) placed where the
// family puts it.
func laughs(use func(alias string) string) string {
	var b strings.Builder
	b.WriteString("x-a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
	prev := "a"
	for _, name := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		fmt.Fprintf(&b, "x-%s: &%s [*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s]\n", name, name, prev, prev, prev, prev, prev, prev, prev, prev, prev, prev)
		prev = name
	}
	b.WriteString(use(prev))
	return b.String()
}

// TestBillionLaughs: every place an alias can expand is refused at once,
// at the alias, with little memory.
func TestBillionLaughs(t *testing.T) {
	family := map[string]func(string) string{
		"metadata": func(a string) string { return "tests:\n  - id: t\n    input: hi\n    metadata: {big: *" + a + "}\n" },
		"vars":     func(a string) string { return "tests:\n  - id: t\n    input: hi\n    vars: {big: *" + a + "}\n" },
		"tests":    func(a string) string { return "tests: *" + a + "\n" },
		"input":    func(a string) string { return "tests:\n  - id: t\n    input: *" + a + "\n" },
		"nested": func(a string) string {
			return "x-z: &z {m: *" + a + "}\ntests:\n  - id: t\n    input: hi\n    metadata: [*z, *z]\n"
		},
		"merge": func(a string) string {
			return "x-z: &z {metadata: {m: *" + a + "}}\ntests:\n  - <<: *z\n    id: t\n    input: hi\n"
		},
	}
	for name, use := range family {
		t.Run(name, func(t *testing.T) {
			doc := laughs(use)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			start := time.Now()
			_, err := Parse("bomb.yaml", []byte(doc), Options{JudgeAvailable: true})
			took := time.Since(start)
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), "billion laughs") {
				t.Fatalf("a %d-byte bomb loaded: %v", len(doc), err)
			}
			if !strings.Contains(err.Error(), "bomb.yaml:") || !strings.Contains(err.Error(), "the alias *") {
				t.Errorf("error names no alias and place: %v", err)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 50<<20 {
				t.Errorf("%d MB allocated", alloc>>20)
			}
			// The bar is 0.1 s; this guard only catches an expansion.
			if took > 2*time.Second {
				t.Errorf("took %v", took)
			}
		})
	}
}

// TestAliasesWithinBudget: anchors reused the ordinary way still load.
func TestAliasesWithinBudget(t *testing.T) {
	var b strings.Builder
	b.WriteString("x-defaults: &defaults\n  assertions: [{type: contains, value: ok}]\n  metadata: {team: search, tags: [a, b, c]}\ntests:\n")
	for i := range 2000 {
		fmt.Fprintf(&b, "  - <<: *defaults\n    id: t%d\n    input: hi\n", i)
	}
	s, err := Parse("ok.yaml", []byte(b.String()), Options{})
	if err != nil || len(s.Tests) != 2000 || s.Tests[1999].Metadata["team"] != "search" {
		t.Fatalf("err %v", err)
	}
}

func BenchmarkBillionLaughs(b *testing.B) {
	doc := []byte(laughs(func(a string) string { return "tests:\n  - id: t\n    input: hi\n    metadata: {big: *" + a + "}\n" }))
	for b.Loop() {
		if _, err := Parse("bomb.yaml", doc, Options{}); err == nil {
			b.Fatal("loaded")
		}
	}
}

// TestNotText: bytes that cannot be in a text file are reported at their
// line and column, and an empty file says it is empty.
func TestNotText(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 20000) + "1" + strings.Repeat("}", 20000)
	tests := []struct{ file, data, want string }{
		{"latin1.yaml", "tests:\n  - id: a\n    input: caf\xe9\n", "latin1.yaml:3:15: byte 0xE9 is not valid UTF-8; save the eval file as UTF-8"},
		{"bin.yaml", "\x00\x01binary", "bin.yaml:1:1: control character 0x00; an eval file is text (is this a binary file?)"},
		{"empty.yaml", "", "empty.yaml:1:1: the eval file is empty; it needs at least tests:"},
		{"comments.yaml", "# nothing yet\n", "comments.yaml:1:1: the eval file is empty"},
		{"deep.json", deep, "deep.json:1:50001: not valid JSON: it nests deeper than 10,000 levels"},
	}
	for _, tt := range tests {
		_, err := Parse(tt.file, []byte(tt.data), Options{})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.file, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "something else") {
			t.Errorf("%s: %v", tt.file, err)
		}
	}
}

// TestLongStringAliases: a long string repeated by reference counts by its
// size, so a 1 MB file cannot stand for gigabytes.
func TestLongStringAliases(t *testing.T) {
	var b strings.Builder
	b.WriteString("x-big: &big \"" + strings.Repeat("x", 1<<20) + "\"\ntests:\n  - id: t\n    input: hi\n    assertions:\n      - type: contains_any\n        value: [")
	for i := range 300 {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("*big")
	}
	b.WriteString("]\n")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := Parse("long.yaml", []byte(b.String()), Options{})
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "billion laughs") {
		t.Fatalf("err = %v", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("%d MB allocated", alloc>>20)
	}
}

// TestSecondDocument: a second YAML document is an error, not silently
// dropped.
func TestSecondDocument(t *testing.T) {
	_, err := Parse("two.yaml", []byte("tests:\n  - {id: a, input: hi}\n---\ntests:\n  - {id: b, input: hi}\n"), Options{})
	if err == nil || !strings.Contains(err.Error(), "two.yaml:3:1: a second YAML document") {
		t.Errorf("err = %v", err)
	}
}
