package project

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// StateDir is the folder under the project root that holds the run store
// and the cache.
const StateDir = ".agenteval"

// Here is the root of the project the working directory belongs to (see
// Root), or the working directory when that cannot be told.
func Here() string {
	root, err := Root(".")
	if err != nil {
		if wd, werr := os.Getwd(); werr == nil {
			return wd
		}
		return "."
	}
	return root
}

// StorePath is where the run store of the project at root lives.
func StorePath(root string) string { return filepath.Join(root, StateDir, "agenteval.db") }

// EnsureStateDir creates the state folder with a .gitignore that keeps it
// out of commits: the store and the cache belong to one machine.
func EnsureStateDir(root string) error {
	dir := filepath.Join(root, StateDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	ig := filepath.Join(dir, ".gitignore")
	if _, err := os.Stat(ig); errors.Is(err, os.ErrNotExist) {
		if err := os.WriteFile(ig, []byte("# agenteval's run store and cache: local to this machine.\n*\n"), 0o644); err != nil {
			return fmt.Errorf("create %s: %w", ig, err)
		}
	}
	return nil
}

// Git is the state of the work tree a run started from.
type Git struct {
	Commit string
	// Dirty is true when tracked files differ from the commit.
	Dirty bool
}

// GitState describes the git work tree holding dir, or returns nil when dir
// is not in one or git is not installed. It gives up after a few seconds,
// however large the tree.
func GitState(dir string) *Git {
	commit, err := gitOut(dir, "rev-parse", "HEAD")
	if err != nil || commit == "" {
		return nil
	}
	g := &Git{Commit: commit}
	// Untracked files are left out: build outputs and results files would
	// make every tree dirty.
	if st, err := gitOut(dir, "status", "--porcelain", "--untracked-files=no"); err == nil {
		g.Dirty = st != ""
	}
	return g
}

func gitOut(dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	// Reading the state must not take the index lock from a git command
	// the user is running at the same time.
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0")
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err
}
