package session

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/project"
	"github.com/agenteval/agenteval/results"
	"github.com/agenteval/agenteval/shard"
	"github.com/agenteval/agenteval/suite"
)

// shardPath is a suite's path as shards hash it: relative to the project's
// root, with forward slashes, so that every machine's checkout splits the
// tests alike wherever it is and however the path was written.
func shardPath(file string) string {
	if file == "-" || file == "" {
		return file
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return filepath.ToSlash(filepath.Clean(file))
	}
	if root, err := project.Root(file); err == nil {
		if rel, err := filepath.Rel(root, abs); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.ToSlash(rel)
		}
	}
	return filepath.ToSlash(filepath.Clean(file))
}

// shardRun is what --shard does to a run: its spec, and which tests of
// each suite it keeps.
type shardRun struct {
	spec shard.Spec
	keep map[*suite.Suite]func(id string) bool
}

// parseShard reads --shard; nil means the whole run.
func parseShard(flag string, suites []*suite.Suite) (*shardRun, error) {
	if flag == "" {
		return nil, nil
	}
	spec, err := shard.Parse(flag)
	if err != nil {
		return nil, configErr("%v", err)
	}
	sr := &shardRun{spec: spec, keep: map[*suite.Suite]func(string) bool{}}
	for _, s := range suites {
		sr.keep[s] = shardKeep(shardPath(s.File), s, spec)
	}
	return sr, nil
}

// shardKeep says which tests of a suite shard spec keeps, by id, as
// shard.Select does. A streamed suite's tests are not at hand, and
// shard.Assign needs only those that depends_on links: each of the
// others goes to the shard of its own id.
func shardKeep(path string, s *suite.Suite, spec shard.Spec) func(string) bool {
	if spec.Count <= 1 {
		return func(string) bool { return true }
	}
	if !s.Streamed() {
		where := shard.Assign(path, s.Tests, spec.Count)
		return func(id string) bool { return where[id] == spec.Index }
	}
	linked := map[string]bool{}
	for i := range s.NumTests() {
		if ti := s.Info(i); len(ti.DependsOn) > 0 {
			linked[ti.ID] = true
			for _, dep := range ti.DependsOn {
				linked[dep] = true
			}
		}
	}
	var group []agenteval.Test
	if len(linked) > 0 {
		for i := range s.NumTests() {
			if ti := s.Info(i); linked[ti.ID] {
				group = append(group, agenteval.Test{ID: ti.ID, DependsOn: ti.DependsOn})
			}
		}
	}
	where := shard.Assign(path, group, spec.Count)
	return func(id string) bool {
		if n, ok := where[id]; ok {
			return n == spec.Index
		}
		return shard.Of(path, id, spec.Count) == spec.Index
	}
}

// keeps returns the suite's shard filter, or nil without sharding.
func (sr *shardRun) keeps(s *suite.Suite) func(string) bool {
	if sr == nil {
		return nil
	}
	return sr.keep[s]
}

// label marks the header as this shard's, and gives the run the id every
// shard shares: --run-id, else the CI pipeline's, else a new one (with a
// warning, since then no other shard has it, unless the run resumes a
// file, whose id it keeps).
func (sr *shardRun) label(opt *Options, h *results.Header, resuming bool, tests int) {
	if sr == nil {
		return
	}
	h.Shard = &results.Shard{Index: sr.spec.Index, Count: sr.spec.Count, Tests: tests}
	if opt.RunID != "" {
		return
	}
	if id, _ := shard.RunIDFromCI(os.Getenv); id != "" {
		h.RunID = id
		return
	}
	if sr.spec.Count > 1 && !resuming {
		opt.logf("agenteval: warning: --shard %s without --run-id, outside a CI system agenteval knows: this shard's run id is %s, and the other shards will not share it; give every shard the same --run-id so that merge can put them together\n", sr.spec, h.RunID)
	}
}
