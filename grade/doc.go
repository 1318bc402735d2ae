// Package grade holds the graders and how a test is graded.
//
// Each kind of grader is a Definition: a plain exported value (Contains,
// ToolCalls, Rubrics, Subgoals, ...) with its name, aliases, a doc line, a
// description of its settings, whether it needs the LLM judge, and its
// constructor. All lists the built-in ones and Validate checks a list, so
// adding a built-in grader is one file and one line in All; there is no
// registry filled at init time. The list a type is looked up in is the
// caller's (Spec.Graders, PlanOptions.Graders, and the suite loader's and
// runner's options), All when none is given: a program adds a grader of
// its own, made with Define, by appending it to All, without forking. New
// builds a grader from a Spec, whose options are the grader's options
// struct (from Go) or a map of settings (from an eval file or a --metric
// flag); both take the same path. NewPlan builds every grader of a test
// once, and is what both validation and the runner use.
//
// The Ragas-named metrics (tool_call_accuracy, tool_call_f1) reproduce Ragas's
// arithmetic exactly, including how Python compares values, so numbers are
// comparable with Ragas. Our own graders (tool_calls and the text checks)
// compare decoded JSON values instead: 2 equals 2.0, "2" does not equal 2,
// and true does not equal 1.
//
// A score that a judge helped make is flagged (details.injection_suspected,
// see InjectionFlag) when the replies or tool traffic it read address the
// grader; the flag is set in the one path every score takes, and it never
// changes a verdict.
//
// It may import the root package, judge, internal helpers, the standard
// library and the JSON Schema validator.
package grade
