package project

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestRoot(t *testing.T) {
	tmp := t.TempDir()
	mk := func(p string) string {
		p = filepath.Join(tmp, p)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	plain := mk("plain/sub")
	repo := mk("repo/a/b")
	mk("repo/.git")
	proj := mk("repo/proj/deep")
	os.WriteFile(filepath.Join(tmp, "repo/proj/agenteval.yaml"), []byte("{}\n"), 0o644)
	// A folder named agenteval.yaml is not the project file.
	mk("repo/a/agenteval.yaml")

	for _, tc := range []struct{ dir, want string }{
		{plain, plain},
		{repo, filepath.Join(tmp, "repo")},
		{proj, filepath.Join(tmp, "repo/proj")},
		{filepath.Join(tmp, "repo/proj"), filepath.Join(tmp, "repo/proj")},
	} {
		if got := Root(tc.dir); got != tc.want {
			t.Errorf("Root(%s) = %s, want %s", tc.dir, got, tc.want)
		}
	}
}

func TestEnsureIgnoresState(t *testing.T) {
	root := t.TempDir()
	if err := Ensure(root); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, StateDir, ".gitignore"))
	if err != nil || string(b) == "" {
		t.Fatalf(".gitignore: %q, %v", b, err)
	}
	if err := Ensure(root); err != nil {
		t.Fatal(err)
	}
	if StorePath(root) != filepath.Join(root, ".agenteval", "agenteval.db") || CacheDir(root) != filepath.Join(root, ".agenteval", "cache") {
		t.Error(StorePath(root), CacheDir(root))
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
