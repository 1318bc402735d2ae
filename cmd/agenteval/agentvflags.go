package main

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/session"
)

// agentvFlags applies AgentV's spellings of run's flags, so that an
// `agentv eval` command line runs here with the same meaning: --test-id
// (repeatable globs, any of them), --workers (-j) and -o DIR (a folder
// that gets index.jsonl). Where the meaning is not quite AgentV's, it says
// so on stderr.
func (f *runFlags) agentvFlags(e *env, opt *session.Options) error {
	if f.workers != 0 {
		if f.workers < 1 {
			return usageErr("--workers must be at least 1, not %d", f.workers)
		}
		if opt.Jobs != 0 && opt.Jobs != f.workers {
			return usageErr("--workers %d and -j %d disagree; give one of them", f.workers, opt.Jobs)
		}
		opt.Jobs = f.workers
	}
	if len(f.testIDs) > 0 {
		if opt.Filter != "" {
			return usageErr("--test-id and --filter both select tests; give one of them")
		}
		for _, p := range f.testIDs {
			if _, err := path.Match(p, ""); err != nil {
				return usageErr("--test-id %q: %v", p, err)
			}
		}
		if len(f.testIDs) == 1 {
			opt.Filter = f.testIDs[0]
		} else {
			pats, own := f.testIDs, opt.Select
			opt.Select = func(t *agenteval.Test) bool {
				if own != nil && !own(t) {
					return false
				}
				for _, p := range pats {
					if ok, _ := path.Match(p, t.ID); ok {
						return true
					}
				}
				return false
			}
		}
	}
	if out := opt.Output; out != "" {
		dir := strings.HasSuffix(out, "/") || strings.HasSuffix(out, string(filepath.Separator))
		if fi, err := os.Stat(out); err == nil && fi.IsDir() {
			dir = true
		}
		if dir {
			if err := os.MkdirAll(out, 0o755); err != nil {
				return usageErr("-o %s: %v", out, err)
			}
			opt.Output = filepath.Join(out, "index.jsonl")
			fmt.Fprintf(e.stderr, "-o %s: results go to %s, in agenteval's results format; AgentV also writes benchmark.json, timing and per-test files there, which agenteval does not\n", out, opt.Output)
		}
	}
	return nil
}
