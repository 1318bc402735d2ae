package project

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/agenteval/agenteval/internal/proc"
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
	// The store and the cache hold transcripts: the folder is its
	// owner's only.
	if err := os.MkdirAll(dir, 0o700); err != nil {
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
	// DirtyKnown is false when git could not be asked, under --no-exec
	// (proc refuses every program) or without git: Dirty is then false
	// for want of knowing, not because the tree is clean.
	DirtyKnown bool
}

// GitState describes the git work tree holding dir, or returns nil when dir
// is not in one. A cloned or downloaded project is not to be trusted, and
// git runs commands its repository configures (core.fsmonitor, filter
// drivers, hooks), so the commit is read from the files under .git, with
// no program started. Only the dirty flag needs git; it is asked through
// proc, so under --no-exec nothing runs and the flag stays unknown, and
// otherwise git runs with none of the commands the repository configures
// and none of the environment (see gitCommand). It gives up after a few
// seconds, however large the tree.
func GitState(dir string) *Git {
	gitDir := findGitDir(dir)
	if gitDir == "" {
		return nil
	}
	commit := readHead(gitDir)
	if commit == "" {
		// A layout readHead does not know (a reftable store): git knows,
		// when it may run.
		c, err := gitOut(dir, "rev-parse", "--verify", "-q", "HEAD")
		if err != nil || !isHash(c) {
			return nil
		}
		commit = c
	}
	g := &Git{Commit: commit}
	if dirty, ok := gitDirty(dir); ok {
		g.Dirty, g.DirtyKnown = dirty, true
	}
	return g
}

// readHead is the commit HEAD names in the repository whose git folder
// is gitDir, read from its files: HEAD, the loose refs and packed-refs. It
// is "" when the branch has no commit yet, or the layout is one it does
// not read.
func readHead(gitDir string) string {
	// A worktree keeps HEAD in its own folder and most refs in the main
	// repository's, which its commondir file names.
	dirs := []string{gitDir}
	if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		common := strings.TrimSpace(string(b))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitDir, common)
		}
		dirs = append(dirs, common)
	}
	ref := "HEAD"
	// A symbolic ref may name another; git allows five levels.
	for range 5 {
		v, ok := readRef(dirs, ref)
		if !ok {
			return ""
		}
		next, sym := strings.CutPrefix(v, "ref:")
		if !sym {
			if isHash(v) {
				return v
			}
			return ""
		}
		ref = strings.TrimSpace(next)
		if !validRefName(ref) {
			return ""
		}
	}
	return ""
}

// findGitDir is the git folder of the work tree holding dir: .git, or the
// folder a .git file names (a linked worktree, a submodule); "" when dir
// is in no work tree.
// GIT_DIR and the other GIT_ variables are ignored on purpose: a project's
// .env may set them.
func findGitDir(dir string) string {
	d, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	if fi, err := os.Stat(d); err == nil && !fi.IsDir() {
		d = filepath.Dir(d)
	}
	for {
		p := filepath.Join(d, ".git")
		if fi, err := os.Stat(p); err == nil {
			if fi.IsDir() {
				return p
			}
			// "gitdir: PATH", PATH relative to the file's folder.
			b, err := os.ReadFile(p)
			if err != nil {
				return ""
			}
			gd, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
			if !ok {
				return ""
			}
			gd = strings.TrimSpace(gd)
			if !filepath.IsAbs(gd) {
				gd = filepath.Join(d, gd)
			}
			return gd
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

// readRef is a ref's value, loose (a file under one of dirs) or packed: a
// hash, or "ref: NAME" for a symbolic one.
func readRef(dirs []string, ref string) (string, bool) {
	for _, d := range dirs {
		if b, err := os.ReadFile(filepath.Join(d, filepath.FromSlash(ref))); err == nil {
			return strings.TrimSpace(string(b)), true
		}
	}
	if ref == "HEAD" {
		return "", false
	}
	for _, d := range dirs {
		f, err := os.Open(filepath.Join(d, "packed-refs"))
		if err != nil {
			continue
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 4096), 1<<20)
		for sc.Scan() {
			// "HASH NAME" lines; # is the header, ^ a peeled tag.
			line := sc.Text()
			if strings.HasPrefix(line, "#") || strings.HasPrefix(line, "^") {
				continue
			}
			if h, name, ok := strings.Cut(line, " "); ok && name == ref {
				return h, true
			}
		}
	}
	return "", false
}

// validRefName accepts the names a symbolic ref may point at, and nothing
// that could read a file outside the git folder.
func validRefName(ref string) bool {
	if !strings.HasPrefix(ref, "refs/") || strings.Contains(ref, "\\") {
		return false
	}
	for _, part := range strings.Split(ref, "/") {
		if part == "" || part == "." || part == ".." {
			return false
		}
	}
	return true
}

// isHash accepts an object name: 40 hex digits (SHA-1) or 64 (SHA-256).
func isHash(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// gitDirty asks git whether tracked files differ from the commit; ok is
// false when git did not answer (refused under --no-exec, not installed,
// or too slow).
func gitDirty(dir string) (dirty, ok bool) {
	// Filter drivers are commands from the repository's configuration
	// that status runs on files whose timestamps changed. They are named
	// in config, so they are listed first (reading config runs nothing)
	// and each is turned off for the status call.
	list, err := gitOut(dir, "config", "-z", "--get-regexp", `^filter\.`)
	var off []string
	if err == nil {
		for _, kv := range strings.Split(list, "\x00") {
			key, _, _ := strings.Cut(kv, "\n")
			name, ok := strings.CutPrefix(key, "filter.")
			if !ok {
				continue
			}
			if i := strings.LastIndexByte(name, '.'); i > 0 {
				name = name[:i]
			} else {
				continue
			}
			if strings.ContainsAny(name, "=\n\x00") {
				return false, false // it could not be named on the command line
			}
			off = append(off, "-c", "filter."+name+".clean=", "-c", "filter."+name+".smudge=",
				"-c", "filter."+name+".process=", "-c", "filter."+name+".required=false")
		}
	} else if !exitedNonZero(err) {
		return false, false // refused, or no git
	}
	// Untracked files are left out: build outputs and results files would
	// make every tree dirty. Submodules count when their commit moved, not
	// for their own work trees, which status would read by starting git
	// inside each one.
	args := append(off, "status", "--porcelain", "--untracked-files=no", "--ignore-submodules=dirty")
	st, err := gitOut(dir, args...)
	if err != nil {
		return false, false
	}
	return st != "", true
}

// exitedNonZero says whether err is git's answer (it ran and exited with
// a status: git config does so when nothing matches) rather than a failure
// to run it.
func exitedNonZero(err error) bool {
	var ee interface{ ExitCode() int }
	return errors.As(err, &ee) && ee.ExitCode() > 0
}

// gitCommand prepares git to run in dir, through proc (so --no-exec
// refuses it), with none of the commands the repository could make it
// run: no fsmonitor, no hooks, no system or global configuration, and an
// environment of its own. The environment is not inherited because it
// holds the project's .env (GIT_CONFIG_* can add configuration, LD_PRELOAD
// a library to every program) and git is a program the project did not
// name.
func gitCommand(ctx context.Context, dir string, args ...string) (*exec.Cmd, error) {
	argv := append([]string{"git", "--no-pager", "-c", "core.fsmonitor=false", "-c", "core.hooksPath=" + os.DevNull}, args...)
	cmd, err := proc.Command(ctx, argv)
	if err != nil {
		return nil, err
	}
	cmd.Dir = dir
	cmd.Env = gitEnv()
	return cmd, nil
}

// gitEnv is the whole environment git gets. GIT_OPTIONAL_LOCKS=0 keeps it
// from taking the index lock from a git command the user is running at
// the same time.
func gitEnv() []string {
	env := []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + os.DevNull, "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0", "LC_ALL=C"}
	if runtime.GOOS == "windows" {
		// Programs on Windows cannot start without these.
		for _, k := range []string{"SYSTEMROOT", "WINDIR", "TEMP", "TMP"} {
			if v, ok := os.LookupEnv(k); ok {
				env = append(env, k+"="+v)
			}
		}
	}
	return env
}

func gitOut(dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmd, err := gitCommand(ctx, dir, args...)
	if err != nil {
		return "", err
	}
	var out bytes.Buffer
	cmd.Stdout = &out
	err = proc.Run(cmd)
	return strings.TrimSpace(out.String()), err
}
