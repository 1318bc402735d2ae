// Package agenteval is the vocabulary shared by every part of agenteval: the
// messages, tool calls and conversations an agent produces, the recorded
// samples that are scored, and the scores and results that graders and runners
// report.
//
// It imports only the standard library. It knows no vendor, file format or
// database: adapters live in their own packages (dataset, grade, provider, ...)
// and depend on this one, never the other way round.
//
// agenteval is free software under the Apache License, Version 2.0: see the
// LICENSE file at the root of the module.
package agenteval
