package run

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agenteval/agenteval"
)

// conversationID names one trial's conversation with the agent:
// "RUNID/TARGET/SUITE/TEST#TRIAL", leaving out a target or suite that has
// no name. Agents key their memory on it (LangGraph's checkpointer
// threads, the OpenAI Agents SDK's sessions), so it must never repeat:
// with the run id in it, a second run of the same suite starts afresh
// instead of continuing the first one's conversations; with the target,
// suite and trial, neither do the targets of a matrix, tests of the same
// id in two eval files, or the trials of a test. It stays readable, so
// that an agent's logs show which test they belong to.
func (r *suiteRunner) conversationID(t *agenteval.Test, trial int) string {
	parts := []string{r.runID}
	if r.opt.Target != "" {
		parts = append(parts, r.opt.Target)
	}
	if t.Suite != "" {
		parts = append(parts, t.Suite)
	}
	parts = append(parts, t.ID)
	return strings.Join(parts, "/") + "#" + strconv.Itoa(trial)
}

// newRunID is the run id of a caller that gave none, made as the results
// header's are (results.NewRunID): 12 random hex digits.
func newRunID() string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		// crypto/rand does not fail on supported platforms; the clock
		// still tells runs apart if it ever does.
		return fmt.Sprintf("%012x", time.Now().UnixNano()&0xffffffffffff)
	}
	return hex.EncodeToString(b[:])
}
