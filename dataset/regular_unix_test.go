//go:build unix

package dataset

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestOpenRefusesNamedPipe: Open and ReadReferences refuse a named pipe at
// once instead of waiting for a writer; a regular file, a folder and "-"
// are left to Open.
func TestOpenRefusesNamedPipe(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "f")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 2)
	go func() {
		_, err := Open(fifo)
		done <- err
		_, _, err = ReadReferences(fifo)
		done <- err
	}()
	for range 2 {
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "f is a named pipe; give a regular file, or - for standard input") {
				t.Errorf("err = %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("opening a named pipe blocked")
		}
	}
	for _, p := range []string{"-", dir, filepath.Join(dir, "missing")} {
		if err := RegularFile(p); err != nil {
			t.Errorf("RegularFile(%s) = %v", p, err)
		}
	}
}
