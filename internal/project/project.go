// Package project finds the folder a project's agenteval state belongs to,
// and the paths inside it: the run store and the judge cache. Runs started
// from any subfolder of a project share them.
//
// It imports only the standard library.
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

// File is the project file whose folder is the project root.
const File = "agenteval.yaml"

// StateDir is the folder under the root that holds the store and the cache.
const StateDir = ".agenteval"

// Root returns the project root for a working directory: the nearest folder
// at or above dir holding agenteval.yaml, else the root of the git work
// tree holding dir, else dir itself.
func Root(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir
	}
	if r, ok := upTo(abs, func(d string) bool { return isFile(filepath.Join(d, File)) }); ok {
		return r
	}
	// A .git folder, or the .git file of a worktree or submodule.
	if r, ok := upTo(abs, func(d string) bool { return exists(filepath.Join(d, ".git")) }); ok {
		return r
	}
	return abs
}

// Cwd is Root of the working directory.
func Cwd() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	return Root(wd)
}

// StorePath is where the run store of the project at root lives.
func StorePath(root string) string { return filepath.Join(root, StateDir, "agenteval.db") }

// CacheDir is where the judge cache of the project at root lives.
func CacheDir(root string) string { return filepath.Join(root, StateDir, "cache") }

// Ensure creates the state folder with a .gitignore that keeps it out of
// commits: the store and the cache are per machine.
func Ensure(root string) error {
	dir := filepath.Join(root, StateDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	ig := filepath.Join(dir, ".gitignore")
	if _, err := os.Stat(ig); errors.Is(err, os.ErrNotExist) {
		if err := os.WriteFile(ig, []byte("# agenteval's run store and judge cache: local to this machine.\n*\n"), 0o644); err != nil {
			return fmt.Errorf("create %s: %w", ig, err)
		}
	}
	return nil
}

func upTo(dir string, found func(string) bool) (string, bool) {
	for {
		if found(dir) {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Git is the state of the work tree a run was started from.
type Git struct {
	Commit string `json:"commit"`
	// Dirty is true when tracked files differ from the commit.
	Dirty bool `json:"dirty"`
}

// GitState describes the git work tree holding dir, or returns nil when dir
// is not in one or git is not installed. It never takes more than a few
// seconds, however large the tree.
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
