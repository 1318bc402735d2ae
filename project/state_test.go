package project

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestEnsureStateDir(t *testing.T) {
	root := t.TempDir()
	for range 2 { // twice: the second finds it made
		if err := EnsureStateDir(root); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(filepath.Join(root, StateDir, ".gitignore"))
	if err != nil || len(b) == 0 {
		t.Fatalf(".gitignore: %q, %v", b, err)
	}
	if StorePath(root) != filepath.Join(root, ".agenteval", "agenteval.db") {
		t.Error(StorePath(root))
	}
}

func TestGitState(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	if GitState(dir) != nil {
		t.Fatal("a folder outside git has a git state")
	}
	run := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q")
	os.WriteFile(filepath.Join(dir, "f"), []byte("1"), 0o644)
	run("add", "f")
	run("commit", "-qm", "one")
	g := GitState(dir)
	if g == nil || len(g.Commit) != 40 || g.Dirty {
		t.Fatalf("clean tree: %+v", g)
	}
	// An untracked file leaves the tree clean; a changed tracked one does not.
	os.WriteFile(filepath.Join(dir, "new"), []byte("x"), 0o644)
	if g := GitState(dir); g.Dirty {
		t.Error("an untracked file made the tree dirty")
	}
	os.WriteFile(filepath.Join(dir, "f"), []byte("2"), 0o644)
	if g := GitState(dir); !g.Dirty {
		t.Error("a changed file left the tree clean")
	}
}
