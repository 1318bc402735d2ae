package store

import (
	"fmt"
	"strings"

	"github.com/agenteval/agenteval/results"
)

// RunHeader is the header a store keeps for a run: a shard's header
// stands for its whole run, so it loses the shard's own part and keeps the
// number of shards.
func RunHeader(h *results.Header) results.Header {
	out := *h
	out.Record = results.RecordRun
	if h.Shard != nil {
		out.Shards, out.Shard = h.Shard.Count, nil
	}
	return out
}

// CheckJoin says why a shard may not join the stored run with its id, or
// returns nil: the run was not split into as many shards, or ran other
// suites, another target or judge. Two CI jobs that share a pipeline's run
// id but run different things (a matrix of models) meet here.
func CheckJoin(stored *results.Header, h *results.Header) error {
	if h.Shard == nil {
		return nil
	}
	var problems []string
	if stored.Shards != h.Shard.Count {
		what := "is not split into shards"
		if stored.Shards > 0 {
			what = fmt.Sprintf("has %d shards", stored.Shards)
		}
		problems = append(problems, fmt.Sprintf("it %s, this is shard %s", what, h.Shard))
	}
	problems = append(problems, results.RunDiffs(stored, h)...)
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("run %s is already stored and this shard is not part of it: %s. Give each job that runs something else its own --run-id (e.g. add the matrix's model to it)",
		h.RunID, strings.Join(problems, "; "))
}

// ShardStatus is where a run of n shards stands, from the statuses of the
// shards that have started: running while one runs or one has yet to
// start; then failed if one failed, else interrupted if one was, else
// done.
func ShardStatus(n int, shards []Status) Status {
	if len(shards) < n {
		return Running
	}
	worst := Done
	for _, s := range shards {
		switch s {
		case Running:
			return Running
		case Failed:
			worst = Failed
		case Interrupted:
			if worst != Failed {
				worst = Interrupted
			}
		}
	}
	return worst
}
