package session

import (
	"fmt"
	"strings"
)

// ConfigError is a problem with the files or settings a session was given,
// found before anything ran (or that stops it at once): a missing file, a
// bad flag value, an unknown target, a provider that cannot be opened. The
// CLI exits 2 for it.
type ConfigError struct {
	Err error
}

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

func configErr(format string, a ...any) error {
	return &ConfigError{Err: fmt.Errorf(format, a...)}
}

// LoadError lists every eval file that could not be loaded, each problem
// already placed as path:line:col: message. All files are read before it
// is returned, so one run shows every problem.
type LoadError struct {
	Problems []string
}

func (e *LoadError) Error() string { return strings.Join(e.Problems, "\n") }
