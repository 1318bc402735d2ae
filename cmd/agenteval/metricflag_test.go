package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseMetricFlags(t *testing.T) {
	tests := []struct {
		flag     string
		typ      string
		settings map[string]any
	}{
		{"contains_any(value=[booked])", "contains_any", map[string]any{"value": []any{"booked"}}},
		{"contains_any(value=[booked, reserved])", "contains_any", map[string]any{"value": []any{"booked", "reserved"}}},
		{`contains_any(value=["booked", 'a, b'])`, "contains_any", map[string]any{"value": []any{"booked", "a, b"}}},
		{"icontains(value=Golden Dragon)", "icontains", map[string]any{"value": "Golden Dragon"}},
		{"contains(value=[not a list)", "contains", map[string]any{"value": "[not a list"}},
		{"tool_call_accuracy(strict_order=false)", "tool_call_accuracy", map[string]any{"strict_order": false}},
	}
	for _, tt := range tests {
		specs, err := parseMetricFlags([]string{tt.flag})
		if strings.Contains(tt.flag, "[not a list") {
			if err == nil {
				t.Errorf("%s: no error for unbalanced brackets", tt.flag)
			}
			continue
		}
		if err != nil || len(specs) != 1 {
			t.Fatalf("%s: %v", tt.flag, err)
		}
		if specs[0].Type != tt.typ || !cmp.Equal(specs[0].Options, tt.settings) {
			t.Errorf("%s: %s %v, want %v", tt.flag, specs[0].Type, specs[0].Options, tt.settings)
		}
	}
}
