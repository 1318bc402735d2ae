package suggest

import "testing"

func TestLevenshtein(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"abc", "", 3},
		{"", "abc", 3},
		{"kitten", "sitting", 3},
		{"référence", "reference", 2},
		{"same", "same", 0},
	}
	for _, tt := range tests {
		if got := Levenshtein(tt.a, tt.b); got != tt.want {
			t.Errorf("Levenshtein(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestClosest(t *testing.T) {
	known := []string{"reference", "reference_tool_calls", "reference_topics", "rubrics", "user_input", "id"}
	tests := []struct{ word, want string }{
		{"refrence", "reference"},
		{"reference_tool_call", "reference_tool_calls"},
		{"Reference-Topics", "reference_topics"},
		{"category", ""},
		{"ix", ""},
		{"rubric", "rubrics"},
	}
	for _, tt := range tests {
		if got := Closest(tt.word, known); got != tt.want {
			t.Errorf("Closest(%q) = %q, want %q", tt.word, got, tt.want)
		}
	}
}

func TestNearest(t *testing.T) {
	ids := []string{"book-and-move", "allergy-question", "cancel-booking", "opening-hours"}
	if got := Nearest("book-*-mvoe", ids, 2); len(got) != 2 || got[0] != "book-and-move" {
		t.Errorf("Nearest = %v", got)
	}
	if got := Nearest("booking", ids, 3); got[0] != "cancel-booking" {
		t.Errorf("Nearest(booking) = %v", got)
	}
	if got := Nearest("x", nil, 3); len(got) != 0 {
		t.Errorf("no candidates: %v", got)
	}
}

func TestTypo(t *testing.T) {
	known := []string{"assertions", "expected_output", "input", "id", "fail_on_error"}
	tests := []struct{ word, want string }{
		{"asertions", "assertions"},
		{"Assertions", "assertions"},
		{"expected-ouptut", "expected_output"},
		{"inptu", "input"},
		{"FailOnError", "fail_on_error"},
		// Inside a candidate, but not a misspelling of it.
		{"output", ""},
		{"x-notes", ""},
		{"ix", ""},
	}
	for _, tt := range tests {
		if got := Typo(tt.word, known); got != tt.want {
			t.Errorf("Typo(%q) = %q, want %q", tt.word, got, tt.want)
		}
	}
}
