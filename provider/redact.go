package provider

import "github.com/agenteval/agenteval/internal/redact"

// Redact replaces every known secret in s with [REDACTED]: the values of
// environment variables whose names mark them as secrets (*_API_KEY,
// *_TOKEN, *SECRET*, *_KEY, ...), every key a model was opened with, and
// the credentials of HTTP and command targets. Everything that reaches an
// error message, a log or a result passes through it.
func Redact(s string) string { return redact.String(s) }
