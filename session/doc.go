// Package session runs eval files as agenteval run does, for any Go
// program: the CLI, evaltest, and a user's own tools. A run session has
// four stages, each done once:
//
//   - Load finds the eval files (a folder stands for the files below it, a
//     glob for those it matches), parses them, and reads each project file
//     (agenteval.yaml) once, applying it to every suite below it.
//   - Plan decides what runs: targets × tests × trials, filtered, sharded,
//     and less what --resume or --rerun-failed already has, and writes the
//     run's header.
//   - OpenSink opens where results go: the results file, JUnit, HTML,
//     OpenTelemetry export, the run store, and any writer of the caller's;
//     it keeps the summary and records how the run ended.
//   - Run builds each target's agent and the judge, and runs the plan into
//     the sink, telling the caller of each result as it comes.
//
// Run (the function) does all four with Options, the way the command line
// does; the stages are there for a caller that wants to look between them
// (validate stops after Plan; merge and score use only the sink).
//
// Problems with the files or settings are *ConfigError (the CLI exits 2
// for them); a failed run returns its cause with the results so far kept.
//
// Provider adapters and store backends register themselves when
// imported, as database/sql drivers do: import the ones a program needs
// (provider/openai, store/sqlite, ...). The CLI imports them all; a go test
// binary built with evaltest compiles in none it does not import.
//
// It may import the root package, suite, project, dataset, run, grade, judge,
// target, provider, cache, store, report, results, shard, the internal
// packages, and YAML (to tell an eval file from other YAML by its keys);
// not the provider adapters, the store backends or the OpenTelemetry SDK.
package session
