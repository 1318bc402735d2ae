package proc

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestBuffer(t *testing.T) {
	b := &Buffer{Max: 5}
	if n, err := b.Write([]byte("abc")); n != 3 || err != nil {
		t.Fatal(n, err)
	}
	if n, err := b.Write([]byte("defgh")); n != 5 || err != nil || !b.Over || b.String() != "abcde" {
		t.Errorf("n %d err %v over %v kept %q", n, err, b.Over, b.String())
	}
}

func TestCommandRefused(t *testing.T) {
	t.Cleanup(func() { Refuse("") })
	Refuse("--no-exec")
	if _, err := Command(context.Background(), nil); err == nil || errors.Is(err, ErrRefused) {
		t.Errorf("no argv: %v", err)
	}
	_, err := Command(context.Background(), []string{"sh"})
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "will not run sh: running programs is turned off (--no-exec)") {
		t.Errorf("refused: %v", err)
	}
	Refuse("")
	if _, err := Command(context.Background(), []string{"sh"}); err != nil {
		t.Errorf("allowed again: %v", err)
	}
}
