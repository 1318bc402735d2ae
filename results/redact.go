package results

import (
	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/redact"
)

// Redact hides the process's known secrets (the values of environment
// variables named like secrets, the targets' and models' credentials) in
// every string of r, in place: transcripts, reasons, evidence, errors and
// every grader's details, such as the excerpts of injection_suspected.
// Whatever writes a result outside the process (the results file, the run
// store, a report) passes it here first; it is cheap when there is no
// secret, and doing it twice does nothing more.
func Redact(r *agenteval.Result) {
	if r != nil {
		redact.Value(r)
	}
}
