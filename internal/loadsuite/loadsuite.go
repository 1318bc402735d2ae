// Package loadsuite writes the eval file of the load run that
// docs/explanation/performance.md measures: n conversations of 4 turns, each turn
// graded by one judge rubric. The runner's and the parser's benchmarks
// read it; scripts/loadrun.sh writes the same file for the CLI.
//
// It imports the standard library only.
package loadsuite

import (
	"fmt"
	"strings"
)

// Conversations returns the eval file of n conversations.
func Conversations(n int) []byte {
	var y strings.Builder
	y.WriteString("tests:\n")
	for i := range n {
		fmt.Fprintf(&y, "  - id: c%d\n    mode: conversation\n    turns:\n", i)
		for k := range 4 {
			fmt.Fprintf(&y, "      - input: question %d of conversation %d\n        assertions: [Answers the question]\n", k+1, i)
		}
	}
	return []byte(y.String())
}
