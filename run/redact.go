package run

import (
	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/redact"
)

// redactResult hides known secrets everywhere in a result before anything
// writes it: an agent that echoes its API key, a grader reason quoting a
// header, an injection excerpt, or an error carrying a URL with a password
// must not leak them into results files or reports. It is the redactor the
// results writer and the store use too (results.Redact): one walk over
// every string, so that no field or grader's details is forgotten.
func redactResult(r *agenteval.Result) {
	if r != nil {
		redact.Value(r)
	}
}
