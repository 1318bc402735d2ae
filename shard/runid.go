package shard

import "strings"

// ciRunIDs are the CI systems whose variables name one pipeline run, which
// every shard of that pipeline sees alike: the first whose variable is set
// gives the run id. Each id starts with the system's short name, so ids
// from two systems never meet in one store.
var ciRunIDs = []struct {
	system, prefix string
	vars           []string // the first must be set; the others are appended when set
}{
	// A re-run of a workflow keeps its run id and counts attempts: each
	// attempt is a run of its own.
	{"GitHub Actions", "gh", []string{"GITHUB_RUN_ID", "GITHUB_RUN_ATTEMPT"}},
	{"GitLab CI", "gl", []string{"CI_PIPELINE_ID"}},
	{"Buildkite", "bk", []string{"BUILDKITE_BUILD_ID"}},
	{"CircleCI", "circle", []string{"CIRCLE_WORKFLOW_ID"}},
	{"Azure Pipelines", "azure", []string{"BUILD_BUILDID"}},
	{"Jenkins", "", []string{"BUILD_TAG"}}, // jenkins-JOB-NUMBER already
}

// RunIDFromCI returns the run id that the shards of one CI pipeline run
// share, from the CI system's variables, and the system's name; or "", ""
// outside a CI system it knows.
func RunIDFromCI(getenv func(string) string) (id, system string) {
	for _, c := range ciRunIDs {
		if getenv(c.vars[0]) == "" {
			continue
		}
		parts := []string{}
		if c.prefix != "" {
			parts = append(parts, c.prefix)
		}
		for _, v := range c.vars {
			if x := getenv(v); x != "" {
				parts = append(parts, x)
			}
		}
		return CleanRunID(strings.Join(parts, "-")), c.system
	}
	return "", ""
}

// CleanRunID makes an id safe as a run id: characters other than letters,
// digits, '.', '_' and '-' become '-', and it is cut to 64 characters.
func CleanRunID(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '-'
		}
	}
	if len(b) > 64 {
		b = b[:64]
	}
	return string(b)
}
